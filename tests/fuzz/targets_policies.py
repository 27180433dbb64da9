"""tests/fuzz/targets_policies.py: kernel policies built from arbitrary names, strategies and
JSON; every outcome is a policy or a clear error, and an op under the policy runs or raises
a clear error."""

import json

import hypothesis.strategies as st
from hypothesis import given

import xpuruntime as xrt
from fuzz_settings import fuzz_settings

ERRORS = (TypeError, ValueError, KeyError, xrt.XpuRuntimeError)
names = st.one_of(st.sampled_from(["matmul", "add", "sum", "sort", "openblas", "native",
                                   "cublasLt", "flash_v2", "", "matmul "]),
                  st.text(max_size=12))
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                           lambda c: st.lists(c, max_size=3) | st.dictionaries(
                               st.text(max_size=8), c, max_size=3), max_leaves=8)


@fuzz_settings()
@given(st.dictionaries(names, names, max_size=3), names)
def policies_from_names(pins, strategy):
    try:
        policy = xrt.KernelPolicy(auto_strategy=strategy, **pins)
    except ERRORS:
        return
    a = xrt.ones((4, 4))
    try:
        with xrt.kernel_policy(policy):
            (a @ a).tolist()
            xrt.sum(a + a).item()
    except ERRORS:
        pass


@fuzz_settings()
@given(json_values)
def policies_from_json(data):
    try:
        xrt.KernelPolicy.from_json(json.dumps(data))
    except ERRORS:
        pass

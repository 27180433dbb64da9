"""tests/fuzz/targets_user_kernels.py: CuPy-style user kernels built from arbitrary parameter
lists and expressions, and recorded-kernel calls (Note [Calling a recorded kernel from C++])
with arbitrary arguments and keywords: every outcome is a kernel, a result or a clear error,
never a crash. No GPU needed: construction parses on the host, and a call with host tensors
is refused with a ValueError before anything launches."""

import hypothesis.strategies as st
import xpuruntime as xrt
from fuzz_settings import fuzz_settings
from hypothesis import given
from recording_kernel import RecordingKernel

ERRORS = (TypeError, ValueError, IndexError, OverflowError, xrt.XpuRuntimeError)

# Parameter lists from CuPy's grammar's own pieces, shuffled, plus arbitrary text.
pieces = st.sampled_from(["T", "S", "float32", "float64", "int32", "bool", "float16",
                          "complex64", "raw", "x", "y", "z", "i", "_ind", "_raw", "T*",
                          ",", ", ", " ", "", "int8 n", "raw T w", "T x, T y", "T x T y",
                          "1x", "float32 x,", ",float32 x", "uint64 big"])
param_lists = st.one_of(st.lists(pieces, max_size=6).map(" ".join), st.text(max_size=20))
expressions = st.one_of(st.sampled_from(["y = x", "y = x + 1", "", "y =", "}", "y = x; }",
                                         "a + b", "x", "0", "__syncthreads()"]),
                        st.text(max_size=12))
leaves = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**80, max_value=2**80),
                   st.floats(allow_nan=True), st.text(max_size=4), st.complex_numbers(),
                   st.builds(lambda n: xrt.ones((n,)), st.integers(0, 3)))
values = st.recursive(leaves, lambda c: st.lists(c, max_size=3).map(tuple) |
                      st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c,
                                                                max_size=2), max_leaves=6)
keywords = st.dictionaries(st.sampled_from(["axis", "keepdims", "out", "stream", "size",
                                            "block_size", "other", ""]), values, max_size=3)


@fuzz_settings()
@given(param_lists, param_lists, expressions, st.text(max_size=8))
def elementwise_kernels_build_or_refuse(in_params, out_params, operation, name):
    try:
        k = xrt.ElementwiseKernel(in_params, out_params, operation, name or "k")
    except ERRORS:
        return
    try:
        k(xrt.ones((2,)))
    except ERRORS:
        pass


@fuzz_settings()
@given(param_lists, param_lists, expressions, expressions, expressions,
       st.one_of(st.none(), expressions))
def reduction_kernels_build_or_refuse(in_params, out_params, map_expr, reduce_expr,
                                      post_map_expr, identity):
    try:
        k = xrt.ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr,
                                identity, "r")
    except ERRORS:
        return
    try:
        k(xrt.ones((2, 3)), axis=1)
    except ERRORS:
        pass


# One kernel for every example, so its table fills and starts over (Note [Bounded replay
# tables]) as the examples go on.
_recording = RecordingKernel()


@fuzz_settings()
@given(st.lists(values, max_size=4), keywords)
def recorded_calls_take_any_arguments(args, kwargs):
    for _ in range(2):  # the second call replays when the first one was recorded
        try:
            _recording(*args, **kwargs)
        except ERRORS:
            pass
    assert _recording._recorded <= xrt._core._cuda.max_replays

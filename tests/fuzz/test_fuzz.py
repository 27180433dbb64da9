"""tests/fuzz/test_fuzz.py: each fuzz target of this folder, run in a child interpreter so
that a crash fails its test. Budget: XRT_FUZZ=ci (default, seconds) or XRT_FUZZ=long."""

import pytest

from child_runner import run_target

TARGETS = [
    ("targets_asarray", "nested_sequences_match_numpy"),
    ("targets_asarray", "hostile_leaves_never_crash"),
    ("targets_dlpack", "malformed_headers_are_refused_or_imported"),
    ("targets_dlpack", "broken_producers_give_clear_errors"),
    ("targets_indexing", "getitem_matches_numpy"),
    ("targets_indexing", "setitem_matches_numpy"),
    ("targets_shapes", "creation_refuses_sizes_past_int64"),
    ("targets_shapes", "views_and_broadcasts_count_exactly"),
    ("targets_shapes", "ranges_refuse_lengths_past_int64"),
    ("targets_policies", "policies_from_names"),
    ("targets_policies", "policies_from_json"),
    ("targets_public_api", "every_function_takes_each_odd_value"),
    ("targets_public_api", "functions_refuse_odd_combinations"),
    ("targets_public_api", "tensor_methods_refuse_odd_arguments"),
    ("targets_user_kernels", "elementwise_kernels_build_or_refuse"),
    ("targets_user_kernels", "reduction_kernels_build_or_refuse"),
    ("targets_user_kernels", "recorded_calls_take_any_arguments"),
]


@pytest.mark.parametrize("module, function", TARGETS, ids=[f for _, f in TARGETS])
def test_fuzz_target(module, function):
    rc, output = run_target(module, function)
    assert rc == 0 and "TARGET PASSED" in output, \
        f"{module}.{function} failed (return code {rc}):\n{output[-6000:]}"

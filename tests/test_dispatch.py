"""tests/test_dispatch.py: kernel policies, explain, matmul kernels and
Python kernels registered by users."""

import json
import re
import threading

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import COMPLEX, INTEGER, assert_tensor_equal, numpy_dtype, tensor


@pytest.fixture
def restore_policy():
    saved = xrt.get_kernel_policy()
    yield
    xrt.set_kernel_policy(saved)


def decisions_for(log, op):
    return [record for record in log.records if record.op == op]


# ------------------------------------------------------------ KernelPolicy


def test_default_policy_is_empty():
    policy = xrt.KernelPolicy()
    assert policy.auto_strategy == "FirstSupported"
    assert policy.preferences == {}
    # Note: like dict.get, an op without a pin gives None.
    assert policy.get("matmul") is None


def test_set_get_remove():
    policy = xrt.KernelPolicy(matmul="openblas")
    assert policy.get("matmul") == "openblas"
    policy.set("add", "native")
    policy.set("matmul", "native")
    assert policy.preferences == {"matmul": "native", "add": "native"}
    policy.remove("add")
    assert policy.get("add") is None
    assert policy.preferences == {"matmul": "native"}


@pytest.mark.parametrize("strategy", ["FirstSupported", "BestPerformance"])
def test_auto_strategies(strategy):
    assert xrt.KernelPolicy(auto_strategy=strategy).auto_strategy == strategy


@pytest.mark.parametrize("strategy", ["Fastest", "bestperformance", "", None])
def test_invalid_strategy_raises_ValueError(strategy):
    with pytest.raises((ValueError, TypeError) if strategy is None
                       else ValueError):
        xrt.KernelPolicy(auto_strategy=strategy)


def test_equality():
    a = xrt.KernelPolicy(matmul="openblas", add="native")
    assert a == xrt.KernelPolicy(add="native", matmul="openblas")
    assert a != xrt.KernelPolicy(matmul="openblas")
    assert a != xrt.KernelPolicy(auto_strategy="BestPerformance",
                                 matmul="openblas", add="native")


def test_json_round_trip():
    policy = xrt.KernelPolicy(auto_strategy="BestPerformance",
                              matmul="native", add="native")
    text = policy.to_json()
    assert isinstance(json.loads(text), dict)
    assert "BestPerformance" in text and '"add": "native"' in text
    assert xrt.KernelPolicy.from_json(text) == policy


def test_save_and_load(tmp_path):
    policy = xrt.KernelPolicy(matmul="openblas")
    path = tmp_path / "policy.json"
    policy.save(path)
    assert json.loads(path.read_text()) == json.loads(policy.to_json())
    assert xrt.KernelPolicy.load(path) == policy
    assert xrt.KernelPolicy.load(str(path)) == policy


def test_from_json_rejects_garbage():
    with pytest.raises(ValueError):
        xrt.KernelPolicy.from_json("{not json")


@pytest.mark.usefixtures("restore_policy")
def test_set_and_get_the_current_policy():
    policy = xrt.KernelPolicy(matmul="native")
    xrt.set_kernel_policy(policy)
    assert xrt.get_kernel_policy() == policy


def test_kernel_policy_context_restores_the_previous_policy():
    before = xrt.get_kernel_policy()
    inner = xrt.KernelPolicy(matmul="native")
    with xrt.kernel_policy(inner):
        assert xrt.get_kernel_policy() == inner
    assert xrt.get_kernel_policy() == before
    with pytest.raises(ZeroDivisionError):
        with xrt.kernel_policy(inner):
            1 / 0
    assert xrt.get_kernel_policy() == before


def test_kernel_policy_context_is_per_thread():
    before = xrt.get_kernel_policy()
    seen = []
    with xrt.kernel_policy(xrt.KernelPolicy(matmul="native")):
        thread = threading.Thread(
            target=lambda: seen.append(xrt.get_kernel_policy()))
        thread.start()
        thread.join()
    assert seen == [before]


# ------------------------------------------------------------------ matmul

OPENBLAS = ["float32", "float64", "complex64", "complex128"]
NATIVE = OPENBLAS + ["int8", "int32", "int64", "uint8", "uint64", "float16",
                     "bfloat16"]


@st.composite
def matmul_operands(draw, name):
    m, k, n = (draw(st.integers(0, 70)) for _ in range(3))
    if name in INTEGER:  # any values: both sides wrap around the same way
        elements = {}
    elif name in ("float16", "bfloat16"):  # small integers: exact sums
        ints = st.integers(-1, 1)
        a = draw(hnp.arrays(np.int8, (m, k), elements=ints))
        b = draw(hnp.arrays(np.int8, (k, n), elements=ints))
        return a.astype(numpy_dtype(name)), b.astype(numpy_dtype(name))
    elif name in COMPLEX:
        elements = {"max_magnitude": 1, "allow_nan": False,
                    "allow_infinity": False}
    else:
        elements = {"min_value": -1, "max_value": 1}
    a = draw(hnp.arrays(name, (m, k), elements=hnp.from_dtype(
        np.dtype(name), **elements)))
    b = draw(hnp.arrays(name, (k, n), elements=hnp.from_dtype(
        np.dtype(name), **elements)))
    return a, b


def check_matmul(name, a, b, result):
    if name in INTEGER:
        assert_tensor_equal(result, np.matmul(a, b))
        return
    wide = np.complex128 if name in COMPLEX else np.float64
    expected = np.matmul(a.astype(wide), b.astype(wide)).astype(a.dtype)
    if name in ("float16", "bfloat16"):
        assert_tensor_equal(result, expected)
        return
    assert result.dtype == getattr(xrt, name) and result.shape == expected.shape
    # Any summation order is within (k + 2) * eps * (|a| @ |b|) of the truth,
    # the float64 reference may be off by as much again, and each product may
    # underflow by up to the smallest normal number.
    k, info = a.shape[1], np.finfo(a.dtype)
    bound = (2 * (k + 2) * info.eps * (np.abs(a).astype(np.float64) @ np.abs(b))
             + (k + 1) * info.smallest_normal)
    assert np.all(np.abs(np.asarray(result) - expected) <= bound)


@pytest.mark.parametrize("kernel, name",
                         [("openblas", n) for n in OPENBLAS]
                         + [("native", n) for n in NATIVE])
@given(data=st.data())
def test_pinned_matmul_kernels_agree_with_numpy(kernel, name, data):
    a, b = data.draw(matmul_operands(name))
    with xrt.kernel_policy(xrt.KernelPolicy(matmul=kernel)):
        with xrt.explain() as log:
            result = xrt.matmul(tensor(a), tensor(b))
    check_matmul(name, a, b, result)
    assert decisions_for(log, "matmul")[-1].kernel == kernel


def test_explain_shows_the_kernel_and_the_policy():
    a = xrt.ones((4, 5), dtype=xrt.float32)
    with xrt.kernel_policy(xrt.KernelPolicy(matmul="openblas")):
        with xrt.explain() as log:
            a @ xrt.ones((5, 3), dtype=xrt.float32)
    (record,) = decisions_for(log, "matmul")
    assert record.kernel == "openblas"
    assert "policy" in record.reason.lower()
    assert str(record.device) == "cpu"
    # Note: the spec leaves the form of .dtypes open (a tuple or a text).
    assert "float32" in str(record.dtypes) and "64" not in str(record.dtypes)
    assert "openblas" in record.candidates
    assert "matmul" in str(log) and "openblas" in str(log)


def test_explain_records_only_inside_the_block():
    with xrt.explain() as log:
        pass
    xrt.matmul(xrt.ones((2, 2)), xrt.ones((2, 2)))
    assert log.records == []


def test_a_new_pin_replaces_a_cached_choice():
    a, b = xrt.ones((3, 3)), xrt.ones((3, 3))
    for kernel in ("openblas", "native", "openblas"):
        with xrt.kernel_policy(xrt.KernelPolicy(matmul=kernel)):
            with xrt.explain() as log:
                xrt.matmul(a, b)
        assert decisions_for(log, "matmul")[-1].kernel == kernel


def test_first_supported_skips_kernels_that_cannot_run():
    with xrt.explain() as log:
        result = xrt.matmul(xrt.ones((2, 3), dtype=xrt.int32),
                            xrt.ones((3, 2), dtype=xrt.int32))
    assert decisions_for(log, "matmul")[-1].kernel == "native"
    assert_tensor_equal(result, np.full((2, 2), 3, dtype=np.int32))


def test_decisions_lists_cached_choices():
    xrt.matmul(xrt.ones((2, 2)), xrt.ones((2, 2)))
    assert any(d.op == "matmul" for d in xrt.decisions())


@pytest.mark.parametrize("kernel, dtype", [("cublaslt", xrt.float64),
                                           ("openblas", xrt.int32)])
def test_pins_that_cannot_run_raise_UnsupportedOperationError(kernel, dtype):
    # A kernel the CPU lacks, pinned for the CPU; a kernel without int32 support.
    policy = xrt.KernelPolicy(cpu={"matmul": kernel})  # naming it is fine ...
    a = xrt.ones((2, 2), dtype=dtype)
    with xrt.kernel_policy(policy):
        with pytest.raises(xrt.UnsupportedOperationError, match=kernel):
            xrt.matmul(a, a)  # ... running it is not


def test_best_performance_times_the_candidates():
    a = xrt.asarray(np.random.default_rng(0).random((64, 64)))
    policy = xrt.KernelPolicy(auto_strategy="BestPerformance")
    with xrt.kernel_policy(policy):
        with xrt.explain() as log:
            first = xrt.matmul(a, a)
            second = xrt.matmul(a, a)
    records = decisions_for(log, "matmul")
    assert records[0].kernel in {"openblas", "native"}
    assert {"openblas", "native"} <= set(records[0].candidates)
    assert re.search(r"tim|fastest|measur|benchmark", records[0].reason.lower())
    assert {r.kernel for r in records} == {records[0].kernel}  # remembered
    expected = np.asarray(a) @ np.asarray(a)
    np.testing.assert_allclose(np.asarray(first), expected, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(second), expected, rtol=1e-12)


# Note: the standard's matmul semantics beyond 2-D @ 2-D.
@pytest.mark.parametrize("shape_a, shape_b", [
    ((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((4, 2, 3), (3, 5)),
    ((1, 2, 3), (4, 3, 2))])
def test_matmul_vectors_and_batches(shape_a, shape_b):
    a = np.arange(np.prod(shape_a), dtype=np.int64).reshape(shape_a)
    b = np.arange(np.prod(shape_b), dtype=np.int64).reshape(shape_b)
    assert_tensor_equal(xrt.matmul(xrt.asarray(a), xrt.asarray(b)), a @ b)
    assert_tensor_equal(xrt.asarray(a) @ xrt.asarray(b), a @ b)


# ----------------------------------------------------------- user kernels


@pytest.fixture
def my_add():
    """Registers a Python "add" kernel for float32 that answers 42s."""
    calls = []

    def kernel(x1, x2):
        calls.append((x1, x2))
        return xrt.full(x1.shape, 42.0, dtype=xrt.float32)

    xrt.register_kernel("add", "my_add", kernel,
                        supports=lambda x1, x2: x1.dtype == xrt.float32)
    yield calls
    if any(k["name"] == "my_add" for k in xrt.list_kernels("add")):
        xrt.unregister_kernel("add", "my_add")


def test_pinned_python_kernel_runs_and_its_result_is_returned(my_add):
    a = xrt.ones((2, 3), dtype=xrt.float32)
    with xrt.kernel_policy(xrt.KernelPolicy(add="my_add")):
        with xrt.explain() as log:
            result = xrt.add(a, a)
        operator_result = a + a
    assert_tensor_equal(result, np.full((2, 3), 42, dtype=np.float32))
    assert_tensor_equal(operator_result, np.full((2, 3), 42, np.float32))
    assert isinstance(my_add[0][0], xrt.Tensor)
    assert decisions_for(log, "add")[-1].kernel == "my_add"
    assert_tensor_equal(xrt.add(a, a), np.full((2, 3), 2, np.float32))


def test_pinned_python_kernel_that_declines_raises(my_add):
    a = xrt.ones((2,), dtype=xrt.float64)
    with xrt.kernel_policy(xrt.KernelPolicy(add="my_add")):
        with pytest.raises(xrt.UnsupportedOperationError):
            xrt.add(a, a)
    assert my_add == []


def test_higher_priority_python_kernel_is_tried_first():
    # Note: we read `priority` as "higher wins" under FirstSupported.
    xrt.register_kernel("add", "eager_add",
                        lambda x1, x2: xrt.zeros(x1.shape, dtype=x1.dtype),
                        priority=100)
    try:
        assert_tensor_equal(xrt.ones(3) + xrt.ones(3), np.zeros(3))
    finally:
        xrt.unregister_kernel("add", "eager_add")
    assert_tensor_equal(xrt.ones(3) + xrt.ones(3), np.full(3, 2.0))


def test_decisions_follow_dtypes_registrations_and_policies_call_by_call():
    """Note [Last decision per op]: the op's last decision is reused only for the same
    dtypes, device, policy and registrations; each change takes effect on the next call."""
    xrt.register_kernel("add", "f32_add", lambda x1, x2: xrt.zeros(x1.shape, dtype=x1.dtype),
                        supports=lambda x1, x2: x1.dtype == xrt.float32, priority=100)
    f32, f64 = xrt.ones(3, dtype=xrt.float32), xrt.ones(3, dtype=xrt.float64)
    try:
        for _ in range(3):  # the two dtypes take turns on one op
            assert_tensor_equal(f32 + f32, np.zeros(3, np.float32))
            assert_tensor_equal(f64 + f64, np.full(3, 2.0))
        with xrt.kernel_policy(xrt.KernelPolicy(add="native")):
            assert_tensor_equal(f32 + f32, np.full(3, 2.0, np.float32))
        assert_tensor_equal(f32 + f32, np.zeros(3, np.float32))
    finally:
        xrt.unregister_kernel("add", "f32_add")
    assert_tensor_equal(f32 + f32, np.full(3, 2.0, np.float32))


def test_a_thread_policy_does_not_reach_other_threads_decisions():
    """Two threads add the same operands at once, one under a pin of a kernel that answers
    zeros: each gets its own decision, call after call."""
    xrt.register_kernel("add", "zero_add", lambda x1, x2: xrt.zeros(x1.shape, dtype=x1.dtype))
    a = xrt.ones(4)
    results = {}
    start = threading.Barrier(2)

    def run(name, policy):
        with xrt.kernel_policy(policy):
            start.wait()
            results[name] = [np.asarray(a + a).tolist() for _ in range(200)]

    try:
        threads = [threading.Thread(target=run, args=("pinned", xrt.KernelPolicy(add="zero_add"))),
                   threading.Thread(target=run, args=("plain", xrt.KernelPolicy()))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        xrt.unregister_kernel("add", "zero_add")
    assert results["pinned"] == [[0.0] * 4] * 200
    assert results["plain"] == [[2.0] * 4] * 200


@pytest.mark.parametrize("wrong", [
    lambda x1, x2: xrt.zeros((1,), dtype=xrt.float32),
    lambda x1, x2: xrt.zeros(x1.shape, dtype=xrt.float64),
    lambda x1, x2: None,
], ids=["shape", "dtype", "not a tensor"])
def test_python_kernel_with_a_wrong_result_raises(wrong):
    xrt.register_kernel("add", "wrong_add", wrong)
    a = xrt.ones((3,), dtype=xrt.float32)
    try:
        with xrt.kernel_policy(xrt.KernelPolicy(add="wrong_add")):
            with pytest.raises((ValueError, TypeError, xrt.XpuRuntimeError)):
                xrt.add(a, a)
    finally:
        xrt.unregister_kernel("add", "wrong_add")


def test_python_kernel_exceptions_propagate():
    xrt.register_kernel("add", "broken_add", lambda x1, x2: 1 / 0)
    try:
        with xrt.kernel_policy(xrt.KernelPolicy(add="broken_add")):
            with pytest.raises(ZeroDivisionError):
                xrt.add(xrt.ones(2), xrt.ones(2))
    finally:
        xrt.unregister_kernel("add", "broken_add")


def test_unregister_kernel(my_add):
    (mine,) = [k for k in xrt.list_kernels("add") if k["name"] == "my_add"]
    assert (mine["op"], str(mine["device"]), mine["builtin"],
            mine["priority"]) == ("add", "cpu", False, 0)
    policy = xrt.KernelPolicy(add="my_add")  # pinned while it is registered
    xrt.unregister_kernel("add", "my_add")
    assert all(k["name"] != "my_add" for k in xrt.list_kernels("add"))
    with pytest.raises(ValueError, match="has no kernel 'my_add'"):
        xrt.KernelPolicy(add="my_add")
    with xrt.kernel_policy(policy):
        with pytest.raises(xrt.UnsupportedOperationError):
            xrt.add(xrt.ones(2, dtype=xrt.float32),
                    xrt.ones(2, dtype=xrt.float32))


def test_list_kernels_shows_the_builtin_matmul_kernels():
    kernels = xrt.list_kernels("matmul")
    assert all({"op", "name", "device", "builtin", "priority"} <= set(k)
               for k in kernels)
    builtin = {k["name"] for k in kernels
               if k["builtin"] and str(k["device"]) == "cpu"}
    assert {"openblas", "native"} <= builtin
    assert all(k["op"] == "matmul" for k in kernels)
    assert {"add", "matmul"} <= {k["op"] for k in xrt.list_kernels()}


def test_a_refused_pin_leaves_the_dispatcher_usable():
    """A decision that raises must not leave a hole in the decision cache."""
    a = xrt.ones((2, 2), dtype=xrt.float64)
    for _ in range(2):
        with xrt.kernel_policy(xrt.KernelPolicy(cpu={"matmul": "cublaslt"})), pytest.raises(
                xrt.UnsupportedOperationError, match="cublaslt"):
            a @ a
    assert np.asarray(a @ a).tolist() == [[2.0, 2.0], [2.0, 2.0]]


# ---- Replayed calls (Note [Replayed calls] in cpp/src/core/replay.cpp) ----------------

def replayed():
    return xrt._core._replayed_calls()


def test_a_repeated_call_is_replayed_to_the_same_result():
    a = xrt.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    b = xrt.asarray(np.full((3, 4), 0.5, np.float32))
    a + b  # decided and kept
    before = replayed()
    for _ in range(3):
        c = a + b
        assert c.shape == (3, 4) and c.dtype == xrt.float32
        assert_tensor_equal(c, np.arange(12, dtype=np.float32).reshape(3, 4) + 0.5)
    assert replayed() == before + 3
    # A comparison keeps its bool output; a function call takes the same path.
    _ = a < b
    before = replayed()
    assert_tensor_equal(xrt.less(a, b), np.arange(12).reshape(3, 4) < 0.5)
    assert replayed() == before + 1
    # Unary functions too; logical_not of a float reads its truth values first.
    xrt.negative(a), xrt.logical_not(a)
    before = replayed()
    assert_tensor_equal(-a, -np.arange(12, dtype=np.float32).reshape(3, 4))
    assert_tensor_equal(xrt.logical_not(a), np.arange(12).reshape(3, 4) == 0)
    assert replayed() == before + 2  # negative, and logical_not's inner call on bools


@pytest.mark.parametrize("make", [
    lambda a, b: (a.mT, b.mT),                  # another layout
    lambda a, b: (a[:, ::2], b[:, ::2]),        # strided views
    lambda a, b: (a, b[:1]),                    # a broadcast
    lambda a, b: (a, xrt.astype(b, xrt.float64)),  # a promotion
    lambda a, b: (a[:2], b[:2]),                # another shape
])
def test_a_call_laid_out_otherwise_is_dispatched(make):
    a = xrt.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    b = xrt.asarray(np.ones((3, 4), np.float32))
    a + b
    x, y = make(a, b)
    before = replayed()
    assert_tensor_equal(x + y, np.asarray(x) + np.asarray(y))
    assert replayed() == before


def test_a_replay_gives_way_to_explain_the_profiler_pins_and_new_kernels():
    a, b = xrt.ones(5), xrt.ones(5)
    a + b
    a + b
    before = replayed()
    with xrt.explain() as log:
        a + b
    assert decisions_for(log, "add"), "an explained call is dispatched and recorded"
    with xrt.profile() as prof:
        a + b
    assert [o.name for o in prof.ops] == ["add"], "a profiled call is dispatched and recorded"
    assert replayed() == before
    def zeros(x1, x2):
        return xrt.zeros(x1.shape, dtype=x1.dtype)

    xrt.register_kernel("add", "zeros_add", zeros, priority=100)
    try:
        assert_tensor_equal(a + b, np.zeros(5))  # the new kernel, at once
        assert_tensor_equal(a + b, np.zeros(5))
        with xrt.kernel_policy(xrt.KernelPolicy(add="native")):
            assert_tensor_equal(a + b, np.full(5, 2.0))
            assert_tensor_equal(a + b, np.full(5, 2.0))
        assert_tensor_equal(a + b, np.zeros(5))
    finally:
        xrt.unregister_kernel("add", "zeros_add")
    assert_tensor_equal(a + b, np.full(5, 2.0))
    assert_tensor_equal(a + b, np.full(5, 2.0))


def test_a_replay_gives_way_to_every_change_a_decision_reads():
    """Note [Stale replays]: repeated calls inside an explain log or a profile are each
    dispatched and recorded; a pin set on the policy in force (scoped or global), the
    global policy replaced, and leaving a scope each take effect at the next call."""
    a, b = xrt.ones(6), xrt.ones(6)

    def zeros(x1, x2):
        return xrt.zeros(x1.shape, dtype=x1.dtype)

    a + b
    a + b
    with xrt.explain() as log:
        for _ in range(3):
            a + b
    assert len(decisions_for(log, "add")) == 3
    with xrt.profile() as prof:
        for _ in range(3):
            a + b
    assert [o.name for o in prof.ops] == ["add"] * 3
    xrt.register_kernel("add", "zeros_add", zeros, priority=-100)  # never chosen unpinned
    old = xrt.get_kernel_policy()
    try:
        policy = xrt.KernelPolicy()
        with xrt.kernel_policy(policy):
            assert_tensor_equal(a + b, np.full(6, 2.0))
            assert_tensor_equal(a + b, np.full(6, 2.0))  # replayed
            policy.set("add", "zeros_add")  # the scoped policy changed in place
            assert_tensor_equal(a + b, np.zeros(6))
            policy.remove("add")
            assert_tensor_equal(a + b, np.full(6, 2.0))
            with xrt.kernel_policy(add="zeros_add"):
                assert_tensor_equal(a + b, np.zeros(6))
            assert_tensor_equal(a + b, np.full(6, 2.0))  # the inner scope left
        global_policy = xrt.KernelPolicy()
        xrt.set_kernel_policy(global_policy)
        a + b
        assert_tensor_equal(a + b, np.full(6, 2.0))
        global_policy.set("add", "zeros_add")  # the global policy changed in place
        assert_tensor_equal(a + b, np.zeros(6))
        xrt.set_kernel_policy(xrt.KernelPolicy())  # and replaced
        assert_tensor_equal(a + b, np.full(6, 2.0))
    finally:
        xrt.set_kernel_policy(old)
        xrt.unregister_kernel("add", "zeros_add")
    before = replayed()
    assert_tensor_equal(a + b, np.full(6, 2.0))
    assert_tensor_equal(a + b, np.full(6, 2.0))
    assert replayed() == before + 1  # planned again once, then replayed


def test_an_inplace_operator_repeats_the_kept_call():
    a = xrt.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    b = xrt.asarray(np.full((3, 4), 0.5, np.float32))
    a + b  # decided and kept
    before = replayed()
    for _ in range(3):
        a += b
    assert replayed() == before + 3
    assert_tensor_equal(a, np.arange(12, dtype=np.float32).reshape(3, 4) + 1.5)
    a += a  # a itself may be the other operand
    assert replayed() == before + 4
    assert_tensor_equal(a, (np.arange(12, dtype=np.float32).reshape(3, 4) + 1.5) * 2)


def test_an_inplace_operator_with_an_overlapping_operand_takes_its_own_path():
    """b overlaps a shifted: the kept call's key matches, but a's writes would reach b's
    unread elements; the operator copies b first, as NumPy's result shows."""
    x = xrt.asarray(np.arange(17, dtype=np.float32))
    xrt.ones(16) + xrt.ones(16)  # kept: two contiguous float32 (16,)
    a, b = x[:16], x[1:]
    before = replayed()
    a += b
    assert replayed() == before
    want = np.arange(17, dtype=np.float32)
    want[:16] += want[1:].copy()
    assert_tensor_equal(x, want)


def test_an_inplace_operator_that_would_change_the_dtype_still_raises():
    a = xrt.asarray(np.arange(4, dtype=np.int8))
    b = xrt.asarray(np.full(4, 300, np.int16))
    a + b  # kept: int8 + int16 -> int16
    with pytest.raises(TypeError, match="in-place add would change the dtype"):
        a += b
    assert_tensor_equal(a, np.arange(4, dtype=np.int8))


def test_a_call_with_a_python_scalar_repeats_with_each_value():
    """The scalar is part of the key by its dtype, not its value: each call reads its own,
    in either order and in place; a scalar that does not fit still raises."""
    base = np.arange(12, dtype=np.int8).reshape(3, 4)
    x = xrt.asarray(base)
    x * 2
    before = replayed()
    got = [x * v for v in (3, -1, 5)] + [7 - x]
    assert replayed() == before + 3  # 7 - x is its own call (the scalar first)
    for g, want in zip(got, [base * 3, -base, base * 5, 7 - base]):
        assert_tensor_equal(g, want.astype(np.int8))
    7 - x
    before = replayed()
    assert_tensor_equal(9 - x, (9 - base).astype(np.int8))
    assert replayed() == before + 1
    with pytest.raises(OverflowError):
        x * 300
    y = xrt.asarray(base.copy())
    y += 1
    before = replayed()
    y += 2
    y += -4
    assert replayed() == before + 2
    assert_tensor_equal(y, (base - 1).astype(np.int8))
    zero_d = xrt.asarray(np.float64(1.5))
    zero_d + 1.0
    assert_tensor_equal(zero_d + 2.0, np.float64(3.5))


def test_replays_are_kept_per_thread():
    a, b = xrt.ones(7), xrt.ones(7)
    counts = []

    def work():
        start = replayed()
        for _ in range(4):
            a * b
        counts.append(replayed() - start)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert counts == [3]  # its first call decided; this thread's count did not move

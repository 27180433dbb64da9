"""tests/test_sorting.py: sort, argsort and searchsorted, against NumPy (on every device
where a test takes the `device` fixture; the CPU's kernels pinned one by one) and on CUDA
against the CPU.

The standard's order: ascending by value, NaNs last (first when descending),
-0.0 equal to +0.0; stable sorts keep equal elements in input order, descending
ones too. NumPy's stable sort of the flipped array, flipped back, is that
descending order.

On CUDA (the tests marked cuda), the native sort, argsort and searchsorted give the CPU's
results bit for bit: every real numeric dtype, ascending and descending, ties kept in input
order, NaN / ±0 / ±inf, rows of every length the kernels tell apart (0, 1, 31, 1000, 2048 in
shared memory; 2049 and up through the onesweep radix sort, around its tiles of 3072 and
4096 keys, up to 2^22), many short rows, batches of long rows, input that makes the radix
sort skip some or all of its passes (equal keys, few distinct bytes), sorted and reversed
input, the 4-bit radix sort behind XPURUNTIME_CUDA_SORT=lsd4, other axes and strided views.
Without a GPU, the kernels' sources are compiled for sm_90 by test_cuda_jit.py's compile-all
test (the family registers samples with kernel_check.h), and the radix kernels run on the
host emulator in test_cuda_sort_emulated.py.
"""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import (INTEGER, REAL_FLOATING, arrays, assert_tensor_equal,
                    numpy_dtype, tensor, to_numpy)


REAL = INTEGER + REAL_FLOATING
shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6)


def reference(a):
    """`a` in a dtype NumPy sorts with the standard's NaN order (bfloat16 as
    float32, which holds it exactly)."""
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


def expected_argsort(a, axis, descending):
    a = reference(a)
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    flipped = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
    return a.shape[axis] - 1 - np.flip(flipped, axis)


def expected_sort(a, axis, descending):
    return np.take_along_axis(a, expected_argsort(a, axis, descending), axis)


def assert_same_bits(t, expected):
    """Values, dtype and shape as assert_tensor_equal, and the sign of every
    zero (NaNs compare by position)."""
    assert_tensor_equal(t, expected)
    if expected.dtype.kind == "f" or expected.dtype.name == "bfloat16":
        assert np.array_equal(np.signbit(reference(to_numpy(t))),
                              np.signbit(reference(expected)))


def _kernels():
    """The CPU sort kernels this machine runs: the AVX-512 one where the CPU has it,
    and the radix one everywhere."""
    try:
        with xrt.kernel_policy(sort="avx512"):
            xrt.sort(xrt.ones(3))
        return ("avx512", "radix")
    except xrt.UnsupportedOperationError:
        return ("radix",)


KERNELS = _kernels()


def pinned(kernel):
    return xrt.kernel_policy(sort=kernel, argsort=kernel)


special_floats = st.sampled_from([0.0, -0.0, np.nan, -np.nan, np.inf,
                                  -np.inf, 1.0, -1.0, 2.5])


# ------------------------------------------------------- sort and argsort


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", REAL)
@given(data=st.data())
def test_sort_and_argsort_match_numpy_stable(kernel, name, data):
    a = data.draw(arrays(name, shapes))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    descending = data.draw(st.booleans())
    t = tensor(a)
    indices = expected_argsort(a, axis, descending)
    with pinned(kernel):
        assert_tensor_equal(xrt.argsort(t, axis=axis, descending=descending),
                            indices.astype(np.int64))
        assert_same_bits(xrt.sort(t, axis=axis, descending=descending),
                         expected_sort(a, axis, descending))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", REAL_FLOATING)
@given(data=st.data())
def test_special_values_sort_like_numpy(kernel, name, data):
    a = data.draw(hnp.arrays(np.float64, st.integers(0, 40),
                             elements=special_floats))
    a = a.astype(numpy_dtype(name))
    descending = data.draw(st.booleans())
    t = tensor(a)
    with pinned(kernel):
        assert_tensor_equal(xrt.argsort(t, descending=descending),
                            expected_argsort(a, 0, descending))
        assert_same_bits(xrt.sort(t, descending=descending),
                         expected_sort(a, 0, descending))


def test_nans_go_last_ascending_and_first_descending(device):
    t = xrt.asarray([np.nan, 1.0, -np.inf, np.nan, 0.0], device=device)
    assert_tensor_equal(xrt.argsort(t), np.array([2, 4, 1, 0, 3]))
    assert_tensor_equal(xrt.argsort(t, descending=True), np.array([0, 3, 1, 4, 2]))


def test_descending_keeps_equal_elements_in_input_order(device):
    t = xrt.asarray([1, 3, 1, 3, 2, 1], dtype=xrt.int16, device=device)
    assert_tensor_equal(xrt.argsort(t, descending=True), np.array([1, 3, 4, 0, 2, 5]))
    zeros = xrt.asarray([0.0, -0.0, 1.0, -0.0, 0.0], device=device)
    out = to_numpy(xrt.sort(zeros, descending=True))
    assert np.array_equal(np.signbit(out), [False, False, True, True, False])


def test_stable_false_is_accepted(device):
    a = np.array([3, 1, 2, 1], dtype=np.int32)
    assert_tensor_equal(xrt.sort(xrt.asarray(a, device=device), stable=False), np.sort(a))
    idx = to_numpy(xrt.argsort(xrt.asarray(a, device=device), stable=False))
    assert np.array_equal(a[idx], np.sort(a))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", ["float32", "float64", "int32", "int64",
                                  "uint16", "int8", "float16"])
@pytest.mark.parametrize("n", [17, 300, 5000, 70000, 300000])
def test_long_rows_match_numpy(kernel, name, n):
    # Long enough for the vectorised quicksort, its parallel split and the
    # radix sort's wide digits; few distinct values test the duplicate path.
    rng = np.random.default_rng(n)
    for values in (rng.standard_normal(n) * 1000, rng.integers(-3, 3, n)):
        a = values.astype(name)
        t = xrt.asarray(a)
        with pinned(kernel):
            assert_tensor_equal(xrt.sort(t), np.sort(a, kind="stable"))
            assert_tensor_equal(xrt.argsort(t), np.argsort(a, kind="stable"))
            assert_tensor_equal(xrt.argsort(t, descending=True),
                                expected_argsort(a, 0, True))


@pytest.mark.parametrize("values", [
    1.0 + np.arange(-3000, 3000) * np.finfo(np.float64).eps,   # equal top bits
    np.concatenate([np.arange(5000) + 2.0**45, np.arange(5000) - 2.0**45]),
    np.array([2**62, -2**62, 3, 2**62 + 1, -2**62 - 1, 3, 2**62], dtype=np.int64),
], ids=["float-ulps", "int-far-apart", "int-extremes"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_argsort_of_64_bit_keys_that_share_their_top_bits(kernel, values):
    rng = np.random.default_rng(2)
    a = np.repeat(values, 3)[rng.permutation(3 * values.size)]
    if a.dtype == np.float64 and values[0] > 1e10:
        a = a.astype(np.int64)
    for descending in (False, True):
        with pinned(kernel):
            assert_tensor_equal(xrt.argsort(xrt.asarray(a), descending=descending),
                                expected_argsort(a, 0, descending))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("data", ["sorted", "reversed", "equal", "sawtooth"])
def test_adversarial_orders(kernel, data):
    n = 100000
    a = {"sorted": np.arange(n), "reversed": np.arange(n)[::-1].copy(),
         "equal": np.full(n, 7), "sawtooth": np.arange(n) % 257}[data]
    a = a.astype(np.float32)
    with pinned(kernel):
        assert_tensor_equal(xrt.sort(xrt.asarray(a)), np.sort(a))
        assert_tensor_equal(xrt.argsort(xrt.asarray(a)), np.argsort(a, kind="stable"))


def test_results_do_not_depend_on_thread_count():
    a = np.random.default_rng(0).standard_normal((7, 60000)).astype(np.float32)
    threads = xrt.num_threads()

    def run():
        return (to_numpy(xrt.argsort(xrt.asarray(a), axis=1)),
                to_numpy(xrt.sort(xrt.asarray(a.ravel()))))
    try:
        xrt.set_num_threads(1)
        one = run()
        xrt.set_num_threads(4)
        four = run()
    finally:
        xrt.set_num_threads(threads)
    assert np.array_equal(one[0], four[0]) and np.array_equal(one[1], four[1])
    assert np.array_equal(one[1], np.sort(a.ravel()))


@pytest.mark.parametrize("view", [
    lambda a: a[::-1], lambda a: a[:, ::-2], lambda a: a.T, lambda a: a[1:, 3:],
    lambda a: a[:, 2:3],
], ids=["negative", "negative-step-2", "transposed", "offset", "one-column"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("name", ["int64", "float32", "uint8"])
def test_strided_inputs(view, axis, name):
    base = np.random.default_rng(1).integers(-50, 50, (40, 37)).astype(name)
    a = view(base)
    t = xrt.asarray(a)
    assert t.strides == tuple(s // a.itemsize for s in a.strides)  # a view, not a copy
    assert_tensor_equal(xrt.sort(t, axis=axis), np.sort(a, axis=axis, kind="stable"))
    assert_tensor_equal(xrt.argsort(t, axis=axis, descending=True),
                        expected_argsort(a, axis, True))


def test_rows_along_a_leading_axis_of_a_3d_array():
    a = np.random.default_rng(3).standard_normal((33, 5, 41)).astype(np.float64)
    for axis in (0, 1):
        assert_tensor_equal(xrt.sort(xrt.asarray(a), axis=axis), np.sort(a, axis=axis))
        assert_tensor_equal(xrt.argsort(xrt.asarray(a), axis=axis),
                            np.argsort(a, axis=axis, kind="stable"))


@pytest.mark.parametrize("shape, axis", [((0,), 0), ((3, 0), 1), ((3, 0), 0),
                                         ((0, 4), -1), ((2, 1), 1)])
def test_empty_and_trivial_rows(shape, axis):
    a = np.zeros(shape, dtype=np.float32)
    assert_tensor_equal(xrt.sort(xrt.asarray(a), axis=axis), a)
    assert_tensor_equal(xrt.argsort(xrt.asarray(a), axis=axis),
                        np.zeros(shape, dtype=np.int64))


@pytest.mark.parametrize("func", [xrt.sort, xrt.argsort])
def test_zero_d_input_has_no_axis(func):
    with pytest.raises(IndexError, match="out of bounds"):
        func(xrt.asarray(1.5))


@pytest.mark.parametrize("func", [xrt.sort, xrt.argsort])
@pytest.mark.parametrize("axis", [2, -3, 10])
def test_axis_out_of_range_raises_IndexError(func, axis):
    with pytest.raises(IndexError, match="axis"):
        func(xrt.ones((2, 3)), axis=axis)


@pytest.mark.parametrize("func", [xrt.sort, xrt.argsort])
@pytest.mark.parametrize("name", ["bool", "complex64", "complex128"])
def test_non_real_dtypes_raise_TypeError(func, name):
    with pytest.raises(TypeError, match="real numeric"):
        func(xrt.asarray(np.zeros(3, dtype=name)))


@pytest.mark.parametrize("func", [xrt.sort, xrt.argsort])
def test_bad_arguments_raise_TypeError(func):
    with pytest.raises(TypeError, match="Tensor"):
        func([3, 1, 2])
    x = xrt.asarray([[3.0, 1.0], [2.0, 4.0]])  # axis by position, as NumPy takes it
    assert np.asarray(func(x, 0)).tolist() == np.asarray(func(x, axis=0)).tolist()
    with pytest.raises(TypeError):
        func(xrt.ones(3), -1, True)  # descending stays keyword-only
    with pytest.raises(TypeError, match="axis"):
        func(xrt.ones(3), axis=0.5)
    with pytest.raises(TypeError, match="axis"):
        func(xrt.ones(3), axis=True)
    with pytest.raises(TypeError):
        func(xrt.ones(3), descending=1)


# ------------------------------------------------------------ searchsorted


@pytest.mark.parametrize("name", REAL)
@given(data=st.data())
def test_searchsorted_matches_numpy(name, data):
    a = np.sort(reference(data.draw(arrays(name, st.integers(0, 12)))), kind="stable")
    v = reference(data.draw(arrays(name, hnp.array_shapes(min_dims=0, max_dims=2,
                                                             max_side=4))))
    side = data.draw(st.sampled_from(["left", "right"]))
    x1 = tensor(a.astype(numpy_dtype(name)))
    x2 = tensor(v.astype(numpy_dtype(name)))
    assert_tensor_equal(xrt.searchsorted(x1, x2, side=side),
                        np.searchsorted(a, v, side=side).astype(np.int64))


@given(data=st.data())
def test_searchsorted_with_sorter_matches_numpy(data):
    a = data.draw(arrays("float64", st.integers(1, 12), allow_nan=False))
    v = data.draw(arrays("float64", st.integers(0, 6)))
    side = data.draw(st.sampled_from(["left", "right"]))
    sorter = np.argsort(a, kind="stable")
    for sorter_dtype in (np.int64, np.int16, np.uint8):
        out = xrt.searchsorted(xrt.asarray(a), xrt.asarray(v), side=side,
                               sorter=xrt.asarray(sorter.astype(sorter_dtype)))
        assert_tensor_equal(out, np.searchsorted(a, v, side=side, sorter=sorter))


def test_searchsorted_is_consistent_with_sort_for_special_values():
    x1 = xrt.sort(xrt.asarray([np.nan, 2.0, -0.0, np.inf, 0.0]))
    v = xrt.asarray([np.nan, 0.0, -0.0, np.inf, 3.0])
    assert_tensor_equal(xrt.searchsorted(x1, v), np.array([4, 0, 0, 3, 3]))
    assert_tensor_equal(xrt.searchsorted(x1, v, side="right"), np.array([5, 2, 2, 4, 3]))


@pytest.mark.parametrize("x1, x2, expected", [
    ([1.0, 2.0, 3.0], 2, 1), ([1.0, 2.0, 3.0], 2.5, 2), ([1, 5, 9], 5, 1),
    ([0.5, 1.5], -7, 0), ([True], True, 0),
])
def test_searchsorted_takes_python_scalars(x1, x2, expected):
    if isinstance(x2, bool):
        with pytest.raises(TypeError):
            xrt.searchsorted(xrt.asarray(x1), x2)
        return
    out = xrt.searchsorted(xrt.asarray(x1), x2)
    assert out.shape == () and out.dtype == xrt.int64 and int(out) == expected


def test_searchsorted_promotes_mixed_dtypes():
    x1 = xrt.asarray([1, 2, 300], dtype=xrt.int16)
    x2 = xrt.asarray([2, 255], dtype=xrt.uint8)
    assert_tensor_equal(xrt.searchsorted(x1, x2), np.array([1, 2]))


@pytest.mark.parametrize("call, error, match", [
    (lambda: xrt.searchsorted(xrt.ones((2, 2)), xrt.ones(2)), ValueError, "one-dimensional"),
    (lambda: xrt.searchsorted(xrt.ones(3), xrt.ones(2), side="middle"), ValueError, "side"),
    (lambda: xrt.searchsorted(xrt.ones(3), xrt.ones(2), sorter=xrt.ones(3)), TypeError, "sorter"),
    (lambda: xrt.searchsorted(xrt.ones(3), xrt.ones(2),
                              sorter=xrt.asarray([0, 1])), ValueError, "sorter"),
    (lambda: xrt.searchsorted(xrt.ones(3), xrt.ones(2),
                              sorter=xrt.asarray([0, 3, 1])), IndexError, "sorter"),
    (lambda: xrt.searchsorted(xrt.ones(3), xrt.ones(2),
                              sorter=xrt.asarray([0, -1, 1])), IndexError, "sorter"),
    (lambda: xrt.searchsorted(xrt.ones(3, dtype=xrt.complex64), xrt.ones(2)), TypeError, "real"),
    (lambda: xrt.searchsorted(xrt.ones(3, dtype=xrt.int32), xrt.ones(2)), TypeError, "promotion"),
    (lambda: xrt.searchsorted(xrt.ones(3), "a"), TypeError, "scalar"),
    (lambda: xrt.searchsorted([1.0], xrt.ones(2)), TypeError, "Tensor"),
], ids=["2d", "side", "float-sorter", "sorter-shape", "sorter-range", "sorter-negative",
        "complex", "int-float", "string", "list"])
def test_searchsorted_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_searchsorted_empty_and_zero_d():
    assert_tensor_equal(xrt.searchsorted(xrt.asarray(np.zeros(0)), xrt.ones((2, 3))),
                        np.zeros((2, 3), dtype=np.int64))
    assert_tensor_equal(xrt.searchsorted(xrt.ones(4), xrt.asarray(np.zeros((0, 2)))),
                        np.zeros((0, 2), dtype=np.int64))
    assert_tensor_equal(xrt.searchsorted(xrt.asarray([1.0, 2.0]), xrt.asarray(1.5)),
                        np.int64(1))


# ==== on CUDA against the CPU =====================================================================

# REAL (above) leaves out bool, which sort, argsort and searchsorted reject (TypeError).
FLOATS = ("float16", "bfloat16", "float32", "float64")
rng = np.random.default_rng(5)


def values(name, shape, few=False):
    """Random values of dtype `name`; few=True draws from a handful (many ties)."""
    if name == "bool":
        return rng.random(shape) < 0.5
    dtype = numpy_dtype(name)
    if few:
        return rng.integers(0, 4, size=shape).astype(dtype)
    if name.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    x = rng.standard_normal(shape) * 100
    return x.astype(dtype)


def with_specials(a):
    """a (float) with NaNs of two payloads, ±0 and ±inf spread over it."""
    flat = a.reshape(-1)
    k = flat.size
    if k == 0:
        return a
    bits = flat.view(np.uint16 if flat.itemsize == 2 else
                     np.uint32 if flat.itemsize == 4 else np.uint64)
    specials = [np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf]
    positions = rng.integers(0, k, size=max(1, k // 5))
    for i, p in enumerate(positions):
        flat[p] = specials[i % len(specials)]
    if k > 3:  # a NaN with another payload
        q = rng.integers(0, k)
        flat[q] = np.nan
        bits[q] |= 1
    return a


def bits(t):
    a = to_numpy(t.to_device("cpu") if str(t.device) != "cpu" else t)
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def check(a, axis=-1, descending=False, stable=True):
    cpu = tensor(a)
    gpu = cpu.to_device("cuda:0")
    for fn in (xrt.sort, xrt.argsort):
        want = fn(cpu, axis=axis, descending=descending, stable=stable)
        got = fn(gpu, axis=axis, descending=descending, stable=stable)
        assert str(got.device) != "cpu"
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(bits(got), bits(want), err_msg=f"{fn.__name__} {a.dtype}")


@pytest.mark.cuda
def test_native_kernels_registered():
    for op in ("sort", "argsort", "searchsorted"):
        assert any(k["device"] == "cuda" and k["name"] == "nvrtc" for k in xrt.list_kernels(op))


@pytest.mark.cuda
@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("n", [0, 1, 2, 31, 1000, 2049])
@pytest.mark.parametrize("descending", [False, True])
def test_lengths(name, n, descending):
    a = values(name, (3, n))
    if name in FLOATS:
        a = with_specials(a)
    check(a, descending=descending)


@pytest.mark.cuda
@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("descending", [False, True])
def test_ties_are_stable(name, descending):
    for n in (31, 1000, 5000):
        check(values(name, (2, n), few=True), descending=descending)


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["float32", "float64", "int64", "uint8", "float16", "bfloat16"])
def test_long_row(name):
    a = values(name, (1 << 20,))
    if name in FLOATS:
        a = with_specials(a)
    check(a)
    check(a, descending=True)


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["float32", "float64", "int64", "int32", "float16", "uint8"])
@pytest.mark.parametrize("n", [2048, 2049, 3071, 3072, 3073, 4095, 4096, 4097, 12289])
def test_lengths_around_radix_tiles(name, n):
    # Above 2048 the onesweep radix sort; its tiles hold 4096 keys of up to 32 bits and
    # 3072 of 64 bits.
    a = values(name, (2, n))
    if name in FLOATS:
        a = with_specials(a)
    check(a)
    check(a, descending=True, stable=False)


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["float32", "int64", "float64", "uint32"])
def test_very_long_row(name):
    a = values(name, (1 << 22,))
    if name in FLOATS:
        a = with_specials(a)
    check(a)
    check(a, descending=True)


@pytest.mark.cuda
def test_batches_of_long_rows():
    check(with_specials(values("float32", (16, 70000))))
    check(values("int32", (5, 100000), few=True), descending=True)
    check(values("float64", (64, 4100)), stable=False)


@pytest.mark.cuda
def test_radix_passes_skipped():
    # Equal keys: every pass is skipped and the input order is the result (-0.0 and 0.0
    # are equal keys with their own bits).
    zeros = np.zeros((2, 50000), np.float32)
    zeros[0, ::3] = -0.0
    check(zeros)
    check(np.full((3, 9000), -5, np.int64), descending=True)
    nans = np.full((1, 30000), np.nan)
    nans.view(np.uint64)[0, ::7] |= 5
    check(nans)
    # Few distinct bytes: passes over the constant ones are skipped, rows skip different
    # passes, and every row still finds its keys.
    a = rng.choice(np.array([0, 256, 65536, 1 << 40], np.int64), size=(3, 40000))
    a[1] = rng.integers(0, 7, 40000)
    a[2] = 1 << 50
    check(a)
    check(rng.integers(-3, 3, (4, 20000)).astype(np.int16), descending=True)


@pytest.mark.cuda
def test_sorted_and_reversed_input():
    ramp = np.arange(-60000, 60000, dtype=np.float32)
    check(ramp)
    check(ramp[::-1].copy())
    check(np.arange(200000, dtype=np.int64).reshape(2, -1), descending=True)


@pytest.mark.cuda
@pytest.mark.parametrize("setting", ["lsd4", "onesweep:8", "onesweep:20", "onesweep:12:0",
                                     "onesweep:16:4"])
def test_radix_settings(monkeypatch, setting):
    # The 4-bit radix sort (kept for rows of 2^30 and more, and for comparisons) and
    # other shapes of the onesweep pass (items per thread, launch bound) give the same
    # results.
    monkeypatch.setenv("XPURUNTIME_CUDA_SORT", setting)
    check(with_specials(values("float32", (3, 20000))))
    check(values("int64", (2, 30000)), descending=True)


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["float32", "int16"])
def test_many_short_rows(name):
    check(values(name, (20000, 7)))
    check(values(name, (3000, 100), few=True), descending=True)
    check(values(name, (50, 4000)))


@pytest.mark.cuda
def test_other_axes_and_views():
    a = with_specials(values("float32", (5, 300, 4)))
    for axis in (0, 1, 2, -1):
        check(a, axis=axis)
        check(a, axis=axis, descending=True)
    cpu = tensor(values("int32", (64, 64)))
    gpu = cpu.to_device("cuda:0")
    for view in (lambda t: t[::2, ::-3], lambda t: t.mT):
        np.testing.assert_array_equal(bits(xrt.sort(view(gpu), axis=-1)),
                                      bits(xrt.sort(view(cpu), axis=-1)))
        np.testing.assert_array_equal(bits(xrt.argsort(view(gpu), axis=0)),
                                      bits(xrt.argsort(view(cpu), axis=0)))


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["bool", "complex64"])
def test_rejected_dtypes(name):
    x = tensor(np.zeros(4, numpy_dtype(name))).to_device("cuda:0")
    for fn in (xrt.sort, xrt.argsort):
        with pytest.raises(TypeError):
            fn(x)
    with pytest.raises(TypeError):
        xrt.searchsorted(x, x)


@pytest.mark.cuda
def test_zero_dim_and_empty():
    for shape in [(), (0,), (4, 0), (0, 5)]:
        a = np.zeros(shape, np.float32) if shape == () else values("float32", shape)
        if shape == ():
            with pytest.raises(Exception):
                xrt.sort(tensor(a).to_device("cuda:0"))
            continue
        check(a)


@pytest.mark.cuda
@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(name, side):
    a = values(name, (500,), few=True)
    if name in FLOATS:
        a = with_specials(a)
    x1 = xrt.sort(tensor(a))
    needles = values(name, (7, 30), few=True)
    if name in FLOATS:
        needles = with_specials(needles)
    x2 = tensor(needles)
    want = xrt.searchsorted(x1, x2, side=side)
    got = xrt.searchsorted(x1.to_device("cuda:0"), x2.to_device("cuda:0"), side=side)
    np.testing.assert_array_equal(bits(got), bits(want))
    sorter = xrt.argsort(tensor(a))
    want = xrt.searchsorted(tensor(a), x2, side=side, sorter=sorter)
    got = xrt.searchsorted(tensor(a).to_device("cuda:0"), x2.to_device("cuda:0"), side=side,
                           sorter=sorter.to_device("cuda:0"))
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.cuda
def test_searchsorted_bad_sorter():
    a = tensor(np.arange(10, dtype=np.float32)).to_device("cuda:0")
    sorter = tensor(np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 10], np.int64)).to_device("cuda:0")
    with pytest.raises(IndexError):
        xrt.searchsorted(a, a, sorter=sorter)
    # the device stays usable
    np.testing.assert_array_equal(bits(xrt.searchsorted(a, a)), np.arange(10, dtype=np.uint64))


@pytest.mark.cuda
def test_radix_sort_runs_on_the_current_stream():
    """A sort enqueued on a side stream behind a long sleep there sees the data written
    just before it on that stream, and returns without waiting for it."""
    torch = pytest.importorskip("torch")
    from cuda_helpers import busy, torch_stream

    a = values("float32", (1 << 20,))
    want = bits(xrt.sort(tensor(a)))
    xrt.sort(tensor(a[:5000]).to_device("cuda:0"))  # compiled before the clock runs
    x = tensor(np.zeros_like(a)).to_device("cuda:0")
    stream = xrt.cuda.Stream()
    source = torch.from_numpy(a).cuda()
    torch.cuda.synchronize()
    with stream:
        busy(torch, stream)
        with torch.cuda.stream(torch_stream(torch, stream)):
            torch.from_dlpack(x.__dlpack__(stream=-1)).copy_(source)
        got = xrt.sort(x)
        assert not stream.query()  # still sleeping: the sort did not wait on the host
        host = got.to_device("cpu")  # a copy on the stream, after the sort
    np.testing.assert_array_equal(bits(host), want)

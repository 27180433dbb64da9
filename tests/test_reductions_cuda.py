"""tests/test_reductions_cuda.py: the reductions and scans on CUDA against the CPU.

The native reductions and scans give the CPU's results:
every op on every dtype it takes, each layout the kernels tell apart (rows, columns, full
reductions split over the device, several axes, strided and reversed views, keepdims, empty
and 0-d inputs), NaN and infinities, and the same bits on every run. Comparisons with the
CPU (the same op on a CPU copy of the input):
- exact for integers, bool, max/min, argmax/argmin, all/any/count_nonzero, and for float
  reductions of at most 64 elements and columns, which both devices add in order;
- float sums, means and cumulative sums differ in the order of additions only, so they
  agree within the bound any two orders of n additions share: 2 (n - 1) u sum(|x|), u the
  unit roundoff of the accumulator (float32 for float16/bfloat16), plus one unit in the
  last place of the result's dtype for the final rounding;
- products, and var/std (sums of squares, all terms of one sign), within 2 n u |result|
  plus a result ulp (inputs of products near 1); vector_norm accumulates in float64 on
  both devices, so the same bound with float64's u, plus 2 ulps of the result's dtype.
Without a GPU, the sources these kernels are generated from are compiled for sm_90 by
test_cuda_jit.py's compile-all test (the families register samples with kernel_check.h).
"""

import numpy as np
import pytest

import xpuruntime as xrt
from common import ALL, numpy_dtype, tensor, to_numpy, wide


# NumPy warns about the NaNs and empty reductions the references meet.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

rng = np.random.default_rng(11)

ORDERED = tuple(n for n in ALL if not n.startswith("complex"))
NUMERIC = tuple(n for n in ALL if n != "bool")
INEXACT = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")
ROUNDOFF = {"float16": 2.0**-24, "bfloat16": 2.0**-24, "float32": 2.0**-24,
            "float64": 2.0**-53, "complex64": 2.0**-24, "complex128": 2.0**-53}
RESULT_ULP = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23,
              "float64": 2.0**-52, "complex64": 2.0**-23, "complex128": 2.0**-52}


def values(name, shape, low=-3.0, high=3.0):
    """Random values of dtype `name` as a NumPy array."""
    if name == "bool":
        return rng.random(shape) < 0.5
    dtype = numpy_dtype(name)
    if name.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape,
                            endpoint=True).astype(dtype)
    x = rng.uniform(low, high, size=shape)
    if name.startswith("complex"):
        # Imaginary parts of the real parts' spread around 0: values near 1 stay near 1.
        half = (high - low) / 2
        x = x + 1j * rng.uniform(-half, half, size=shape)
    return x.astype(dtype)


def both(a):
    """The same data as a CPU tensor and a CUDA tensor."""
    cpu = tensor(a)
    return cpu, cpu.to_device("cuda:0")


def host(t):
    return to_numpy(t.to_device("cpu") if str(t.device) != "cpu" else t)


# wide(a) (above): values as float64 (complex128 for complex) for comparisons.


def check_exact(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    g, w = host(got), host(want)
    if g.dtype.name == "bfloat16":
        g, w = g.astype(np.float32), w.astype(np.float32)
    np.testing.assert_array_equal(g, w)


def check_close(got, want, tolerance):
    """|got - want| <= tolerance (an array of the result's shape, or a number)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    g, w = wide(host(got)), wide(host(want))
    nan = np.isnan(w)
    np.testing.assert_array_equal(np.isnan(g), nan)
    error = np.abs(g - w)
    bound = np.broadcast_to(np.asarray(tolerance, dtype=np.float64), error.shape)
    assert np.all(error[~nan] <= bound[~nan]), (g, w, error.max(initial=0))


def sum_bound(x, name, axis, keepdims, mean=False):
    """The order-independent bound of a float sum (see the module's docstring)."""
    a = np.abs(wide(x))
    n = a.size if axis is None else int(np.prod([a.shape[d] for d in np.atleast_1d(axis)]))
    total = np.sum(a, axis=axis, keepdims=keepdims)
    bound = 2 * max(n - 1, 0) * ROUNDOFF[name] * total
    if mean and n:
        bound = bound / n
    return bound


def ulps(want, name, count=1):
    return count * RESULT_ULP[name] * np.abs(wide(host(want)))


def norm_bound(want, name, n):
    """vector_norm: a float64 sum of n terms of one sign, rounded to the result's dtype."""
    return 2 * n * 2.0**-53 * np.abs(wide(host(want))) + ulps(want, name, 2)


# ---- every op on every dtype it takes, full reductions --------------------------------

SHAPE = (37, 53)  # 1961 elements: one warp or one block, no split


def run_both(op, a, view=lambda t: t):
    cpu, gpu = both(a)
    return op(view(gpu)), op(view(cpu))


@pytest.mark.cuda
@pytest.mark.parametrize("name", NUMERIC)
def test_sum_prod_mean_of_every_dtype(name):
    a = values(name, SHAPE)
    got, want = run_both(xrt.sum, a)
    if name in INEXACT:
        check_close(got, want, sum_bound(a, name, None, False) + ulps(want, name))
    else:
        check_exact(got, want)
    p = values(name, SHAPE, 0.999, 1.001) if name in INEXACT else values(name, SHAPE)
    got, want = run_both(xrt.prod, p)
    if name in INEXACT:
        check_close(got, want, 2 * p.size * ROUNDOFF[name] * np.abs(wide(host(want)))
                    + ulps(want, name))
    else:
        check_exact(got, want)
    got, want = run_both(xrt.mean, a)
    result = "float64" if name not in INEXACT else name
    check_close(got, want, sum_bound(a, result, None, False, mean=True) + ulps(want, result))


@pytest.mark.cuda
def test_sum_of_bool_counts():
    a = values("bool", SHAPE)
    got, want = run_both(xrt.sum, a)
    check_exact(got, want)
    assert host(got) == a.sum()


@pytest.mark.cuda
@pytest.mark.parametrize("name", ORDERED)
@pytest.mark.parametrize("op", [xrt.max, xrt.min, xrt.argmax, xrt.argmin])
def test_extrema_of_every_dtype(op, name):
    a = values(name, SHAPE)
    got, want = run_both(op, a)
    check_exact(got, want)
    got, want = run_both(lambda t: op(t, axis=1), a)
    check_exact(got, want)


@pytest.mark.cuda
@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("op", [xrt.all, xrt.any, xrt.count_nonzero])
def test_truth_of_every_dtype(op, name):
    a = values(name, SHAPE)
    a.reshape(-1)[::3] = 0  # zeros among nonzeros, and rows of each
    got, want = run_both(op, a)
    check_exact(got, want)
    got, want = run_both(lambda t: op(t, axis=0), a)
    check_exact(got, want)


@pytest.mark.cuda
@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize("op", [xrt.var, xrt.std])
def test_var_std_of_every_dtype(op, name):
    a = values(name, SHAPE)
    result = name if name in INEXACT else "float64"
    real = result.replace("complex64", "float32").replace("complex128", "float64")
    for correction in (0, 1):
        got, want = run_both(lambda t: op(t, correction=correction), a)
        check_close(got, want, 2 * a.size * ROUNDOFF[real] * np.abs(wide(host(want)))
                    + ulps(want, real))


@pytest.mark.cuda
@pytest.mark.parametrize("name", INEXACT)
@pytest.mark.parametrize("order", [2, 1, 0, 3.5, -1.5, float("inf"), float("-inf")])
def test_vector_norm_of_every_dtype(name, order):
    a = values(name, SHAPE)
    real = name.replace("complex64", "float32").replace("complex128", "float64")
    got, want = run_both(lambda t: xrt.linalg.vector_norm(t, ord=order), a)
    check_close(got, want, norm_bound(want, real, a.size))
    got, want = run_both(lambda t: xrt.linalg.vector_norm(t, axis=0, ord=order), a)
    check_close(got, want, norm_bound(want, real, a.shape[0]))


@pytest.mark.cuda
def test_vector_norm_rescales_out_of_range_sums():
    for scale in (1e-200, 1e200):
        a = values("float64", (4, 300)) * scale
        for order in (2, 1, 3.0):
            got, want = run_both(lambda t: xrt.linalg.vector_norm(t, axis=1, ord=order), a)
            check_close(got, want, norm_bound(want, "float64", a.shape[1]))
            assert np.all(np.isfinite(host(got)))


@pytest.mark.cuda
@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize("op", [xrt.cumulative_sum, xrt.cumulative_prod])
def test_scans_of_every_dtype(op, name):
    product = op is xrt.cumulative_prod
    a = values(name, 1961, 0.999, 1.001) if product and name in INEXACT else values(name, 1961)
    got, want = run_both(op, a)
    if name not in INEXACT:
        check_exact(got, want)
    elif product:
        check_close(got, want, 2 * a.size * ROUNDOFF[name] * np.abs(wide(host(want)))
                    + ulps(want, name))
    else:
        bound = 2 * a.size * ROUNDOFF[name] * np.cumsum(np.abs(wide(a)))
        check_close(got, want, bound + ulps(want, name))


# ---- layouts --------------------------------------------------------------------------

CUBE = (6, 70, 45)
CUDA_LAYOUTS = {
    # name: (shape, view of the input, axis)
    "rows": ((300, 700), None, -1),
    "columns": ((700, 300), None, 0),
    "columns, short": ((40, 300), None, 0),
    "rows, short": ((2000, 9), None, 1),
    "middle axis": (CUBE, None, 1),
    "outer and inner axes": (CUBE, None, (0, 2)),
    "first two axes": (CUBE, None, (0, 1)),
    "last two axes": (CUBE, None, (1, 2)),
    "all axes of a cube": (CUBE, None, None),
    "transposed, axis 0": ((300, 500), lambda t: t.mT, 0),
    "transposed, axis 1": ((300, 500), lambda t: t.mT, 1),
    "strided slice": ((300, 500), lambda t: t[::2, 1::3], 1),
    "reversed": ((300, 500), lambda t: xrt.flip(t, axis=1), 1),
    "reversed, all": ((300, 500), lambda t: xrt.flip(t, axis=0), None),
    "large, split": ((1 << 21,), None, None),
    "few long rows, split": ((3, 400000), None, 1),
    "long columns, split": ((100000, 40), None, 0),
    "empty axis": ((0, 5), None, 0),
    "empty result": ((0, 5), None, 1),
    "0-d": ((), None, None),
    "one element": ((1, 1), None, None),
}


def layout_case(layout):
    shape, view, axis = CUDA_LAYOUTS[layout]
    return shape, view or (lambda t: t), axis


@pytest.mark.cuda
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("layout", sorted(CUDA_LAYOUTS))
def test_layouts_exact_ops(layout, keepdims):
    shape, view, axis = layout_case(layout)
    a = values("int32", shape)
    empty = 0 in shape
    cases = [xrt.sum, xrt.prod, xrt.count_nonzero, xrt.any]
    cases += [] if empty else [xrt.max, xrt.min]
    for op in cases:
        got, want = run_both(lambda t: op(t, axis=axis, keepdims=keepdims), a, view)
        check_exact(got, want)
    f = values("float32", shape)
    for op in [] if empty else [xrt.max, xrt.min]:
        got, want = run_both(lambda t: op(t, axis=axis, keepdims=keepdims), f, view)
        check_exact(got, want)
    if not empty and (axis is None or isinstance(axis, int)):
        for op in (xrt.argmax, xrt.argmin):
            got, want = run_both(lambda t: op(t, axis=axis, keepdims=keepdims), f, view)
            check_exact(got, want)


@pytest.mark.cuda
@pytest.mark.parametrize("layout", sorted(CUDA_LAYOUTS))
def test_layouts_float_ops(layout):
    shape, view, axis = layout_case(layout)
    a = values("float32", shape)
    cpu, _ = both(a)
    viewed = wide(host(view(cpu)))
    for op, mean in ((xrt.sum, False), (xrt.mean, True)):
        got, want = run_both(lambda t: op(t, axis=axis), a, view)
        check_close(got, want, sum_bound(viewed, "float32", axis, False, mean)
                    + ulps(want, "float32"))
    for op in (xrt.var, xrt.std):
        got, want = run_both(lambda t: op(t, axis=axis, correction=1), a, view)
        n = viewed.size if axis is None else viewed.size // max(1, host(want).size)
        check_close(got, want, 2 * max(n, 1) * ROUNDOFF["float32"] * np.abs(wide(host(want)))
                    + ulps(want, "float32"))
    got, want = run_both(lambda t: xrt.linalg.vector_norm(t, axis=axis), a, view)
    check_close(got, want, norm_bound(want, "float32", viewed.size))


@pytest.mark.cuda
def test_short_reductions_and_columns_match_the_cpu_bit_for_bit():
    # At most 64 elements per result, and columns too small to split: both devices add
    # in order.
    a = values("float32", (700, 300))
    for axis, x in ((0, a), (None, a[0, :60])):
        got, want = run_both(lambda t: xrt.sum(t, axis=axis), x)
        check_exact(got, want)
    got, want = run_both(lambda t: xrt.mean(t, axis=1), a[:, :50])
    check_exact(got, want)


@pytest.mark.cuda
def test_explicit_dtype_casts_first():
    a = values("int32", (50, 60))
    for dtype in (xrt.float32, xrt.int8, xrt.uint16, xrt.complex64):
        got, want = run_both(lambda t: xrt.sum(t, axis=1, dtype=dtype), a)
        check_exact(got, want)
        got, want = run_both(lambda t: xrt.cumulative_sum(t, axis=0, dtype=dtype), a)
        check_exact(got, want)
    f = values("float32", (50, 60))
    got, want = run_both(lambda t: xrt.sum(t, axis=0, dtype=xrt.float64), f)
    check_exact(got, want)  # columns: in order on both


@pytest.mark.cuda
def test_empty_reductions_give_the_identity():
    for name in ("float32", "int64", "complex64"):
        _, gpu = both(values(name, (0, 3)))
        assert host(xrt.sum(gpu)) == 0
        assert host(xrt.prod(gpu)) == 1
        assert np.isnan(host(xrt.mean(gpu))).all()
        assert np.isnan(host(xrt.var(gpu))).all()
        np.testing.assert_array_equal(host(xrt.sum(gpu, axis=0)), np.zeros(3))
        assert host(xrt.all(gpu)) and not host(xrt.any(gpu))
        assert host(xrt.count_nonzero(gpu)) == 0
        if name != "complex64":
            with pytest.raises(ValueError):
                xrt.max(gpu)
            with pytest.raises(ValueError):
                xrt.argmax(gpu)
    _, gpu = both(values("float32", (0,)))
    assert host(xrt.linalg.vector_norm(gpu)) == 0
    assert host(xrt.linalg.vector_norm(gpu, ord=-1)) == np.inf


@pytest.mark.cuda
def test_zero_dimensional_inputs():
    for name in ("float32", "int16", "bool"):
        a = values(name, ())
        for op in (xrt.sum, xrt.max, xrt.argmax, xrt.all, xrt.count_nonzero,
                   xrt.cumulative_sum):
            got, want = run_both(op, a)
            check_exact(got, want)


# ---- special values -------------------------------------------------------------------


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_nan_propagates_and_argmax_takes_the_first(name):
    a = values(name, (64, 3000))
    a[5, 17] = np.nan
    a[5, 2000] = np.nan
    a[9, 100] = np.inf
    a[9, 2999] = np.inf
    a[20, 7] = -np.inf
    a[30, :] = 1.0  # ties: the first index wins
    for op in (xrt.max, xrt.min, xrt.argmax, xrt.argmin):
        for axis in (None, 0, 1):
            got, want = run_both(lambda t: op(t, axis=axis), a)
            check_exact(got, want)
    got, want = run_both(lambda t: xrt.sum(t, axis=1), a)
    assert np.isnan(wide(host(got))[5]) and np.isinf(wide(host(got))[9])
    check_exact(xrt.isnan(got), xrt.isnan(want))
    b = np.full((5, 4000), -np.inf, dtype=numpy_dtype(name))
    got, want = run_both(lambda t: xrt.argmax(t, axis=1), b)
    check_exact(got, want)


@pytest.mark.cuda
def test_all_nan_and_signed_zero_truth():
    a = np.array([[np.nan, -0.0, 0.0], [0.0, -0.0, 0.0]], dtype=np.float32)
    for op in (xrt.all, xrt.any, xrt.count_nonzero):
        got, want = run_both(lambda t: op(t, axis=1), a)
        check_exact(got, want)
    got, want = run_both(xrt.sum, np.array([-0.0, -0.0], dtype=np.float32))
    check_exact(got, want)
    assert not np.signbit(host(got))


@pytest.mark.cuda
def test_complex_products_recover_infinities():
    a = np.array([complex(np.inf, np.nan), complex(2, 0), complex(0, 1)] * 30,
                 dtype=np.complex128)
    got, want = run_both(xrt.prod, a[:3])
    check_exact(got, want)


# ---- scans ----------------------------------------------------------------------------

SCANS = {
    # name: (shape, view, axis)
    "long line, many tiles and groups": ((300000,), None, 0),
    "rows": ((50, 9000), None, 1),
    "short rows": ((3000, 40), None, 1),
    "columns side by side": ((300, 70000), None, 0),
    "few columns": ((5000, 30), None, 0),
    "middle axis": ((4, 3000, 5), None, 1),
    "strided": ((400, 500), lambda t: t[::3, ::-2], 1),
    "transposed": ((400, 500), lambda t: t.mT, 1),
}


@pytest.mark.cuda
@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("case", sorted(SCANS))
def test_scan_layouts(case, include_initial):
    shape, view, axis = SCANS[case]
    view = view or (lambda t: t)
    a = values("int32", shape)
    for op in (xrt.cumulative_sum, xrt.cumulative_prod):
        got, want = run_both(
            lambda t: op(t, axis=axis, include_initial=include_initial), a, view)
        check_exact(got, want)
    f = values("float32", shape)
    cpu, _ = both(f)
    viewed = wide(host(view(cpu)))
    got, want = run_both(
        lambda t: xrt.cumulative_sum(t, axis=axis, include_initial=include_initial), f, view)
    bound = 2 * viewed.shape[axis] * ROUNDOFF["float32"] * np.cumsum(np.abs(viewed), axis=axis)
    if include_initial:
        pad = [(0, 0)] * viewed.ndim
        pad[axis] = (1, 0)
        bound = np.pad(bound, pad)
    check_close(got, want, bound + ulps(want, "float32"))


# ---- determinism ----------------------------------------------------------------------


@pytest.mark.cuda
def test_results_are_bit_identical_run_to_run():
    a = values("float32", (1 << 22,))
    _, gpu = both(a)
    m = gpu.reshape((1024, 4096)) if hasattr(gpu, "reshape") else xrt.reshape(gpu, (1024, 4096))
    ops = [
        lambda: xrt.sum(gpu),
        lambda: xrt.mean(gpu),
        lambda: xrt.var(gpu),
        lambda: xrt.linalg.vector_norm(gpu),
        lambda: xrt.sum(m, axis=0),
        lambda: xrt.sum(m, axis=1),
        lambda: xrt.argmax(gpu),
        lambda: xrt.cumulative_sum(gpu),
        lambda: xrt.cumulative_prod(xrt.sum(m, axis=0) * 0 + 1.0001),
    ]
    for op in ops:
        first, second = host(op()), host(op())
        assert first.tobytes() == second.tobytes()

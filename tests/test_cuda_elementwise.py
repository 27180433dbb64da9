"""tests/test_cuda_elementwise.py: the elementwise functions on CUDA give the CPU's results.

Every function of the standard, for every dtype it accepts, is computed on the same inputs
(random values and the special ones: ±0, ±inf, NaN, subnormals, the largest finite, complex
numbers with each part special) on the CPU (already checked against NumPy) and on CUDA:

- bit for bit where the CPU is exact: arithmetic, comparisons, integer and bool functions,
  rounding, and the correctly rounded ones (sqrt, division) on real dtypes;
- within a bound otherwise. CUDA's math library is documented to ≤ 2 ulp for most double
  and float functions and ≤ 4 ulp for a few float ones (powf, tanf); the CPU's SIMD libm
  (libmvec) is ≤ 4 ulp: real results agree to 8 ulp, 16-bit float results (computed in float
  and rounded) to 1 ulp of their type. Complex functions are compared norm-wise (each part
  within 8 ulp of the larger part), special values exactly (NaN, infinities, zeros and their
  signs where the standard fixes them). complex64 functions compute in double on the device,
  so their reference is the CPU's complex128 result rounded to complex64.

Layouts (broadcasting, strides, negative strides, unaligned views, 0-d, empty, many
dimensions, 64-bit offsets), in-place operators and Python scalars have their own tests.
Without a GPU, the device math is compiled as host C++ (cuda_host_math.py) and checked
against the CPU the same way, and every generated kernel source is compiled with NVRTC.
"""

import math

import numpy as np
import pytest

import xpuruntime as xrt
from common import COMPLEX, INTEGER, numpy_dtype, tensor, to_numpy
from elementwise_reference import FUNCTIONS, cases, result_dtype, zero_sign_specified
import cuda_host_math

CUDA = "cuda:0"
REAL_ULPS = 8          # real results of inexact functions (see the module docstring)
HALF_ULPS = 1          # float16/bfloat16 results of inexact functions
COMPLEX_ULPS = 8       # complex results, norm-wise
rng = np.random.default_rng(2025)


# ----------------------------------------------------------------------------- inputs

def _real_specials(float_dtype):
    fi = np.finfo(float_dtype)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0,
              -3.0, 1.5, -1.5, 2.5, -2.5, float(fi.smallest_subnormal),
              -float(fi.smallest_subnormal), float(fi.tiny), float(fi.max), -float(fi.max),
              math.pi / 2, -math.pi / 2, math.pi, 0.1, 10.0, 100.0, 1e-10, 60.0, -60.0]
    return np.array(values, dtype=float_dtype)


def _complex(re, im, dtype):
    z = np.empty(np.broadcast(re, im).shape, dtype=dtype)
    z.real, z.imag = re, im  # parts set one by one: complex arithmetic would lose signs
    return z


def _random(dtype, n):
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype in INTEGER:
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if dtype in COMPLEX:
        real = "float32" if dtype == "complex64" else "float64"
        return _complex(_random(real, n), _random(real, n), dtype)
    # Magnitudes from 1e-4 to 1e4 with both signs, and some in [-2, 2] for the functions
    # whose interesting part is there.
    wide = rng.standard_normal(n // 2) * np.exp(rng.uniform(-9, 9, n // 2))
    narrow = rng.uniform(-2, 2, n - n // 2)
    return np.concatenate([wide, narrow]).astype(numpy_dtype(dtype))


def special_values(dtype):
    """The values the standard's special cases are about, for dtype."""
    if dtype == "bool":
        return np.array([False, True])
    if dtype in INTEGER:
        info = np.iinfo(dtype)
        small = [0, 1, 2, 3, 7, 8, 31, 32, 63, 64, 65]
        small += [-1, -2, -3, -7, -8, -64] if info.min < 0 else []
        return np.array(small + [info.max, info.max - 1, info.min, info.min + 1], dtype=dtype)
    if dtype in COMPLEX:
        real = "float32" if dtype == "complex64" else "float64"
        parts = _real_specials(real)
        return _complex(parts[:, None], parts[None, :], dtype).ravel()
    if dtype in ("float16", "bfloat16"):
        with np.errstate(over="ignore"):
            return _real_specials(np.float32).astype(numpy_dtype(dtype))
    return _real_specials(dtype)


def binary_specials(dtype):
    """Pairs of special values (a smaller set for complex, whose pairs square the count)."""
    if dtype in COMPLEX:
        real = "float32" if dtype == "complex64" else "float64"
        parts = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, -3.0],
                         dtype=real)
        values = _complex(parts[:, None], parts[None, :], dtype).ravel()
    else:
        values = special_values(dtype)
    return np.repeat(values, len(values)), np.tile(values, len(values))


def inputs(fn, dtype, n=1500):
    """The operands of fn's test: the special values (all pairs for binary functions) and
    random values."""
    if fn.arity == 1:
        return [np.concatenate([special_values(dtype), _random(dtype, n)])]
    a, b = binary_specials(dtype)
    x, y = _random(dtype, n), _random(dtype, n)
    if fn.name == "pow" and dtype in COMPLEX:
        y = y / 64  # moderate exponents: exp(b log a) is ill-conditioned for huge ones
    if fn.name in ("pow", "bitwise_left_shift", "bitwise_right_shift") and dtype in INTEGER:
        y = rng.integers(-2 if np.iinfo(dtype).min < 0 else 0, 70, n).astype(dtype)
    return [np.concatenate([a, x]), np.concatenate([b, y])]


# ------------------------------------------------------------------------- comparison

def _ulp_distance(got, want):
    """Distance in units in the last place between same-dtype float arrays (finite)."""
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[got.dtype.itemsize]
    g = got.view(bits).astype(np.int64)
    w = want.view(bits).astype(np.int64)
    low = np.iinfo(bits).min
    g = np.where(g < 0, low - g, g)  # sign-magnitude to a monotonic integer line
    w = np.where(w < 0, low - w, w)
    return np.abs(g - w)


_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


def _as_float(a):
    return a.astype(np.float32) if a.dtype.itemsize == 2 else a


def _check_specials(got, want, signed_zero, where):
    """NaN where the reference is NaN, the same infinities, zeros of the same sign."""
    gf, wf = _as_float(got), _as_float(want)
    bad = np.isnan(gf) != np.isnan(wf)
    inf = np.isinf(wf) | np.isinf(gf)
    bad |= inf & (gf != wf)
    zeros = (gf == 0) & (wf == 0)
    if signed_zero:
        bad |= zeros & (np.signbit(gf) != np.signbit(wf))
    assert not bad.any(), _report(where, bad)
    return ~(np.isnan(wf) | inf | zeros)


def _report(where, bad):
    index = np.flatnonzero(bad)[:6]
    lines = [f"{int(bad.sum())} of {bad.size} differ"]
    for i in index:
        lines.append(where(i))
    return "\n".join(lines)


def assert_matches(name, dtype, got, want, operands):
    """got (CUDA) against want (CPU) for function `name` on operands of dtype."""
    fn = FUNCTIONS[name]

    def where(i):
        args = ", ".join(repr(o.ravel()[i]) for o in operands)
        return f"  {name}({args}): cuda {got.ravel()[i]!r}, cpu {want.ravel()[i]!r}"

    assert got.dtype == want.dtype and got.shape == want.shape
    got, want = got.ravel(), want.ravel()
    if got.dtype == bool or got.dtype.kind in "iu":
        assert np.array_equal(got, want), _report(where, got != want)
        return
    signed = zero_sign_specified(name, dtype)
    if fn.is_exact(dtype):
        # Bit for bit, NaN payloads aside.
        finite = _check_specials(got.real, want.real, signed, where)
        bad = finite & (_ulp_distance(got.real, want.real) != 0)
        if got.dtype.kind == "c":
            finite_im = _check_specials(got.imag, want.imag, signed, where)
            bad |= finite_im & (_ulp_distance(got.imag, want.imag) != 0)
        assert not bad.any(), _report(where, bad)
        return
    if got.dtype.kind != "c":
        finite = _check_specials(got, want, signed, where)
        limit = HALF_ULPS if got.dtype.itemsize == 2 else REAL_ULPS
        distance = _ulp_distance(got, want)
        if name == "logaddexp":
            # max + log1p(exp(-|a - b|)) cancels for a negative max: the error is relative
            # to the larger operand, not to the result.
            scale = np.maximum(np.abs(_as_float(operands[0].ravel())),
                               np.abs(_as_float(operands[1].ravel()))).astype(np.float64)
            with np.errstate(all="ignore"):
                error = np.abs(_as_float(got).astype(np.float64) - _as_float(want))
                bad = finite & (distance > limit) & (error > limit * _EPS[dtype] * scale)
        else:
            bad = finite & (distance > limit)
        assert not bad.any(), _report(where, bad)
        return
    # Complex: norm-wise, relative to the larger part of the reference.
    _check_specials(got.real, want.real, signed, where)
    _check_specials(got.imag, want.imag, signed, where)
    part = got.real.dtype
    eps = float(np.finfo(part).eps)
    with np.errstate(all="ignore"):
        scale = np.maximum(np.abs(want.real), np.abs(want.imag)).astype(np.float64)
        if name == "pow":
            # exp(b log a) amplifies the rounding of b log a by its size (the conditioning).
            a, b = (o.ravel().astype(np.complex128) for o in operands)
            scale = scale * (1 + np.abs(b * np.log(a)))
        limit = COMPLEX_ULPS * eps * scale + 4 * float(np.finfo(part).smallest_subnormal)
        error = np.maximum(np.abs(got.real.astype(np.float64) - want.real),
                           np.abs(got.imag.astype(np.float64) - want.imag))
        both_finite = np.isfinite(got.real) & np.isfinite(got.imag) & \
            np.isfinite(want.real) & np.isfinite(want.imag)
        bad = both_finite & (error > limit)
    assert not bad.any(), _report(where, bad)


def reference(name, dtype, operands):
    """The CPU's result. complex64 functions the device computes in double (all but the
    arithmetic, which is float on both) are compared with the complex128 result rounded."""
    fn = getattr(xrt, name)
    if dtype == "complex64" and not FUNCTIONS[name].is_exact("complex64") and name not in (
            "multiply", "square", "divide", "reciprocal", "sign"):
        wide = fn(*[xrt.asarray(o.astype(np.complex128)) for o in operands])
        out = to_numpy(wide)
        return out.astype(np.float32 if out.dtype == np.float64 else np.complex64)
    return to_numpy(fn(*[tensor(o) for o in operands]))


# ------------------------------------------------------------- without a GPU: host math

@pytest.fixture(scope="module")
def host_math():
    if cuda_host_math.compiler() is None:
        pytest.skip("no C++ compiler to build the device math for the host")
    triples = [(f.name, f.arity, d) for f in FUNCTIONS.values() for d in f.dtypes
               if not f.computes_integers_in_float(d)]
    return cuda_host_math.HostMath(triples)


@pytest.mark.parametrize("name, dtype", [
    c for c in cases(FUNCTIONS) if not FUNCTIONS[c[0]].computes_integers_in_float(c[1])])
def test_device_math_built_for_the_host_matches_the_cpu(host_math, name, dtype):
    """The device code's formulas and special cases, with the C library's real functions."""
    fn = FUNCTIONS[name]
    operands = [o.astype(numpy_dtype(dtype)) for o in inputs(fn, dtype, n=600)]
    with np.errstate(all="ignore"):
        want = reference(name, dtype, operands)
        got = host_math.call(name, dtype, want.dtype, *operands)
    assert_matches(name, dtype, got, want, operands)


# ------------------------------------------------------------------------- on CUDA

def gpu(a):
    return tensor(a).to_device(CUDA)


def host(t):
    assert t.device == xrt.Device(CUDA)
    return to_numpy(t.to_device("cpu"))


@pytest.fixture(scope="module")
def warm():
    """Compiles every dense kernel once, on all cores (NVRTC takes ~0.3 s a kernel)."""
    xrt._core._cuda._elementwise_warm(0, 16)


@pytest.mark.cuda
@pytest.mark.parametrize("name, dtype", cases(FUNCTIONS))
def test_function_on_cuda_matches_the_cpu(warm, name, dtype):
    fn = FUNCTIONS[name]
    operands = inputs(fn, dtype)
    with np.errstate(all="ignore"):
        want = reference(name, dtype, operands)
    with xrt.explain() as log:
        result = getattr(xrt, name)(*[gpu(o) for o in operands])
    assert log.kernels(name) == ["nvrtc"]
    assert result.dtype == getattr(xrt, result_dtype(fn, dtype))
    assert_matches(name, dtype, host(result), want, operands)


def same(got, want):
    """Exact equality of a CUDA result with a CPU one (NaNs equal)."""
    np.testing.assert_array_equal(host(got), to_numpy(want))


def close(got, want):
    """A CUDA result of an inexact function against the CPU's: 8 ulp (the module's bound)."""
    g, w = host(got), to_numpy(want)
    if g.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w)
        return
    eps = float(np.finfo(g.real.dtype).eps) if g.dtype.itemsize > 2 else 2.0**-7
    np.testing.assert_allclose(g.astype(np.complex128), w.astype(np.complex128),
                               rtol=8 * eps, atol=0)


def both(make):
    """make(to) on CUDA and on the CPU, `to` making a tensor of a NumPy array (a copy: on
    the CPU, asarray would share the array with the tensor and in-place ops would write to
    it)."""
    return make(gpu), make(lambda a: tensor(np.array(a, copy=True)))


# Exact functions, so that the layout alone decides (transcendental ones have their tests).
LAYOUT_CASES = {
    "transposed": lambda to, a, b: xrt.add(to(a).mT, to(b).mT),
    "step slices": lambda to, a, b: xrt.multiply(to(a)[::2, 1::3], to(b)[1::2, ::3]),
    "negative strides": lambda to, a, b: xrt.subtract(to(a)[::-1, ::-2], to(b)[:, ::2]),
    "row broadcast": lambda to, a, b: xrt.divide(to(a), to(b)[0]),
    "column broadcast": lambda to, a, b: xrt.copysign(to(a)[:, :1], to(b)),
    "outer": lambda to, a, b: xrt.multiply(to(a)[:, 0][:, None], to(b)[0][None, :]),
    "0-d and array": lambda to, a, b: xrt.divide(to(a)[2, 3], to(b)),
    "0-d": lambda to, a, b: xrt.square(to(a)[1, 1]),
    "0-d and 0-d": lambda to, a, b: xrt.maximum(to(a)[0, 0], to(b)[1, 2]),
    "empty": lambda to, a, b: xrt.add(to(a)[:0], to(b)[:0]),
    "empty broadcast": lambda to, a, b: xrt.add(to(a)[:, :0], to(b)[0, :0]),
    "unaligned": lambda to, a, b: xrt.add(xrt.reshape(to(a), (-1,))[1:],
                                          xrt.reshape(to(b), (-1,))[:-1]),
    "unaligned unary": lambda to, a, b: xrt.negative(xrt.reshape(to(a), (-1,))[3:]),
    "mixed dtypes": lambda to, a, b: xrt.add(to(a), xrt.astype(to(b), xrt.float16)),
    "where": lambda to, a, b: xrt.where(to(a) > 0, to(a), to(b)),
    "where broadcast": lambda to, a, b: xrt.where(to(a)[:, :1] > 0, to(b)[0], 0.5),
    "where strided": lambda to, a, b: xrt.where(to(a).mT > to(b).mT, to(a).mT, -to(b).mT),
    "clip": lambda to, a, b: xrt.clip(to(a), -0.5, to(b)[0]),
}


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(LAYOUT_CASES))
def test_layouts(name):
    a = rng.standard_normal((6, 9)).astype(np.float32)
    b = rng.standard_normal((6, 9)).astype(np.float32)
    got, want = both(lambda to: LAYOUT_CASES[name](to, a, b))
    same(got, want)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "float64",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("n", [1, 7, 4099, (1 << 20) + 5])
def test_sizes_around_vector_and_grid_boundaries(dtype, n):
    a, b = _random(dtype, n), _random(dtype, n)
    for op in ("equal", "where") + (("logical_xor",) if dtype == "bool" else ("multiply",)):
        if op == "where":
            make = lambda to: xrt.where(to(a != b), to(a), to(b))  # noqa: E731
        else:
            make = lambda to: getattr(xrt, op)(to(a), to(b))  # noqa: E731
        got, want = both(make)
        same(got, want)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["int16", "float32", "complex128"])
def test_many_dimensions(dtype):
    """Shapes that stay 5-d and 10-d after collapsing (kernels beyond the cached ones)."""
    for shape in [(2, 3, 2, 3, 2), (2,) * 10]:
        a = _random(dtype, math.prod(shape)).reshape(shape)
        b = _random(dtype, math.prod(shape)).reshape(shape)
        axes = tuple(reversed(range(len(shape))))
        got, want = both(lambda to: xrt.add(xrt.permute_dims(to(a), axes), to(b)[..., ::-1]))
        same(got, want)


@pytest.mark.cuda
def test_offsets_beyond_32_bits():
    """A view reaching past 2**31 bytes takes the 64-bit index kernel."""
    big = xrt.zeros(((1 << 31) + 64,), dtype=xrt.uint8, device=CUDA)
    view = big[:: 1 << 30]  # three elements, 2**30 bytes apart
    view += xrt.asarray(np.array([1, 2, 3], dtype=np.uint8), device=CUDA)
    got = view * 3
    assert host(got).tolist() == [3, 6, 9]
    assert host(big[(1 << 31) - 1: (1 << 31) + 1]).tolist() == [0, 3]


INPLACE_CASES = {
    "+=": lambda x, y: x.__iadd__(y),
    "-= scalar": lambda x, y: x.__isub__(1.5),
    "*= broadcast": lambda x, y: x.__imul__(y[0]),
    "/=": lambda x, y: x.__itruediv__(y),
    "**= scalar": lambda x, y: x.__ipow__(3),
    "//=": lambda x, y: x.__ifloordiv__(y),
    "%=": lambda x, y: x.__imod__(y),
}


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(INPLACE_CASES))
@pytest.mark.parametrize("view", ["whole", "strided"])
def test_inplace_operators(name, view):
    a = rng.standard_normal((4, 6))
    b = rng.standard_normal((4, 6)) + 3

    def make(to):
        x, y = to(a), to(b)
        target = x if view == "whole" else x[:, ::2]
        INPLACE_CASES[name](target, y if view == "whole" else y[:, ::2])
        return x
    got, want = both(make)
    (close if "**" in name else same)(got, want)


@pytest.mark.cuda
def test_inplace_integer_and_bool_operators():
    a = rng.integers(-100, 100, (5, 8)).astype(np.int32)
    b = rng.integers(1, 9, (5, 8)).astype(np.int32)

    def make(to):
        x, y = to(a), to(b)
        x <<= y
        x ^= 5
        x >>= 1
        m = to(a > 0)
        m &= to(b > 4)
        m |= to(a < -90)
        return xrt.where(m, x, -x)
    got, want = both(make)
    same(got, want)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float16", "bfloat16", "float32",
                                   "complex64"])
def test_python_scalars(dtype):
    a = _random(dtype, 50)
    int_ok = dtype not in COMPLEX

    def make(to):
        x = to(a)
        results = [x + 1, 2 * x, x - 3, x == 0, x ** 2]
        if int_ok:
            results += [x // 3, x % 5, x > 1]
        if dtype not in INTEGER:
            results += [x * 0.5, 1.5 / x]
        return results
    for i, (got, want) in enumerate(zip(*both(make))):
        (close if i == 4 else same)(got, want)  # x ** 2 is pow


@pytest.mark.cuda
def test_where_every_dtype_and_scalar_branches():
    for dtype in ("bool", "int8", "uint16", "int32", "float16", "bfloat16", "float64",
                  "complex64", "complex128"):
        x, y = _random(dtype, 300), _random(dtype, 300)
        c = rng.integers(0, 2, 300).astype(bool)
        same(*both(lambda to: xrt.where(to(c), to(x), to(y))))
        same(*both(lambda to: xrt.where(to(c)[::-2], xrt.reshape(to(x)[::2], (1, -1)),
                                        to(y)[0])))


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["bool", "uint64", "int64", "float16", "float64",
                                   "complex128"])
def test_host_scalars_ride_in_the_arguments(dtype):
    """Note [Host scalars]: a Python scalar is not made a device array; every layout reads
    its value from the launch's arguments (16 bytes for complex128)."""
    a = _random(dtype, 4099)
    if dtype == "bool":
        s = True
    elif dtype in ("uint64", "int64"):
        s = (1 << 62) + 3 if dtype == "uint64" else -(1 << 61) - 7
    elif dtype == "complex128":
        s = complex(1.0 / 3.0, -2.5e-300)
    else:
        s = 1.0 / 3.0
    op = xrt.logical_xor if dtype == "bool" else xrt.add

    def make(to):
        x = to(a)
        m = xrt.reshape(x[:4096], (64, 64))
        return [op(x, s), op(s, x),                 # dense, both sides, vectorised
                op(x[1:], s),                      # unaligned: one element per load
                op(m.mT, s), op(s, m[::2, ::-3]),  # strided kernels
                op(x[5], s), op(s, x[5])]          # 0-d: one element
    for got, want in zip(*both(make)):
        same(got, want)
    with xrt.explain() as log:
        op(gpu(a), s)
    assert log.kernels(op.__name__) == ["nvrtc"]


@pytest.mark.cuda
def test_host_scalars_in_place_and_operators():
    a = rng.standard_normal((8, 10)).astype(np.float32)

    def make(to):
        x = to(a)
        v = x[:, ::3]
        v += 2.5        # strided in place
        x *= 0.5        # dense in place
        y = 1 - x       # reflected
        z = 2 ** x[0]   # reflected pow
        w = x[1, 1]
        w -= 4          # 0-d in place
        return [x, y, z, w, x > 0.25, 3 % (x + 10.0)]
    for got, want in zip(*both(make)):
        close(got, want)


@pytest.mark.cuda
def test_a_cpu_array_with_a_cuda_array_is_still_an_error():
    x = xrt.ones(4, device=CUDA)
    for other in (xrt.asarray(1.0), xrt.ones(4)):
        with pytest.raises(ValueError, match="different devices"):
            x + other
        with pytest.raises(ValueError, match="different devices"):
            other * x
        with pytest.raises(ValueError, match="different devices"):
            x += other


@pytest.mark.cuda
def test_host_scalars_are_captured_by_value_in_graphs():
    x = xrt.arange(16, dtype=xrt.float32, device=CUDA)
    g = xrt.cuda.CUDAGraph()
    with xrt.cuda.graph(g):
        y = x * 3.0 + 1.0
    for _ in range(2):
        x += 1.0  # the graph reads x's memory, and keeps the scalars it was captured with
        xrt.cuda.synchronize()
        g.replay()
        xrt.cuda.synchronize()
        np.testing.assert_array_equal(host(y), host(x) * 3 + 1)

"""tests/test_elementwise_cuda_functions.py: every elementwise function on CUDA against the
CPU, and the device math built for the host.

On CUDA, every function of the standard, for every dtype it accepts, is computed on the same
inputs (random values and the special ones: ±0, ±inf, NaN, subnormals, the largest finite,
complex numbers with each part special) on the CPU (already checked against NumPy) and on
CUDA:

- bit for bit where the CPU is exact: arithmetic, comparisons, integer and bool functions,
  rounding, and the correctly rounded ones (sqrt, division) on real dtypes;
- within a bound otherwise. CUDA's math library is documented to ≤ 2 ulp for most double
  and float functions and ≤ 4 ulp for a few float ones (powf, tanf); the CPU's SIMD libm
  (libmvec) is ≤ 4 ulp: real results agree to 8 ulp, 16-bit float results (computed in float
  and rounded) to 1 ulp of their type. Complex functions are compared norm-wise (each part
  within 8 ulp of the larger part), special values exactly (NaN, infinities, zeros and their
  signs where the standard fixes them). complex64 functions compute in double on the device,
  so their reference is the CPU's complex128 result rounded to complex64.

Without a GPU, the device math is compiled as host C++ (cuda_host_math.py) and checked
against the CPU the same way, and every generated kernel source is compiled with NVRTC.
Layouts, in-place operators and Python scalars: test_elementwise_cuda_layouts.py.
"""

import math

import numpy as np
import pytest

import xpuruntime as xrt
from common import COMPLEX, INTEGER
from common import numpy_dtype, tensor, to_numpy
from cuda_helpers import core
from elementwise_reference import FUNCTIONS, cases, result_dtype, zero_sign_specified
import cuda_host_math
from elementwise_cuda_helpers import (REAL_ULPS, HALF_ULPS, COMPLEX_ULPS, rng, _complex, _random,
                                      gpu, host)


# ----------------------------------------------------------------------------- inputs

def _real_specials(float_dtype):
    fi = np.finfo(float_dtype)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0,
              -3.0, 1.5, -1.5, 2.5, -2.5, float(fi.smallest_subnormal),
              -float(fi.smallest_subnormal), float(fi.tiny), float(fi.max), -float(fi.max),
              math.pi / 2, -math.pi / 2, math.pi, 0.1, 10.0, 100.0, 1e-10, 60.0, -60.0]
    return np.array(values, dtype=float_dtype)


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
               if f.has_kernel(d)]
    return cuda_host_math.HostMath(triples)


@pytest.mark.parametrize("name, dtype", [
    c for c in cases(FUNCTIONS) if FUNCTIONS[c[0]].has_kernel(c[1])])
def test_device_math_built_for_the_host_matches_the_cpu(host_math, name, dtype):
    """The device code's formulas and special cases, with the C library's real functions."""
    fn = FUNCTIONS[name]
    operands = [o.astype(numpy_dtype(dtype)) for o in inputs(fn, dtype, n=600)]
    with np.errstate(all="ignore"):
        want = reference(name, dtype, operands)
        got = host_math.call(name, dtype, want.dtype, *operands)
    assert_matches(name, dtype, got, want, operands)


# ------------------------------------------------------------------------- on CUDA


@pytest.fixture(scope="module")
def warm():
    """Compiles every dense kernel once, on all cores (NVRTC takes ~0.3 s a kernel)."""
    core._cuda._elementwise_warm(0, 16)


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

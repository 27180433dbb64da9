"""tests/elementwise_reference.py: the standard's 67 elementwise functions as the tests see
them: the dtypes each accepts, the dtype it returns, and the values it should compute.

Expected values come from NumPy, computed in float32 for float16 and bfloat16 and rounded
back (the runtime computes those in float too). Where NumPy departs from the standard or
from a choice the project documents in cpp/src/cpu/scalar_math.h or scalar_binary_math.h,
the reference is written out here instead, with a Note saying which rule it follows.
"""

from typing import NamedTuple

import numpy as np

from common import ALL, COMPLEX, FLOATING, INTEGER, NUMERIC, REAL_FLOATING, numpy_dtype, to_numpy

# The standard's dtype categories ("Should have a ... data type"). The logical functions
# take "any": they read numbers as truth values, as NumPy does (Note [Logical ops read truth
# values] in cpp/src/core/elementwise_ops.cpp).
CATEGORIES = {
    "any": ALL,
    "bool": ("bool",),
    "integer": INTEGER,
    "integer or bool": ("bool",) + INTEGER,
    "numeric": NUMERIC,
    "real numeric": INTEGER + REAL_FLOATING,
    "floating": FLOATING,
    "real floating": REAL_FLOATING,
}


class Function(NamedTuple):
    name: str
    arity: int
    category: str      # a key of CATEGORIES
    result: str        # "same", "bool", "real" (the real dtype of a complex input), or
                       # "float" (float64 for integer inputs: computed in floating point)
    exact: str         # "always", "real" (approximate for complex) or "never" (for floats)

    @property
    def dtypes(self):
        return CATEGORIES[self.category]

    def computes_integers_in_float(self, dtype):
        """Whether integer inputs are cast to the default float before any kernel runs
        (integer division: no kernel takes integers)."""
        return self.result == "float" and dtype in INTEGER

    def has_kernel(self, dtype):
        """Whether a kernel takes `dtype` itself: integer division casts integers to the
        default float first, and the logical functions read other dtypes as bools."""
        if self.name.startswith("logical_") and dtype != "bool":
            return False
        return not self.computes_integers_in_float(dtype)

    def is_exact(self, dtype):
        """Whether results in `dtype` must equal the reference bit for bit (NaNs aside)."""
        if dtype == "bool" or dtype in INTEGER:
            return True
        return self.exact == "always" or (self.exact == "real" and dtype not in COMPLEX)


def _rows(arity, text):
    rows = {}
    for line in text.strip().splitlines():
        name, category, result, exact = (part.strip() for part in line.split("|"))
        rows[name] = Function(name, arity, category, result, exact)
    return rows


# Categories and result dtypes from the 2025.12 stubs. "exact": correctly rounded (or
# purely combinatorial) functions must match the reference exactly; the transcendental
# ones are compared with a tolerance, and so are complex results of functions the C
# library and NumPy compute with different formulas (complex division, abs, sqrt).
UNARY = _rows(1, """
    abs            | numeric         | real | real
    acos           | floating        | same | never
    acosh          | floating        | same | never
    asin           | floating        | same | never
    asinh          | floating        | same | never
    atan           | floating        | same | never
    atanh          | floating        | same | never
    bitwise_invert | integer or bool | same | always
    ceil           | real numeric    | same | always
    conj           | numeric         | same | always
    cos            | floating        | same | never
    cosh           | floating        | same | never
    exp            | floating        | same | never
    expm1          | floating        | same | never
    floor          | real numeric    | same | always
    imag           | numeric         | real | always
    isfinite       | numeric         | bool | always
    isinf          | numeric         | bool | always
    isnan          | numeric         | bool | always
    log            | floating        | same | never
    log1p          | floating        | same | never
    log2           | floating        | same | never
    log10          | floating        | same | never
    logical_not    | any             | bool | always
    negative       | numeric         | same | always
    positive       | numeric         | same | always
    real           | numeric         | real | always
    reciprocal     | floating        | same | real
    round          | numeric         | same | always
    sign           | numeric         | same | real
    signbit        | real floating   | bool | always
    sin            | floating        | same | never
    sinh           | floating        | same | never
    square         | numeric         | same | real
    sqrt           | floating        | same | real
    tan            | floating        | same | never
    tanh           | floating        | same | never
    trunc          | real numeric    | same | always
""")

BINARY = _rows(2, """
    add                 | numeric         | same | always
    atan2               | real floating   | same | never
    bitwise_and         | integer or bool | same | always
    bitwise_left_shift  | integer         | same | always
    bitwise_or          | integer or bool | same | always
    bitwise_right_shift | integer         | same | always
    bitwise_xor         | integer or bool | same | always
    copysign            | real floating   | same | always
    divide              | numeric         | float | real
    equal               | any             | bool | always
    floor_divide        | real numeric    | same | always
    greater             | real numeric    | bool | always
    greater_equal       | real numeric    | bool | always
    hypot               | real floating   | same | never
    less                | real numeric    | bool | always
    less_equal          | real numeric    | bool | always
    logaddexp           | real floating   | same | never
    logical_and         | any             | bool | always
    logical_or          | any             | bool | always
    logical_xor         | any             | bool | always
    maximum             | real numeric    | same | always
    minimum             | real numeric    | same | always
    multiply            | numeric         | same | real
    nextafter           | real floating   | same | always
    not_equal           | any             | bool | always
    pow                 | numeric         | same | never
    remainder           | real numeric    | same | always
    subtract            | numeric         | same | always
""")

# clip is the 67th; it has its own tests (three operands, optional bounds).
FUNCTIONS = {**UNARY, **BINARY}


def zero_sign_specified(name, dtype):
    """Whether the standard fixes the sign of a zero result: not for sign (its 0 is just
    0), nor for the parts of complex products and quotients, where it depends on the
    formula (the textbook one, NumPy's, or the C library's)."""
    if name == "sign":
        return False
    return not (dtype in COMPLEX and name in (
        "multiply", "divide", "square", "reciprocal", "pow"))


def cases(functions):
    """(name, dtype) for every function of `functions` and every dtype it accepts."""
    return [(f.name, d) for f in functions.values() for d in f.dtypes]


# ----------------------------------------------------------------------------- dtypes


def result_dtype(fn, dtype):
    """The dtype name `fn` returns for inputs of dtype `dtype`."""
    if fn.result == "bool":
        return "bool"
    if fn.computes_integers_in_float(dtype):
        return "float64"  # project choice: integer division computes in the default float
    if fn.result == "real" and dtype in COMPLEX:
        return {"complex64": "float32", "complex128": "float64"}[dtype]
    return dtype


def is_half(dtype):
    return dtype in ("float16", "bfloat16")


# ------------------------------------------------------------------- reference values


def _wrap(values, dtype):
    """Python ints reduced modulo 2**bits into `dtype` (the runtime's integers wrap)."""
    info = np.iinfo(dtype)
    span = 1 << info.bits
    out = [((int(v) - int(info.min)) % span) + int(info.min) for v in values]
    return np.array(out, dtype=dtype)


def _integer_pow(a, b):
    # Note: NumPy raises for negative integer exponents; the standard leaves them to the
    # implementation. Project choice (scalar_binary_math.h, pow): 1 / a rounded towards zero,
    # so 1 for a == 1, ±1 for a == -1, and 0 otherwise (also for a == 0).
    a, b = np.broadcast_arrays(a, b)
    bits = np.iinfo(a.dtype).bits
    out = []
    for x, y in zip(a.ravel().tolist(), b.ravel().tolist()):
        if y < 0:
            out.append(1 if x == 1 else (-1 if y % 2 else 1) if x == -1 else 0)
        else:
            out.append(pow(x, y, 1 << bits))
    return _wrap(out, a.dtype).reshape(a.shape)


def _shift(a, b, left):
    # Note: the standard asks for shift counts >= 0 and leaves larger-than-width ones
    # unspecified. Project choice (scalar_math.h): a count at least the width, or a negative
    # one, gives the mathematical shift by a huge amount: 0, or -1 for a negative value
    # shifted right. Written out in Python so as not to depend on NumPy's handling.
    a, b = np.broadcast_arrays(a, b)
    bits = np.iinfo(a.dtype).bits
    out = []
    for x, y in zip(a.ravel().tolist(), b.ravel().tolist()):
        if y < 0 or y >= bits:
            out.append(-1 if (not left and x < 0) else 0)
        else:
            out.append(x << y if left else x >> y)
    return _wrap(out, a.dtype).reshape(a.shape)


def _floor_divide(a, b):
    # Note: NumPy pairs // with % (Python's rule), so inf // 2 is NaN and 1 // -inf is -1.
    # The standard prefers floor(a / b) for those cases (+inf and -0 there), which is what
    # the project implements; finite, nonzero divisors follow NumPy (the exact quotient).
    if a.dtype.kind in "iu":
        return np.floor_divide(a, b)  # division by zero gives 0 in NumPy and here
    special = ~np.isfinite(a) | ~np.isfinite(b) | (b == 0)
    return np.where(special, np.floor(a / b), np.floor_divide(a, b))


def _complex_sign(z):
    # Note: the standard: 0 for z == 0, NaN + NaN j for a NaN component, else z / |z| with
    # the real-divisor rules of division, i.e. (a / |z|) + (b / |z|) j. NumPy returns 1 for
    # inf + 0j (a limit); the standard's componentwise division gives NaN + 0j there.
    a, b = z.real, z.imag
    m = np.hypot(a, b)
    out = make_complex(a / m, b / m, z.dtype)
    out = np.where((a == 0) & (b == 0), 0, out)
    nan = np.isnan(a) | np.isnan(b)
    return np.where(nan, make_complex(np.nan, np.nan, z.dtype), out)


def _complex_expm1(z):
    # Note: for non-finite inputs NumPy computes exp(z) - 1 as (e.real - 1) + e.imag j with
    # its own exp; the standard (expm1 special cases) is exp(z) - 1 with the imaginary part
    # of exp kept, e.g. -1 + 0j for -inf + inf j where NumPy gives NaN + NaN j.
    # NumPy also lets e^a overflow into e^a * sin(0) = inf * 0 = NaN for a large real a and
    # b == 0; there the value is the real expm1(a) + 0j (the standard's +inf + 0j case).
    # complex64 is computed in complex128 and rounded once, as scalar_math.h does: e^a
    # overflows float32 for a > 88.7 where e^a cos(b) and e^a sin(b) may not.
    finite = np.isfinite(z)
    expected = np.expm1(np.where(finite, z, 0).astype(np.complex128))
    real_axis = finite & (z.imag == 0)
    expected = np.where(real_axis, make_complex(np.expm1(z.real), z.imag, z.dtype), expected)
    # The standard: expm1(±0 + 0j) is +0 + 0j (not the real expm1's -0 for -0).
    zero = (z.real == 0) & (z.imag == 0)
    expected = np.where(zero, make_complex(0.0, z.imag, z.dtype), expected)
    # NumPy's complex expm1 overflows e^a itself for a > 709.78, making inf of a part that
    # is finite (expm1(710 + 1j) has the real part e^710 cos(1) - 1 = 1.2e308): there the
    # parts are computed in extended precision, whose e^a does not overflow, and rounded.
    big = finite & (z.real > 700)
    if big.any():
        a = np.where(big, z.real, 0).astype(np.longdouble)
        b = np.where(big, z.imag, 0).astype(np.longdouble)
        with np.errstate(over="ignore"):
            scaled = make_complex((np.exp(a) * np.cos(b) - 1).astype(np.float64),
                                  (np.exp(a) * np.sin(b)).astype(np.float64), np.complex128)
        expected = np.where(big & (z.imag != 0), scaled, expected)
    e = np.exp(np.where(finite, 0, z))
    other = make_complex(e.real - 1, e.imag, z.dtype)
    return np.where(finite, expected, other).astype(z.dtype)


def _complex_log1p(z):
    # Note: NumPy computes log(1 + z), which loses the digits of a small z (it gives 0 for
    # log1p(1e-27 + 0j)). For |a|, |b| < 0.5 the reference takes log|1 + z| as
    # log1p(2a + a² + b²) / 2 and arg(1 + z) as atan2(b, 1 + a), in extended precision.
    a, b = z.real.astype(np.longdouble), z.imag.astype(np.longdouble)
    near_zero = (np.abs(a) < 0.5) & (np.abs(b) < 0.5)
    # Elsewhere NumPy's log(1 + z) in complex64 overflows for |1 + z| above the float32
    # range (log1p(-3e38 + 2e38j) is inf there, 88.8 in fact): it is taken in complex128.
    accurate = make_complex(np.log1p(a * (2 + a) + b * b) / 2, np.arctan2(b, 1 + a), z.dtype)
    return np.where(near_zero, accurate, np.log1p(z.astype(np.complex128)).astype(z.dtype))


def _complex_tanh(z):
    # Note: glibc (so NumPy) gives tanh(+inf + iy) = 1 + 0 sin(2y) j, whose zero is negative
    # when sin 2y < 0; the standard wants 1 + 0j for every positive finite y: the zero takes
    # y's sign. tan is -1j * tanh(1j * z) by the standard's definition, so follows it.
    with np.errstate(all="ignore"):
        out = np.tanh(z)
    fix = np.isinf(z.real) & np.isfinite(z.imag)
    return np.where(fix, make_complex(np.copysign(1, z.real), np.copysign(0, z.imag), z.dtype),
                    out)


def _complex_tan(z):
    t = _complex_tanh(make_complex(-z.imag, z.real, z.dtype))  # tanh(1j * z)
    return make_complex(t.imag, -t.real, z.dtype)


def _nextafter(a, b):
    # Note: NumPy's float16 nextafter returns x1 when x1 == x2, so nextafter(+0, -0) is +0;
    # the standard (and C) return x2: -0 there.
    return np.where(a == b, b, np.nextafter(a, b))


def make_complex(real, imag, dtype):
    """real + imag j without arithmetic (1j * inf is NaN + inf j)."""
    real, imag = np.broadcast_arrays(real, imag)
    out = np.empty(real.shape, dtype=dtype)
    out.real, out.imag = real, imag
    return out


def _numpy(name):
    return {"bitwise_invert": np.invert}.get(name) or getattr(np, name)


def _reference_native(fn, args):
    """The expected values for NumPy arrays `args` of one dtype NumPy computes in."""
    name, kind = fn.name, args[0].dtype.kind
    if name in ("ceil", "floor", "trunc", "round") and kind in "iu":
        return args[0].copy()
    if name == "pow" and kind in "iu":
        return _integer_pow(*args)
    if name == "pow" and args[0].dtype == np.complex64:
        # The runtime computes complex64 pow in complex128 (exp(b log a) loses |b log a|
        # float ulps otherwise), so the reference does too.
        return np.power(*[a.astype(np.complex128) for a in args])
    if name in ("bitwise_left_shift", "bitwise_right_shift"):
        return _shift(*args, left=name == "bitwise_left_shift")
    if name == "floor_divide":
        return _floor_divide(*args)
    if name == "divide" and kind in "iu":
        return np.divide(args[0].astype(np.float64), args[1].astype(np.float64))
    if name == "nextafter":
        return _nextafter(*args)
    if name == "sign" and kind == "c":
        return _complex_sign(args[0])
    if name == "log1p" and kind == "c":
        return _complex_log1p(args[0])
    if name == "expm1" and kind == "c":
        return _complex_expm1(args[0])
    if name == "tanh" and kind == "c":
        return _complex_tanh(args[0])
    if name == "tan" and kind == "c":
        return _complex_tan(args[0])
    return _numpy(name)(*args)


def reference(fn, *args):
    """The values `fn` should give for NumPy arrays `args` (all of one dtype), as an array
    of the result dtype."""
    dtype = args[0].dtype.name
    out_dtype = numpy_dtype(result_dtype(fn, dtype))
    with np.errstate(all="ignore"):
        # nextafter steps by the ulp of the 16-bit type itself (NumPy and ml_dtypes have it)
        if is_half(dtype) and fn.name != "nextafter":
            out = _reference_native(fn, [a.astype(np.float32) for a in args])
        else:
            out = _reference_native(fn, list(args))
        return np.asarray(out).astype(out_dtype)


def unspecified(fn, *args):
    """A mask of the elements whose value the standard leaves to the implementation, so
    that no reference is right for them (None when there are none)."""
    if args[0].dtype.kind != "c" or fn.name not in (
            "multiply", "divide", "square", "reciprocal", "pow"):
        return None
    # Note: complex multiplication and division (and square, reciprocal and pow, defined
    # through them) have implementation-dependent results once a component is infinite or
    # NaN, unless all four are NaN. NumPy uses the textbook formulas; the runtime the C
    # library's (C99 Annex G, one complex infinity). A zero divisor (0 / 0 in the textbook
    # formula) and a zero base of pow (log(0) is infinite) fall under the same rule.
    args = np.broadcast_arrays(*args)
    nonfinite = np.zeros(args[0].shape, dtype=bool)
    all_nan = np.ones(args[0].shape, dtype=bool)
    for a in args:
        nonfinite |= ~np.isfinite(a.real) | ~np.isfinite(a.imag)
        all_nan &= np.isnan(a.real) & np.isnan(a.imag)
    if fn.name in ("divide", "reciprocal"):
        nonfinite |= args[-1] == 0
    if fn.name == "pow":
        # Once exp(x2 * log(x1)) overflows, the parts of the result are inf * cos and
        # inf * sin of a rounded angle: their signs (or NaN) follow the rounding, in NumPy
        # (repeated multiplication for integer exponents) and here alike.
        base, exponent = args
        nonfinite |= (base == 0) & ~((exponent.real > 0) & (exponent.imag == 0))
        with np.errstate(all="ignore"):
            w = exponent.astype(np.complex128) * np.log(base.astype(np.complex128))
        nonfinite |= w.real > np.log(float(np.finfo(base.dtype).max)) - 1
    # Near overflow the result depends on whether products are fused: NumPy's SIMD loops
    # use FMA, the runtime does not (-ffp-contract=off); the standard does not say.
    huge = np.sqrt(np.finfo(args[0].dtype).max) / 4
    for a in args:
        nonfinite |= (np.abs(a.real) > huge) | (np.abs(a.imag) > huge)
    return nonfinite & ~all_nan


# ------------------------------------------------------------------------- comparison

# Tolerances of approximate functions: the C library and NumPy (whose float32 and complex
# functions have their own implementations) each stay within a few ulp.
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 4e-6, "float64": 1e-13,
        "complex64": 4e-6, "complex128": 1e-13}
# Results below the smallest normal number (subnormal, or rounded to zero) have lost their
# relative precision; they compare with an absolute tolerance of that number.
REAL_OF = {"complex64": "float32", "complex128": "float64"}


def _as_float(a):
    """float32/float64 (complex64/complex128) values of a result array."""
    if a.dtype.name in ("float16", "bfloat16"):
        return a.astype(np.float32)
    return a


def _assert_zero_signs(actual, expected, what):
    both_zero = (actual == 0) & (expected == 0)
    wrong = both_zero & (np.signbit(actual) != np.signbit(expected))
    assert not wrong.any(), (
        f"{what}: wrong sign of zero at {np.argwhere(wrong).tolist()}: got "
        f"{actual[wrong].tolist()}, expected {expected[wrong].tolist()}")


def _components(a):
    if a.dtype.kind == "c":
        return (("real part", a.real), ("imaginary part", a.imag))
    return (("values", a),)


def assert_matches(t, expected, exact, zero_signs=True, rtol=None, atol=None, ignore=None,
                   what=""):
    """Tensor `t` has the dtype and shape of `expected` and its values: exactly when
    `exact` (NaN equal to NaN, zeros of the same sign when `zero_signs`), else within
    `rtol` relative to |expected| (complex: the modulus) plus `atol` (default: the
    smallest normal number), with infinities, NaNs and zero signs placed exactly.
    Elements where `ignore` is true are not compared."""
    dtype = expected.dtype.name
    assert t.dtype.name == dtype, f"{what}: dtype {t.dtype.name}, expected {dtype}"
    assert t.shape == expected.shape, f"{what}: shape {t.shape}, expected {expected.shape}"
    actual, expected = _as_float(to_numpy(t)), _as_float(expected)
    if ignore is not None:
        actual, expected = np.where(ignore, 0, actual), np.where(ignore, 0, expected)
    if expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
        return
    for (part, got), (_, want) in zip(_components(actual), _components(expected)):
        msg = f"{what} ({part})"
        if exact:
            np.testing.assert_array_equal(got, want, err_msg=msg)
        else:
            finite = np.isfinite(want)
            np.testing.assert_array_equal(np.where(finite, 0, got), np.where(finite, 0, want),
                                          err_msg=msg + ": infinities and NaNs differ")
        if zero_signs:
            _assert_zero_signs(got, want, msg)
    if not exact:
        rtol = RTOL[dtype] if rtol is None else rtol
        atol = float(finfo(REAL_OF.get(dtype, dtype)).tiny) if atol is None else atol
        finite = np.isfinite(expected)
        if expected.dtype.kind == "c":
            # Elements with an infinite or NaN part compare part by part (above and here).
            both = np.isfinite(expected.real) & np.isfinite(expected.imag)
            for got, want in ((actual.real, expected.real), (actual.imag, expected.imag)):
                sel = ~both & np.isfinite(want)
                np.testing.assert_allclose(got[sel], want[sel], rtol=rtol, atol=atol,
                                           err_msg=what)
            finite = both
        np.testing.assert_allclose(actual[finite], expected[finite], rtol=rtol, atol=atol,
                                   err_msg=what)


# ----------------------------------------------------------------------- special values


def finfo(dtype):
    """np.finfo, or ml_dtypes.finfo for bfloat16."""
    if dtype == "bfloat16":
        import ml_dtypes

        return ml_dtypes.finfo(ml_dtypes.bfloat16)
    return np.finfo(dtype)


def special_values(dtype):
    """A 1-d NumPy array of dtype `dtype` holding its awkward values."""
    np_dtype = numpy_dtype(dtype)
    if dtype == "bool":
        return np.array([False, True])
    if dtype in INTEGER:
        info = np.iinfo(np_dtype)
        candidates = [0, 1, -1, 2, -2, 3, -3, 7, -7, info.bits - 1, info.bits, info.bits + 1,
                      info.min, info.min + 1, info.max, info.max - 1, info.max // 2]
        values = sorted({v for v in candidates if info.min <= v <= info.max})
        return np.array(values, dtype=np_dtype)
    if dtype in COMPLEX:
        parts = special_values({"complex64": "float32", "complex128": "float64"}[dtype])
        parts = parts[[0, 1, 2, 3, 4, 7, 8, 10, -3, -2, -1]]  # a smaller set, crossed
        return make_complex(parts[:, None], parts[None, :], np_dtype).ravel()
    info = finfo(dtype)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.0, 3.0, -3.0, np.pi, -np.pi,
              0.1, 1e-3, float(info.tiny), -float(info.tiny),
              float(info.smallest_subnormal), -float(info.smallest_subnormal),
              float(info.max), float(info.min), np.inf, -np.inf, np.nan]
    # bfloat16 arrays are built through float32 (exact for all of these but 0.1 and pi)
    return np.array(values, dtype=np.float32 if dtype == "bfloat16" else np_dtype
                    ).astype(np_dtype)


"""python/xpuruntime/inference/native/ops/elementwise.py: ONNX's elementwise operators
(arithmetic, math, activations, comparisons, logic, Cast, Where, Clip) as tables over the
namespace's elementwise functions, which broadcast the way ONNX's multidirectional
broadcasting does."""

import math

import xpuruntime as xrt

from . import op
from ._common import dtype_of, host_scalar, is_integer

# ONNX op -> the namespace function with the same meaning.
UNARY = {
    "Abs": xrt.abs, "Neg": xrt.negative, "Sqrt": xrt.sqrt, "Reciprocal": xrt.reciprocal,
    "Exp": xrt.exp, "Log": xrt.log, "Tanh": xrt.tanh, "Floor": xrt.floor, "Ceil": xrt.ceil,
    "Sin": xrt.sin, "Cos": xrt.cos, "Sign": xrt.sign, "Round": xrt.round,
    "Not": xrt.logical_not, "IsNaN": xrt.isnan,
}
BINARY = {
    "Add": xrt.add, "Sub": xrt.subtract, "Mul": xrt.multiply,
    "Equal": xrt.equal, "Less": xrt.less, "Greater": xrt.greater,
    "LessOrEqual": xrt.less_equal, "GreaterOrEqual": xrt.greater_equal,
    "And": xrt.logical_and, "Or": xrt.logical_or, "Xor": xrt.logical_xor,
}
VARIADIC = {"Max": xrt.maximum, "Min": xrt.minimum, "Sum": xrt.add}


def _unary(fn):
    return lambda x: (fn(x),)


def _binary(fn):
    return lambda a, b: (fn(a, b),)


for _name, _fn in UNARY.items():
    op(_name)(lambda node, fn=_fn: _unary(fn))
for _name, _fn in BINARY.items():
    op(_name)(lambda node, fn=_fn: _binary(fn))


@op(*VARIADIC)
def _variadic(node):
    fn = VARIADIC[node.op_type]

    def run(*xs):
        out = xs[0]
        for x in xs[1:]:
            out = fn(out, x)
        return (out,)
    return run


@op("Div")
def _div(node):
    def run(a, b):
        if is_integer(a.dtype):
            # Note: ONNX divides integers truncating toward zero, as C does; the standard's
            # floor_divide rounds down, so a quotient with a remainder and mixed signs moves up.
            q = xrt.floor_divide(a, b)
            fix = xrt.logical_and(xrt.not_equal(xrt.subtract(a, xrt.multiply(q, b)), 0),
                                  xrt.not_equal(xrt.less(a, 0), xrt.less(b, 0)))
            return (xrt.add(q, xrt.astype(fix, q.dtype)),)
        return (xrt.divide(a, b),)
    return run


@op("Mod")
def _mod(node):
    fmod = node.attr("fmod", 0)

    def run(a, b):
        r = xrt.remainder(a, b)  # the sign of the divisor, as Python's %
        if fmod:
            # C's fmod keeps the sign of the dividend: move a nonzero remainder whose sign
            # differs from a's back by one divisor.
            wrong = xrt.logical_and(xrt.not_equal(r, 0),
                                    xrt.not_equal(xrt.less(r, 0), xrt.less(a, 0)))
            r = xrt.where(wrong, xrt.subtract(r, b), r)
        return (r,)
    return run


@op("Pow")
def _pow(node):
    def run(base, exponent):
        # The result has the base's type (ONNX allows a different exponent type).
        if exponent.dtype != base.dtype:
            if is_integer(base.dtype) and not is_integer(exponent.dtype):
                return (xrt.astype(xrt.pow(xrt.astype(base, exponent.dtype), exponent),
                                   base.dtype),)
            exponent = xrt.astype(exponent, base.dtype)
        return (xrt.pow(base, exponent),)
    return run


@op("Relu")
def _relu(node):
    return lambda x: (xrt.maximum(x, 0),)


@op("LeakyRelu")
def _leaky_relu(node):
    alpha = node.attr("alpha", 0.01)
    return lambda x: (xrt.where(xrt.greater_equal(x, 0), x, xrt.multiply(x, alpha)),)


@op("Sigmoid")
def _sigmoid(node):
    return lambda x: (xrt.reciprocal(xrt.add(xrt.exp(xrt.negative(x)), 1)),)


# Abramowitz and Stegun 7.1.26: |error| < 1.5e-7 over the real line.
_ERF_P = 0.3275911
_ERF_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


def erf(x, relative=True):
    """erf from the namespace's functions (there is no erf kernel yet: the docs' "left
    undone"). Abramowitz and Stegun 7.1.26 is within 1.5e-7 absolutely; near 0, where erf is
    small, its Taylor series keeps the error relative (``relative=False`` skips it where only
    the absolute error matters, as in GELU's 1 + erf)."""
    ax = xrt.abs(x)
    t = xrt.reciprocal(xrt.add(xrt.multiply(ax, _ERF_P), 1))
    poly = xrt.multiply(t, _ERF_A[0])
    for a in _ERF_A[1:]:
        poly = xrt.multiply(xrt.add(poly, a), t)
    x2 = xrt.multiply(ax, ax)
    y = xrt.multiply(xrt.subtract(1, xrt.multiply(poly, xrt.exp(xrt.negative(x2)))),
                     xrt.sign(x))
    if not relative:
        return y
    # 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320): below |x| = 0.5 the
    # next term is under 2e-8 of x.
    series = _ERF_SERIES[0]
    for c in _ERF_SERIES[1:]:
        series = xrt.add(xrt.multiply(series, x2), c)
    return xrt.where(xrt.less(ax, 0.5), xrt.multiply(series, x), y)


_ERF_SERIES = tuple(2 / math.sqrt(math.pi) * c
                    for c in (-1 / 1320, 1 / 216, -1 / 42, 1 / 10, -1 / 3, 1.0))


@op("Erf")
def _erf(node):
    return lambda x: (erf(x),)


def gelu(x, approximate="none"):
    if approximate == "tanh":
        inner = xrt.multiply(xrt.add(x, xrt.multiply(xrt.multiply(x, x), x * 0.044715)),
                             math.sqrt(2 / math.pi))
        return xrt.multiply(xrt.multiply(x, 0.5), xrt.add(xrt.tanh(inner), 1))
    phi = xrt.add(erf(xrt.multiply(x, 0.5 ** 0.5), relative=False), 1)
    return xrt.multiply(xrt.multiply(x, 0.5), phi)


@op("Gelu", since=20)
def _gelu(node):
    approximate = node.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise node.unsupported(f"approximate={approximate!r}")
    return lambda x: (gelu(x, approximate),)


@op("Cast")
def _cast(node):
    dtype = dtype_of(node.attr("to"), node)
    return lambda x: (x if x.dtype == dtype else xrt.astype(x, dtype),)


@op("CastLike", since=15)
def _cast_like(node):
    return lambda x, like: (x if x.dtype == like.dtype else xrt.astype(x, like.dtype),)


@op("Where")
def _where(node):
    return lambda c, a, b: (xrt.where(c, a, b),)


@op("Clip", host_inputs=(1, 2))
def _clip(node):
    if node.opset < 11:
        lo, hi = node.attr("min", None), node.attr("max", None)
        return lambda x: (xrt.clip(x, lo, hi),)

    def run(x, lo=None, hi=None):
        lo = None if lo is None else host_scalar(lo)
        hi = None if hi is None else host_scalar(hi)
        return (xrt.clip(x, lo, hi),)
    return run

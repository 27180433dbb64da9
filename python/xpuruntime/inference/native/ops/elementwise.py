"""python/xpuruntime/inference/native/ops/elementwise.py: ONNX's elementwise operators
(arithmetic, math, activations, comparisons, logic, Cast, Where, Clip) as tables over the
namespace's elementwise functions, which broadcast the way ONNX's multidirectional
broadcasting does."""


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


@op("Erf")
def _erf(node):
    def run(x):
        if is_integer(x.dtype):  # ONNX allows integer Erf: computed in float, cast back
            return (xrt.astype(xrt.special.erf(xrt.astype(x, xrt.float64)), x.dtype),)
        return (xrt.special.erf(x),)
    return run


@op("Gelu", since=20)
def _gelu(node):
    approximate = node.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise node.unsupported(f"approximate={approximate!r}")
    return lambda x: (xrt.special.gelu(x, approximate=approximate),)


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


_CHAIN_DTYPES = (xrt.float16, xrt.bfloat16, xrt.float32, xrt.float64)


@op("ElementwiseChain", domain="xpuruntime")
def _elementwise_chain(node):
    """Made by the ``elementwise`` fusion (native/fusion_elementwise.py): the nodes of a chain as one
    generated kernel (``xrt.ElementwiseKernel``; 16-bit floats computed in float32). Values
    of other dtypes, or off CUDA (shape arithmetic on the host), take the replaced nodes."""
    from . import lookup

    operation, originals = node.attr("operation"), node.attr("nodes")
    scalars = node.attr("scalars")
    params = ", ".join(f"T a{i}" for i in range(len(node.inputs)))
    node.computes_in_float32 = True
    state = {}

    def kernel():
        if "kernel" not in state:
            state["kernel"] = xrt.ElementwiseKernel(params, "T y", operation, "xrt_chain")
        return state["kernel"]

    def replaced(values):
        if "nodes" not in state:
            built = []
            for n in originals:
                n.float_dtype = node.float_dtype
                built.append((n, lookup(n.domain, n.op_type).build(n)))
            state["nodes"] = built
        env = dict(zip(node.inputs, values))
        for name, value in scalars.items():  # ONNX's elementwise ops take one type
            env[name] = xrt.asarray(value, dtype=values[0].dtype, device=values[0].device)
        for n, fn in state["nodes"]:
            env[n.outputs[0]] = fn(*[env[i] for i in n.inputs])[0]
        return env[node.outputs[0]]

    def run(*values):
        first = values[0]
        if first.device.type == "cuda" and first.dtype in _CHAIN_DTYPES and \
                all(v.dtype == first.dtype and v.device == first.device for v in values):
            return (kernel()(*values),)
        return (replaced(values),)
    return run

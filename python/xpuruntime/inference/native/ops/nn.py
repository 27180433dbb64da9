"""python/xpuruntime/inference/native/ops/nn.py: ONNX's neural-network operators: MatMul,
Gemm, Softmax/LogSoftmax, the normalisations (Layer, RMS, Simplified, Batch), 2-D Conv as
im2col + matmul, and pooling."""

import math

import xpuruntime as xrt
from xpuruntime import _core
from xpuruntime.nn import _ACTIVATIONS as _ACTIVATION_CODES

from . import op
from ._common import axis_of


@op("MatMul")
def _matmul(node):
    return lambda a, b: (xrt.matmul(a, b),)


_packing = []  # [bool] once known: does the CPU have the register-tiled packed kernel?


def _packs_cpu_weights():
    if not _packing:
        _packing.append(any(k["name"] == "avx512" and k["device"] == "cpu"
                            for k in xrt.list_kernels("linear_packed")))
    return _packing[0]


def _pins_the_product(pins):
    """A policy that pins linear or matmul (on the CPU or everywhere) is obeyed: the packed
    kernel, a third choice, stands aside unless it is pinned itself."""
    if not pins or "linear_packed" in pins or "cpu:linear_packed" in pins:
        return False
    return any(op in pins for op in ("linear", "matmul", "cpu:linear", "cpu:matmul"))


class _PackedWeights:
    """The weight a FusedLinear node multiplies by, packed for the CPU's register-tiled
    kernel (Note [Packed linear weights] in cpp/src/core/linear_ops.cpp) the first time it
    is seen: a plan's constants are the same objects on every run, so a node packs its
    weight once. Other weights (on CUDA, not float32, or a CPU without the kernel) pass as
    they are. The (weight, packed) pair is one attribute, as in HostInts."""

    __slots__ = ("_last",)

    def __init__(self):
        self._last = (None, None)

    def __call__(self, w, transposed):
        """w's packed form (of w.mT when transposed), or the matrix itself."""
        last = self._last
        if last[0] is w:
            return last[1]
        matrix = w.mT if transposed else w
        packed = matrix
        if w.dtype == xrt.float32 and w.device.type == "cpu" and _packs_cpu_weights():
            packed = xrt.nn.PackedLinearWeight(matrix)
        self._last = (w, packed)
        return packed


def _dense_order(x):
    """The order of x's leading axes in which x is contiguous (an exporter's transpose of a
    dense tensor), or None: a linear map acts on rows alone, so it runs on the dense rows
    and its output is transposed back, a view, where a copy of x would precede it."""
    if x.strides[-1] != 1:
        return None
    order = sorted(range(x.ndim - 1), key=lambda d: -x.strides[d]) + [x.ndim - 1]
    return order if xrt.permute_dims(x, tuple(order))._is_contiguous() else None


@op("FusedLinear", domain="xpuruntime")
def _fused_linear(node):
    """Made by the ``linear`` fusion (native/fusion.py): x times a constant matrix, plus a
    constant bias, then an optional activation, as one ``xrt.nn.linear``; on a CPU with
    AVX-512 the weight is packed once (``linear_packed``)."""
    layout, activation = node.attr("layout"), node.attr("activation", None)
    packed = _PackedWeights()

    code = _ACTIVATION_CODES[activation]

    def run(x, w, b):
        if x.ndim > 2 and not x._is_contiguous():
            order = _dense_order(x)
            if order is not None:  # rows in another order: the product's rows follow them
                y = run(xrt.permute_dims(x, order), w, b)[0]
                return (xrt.permute_dims(y, tuple(order.index(d) for d in range(x.ndim))),)
        weight = packed(w, layout == "kn")
        if type(weight) is xrt.nn.PackedLinearWeight:
            if x.dtype == xrt.float32 and (b is None or b.dtype == xrt.float32) and \
                    not _pins_the_product(_core._current_policy().preferences):
                return (_core._linear_packed(x, weight._packed, weight.out_features, b, code),)
            weight = w.mT if layout == "kn" else w
        return (_core._linear(x, weight, b, code),)
    return run


@op("Gemm")
def _gemm(node):
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    trans_a, trans_b = node.attr("transA", 0), node.attr("transB", 0)

    def run(a, b, c=None):
        y = xrt.matmul(a.mT if trans_a else a, b.mT if trans_b else b)
        if alpha != 1.0:
            y = xrt.multiply(y, alpha)
        if c is not None:
            y = xrt.add(y, c if beta == 1.0 else xrt.multiply(c, beta))
        return (y,)
    return run


def softmax(x, axis):
    return xrt.nn.softmax(x, axis=axis)


def log_softmax(x, axis):
    return xrt.nn.log_softmax(x, axis=axis)


@op("Softmax", "LogSoftmax")
def _softmax(node):
    # One kernel (xrt.nn's row ops), which computes 16-bit inputs in float32 itself.
    node.computes_in_float32 = True
    fn = softmax if node.op_type == "Softmax" else log_softmax
    if node.opset >= 13:
        axis = node.attr("axis", -1)
        return lambda x: (fn(x, axis_of(axis, x.ndim, node)),)
    axis = node.attr("axis", 1)

    def run(x):
        # Before opset 13 the input is seen as 2-D: [prod(shape[:axis]), prod(shape[axis:])].
        a = axis_of(axis, x.ndim, node)
        outer = math.prod(x.shape[:a])
        flat = xrt.reshape(x, (outer, math.prod(x.shape[a:])))
        return (xrt.reshape(fn(flat, 1), x.shape),)
    return run


def _normalised_axes(axis, x, node):
    return tuple(range(axis_of(axis, x.ndim, node), x.ndim))


def _fits(vector, trailing):
    return vector is None or vector.shape == trailing


def _composed_norm(node, x, scale, bias, axes, eps, rms):
    """(y, mean, inv_std) of a layer norm (mean None for an RMS norm) composed from the
    elementwise and reduction ops: for what the row kernels do not take (the statistics as
    outputs, a scale or bias that only broadcasts). 16-bit values of the policy's precision
    compute in float32, as the row kernels do."""
    low = node.float_dtype is not None and x.dtype == node.float_dtype
    if low:
        x, scale, bias = (None if v is None else xrt.astype(v, xrt.float32)
                          for v in (x, scale, bias))
    mean = None if rms else xrt.mean(x, axis=axes, keepdims=True)
    centred = x if rms else xrt.subtract(x, mean)
    var = xrt.mean(xrt.multiply(centred, centred), axis=axes, keepdims=True)
    inv_std = xrt.reciprocal(xrt.sqrt(xrt.add(var, eps)))
    y = xrt.multiply(xrt.multiply(centred, inv_std), scale)
    if bias is not None:
        y = xrt.add(y, bias)
    out = (y, mean, inv_std)
    return tuple(None if v is None else xrt.astype(v, node.float_dtype) for v in out) \
        if low else out


@op("LayerNormalization", since=17)
def _layer_norm(node):
    axis, eps = node.attr("axis", -1), node.attr("epsilon", 1e-5)
    # The fused kernel gives Y alone: a node that also asks for Mean or InvStdDev, or whose
    # scale and bias only broadcast to the normalised shape, is composed instead.
    statistics = any(node.outputs[1:])
    node.computes_in_float32 = True

    def run(x, scale, bias=None):
        shape = x.shape
        trailing = shape[axis_of(axis, len(shape), node):]
        if statistics or not (_fits(scale, trailing) and _fits(bias, trailing)):
            axes = _normalised_axes(axis, x, node)
            return _composed_norm(node, x, scale, bias, axes, eps, False)
        # The row kernel directly: the node's operands are what xrt.nn.layer_norm checks.
        return (_core._layer_norm(x, len(trailing), scale, bias, eps), None, None)
    return run


def _rms_norm(node):
    axis, eps = node.attr("axis", -1), node.attr("epsilon", 1e-5)
    statistics = any(node.outputs[1:])  # SimplifiedLayerNormalization's inv_std_var
    node.computes_in_float32 = True

    def run(x, scale, *unused):
        shape = x.shape
        trailing = shape[axis_of(axis, len(shape), node):]
        if statistics or not _fits(scale, trailing):
            axes = _normalised_axes(axis, x, node)
            y, _, inv_rms = _composed_norm(node, x, scale, None, axes, eps, True)
            return (y, inv_rms)
        return (_core._rms_norm(x, len(trailing), scale, eps), None)
    return run


@op("AddNorm", domain="xpuruntime")
def _add_norm(node):
    """Made by the ``add_norm`` fusion (native/fusion.py): (norm(a + b), a + b) in one
    kernel; operands of different shapes (a broadcasting Add) take the two ops."""
    axis, eps, rms = node.attr("axis"), node.attr("epsilon"), node.attr("rms")
    node.computes_in_float32 = True

    def run(a, b, scale=None, bias=None):
        shape = a.shape
        trailing = shape[axis_of(axis, len(shape), node):]
        if shape != b.shape or not (_fits(scale, trailing) and _fits(bias, trailing)):
            total = xrt.add(a, b)
            axes = _normalised_axes(axis, total, node)
            return (_composed_norm(node, total, scale, bias, axes, eps, rms)[0], total)
        return _core._add_norm(a, b, len(trailing), scale, None if rms else bias, eps, rms)
    return run


op("RMSNormalization", since=23)(_rms_norm)
# ONNX Runtime's contrib form, which it registers in the default domain (models its optimiser
# wrote carry it there, though the ONNX checker does not know it).
op("SimplifiedLayerNormalization")(_rms_norm)


@op("BatchNormalization")
def _batch_norm(node):
    eps = node.attr("epsilon", 1e-5)
    if node.attr("training_mode", 0):
        raise node.unsupported("training_mode=1 (only inference is implemented)")
    if len([o for o in node.outputs if o]) > 1:
        raise node.unsupported("the running mean and variance outputs (training only)")

    def run(x, scale, bias, mean, var):
        # y = x * a + b with a = scale / sqrt(var + eps), b = bias - mean * a, per channel.
        a = xrt.divide(scale, xrt.sqrt(xrt.add(var, eps)))
        b = xrt.subtract(bias, xrt.multiply(mean, a))
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        return (xrt.add(xrt.multiply(x, xrt.reshape(a, shape)), xrt.reshape(b, shape)),)
    return run


def _pads_2d(node, in_hw, kernel, strides, dilations):
    """(top, left, bottom, right) from pads or auto_pad, and the output height and width."""
    auto_pad = node.attr("auto_pad", "NOTSET")
    effective = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for size, k, s in zip(in_hw, effective, strides):
            total = max(0, (-(-size // s) - 1) * s + k - size)
            small = total // 2
            begin.append(small if auto_pad == "SAME_UPPER" else total - small)
            end.append(total - begin[-1])
        pads = begin + end
    elif auto_pad == "VALID":
        pads = [0, 0, 0, 0]
    else:
        pads = list(node.attr("pads", [0, 0, 0, 0]))
    out = []
    for i in range(2):
        span = in_hw[i] + pads[i] + pads[i + 2] - effective[i]
        if node.attr("ceil_mode", 0):
            n = -(-span // strides[i]) + 1
            if (n - 1) * strides[i] >= in_hw[i] + pads[i]:
                n -= 1  # the last window would start in the end padding
        else:
            n = span // strides[i] + 1
        out.append(n)
    return pads, out


def _pad_2d(x, pads, out_hw, strides, effective, value):
    """x padded by pads (and on the end sides as far as the last window needs)."""
    top, left = pads[0], pads[1]
    bottom = max(pads[2], (out_hw[0] - 1) * strides[0] + effective[0] - x.shape[2] - top)
    right = max(pads[3], (out_hw[1] - 1) * strides[1] + effective[1] - x.shape[3] - left)
    n, c, h, w = x.shape
    if top or bottom:
        parts = [xrt.full((n, c, top, w), value, dtype=x.dtype, device=x.device), x,
                 xrt.full((n, c, bottom, w), value, dtype=x.dtype, device=x.device)]
        x = xrt.concat([p for p in parts if p.shape[2]], axis=2)
    if left or right:
        h = x.shape[2]
        parts = [xrt.full((n, c, h, left), value, dtype=x.dtype, device=x.device), x,
                 xrt.full((n, c, h, right), value, dtype=x.dtype, device=x.device)]
        x = xrt.concat([p for p in parts if p.shape[3]], axis=3)
    return x


def _windows(x, kernel, strides, dilations, out_hw):
    """Each kernel offset's strided view of the padded input, shape (N, C, OH, OW)."""
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            top, left = i * dilations[0], j * dilations[1]
            yield x[:, :, top:top + strides[0] * (out_hw[0] - 1) + 1:strides[0],
                    left:left + strides[1] * (out_hw[1] - 1) + 1:strides[1]]


def _geometry(node, x, kernel):
    strides = tuple(node.attr("strides", [1, 1]))
    dilations = tuple(node.attr("dilations", [1, 1]))
    pads, out_hw = _pads_2d(node, x.shape[2:], kernel, strides, dilations)
    effective = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    return strides, dilations, pads, out_hw, effective


@op("Conv")
def _conv(node):
    group = node.attr("group", 1)
    kernel_attr = node.attr("kernel_shape", None)
    weight = node.constant(1)
    rank = len(kernel_attr) if kernel_attr else (weight.ndim - 2 if weight is not None else 2)
    if rank != 2:
        raise node.unsupported(f"{rank}-D convolution (2-D is implemented)")

    def run(x, w, b=None):
        if x.ndim != 4:
            raise xrt.UnsupportedOperationError(
                f"node {node.name!r} (Conv): {x.ndim - 2}-D input (2-D is implemented)")
        kernel = tuple(w.shape[2:])
        strides, dilations, pads, out_hw, effective = _geometry(node, x, kernel)
        n, c = x.shape[:2]
        m = w.shape[0]
        x = _pad_2d(x, pads, out_hw, strides, effective, 0)
        if kernel == (1, 1) and strides == (1, 1):
            cols = xrt.reshape(x, (n, group, c // group, out_hw[0] * out_hw[1]))
        else:
            # im2col: (N, C, kH*kW, OH, OW), whose (C, kH*kW) order matches W's flattening.
            cols = xrt.stack(list(_windows(x, kernel, strides, dilations, out_hw)), axis=2)
            cols = xrt.reshape(cols, (n, group, c // group * kernel[0] * kernel[1],
                                      out_hw[0] * out_hw[1]))
        y = xrt.matmul(xrt.reshape(w, (group, m // group, -1)), cols)
        y = xrt.reshape(y, (n, m, out_hw[0], out_hw[1]))
        if b is not None:
            y = xrt.add(y, xrt.reshape(b, (1, m, 1, 1)))
        return (y,)
    return run


def _check_pool(node):
    kernel = tuple(node.attr("kernel_shape"))
    if len(kernel) != 2:
        raise node.unsupported(f"{len(kernel)}-D pooling (2-D is implemented)")
    if node.op_type == "MaxPool" and len([o for o in node.outputs if o]) > 1:
        raise node.unsupported("the Indices output")
    if node.attr("storage_order", 0):
        raise node.unsupported("storage_order=1")
    return kernel


@op("MaxPool")
def _max_pool(node):
    kernel = _check_pool(node)

    def run(x):
        strides, dilations, pads, out_hw, effective = _geometry(node, x, kernel)
        low = -math.inf if x.dtype in (xrt.float16, xrt.bfloat16, xrt.float32, xrt.float64) \
            else xrt.iinfo(x.dtype).min
        x = _pad_2d(x, pads, out_hw, strides, effective, low)
        y = None
        for window in _windows(x, kernel, strides, dilations, out_hw):
            y = window if y is None else xrt.maximum(y, window)
        return (xrt.asarray(y, copy=True) if kernel == (1, 1) else y,)
    return run


@op("AveragePool")
def _average_pool(node):
    kernel = _check_pool(node)
    include_pad = node.attr("count_include_pad", 0)

    def window_sum(x, geometry, value):
        strides, dilations, pads, out_hw, effective = geometry
        x = _pad_2d(x, pads, out_hw, strides, effective, value)
        y = None
        for window in _windows(x, kernel, strides, dilations, out_hw):
            y = window if y is None else xrt.add(y, window)
        return y

    def run(x):
        geometry = _geometry(node, x, kernel)
        total = window_sum(x, geometry, 0)
        if include_pad and not node.attr("ceil_mode", 0):
            return (xrt.divide(total, kernel[0] * kernel[1]),)
        # Count the cells of each window that lie in the input (or in its explicit padding).
        ones = xrt.ones((1, 1) + x.shape[2:], dtype=x.dtype, device=x.device)
        if include_pad:
            strides, dilations, pads, out_hw, effective = geometry
            ones = _pad_2d(ones, pads, out_hw, strides, effective, 1)
            geometry = (strides, dilations, [0, 0, 0, 0], out_hw, effective)
        return (xrt.divide(total, window_sum(ones, geometry, 0)),)
    return run


@op("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(node):
    reduce = xrt.mean if node.op_type == "GlobalAveragePool" else xrt.max
    return lambda x: (reduce(x, axis=tuple(range(2, x.ndim)), keepdims=True),)

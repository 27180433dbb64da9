"""python/xpuruntime/inference/native/ops/reduce.py: ONNX's Reduce* operators over the
namespace's statistical functions. Axes are an attribute up to opset 12 (ReduceSum) or 17
(the others) and an input afterwards, where an empty or absent list means every axis unless
``noop_with_empty_axes``."""

import xpuruntime as xrt

from . import op
from ._common import axis_of, host_ints

# ONNX op -> (namespace function, the first opset that takes axes as an input).
REDUCTIONS = {
    "ReduceMean": (xrt.mean, 18), "ReduceSum": (xrt.sum, 13), "ReduceMax": (xrt.max, 18),
    "ReduceMin": (xrt.min, 18), "ReduceProd": (xrt.prod, 18),
}


@op(*REDUCTIONS, host_inputs=(1,))
def _reduce(node):
    fn, axes_input_since = REDUCTIONS[node.op_type]
    keepdims = bool(node.attr("keepdims", 1))
    noop = node.attr("noop_with_empty_axes", 0)
    attr_axes = node.attr("axes", None) if node.opset < axes_input_since else None
    from_attr = node.opset < axes_input_since

    def run(x, axes=None):
        axes = attr_axes if from_attr else (None if axes is None else host_ints(axes))
        if not axes:
            if noop:
                return (x,)
            axes = range(x.ndim)
        return (fn(x, axis=tuple(sorted({axis_of(a, x.ndim, node) for a in axes})),
                   keepdims=keepdims),)
    return run

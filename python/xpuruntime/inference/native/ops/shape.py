"""python/xpuruntime/inference/native/ops/shape.py: ONNX's operators that move, slice, join
and describe tensors (Reshape, Transpose, Concat, Split, Slice, Gather, (Un)Squeeze, Flatten,
Expand, Tile, Shape, Size, Range, Constant(OfShape), Identity, Trilu). Shapes and indices they
read come as host tensors (Note [Op table])."""

import math

import numpy as np

import xpuruntime as xrt

from .... import _core
from . import op
from ._common import HostInts, axis_of, host_ints, host_scalar

HOST = xrt.Device("cpu")


@op("Constant")
def _constant(node):
    from ..plan import constant_value  # the plan hoists Constant nodes; this serves folding
    value = xrt.asarray(constant_value(node), device=HOST)
    return lambda: (value,)


@op("Identity")
def _identity(node):
    return lambda x: (x,)


@op("Shape", shape_only=True)
def _shape(node):
    start, end = node.attr("start", 0), node.attr("end", None)

    def run(x):
        return (xrt.asarray(np.asarray(x.shape[start:end], dtype=np.int64), device=HOST),)
    return run


@op("Size", shape_only=True)
def _size(node):
    return lambda x: (xrt.asarray(np.asarray(x.size, dtype=np.int64), device=HOST),)


def reshape_target(shape, in_shape, allowzero, node):
    """ONNX's Reshape shape: 0 copies the input's dimension (unless allowzero), -1 is
    inferred."""
    out = [in_shape[i] if d == 0 and not allowzero else d for i, d in enumerate(shape)]
    if out.count(-1) > 1:
        raise ValueError(f"node {node.name!r} (Reshape): more than one -1 in {shape}")
    if -1 in out:
        known = math.prod(d for d in out if d != -1)
        total = math.prod(in_shape)
        out[out.index(-1)] = total // known if known else 0
    return tuple(out)


@op("Reshape", host_inputs=(1,))
def _reshape(node):
    allowzero = node.attr("allowzero", 0)
    if node.opset < 5:
        shape = node.attr("shape")
        return lambda x: (xrt.reshape(x, reshape_target(shape, x.shape, 0, node)),)
    shape_of = HostInts()
    last = [(None, None, None)]  # (shape values, input shape, target), one assignment

    def run(x, s):
        # A plan's shape input is read once (HostInts); with the input's shape unchanged,
        # the target is the last one.
        values, in_shape = shape_of(s), x.shape
        seen = last[0]
        if seen[0] is values and seen[1] == in_shape:
            return (xrt.reshape(x, seen[2]),)
        target = reshape_target(values, in_shape, allowzero, node)
        last[0] = (values, in_shape, target)
        return (xrt.reshape(x, target),)
    return run


@op("Flatten")
def _flatten(node):
    axis = node.attr("axis", 1)

    def run(x):
        a = axis_of(axis, x.ndim, node) if axis != x.ndim else axis
        outer = int(np.prod(x.shape[:a]))
        return (xrt.reshape(x, (outer, int(np.prod(x.shape[a:])))),)
    return run


@op("Transpose")
def _transpose(node):
    perm = node.attr("perm", None)

    def run(x):
        axes = tuple(perm) if perm is not None else tuple(range(x.ndim))[::-1]
        return (xrt.permute_dims(x, axes),)
    return run


@op("Concat")
def _concat(node):
    axis = node.attr("axis")
    return lambda *xs: (xrt.concat(list(xs), axis=axis_of(axis, xs[0].ndim, node)),)


def _axes_input_or_attr(node, since):
    """The axes of Squeeze/Unsqueeze/Reduce*: an attribute before ``since``, an input after."""
    return node.opset < since, node.attr("axes", None)


@op("Unsqueeze", host_inputs=(1,))
def _unsqueeze(node):
    from_attr, attr_axes = _axes_input_or_attr(node, 13)
    axes_of = HostInts()

    def run(x, axes=None):
        axes = attr_axes if from_attr else axes_of(axes)
        rank = x.ndim + len(axes)
        return (xrt.expand_dims(x, axis=tuple(sorted(axis_of(a, rank, node) for a in axes))),)
    return run


@op("Squeeze", host_inputs=(1,))
def _squeeze(node):
    from_attr, attr_axes = _axes_input_or_attr(node, 13)
    axes_of = HostInts()

    def run(x, axes=None):
        axes = attr_axes if from_attr else (None if axes is None else axes_of(axes))
        if axes is None:
            axes = [i for i, d in enumerate(x.shape) if d == 1]
        return (xrt.squeeze(x, axis=tuple(axis_of(a, x.ndim, node) for a in axes)),)
    return run


@op("Split", host_inputs=(1,))
def _split(node):
    axis = node.attr("axis", 0)
    attr_split = node.attr("split", None) if node.opset < 13 else None
    num_outputs = node.attr("num_outputs", None) or len(node.outputs)
    sizes_of = HostInts()

    def run(x, split=None):
        a = axis_of(axis, x.ndim, node)
        sizes = sizes_of(split) if split is not None else attr_split
        if sizes is None:
            # Even pieces; since opset 18 the last may be smaller (ceil division).
            step = -(-x.shape[a] // num_outputs)
            sizes = [min(step, x.shape[a] - i * step) for i in range(num_outputs)]
        outs, start = [], 0
        for size in sizes:
            index = [slice(None)] * x.ndim
            index[a] = slice(start, start + size)
            outs.append(x[tuple(index)])
            start += size
        return tuple(outs)
    return run


@op("Slice", host_inputs=(1, 2, 3, 4))
def _slice(node):
    if node.opset < 10:
        starts, ends = node.attr("starts"), node.attr("ends")
        attr_axes = node.attr("axes", None)
        return lambda x: (slice_tensor(x, starts, ends, attr_axes, None, node),)

    reads = [HostInts() for _ in range(4)]  # starts, ends, axes, steps

    def run(x, starts, ends, axes=None, steps=None):
        return (slice_tensor(x, reads[0](starts), reads[1](ends),
                             None if axes is None else reads[2](axes),
                             None if steps is None else reads[3](steps), node),)
    return run


def slice_tensor(x, starts, ends, axes, steps, node):
    index = [slice(None)] * x.ndim
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    for start, end, axis, step in zip(starts, ends, axes, steps):
        a = axis_of(axis, x.ndim, node)
        # ONNX clamps out-of-range starts and ends the way Python slices do; INT64_MAX and
        # INT64_MIN stand for "to the end". A negative end past the front means "through 0".
        if step < 0 and end < -x.shape[a]:
            end = None
        index[a] = slice(start, end, step)
    return x[tuple(index)]


@op("Gather")
def _gather(node):
    axis = node.attr("axis", 0)
    constant = node.constant(1)
    # A constant scalar index selects one slice: a view of x, with no kernel and no index
    # moved to the device (exporters select q, k and v from a packed projection this way).
    scalar = int(constant) if constant is not None and np.ndim(constant) == 0 else None

    def run(x, indices):
        a = axis_of(axis, x.ndim, node)
        if scalar is not None:
            n = x.shape[a]
            if not -n <= scalar < n:
                raise IndexError(f"node {node.name!r} (Gather): index {scalar} is out of "
                                 f"range for axis {a} of size {n}")
            return (x[(slice(None),) * a + (scalar,)],)
        if indices.ndim == 1:
            return (xrt.take(x, indices, axis=a),)
        flat = xrt.take(x, xrt.reshape(indices, (-1,)), axis=a)
        shape = x.shape[:a] + indices.shape + x.shape[a + 1:]
        return (xrt.reshape(flat, shape),)
    return run


@op("Expand", host_inputs=(1,))
def _expand(node):
    def run(x, shape):
        # Bidirectional: the result has the broadcast of both shapes.
        target = xrt.broadcast_shapes(x.shape, host_ints(shape))
        return (xrt.broadcast_to(x, target),)
    return run


@op("Tile", host_inputs=(1,))
def _tile(node):
    return lambda x, repeats: (xrt.tile(x, host_ints(repeats)),)


@op("Range", host_inputs=(0, 1, 2))
def _range(node):
    def run(start, limit, delta):
        return (xrt.arange(host_scalar(start), host_scalar(limit), host_scalar(delta),
                           dtype=start.dtype, device=node.device),)
    return run


@op("ConstantOfShape", host_inputs=(0,))
def _constant_of_shape(node):
    value = node.attr("value", None)
    value = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(1)
    fill = value[0].item()
    dtype = xrt.dtype_from_numpy(value.dtype)
    if dtype == xrt.float32 and node.float_dtype is not None:
        dtype = node.float_dtype  # the policy's precision (fp16/bf16)

    def run(shape):
        return (xrt.full(host_ints(shape), fill, dtype=dtype, device=node.device),)
    return run


@op("Trilu", host_inputs=(1,))
def _trilu(node):
    upper = node.attr("upper", 1)

    def run(x, k=None):
        k = 0 if k is None else host_scalar(k)
        return ((xrt.triu if upper else xrt.tril)(x, k=int(k)),)
    return run


# Note [View chains]: exporters move heads around with chains of Reshape and Transpose
# (PyTorch's attention: [L, N, E] -> Reshape [L, N*H, D] -> Transpose -> Reshape [N, H, L, D]).
# One step alone may not be a view (merging N and H of a strided tensor is not), so the
# Reshape copies; the whole chain often is one (here a permutation of [L, N, H, D]). The
# ``views`` fusion makes such a chain one ``xpuruntime:ViewChain`` node, which follows the
# steps on a nested layout (each dimension a list of (size, stride) parts, as CuTe's
# layouts) and returns one strided view when every dimension ends as a single part; where one
# does not, it runs the chain's ops (copying as they do). The steps' shapes come from the
# chain's own ops run on a zero-strided stand-in (every reshape of it is a view), so each
# op's semantics, and its errors, stay in one place; the result is kept per input layout and
# shape values.

def _merged(parts):
    """parts with neighbours merged where the outer one steps over the inner exactly."""
    out = []
    for size, stride in parts:
        if size == 1:
            continue
        if out and out[-1][1] == size * stride:
            out[-1] = (out[-1][0] * size, stride)
        else:
            out.append((size, stride))
    return out


def _reshaped(modes, target):
    """modes regrouped into dimensions of sizes target; None when a part would have to be
    split unevenly."""
    flat = [part for mode in modes for part in mode if part[0] != 1]
    out, i = [], 0
    for want in target:
        mode = []
        while want > 1:
            if i == len(flat):
                return None
            size, stride = flat[i]
            if size <= want:
                if want % size:
                    return None
                mode.append((size, stride))
                want //= size
                i += 1
            else:
                if size % want:
                    return None
                mode.append((want, stride * (size // want)))
                flat[i] = (size // want, stride)
                want = 1
        out.append(mode)
    return out if i == len(flat) else None


def nested_view(shape, strides, steps):
    """(shape, strides) of the view the steps make of a tensor with this layout, or None
    when the result is not one strided view. steps: ("perm", axes) or ("shape", sizes)."""
    if 0 in shape:
        return None
    modes = [[(n, s)] for n, s in zip(shape, strides)]
    for kind, arg in steps:
        modes = [modes[a] for a in arg] if kind == "perm" else _reshaped(modes, arg)
        if modes is None:
            return None
    out_shape, out_strides = [], []
    for mode in modes:
        parts = _merged(mode)
        if len(parts) > 1:
            return None
        out_shape.append(parts[0][0] if parts else 1)
        out_strides.append(parts[0][1] if parts else 0)
    return tuple(out_shape), tuple(out_strides)


@op("ViewChain", domain="xpuruntime", host_inputs=range(1, 64))
def _view_chain(node):
    """Made by the ``views`` fusion (native/fusion_views.py) from a chain of Reshape,
    Transpose, Unsqueeze, Squeeze and Flatten nodes (Note [View chains])."""
    members = node.members
    fns = [m.spec.build(m) for m in members]
    counts = [len(m.inputs) - 1 for m in members]
    readers = [HostInts() for _ in range(sum(counts))]
    stand_in = xrt.zeros((), dtype=xrt.int8, device=HOST)
    views = {}

    def steps_of(shape, args):
        cur, steps, at = xrt.broadcast_to(stand_in, shape), [], 0
        for member, fn, n in zip(members, fns, counts):
            nxt = fn(cur, *args[at:at + n])[0]
            at += n
            if member.op_type == "Transpose":
                perm = member.attr("perm", None)
                steps.append(("perm", tuple(perm) if perm is not None else
                              tuple(range(cur.ndim))[::-1]))
            else:
                steps.append(("shape", nxt.shape))
            cur = nxt
        return steps

    last = [None]  # (shape, strides, args, view) of the last call, replaced whole

    def run(x, *args):
        shape, strides = x.shape, x.strides
        seen = last[0]
        # The same layout and the same argument objects as the last call (a plan's host
        # values are the same objects from run to run): its view, with no key built.
        if seen is not None and seen[0] == shape and seen[1] == strides and \
                len(args) == len(seen[2]) and \
                (not args or all(a is b for a, b in zip(args, seen[2]))):
            view = seen[3]
        else:
            key = (shape, strides, tuple(None if a is None else r(a)
                                         for a, r in zip(args, readers)))
            view = views.get(key)
            if view is None:
                if len(views) >= 64:  # many shapes (dynamic ones): start over
                    views.clear()
                view = views[key] = nested_view(shape, strides, steps_of(shape, args)) \
                    or False
            last[0] = (shape, strides, args, view)
        if view:
            return (_core._as_strided(x, *view),)
        at = 0
        for fn, n in zip(fns, counts):
            x = fn(x, *args[at:at + n])[0]
            at += n
        return (x,)
    return run

"""python/xpuruntime/inference/native/plan.py: an ONNX graph loaded once into an execution
plan, and the loop that runs it.

Note [Execution plan]: building does, in order,
- check every node against the op table (ops/__init__.py) and fail on the first one the
  engine cannot run, naming the node, its op and its opset;
- order the nodes topologically (the file's order where it is already one);
- run the enabled fusion passes (fusion.py), then build one function per node;
- fold constants: a node whose inputs are all initializers runs once, here, on the CPU;
- convert weights to the policy's precision once (fp16/bf16), wrapping the numerically
  sensitive ops (softmax, norms, reductions) so they compute in fp32, unless their kernel
  does so itself (the row ops of xrt.nn: softmax, layer_norm, rms_norm);
- place values: integers computed from shapes (``Shape``, ``Size`` and what is computed from
  them, from small integer constants and from scalar constants of any type) live on the host,
  where the ops that read integers (Reshape, Slice, ...) want them, so a CUDA plan never waits
  for the device to learn a shape; so does a scale computed from a shape (PyTorch's export of
  attention: Cast, Sqrt, Div of the head size), which the fused attention then reads as a
  number. Everything else lives on the target device, constants uploaded once;
- plan lifetimes: each value is dropped after its last reader, so the caching allocator
  reuses its memory for the next one (after the first run, a run with the same shapes takes
  every block from the cache).
With static shapes, the host values of the first run are frozen into constants, and the
nodes that made them leave the plan.
"""

import time

import numpy as np
import xpuruntime as xrt

from ... import _core
from .._types import DTYPE_OF_ONNX
from . import fusion
from .fusion_rows import candidates
from .ops import lookup
from .straight import compile_straight

_REQUIRED = object()

# Ops that read a Cast target or a fill value of float type: converted with the weights.
# Ops computed in float32 under fp16/bf16 (Note [Execution plan]).
FP32_OPS = frozenset({
    "Softmax", "LogSoftmax", "LayerNormalization", "RMSNormalization",
    "SimplifiedLayerNormalization", "BatchNormalization", "ReduceMean", "ReduceSum",
    "ReduceProd", "GlobalAveragePool", "AveragePool",
})
# Integer constants up to this size are also kept on the host (shapes, axes, indices).
HOST_CONSTANT_LIMIT = 4096


class Node:
    """One node of the plan: what builders read (``attr``, ``constant``, ``opset``) and what
    the run loop needs (``fn``, where its inputs come from, what it frees)."""

    def __init__(self, name, op_type, domain, opset, attrs, inputs, outputs):
        self.name, self.op_type, self.domain, self.opset = name, op_type, domain, opset
        self.attrs, self.inputs, self.outputs = attrs, list(inputs), list(outputs)
        self.spec = None
        self.fn = None
        self.device = None         # where the node runs (the host for host values)
        self.moves = ()            # (input index, how): "host", "device", "constant"
        self.any_place = frozenset()  # input indices read wherever they live (set by builders)
        self.memo = None           # "shape" or "derived": kept between runs (Note [Shape memo])
        self.frees = ()            # names to drop after the node runs
        self.float_dtype = None    # the float dtype of the policy's precision (fp16/bf16)
        self.computes_in_float32 = False  # set by builders whose kernel widens 16-bit itself
        self.kernels = []          # the dispatcher's decisions on the recorded run
        self.fused = ""            # the fusion that made this node, if any
        self.constants = {}        # input name -> numpy value, for builders
        self.seconds = 0.0         # profiled time

    def attr(self, name, default=_REQUIRED):
        if name in self.attrs:
            return self.attrs[name]
        if default is _REQUIRED:
            raise ValueError(f"node {self.name!r} ({self.op_type}) lacks the required "
                             f"attribute {name!r}")
        return default

    def constant(self, index):
        """The value of input ``index`` when it is an initializer (numpy), else None."""
        if index < len(self.inputs):
            return self.constants.get(self.inputs[index])
        return None

    def unsupported(self, what):
        domain = self.domain or "ai.onnx"
        return _core.UnsupportedOperationError(
            f"node {self.name!r}: {domain}::{self.op_type} (opset {self.opset}) is supported "
            f"by the native engine, but not with {what}")


def attribute_value(attribute):
    import onnx
    from onnx import numpy_helper

    value = onnx.helper.get_attribute_value(attribute)
    if attribute.type == onnx.AttributeProto.TENSOR:
        return numpy_helper.to_array(value)
    if isinstance(value, bytes):
        return value.decode()
    if attribute.type == onnx.AttributeProto.STRINGS:
        return [v.decode() for v in value]
    if attribute.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
        return value
    return value


def unsupported_node(node, opset):
    from .ops import supported_ops

    domain = node.domain or "ai.onnx"
    known = ", ".join(supported_ops().get(domain, [])) or "none"
    return _core.UnsupportedOperationError(
        f"node {node.name!r}: {domain}::{node.op_type} (opset {opset}) is not supported by "
        f"the native engine (it runs, in {domain}: {known})")


def _static_shapes(proto):
    """{value: shape} of the values ONNX's shape inference (with constant propagation) pins
    to fixed sizes; {} when it cannot run on the model."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(proto, data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, ValueError,
            RuntimeError):  # a model shape inference rejects (or past 2 GB) keeps the rest
        return {}
    shapes = {}
    for value in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]:
        dims = value.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes[value.name] = tuple(int(d.dim_value) for d in dims)
    return shapes


def hoist_constants(nodes, weights):
    """Constant nodes become initializers, so fusions and folding see their values."""
    kept = []
    for node in nodes:
        if node.op_type == "Constant" and node.domain == "" and "sparse_value" not in node.attrs:
            weights[node.outputs[0]] = np.asarray(constant_value(node))
        else:
            kept.append(node)
    return kept


def constant_value(node):
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in node.attrs:
            value = node.attrs[key]
            if key == "value":
                return value
            return np.asarray(value, dtype=np.float32 if "float" in key else np.int64)
    raise node.unsupported("only value, value_float(s) and value_int(s) are implemented")


def topological_order(nodes, available):
    """Kahn's algorithm, keeping the file's order among ready nodes."""
    available = set(available) | {""}
    pending, ordered = list(nodes), []
    while pending:
        ready = [n for n in pending if all(i in available for i in n.inputs)]
        if not ready:
            stuck = pending[0]
            missing = [i for i in stuck.inputs if i not in available]
            raise ValueError(f"the graph is not a DAG or uses undefined values: node "
                             f"{stuck.name!r} waits for {missing}")
        ready_ids = {id(n) for n in ready}
        for n in ready:
            ordered.append(n)
            available.update(n.outputs)
        pending = [n for n in pending if id(n) not in ready_ids]
    return ordered


class Plan:
    """An ONNX graph ready to run on one device (Note [Execution plan])."""

    def __init__(self, proto, device, *, precision="fp32", fusions=(), fold=True):
        graph = proto.graph
        self.device = device
        self.host = _core.Device("cpu")
        self.on_device = device.type != "cpu"
        self.opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version
                       for o in proto.opset_import}
        self.low = {"fp16": xrt.float16, "bf16": xrt.bfloat16}.get(precision)
        from onnx import numpy_helper
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        self.input_names = [v.name for v in graph.input if v.name not in weights]
        self.output_names = [v.name for v in graph.output]
        nodes = [self._node(n, i, weights) for i, n in enumerate(graph.node)]
        nodes = hoist_constants(nodes, weights)
        for node in nodes:  # what builders see of their inputs, Constant nodes' values included
            node.constants = {i: weights[i] for i in node.inputs if i in weights}
        nodes = topological_order(nodes, list(weights) + self.input_names)
        shapes = _static_shapes(proto) if "rows" in fusions and candidates(nodes) else {}
        nodes, self.fusions = fusion.apply(nodes, fusions, weights, self.opsets, device,
                                           self.output_names, shapes)
        for node in nodes:
            self._build(node)
        self.constants = {name: xrt.asarray(value, device=self.host)
                          for name, value in weights.items()}
        self.folded = self._fold(nodes) if fold else 0
        nodes = [n for n in nodes if not all(o in self.constants or not o for o in n.outputs)]
        if self.low is not None:
            self._lower_precision(nodes)
        self.all_nodes = nodes
        self.recorded = False
        self._place(self.constants)

    # -- building --------------------------------------------------------------------------

    def _node(self, proto_node, index, weights):
        domain = "" if proto_node.domain == "ai.onnx" else proto_node.domain
        opset = self.opsets.get(domain, 1)
        name = proto_node.name or f"{proto_node.op_type}_{index}"
        node = Node(name, proto_node.op_type, domain, opset,
                    {a.name: attribute_value(a) for a in proto_node.attribute},
                    proto_node.input, proto_node.output)
        spec = lookup(domain, proto_node.op_type)
        if spec is None or opset < spec.since:
            raise unsupported_node(node, opset)
        node.spec = spec
        return node

    def _build(self, node):
        if self.low is not None:
            # Cast-to-float and float fills follow the weights into the lower precision.
            if node.op_type == "Cast" and node.attrs.get("to") == 1:
                node.attrs["to"] = 10 if self.low == xrt.float16 else 16
            node.float_dtype = self.low
        node.fn = node.spec.build(node)

    def _fold(self, nodes):
        folded = 0
        for node in nodes:
            if not all(i in self.constants or not i for i in node.inputs):
                continue
            if not node.inputs and node.op_type != "Constant":
                continue
            node.device = self.host
            outputs = self._call(node, [self.constants.get(i) if i else None
                                        for i in node.inputs])
            for name, value in zip(node.outputs, outputs):
                if name:
                    self.constants[name] = value
            folded += 1
        return folded

    def _lower_precision(self, nodes):
        low = self.low
        for name, value in list(self.constants.items()):
            if value.dtype == xrt.float32:
                self.constants[name] = xrt.astype(value, low)
        for node in nodes:
            if node.op_type in FP32_OPS and not node.computes_in_float32:
                node.fn = _in_float32(node.fn, low)

    def _place(self, constants):
        """Decides where every value lives and when it dies (Note [Execution plan])."""
        self.device_constants = {}
        host_values = set()
        for name, value in constants.items():
            small_int = value.dtype not in (xrt.float16, xrt.bfloat16, xrt.float32,
                                            xrt.float64) and value.size <= HOST_CONSTANT_LIMIT
            if small_int or value.size == 1:
                host_values.add(name)
            if self.on_device:
                self.device_constants[name] = value.to_device(self.device)
        nodes = [n for n in self.all_nodes
                 if not all(o in constants or not o for o in n.outputs)]
        for node in nodes:
            inputs = [i for i in node.inputs if i]
            on_host = node.spec.shape_only or (inputs and all(i in host_values for i in inputs))
            node.device = self.host if on_host and not node.spec.shape_only else self.device
            if on_host:
                host_values.update(o for o in node.outputs if o)
            node.memo = None
            if on_host and not any(o in self.output_names for o in node.outputs):
                node.memo = "shape" if node.spec.shape_only else "derived"
            moves = []
            if self.on_device and not on_host:
                for index, name in enumerate(node.inputs):
                    if not name or index in node.any_place:
                        continue
                    wants_host = index in node.spec.host_inputs
                    if wants_host and name not in host_values:
                        moves.append((index, "host"))
                    elif not wants_host and name in host_values:
                        moves.append((index, "constant" if name in constants else "device"))
            node.moves = tuple(moves)
        # Lifetimes: drop each computed value after its last reader; host values stay (they
        # are small, and freezing them needs them).
        last = {}
        for index, node in enumerate(nodes):
            for name in node.inputs:
                last[name] = index
            for name in node.outputs:
                last.setdefault(name, index)
        keep = set(self.output_names) | set(constants) | host_values | set(self.input_names)
        frees = [[] for _ in nodes]
        for name, index in last.items():
            if name and name not in keep:
                frees[index].append(name)
        for node, names in zip(nodes, frees):
            node.frees = tuple(names)
        self.nodes = nodes
        self._memo = None
        self._straight = None  # made at the next plain run (Note [Straight-line runs], straight.py)
        self.host_values = host_values
        self.run_constants = dict(constants)
        if self.on_device:
            # Device nodes read float constants from their device copies directly.
            for name, value in self.device_constants.items():
                if name not in host_values:
                    self.run_constants[name] = value

    def freeze(self, env):
        """Static shapes: the host values of a run become constants (Note [Execution plan])."""
        constants = dict(self.constants)
        for name in self.host_values:
            if name not in constants and name in env:
                constants[name] = env[name]
        self._place(constants)

    # -- running ---------------------------------------------------------------------------

    def _call(self, node, args):
        try:
            return node.fn(*args)
        except (xrt.XpuRuntimeError, ValueError, TypeError, IndexError) as e:
            named = _named(node, e)
            if named is e:
                raise
            raise named from e

    def _args(self, node, env):
        """The node's inputs from env, moved where the node reads them."""
        args = [env[name] if name else None for name in node.inputs]
        for index, how in node.moves:
            name = node.inputs[index]
            if how == "constant":
                args[index] = self.device_constants[name]
            elif how == "device":
                args[index] = args[index].to_device(self.device)
            else:
                args[index] = args[index].to_device(self.host)
        return args

    def run(self, feeds, record=False, profile=False):
        """Runs the plan on ``feeds`` (name -> Tensor on the device) and returns the env
        holding the graph's outputs."""
        memo = self._memo
        plain = not (record or profile)
        if plain and memo is not None:
            straight = self._straight or self._compile_straight()
            low = self.low
            if low is None:
                return straight(memo, *[feeds[name] for name in self.input_names])
            return straight(memo, *[xrt.astype(v, low) if v.dtype == xrt.float32 else v
                                    for v in [feeds[name] for name in self.input_names]])
        # A plain run starts from the constants and the memo's host values (Note [Shape memo]).
        env = dict(memo[1] if plain and memo is not None else self.run_constants)
        for name in self.input_names:
            value = feeds[name]
            if self.low is not None and value.dtype == xrt.float32:
                value = xrt.astype(value, self.low)
            env[name] = value
        if plain:
            return self._run_plain(env, memo)
        fresh = [None] * len(self.nodes)  # these runs run every node and keep a new memo
        for i, node in enumerate(self.nodes):
            args = self._args(node, env)
            if record:
                with xrt.explain() as log:
                    outputs = self._call(node, args)
                node.kernels = log.records
            elif profile:
                start = time.perf_counter()
                outputs = self._call(node, args)
                if self.on_device:
                    xrt.cuda.current_stream().synchronize()
                node.seconds += time.perf_counter() - start
            else:
                outputs = self._call(node, args)
            if node.memo is not None:
                fresh[i] = (args[0].shape if node.memo == "shape" else None, outputs)
            for name, value in zip(node.outputs, outputs):
                if name:
                    env[name] = value
            for name in node.frees:
                del env[name]
        if record:
            self.recorded = True
        self._publish(fresh)
        return env

    def _publish(self, entries):
        """Keeps a run's memo (Note [Shape memo]): its entries, and the env a plain run starts
        from (the constants and the memoised nodes' outputs), published as one value."""
        start = dict(self.run_constants)
        for node, entry in zip(self.nodes, entries):
            if entry is not None:
                for name, value in zip(node.outputs, entry[1]):
                    if name:
                        start[name] = value
        self._memo = (entries, start)

    def _run_plain(self, env, memo, start=0):
        """run without recording or timing: the loop with the least Python per node (about
        40 nodes run per call of a small transformer, each a few microseconds of work).

        Note [Shape memo]: the host values (shapes and what is computed from them and from
        constants) depend on the shapes the Shape and Size nodes read, nothing else. The
        last run's are kept: while every Shape node so far reads the shape it read then, a
        host node's outputs are the last run's, and it does not run (a third of the nodes
        of PyTorch's attention export). The run starts from an env that already holds the
        last run's host values, so such a node costs a test, not a lookup and a store. From
        the first shape that differs on, the host nodes run (overwriting those values) and
        the run keeps a new memo, published whole at the end (a memo is never changed once
        published, so threads sharing the plan each read a consistent one)."""
        entries = memo[0] if memo is not None else None
        valid = entries is not None
        fresh = None  # this run's memo, once it differs from the last
        node = None
        try:
            for i, node in enumerate(self.nodes[start:] if start else self.nodes, start):
                kind = node.memo
                if kind is not None:
                    if kind == "shape":
                        key = env[node.inputs[0]].shape
                        if valid and entries[i][0] == key:
                            continue
                    elif valid:
                        continue
                    else:
                        key = None
                    if fresh is None:
                        fresh = list(entries) if entries is not None else [None] * len(self.nodes)
                        valid = False
                    outputs = node.fn(*[env[name] if name else None for name in node.inputs])
                    fresh[i] = (key, outputs)
                elif node.moves:
                    outputs = node.fn(*self._args(node, env))
                else:
                    outputs = node.fn(*[env[name] if name else None for name in node.inputs])
                for name, value in zip(node.outputs, outputs):
                    if name:
                        env[name] = value
                for name in node.frees:
                    del env[name]
        except (xrt.XpuRuntimeError, ValueError, TypeError, IndexError) as e:
            named = _named(node, e)
            if named is e:
                raise
            raise named from e
        if fresh is not None or entries is None:  # a memo, even one with no entries
            self._publish(fresh or [None] * len(self.nodes))
        return env

    def _compile_straight(self):
        """The plain run as one generated function (Note [Straight-line runs] in
        straight.py), kept until the plan is placed again."""
        self._straight = compile_straight(self, _named)
        return self._straight

def _named(node, error):
    """error with the node's name and op in front; error itself when it already names it."""
    if str(error).startswith(f"node {node.name!r}"):
        return error
    return type(error)(f"node {node.name!r} ({node.op_type}): {error}")


def _in_float32(fn, low):
    def run(*args):
        args = [xrt.astype(a, xrt.float32) if a is not None and a.dtype == low else a
                for a in args]
        return tuple(xrt.astype(o, low) if o is not None and o.dtype == xrt.float32 else o
                     for o in fn(*args))
    return run


def onnx_dtype(code):
    return DTYPE_OF_ONNX.get(code)

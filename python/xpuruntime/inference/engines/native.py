"""python/xpuruntime/inference/engines/native.py: the native engine: ONNX graphs on
xpuruntime's own kernels, so a KernelPolicy steers every node and explain() shows each choice.

Note [Native engine and the policies]:
- the KernelPolicy is pushed for the whole run (``xrt.kernel_policy``), so every node
  dispatches under it; the first run (and the first after the input shapes change) records the
  dispatcher's decision for each node, which ``explain()`` lists as node -> op -> kernels;
- precision fp16/bf16 converts the weights once (plan.py) and returns outputs in their
  declared types; int8 is not implemented;
- static_shape freezes the shape arithmetic after the first run; with cuda_graphs on a CUDA
  target the second run captures the plan into a CUDA graph (inputs copied into static
  buffers) and later runs replay it, handing out copies of the outputs (the contract forbids
  handing out memory the next replay overwrites);
- graph_optimization "none" runs the graph as written, "basic" folds constants, "extended"
  and "all" also fuse (each fusion can be switched off with ``fusions=``);
- threads sets xpuruntime's CPU thread pool, which is process-wide: noted as such.
"""

from .._engine import Engine, TensorInfo, register_engine
from .._types import DTYPE_OF_ONNX


def supported_ops():
    """``{domain: [op types]}`` the native engine runs (for ``python -m xpuruntime info``)."""
    from ..native.ops import supported_ops as table
    return table()


@register_engine
class NativeEngine(Engine):
    name = "native"
    extra = ""
    kinds = ("cpu", "cuda")
    auto_rank = {"cpu": 2, "cuda": 2}  # noqa: RUF012  (the base class's declared form)

    @classmethod
    def probe(cls, target):
        try:
            import onnx  # noqa: F401
        except ImportError:
            return "the 'onnx' package is not installed (pip install onnx)"
        if target.kind == "cuda":
            import xpuruntime as xrt
            status = xrt.cuda.status()
            if not status["available"]:
                return f"CUDA is not usable here: {status['reason']}"
        return None

    def __init__(self, model, target, kernel_policy, exec_policy, *, fusions=None):
        super().__init__(model, target, kernel_policy, exec_policy)
        import xpuruntime as xrt

        from ..native import FUSIONS, Plan

        policy = exec_policy
        level = policy.graph_optimization if policy is not None else "all"
        precision = policy.precision if policy is not None else "fp32"
        if precision == "int8":
            self.unhonoured.append("precision='int8': the native engine has no quantised "
                                   "kernels; it runs the model in fp32")
            precision = "fp32"
        if fusions is None:
            fusions = FUSIONS if level in ("extended", "all") else ()
        self.plan = Plan(model.proto, target.device, precision=precision,
                         fusions=tuple(fusions), fold=level != "none")
        self.precision = precision
        graph = model.proto.graph
        initialisers = {t.name for t in graph.initializer}
        self.inputs = tuple(_info(v) for v in graph.input if v.name not in initialisers)
        self.outputs = tuple(_info(v) for v in graph.output)
        self._declared = {info.name: info.dtype for info in self.outputs}
        self._fixed = dict(policy.input_shapes or {}) if policy is not None else {}
        self._static = bool(policy is not None and policy.static_shape)
        self._graphs = bool(policy is not None and policy.cuda_graphs)
        self._profile = bool(policy is not None and policy.profile)
        self._signature = None
        self._frozen = False
        self._graph = None
        self._threads = policy.threads if policy is not None else None
        if self._graphs and target.kind != "cuda":
            self.unhonoured.append("cuda_graphs: CUDA graphs exist only on a CUDA target")
        if self._graphs and not self._static:
            self.unhonoured.append("cuda_graphs needs static_shape=True (a graph replays one "
                                   "set of shapes); the plan runs eagerly")
        if policy is not None and policy.allocator != "caching":
            self.unhonoured.append(f"allocator={policy.allocator!r}: the native engine "
                                   "allocates from xpuruntime's caching allocator")
        if policy is not None and policy.performance_hint != "latency":
            self.unhonoured.append("performance_hint='throughput': the native engine runs one "
                                   "request at a time, tuned for latency")
        if self._threads is not None:
            if target.kind == "cpu":
                self.notes.append(f"threads={self._threads} sets xpuruntime's CPU thread "
                                  "pool, which is process-wide, for the duration of each run")
            else:
                self.unhonoured.append("threads: on CUDA the native engine's CPU work is "
                                       "the Python loop; there is no thread pool to size")
        self.notes.append(f"{len(self.plan.nodes)} nodes planned ({self.plan.folded} folded "
                          f"into constants), fusions: "
                          f"{', '.join(fusions) if fusions else 'none'}")
        self._xrt = xrt

    def run(self, feeds, output_names):
        xrt = self._xrt
        signature = tuple((name, feeds[name].shape) for name in self.plan.input_names)
        if signature != self._signature:
            self._check_shapes(feeds)
            if self._frozen:
                raise ValueError(f"static_shape=True: the session runs the shapes of its first "
                                 f"run, {dict(self._signature)}, not {dict(signature)}")
        record = signature != self._signature
        self._signature = signature
        policy = self.kernel_policy if self.kernel_policy is not None \
            else xrt.get_kernel_policy()
        threads = self._set_threads()
        try:
            with xrt.kernel_policy(policy):
                if self._graph is not None:
                    return self._replay(feeds, output_names)
                if self._static and self._graphs and self._frozen and \
                        self.target.kind == "cuda":
                    return self._capture(feeds, output_names)
                env = self.plan.run(feeds, record=record, profile=self._profile and not record)
                if self._static and not self._frozen:
                    self.plan.freeze(env)
                    self._frozen = True
                return [self._output(env[name], name) for name in output_names]
        finally:
            if threads is not None:
                xrt.set_num_threads(threads)

    def _output(self, value, name):
        xrt = self._xrt
        if value.device != self.target.device:
            value = value.to_device(self.target.device)  # a host value the graph returns
        declared = self._declared.get(name)
        if declared is not None and value.dtype != declared:
            value = xrt.astype(value, declared)  # fp16/bf16 plans return declared types
        return value

    def _capture(self, feeds, output_names):
        """The second run of a static CUDA plan: capture it, then replay it.

        Note [Graph IO]: a replay copies the caller's inputs into buffers of fixed address
        and its outputs out into fresh Tensors the caller owns. Where the plan runs in
        fp16/bf16 and the model's IO is float32, those copies also convert: the input
        buffers hold the plan's dtype (the conversion the plan would run first is the copy
        in) and the graph leaves its outputs in the plan's dtype (the conversion back is the
        copy out), so a replay runs two kernels fewer."""
        xrt = self._xrt
        low = self.plan.low

        def held(t):  # the dtype a static buffer holds an input in
            return low if low is not None and t.dtype == xrt.float32 else t.dtype
        self._static_inputs = {name: xrt.empty(t.shape, dtype=held(t), device=t.device)
                               for name, t in feeds.items() if name in self.plan.input_names}
        for name, buffer in self._static_inputs.items():
            buffer._cast_from(feeds[name])  # one kernel on the current stream
        graph = xrt.cuda.CUDAGraph()
        try:
            with xrt.cuda.graph(graph):
                env = self.plan.run(self._static_inputs)
                outputs = {name: env[name] for name in output_names}
        except xrt.XpuRuntimeError as e:
            self.unhonoured.append(f"cuda_graphs: capture failed ({e}); the plan runs eagerly")
            self._graphs = False
            env = self.plan.run(feeds)
            return [self._output(env[name], name) for name in output_names]
        self._graph, self._static_outputs = graph, outputs
        self.notes.append(f"captured the plan as a CUDA graph of {graph.num_nodes} nodes")
        return self._replay(feeds, output_names)

    def _replay(self, feeds, output_names):
        # The copies, the replay and the output copies queue on the current stream in order,
        # so a replay never reads inputs the next run is writing.
        missing = [n for n in output_names if n not in self._static_outputs]
        if missing:
            raise ValueError(f"the CUDA graph was captured for outputs "
                             f"{list(self._static_outputs)}, not {missing}")
        for name, buffer in self._static_inputs.items():
            buffer._cast_from(feeds[name])
        self._graph.replay()
        return [self._copied_out(self._static_outputs[name], name) for name in output_names]

    def _copied_out(self, value, name):
        """A fresh Tensor of a graph's output (Note [Graph IO])."""
        out = self._output(value, name)
        return self._xrt.asarray(out, copy=True) if out is value else out

    def _set_threads(self):
        if self._threads is None or self.target.kind != "cpu":
            return None
        previous = self._xrt.num_threads()
        if previous == self._threads:
            return None
        self._xrt.set_num_threads(self._threads)
        return previous

    def _check_shapes(self, feeds):
        """Binds symbolic dimensions (a name means one size across all inputs of a run)."""
        bound = {}
        for info in self.inputs:
            shape = feeds[info.name].shape
            declared = self._fixed.get(info.name, info.shape)
            if len(declared) != len(shape):
                raise ValueError(f"input {info.name!r} has rank {len(shape)}, the model "
                                 f"declares {len(declared)}")
            for axis, (want, got) in enumerate(zip(declared, shape)):
                if isinstance(want, int) and want != got:
                    raise ValueError(f"input {info.name!r} dimension {axis} is {got}, the "
                                     f"model fixes it at {want}")
                if isinstance(want, str) and bound.setdefault(want, got) != got:
                    raise ValueError(f"dimension {want!r} is {bound[want]} in one input "
                                         f"and {got} in {info.name!r}")
        self.bound_dims = bound

    def explain(self):
        plan = self.plan
        nodes = []
        for node in plan.nodes:
            entry = {"node": node.name, "op": node.op_type,
                     "device": "host" if node.device == plan.host and plan.on_device
                     else str(node.device),
                     "kernels": [{"op": d.op, "kernel": d.kernel, "reason": d.reason,
                                  "dtypes": d.dtypes} for d in node.kernels]}
            if node.fused:
                entry["fused"] = node.fused
            if self._profile:
                entry["seconds"] = node.seconds
            nodes.append(entry)
        return {
            "precision": self.precision,
            "nodes": nodes,
            "recorded": plan.recorded,
            "fusions": list(plan.fusions),
            "folded_constants": plan.folded,
            "static_shape": self._frozen,
            "cuda_graph": self._graph is not None,
            "unhonoured": list(self.unhonoured),
            "notes": list(self.notes),
        }

    def close(self):
        if self._graph is not None:
            self._graph.reset()
            self._graph = None


def _info(value_info):
    tensor = value_info.type.tensor_type
    dims = []
    for d in tensor.shape.dim:
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        else:
            dims.append(d.dim_param or None)
    return TensorInfo(value_info.name, DTYPE_OF_ONNX.get(tensor.elem_type), tuple(dims),
                      tensor.elem_type)


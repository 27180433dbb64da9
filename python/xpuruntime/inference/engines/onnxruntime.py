"""python/xpuruntime/inference/engines/onnxruntime.py: the ONNX Runtime engine, on its CPU
provider (the embedded default) and its CUDA provider, with IO bound by pointer to our Tensors.

Note [ORT IO binding]: inputs are bound by data pointer (``IOBinding.bind_input``), so ORT
reads our memory where it is. Outputs are bound to Tensors we allocate (our caching allocator
on CUDA) whenever their shapes are known: from the model when fixed, else learned from an
earlier run with the same input shapes. An output whose shape we cannot know is left to ORT's
allocator and handed over through DLPack, still without a copy. If ORT refuses a bound output
(its shape depends on the data), the run is repeated with that output left to ORT, and it is
never pre-bound again. A binding is remade only for inputs whose pointer, shape or dtype
changed since the last run.

Note [ORT on our stream]: on CUDA, ORT's compute stream is fixed when the session is built
(``user_compute_stream``) and ORT ignores a 0 handle, so the engine gives ORT a stream of its
own and orders it against the caller's current stream: ORT waits for everything queued before
``run`` (producers of the inputs included, whichever library queued them: ORT itself never
waits, its issues #26609 and #10299), and the caller's stream waits for ORT before anything
reads the outputs. Run is made asynchronous (``disable_synchronize_execution_providers``): the
host does not wait for the GPU.
- ORT's stream is a blocking one. A caller on the legacy default stream (xpuruntime's and
  torch's default) then needs nothing more: the legacy stream waits for all work queued
  before on blocking streams, and they for its. That also covers the inputs' memory: whoever
  reuses it after the caller frees it queues behind ORT's reads.
- A caller on another stream costs two events per run (ORT's stream waits for the caller's,
  then the caller's for ORT's), and the inputs are marked as used on ORT's stream, so the
  caching allocator does not hand their memory to someone else while ORT may still read it.
- With ORT's CUDA graphs the stream is a non-blocking one and every run takes the events: a
  capture on a blocking stream fails when any thread touches the legacy stream meanwhile.
"""

import os
import tempfile
import threading

from ... import _core
from .._engine import (Engine, TensorInfo, cuda_unusable, first_line, missing_package,
                       register_engine)
from .._model import fix_input_dims
from .._precision import convert_float_model, precision_onnx_type
from .._types import DTYPE_OF_ONNX, ONNX_OF_DTYPE, ONNX_OF_ORT_NAME
from ._ort_binding import Lane
from ._ort_reports import node_placement, profile_by_op

_GRAPH_LEVELS = {"all": "ORT_ENABLE_ALL", "extended": "ORT_ENABLE_EXTENDED",
                 "basic": "ORT_ENABLE_BASIC", "none": "ORT_DISABLE_ALL"}


def _import_ort(extra):
    try:
        import onnxruntime
    except ImportError:
        raise missing_package("onnxruntime", "onnxruntime", extra) from None
    return onnxruntime


def _has_ort():
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


@register_engine
class OnnxRuntimeEngine(Engine):
    """ONNX Runtime: the CPU provider everywhere, the CUDA provider where onnxruntime-gpu is
    installed (Note [ORT IO binding], Note [ORT on our stream])."""

    name = "onnxruntime"
    extra = "onnx-gpu"   # the CPU build comes with xpuruntime; the GPU build is this extra
    kinds = ("cpu", "cuda")
    auto_rank = {"cpu": 0, "cuda": 1}
    provider = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider"}
    precision_by_provider = False   # True: provider options carry the precision (QNN)

    @classmethod
    def probe(cls, target):
        if not _has_ort():
            return "the 'onnxruntime' package is not installed (pip install onnxruntime)"
        import onnxruntime as ort
        wanted = cls.provider[target.kind]
        if wanted not in ort.get_available_providers():
            return (f"this onnxruntime build has no {wanted} (install the GPU build in "
                    f"place of the CPU one: pip install xpuruntime[{cls.extra}], then "
                    "pip uninstall -y onnxruntime && pip install --force-reinstall --no-deps "
                    "onnxruntime-gpu)")
        return cuda_unusable(target) if target.kind == "cuda" else None

    def __init__(self, model, target, kernel_policy, exec_policy):
        super().__init__(model, target, kernel_policy, exec_policy)
        ort = _import_ort("onnx-gpu" if target.kind == "cuda" else "onnxruntime")
        self._ort = ort
        self._stream = None
        self._graph_shapes = None   # output shapes when ORT replays a CUDA graph
        self._tmp = None
        options = self._session_options(ort)
        source = self._model_source(ort)
        self._sess = self._create(ort, source, options)
        self._describe_io()
        self._local = threading.local()    # one Lane per thread (Note [ORT threads])
        self._graph_lock = threading.Lock()
        self._out_shapes = {}       # input shapes -> output shapes learned from a run
        self._data_dependent = set()
        self._run_options = ort.RunOptions()
        self._run_options.log_severity_level = 4   # failures come back as our exceptions
        if target.kind == "cuda":
            self._run_options.add_run_config_entry("disable_synchronize_execution_providers",
                                                   "1")
        self._device_type = "cuda" if target.kind == "cuda" else "cpu"
        self._device_id = target.index if target.kind == "cuda" else 0
        self._profile_file = None

    # Building.

    def _session_options(self, ort):
        policy = self.exec_policy
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel,
                                                   _GRAPH_LEVELS[policy.graph_optimization])
        if policy.threads is not None:
            options.intra_op_num_threads = policy.threads
            options.inter_op_num_threads = 1
            self.notes.append(f"intra_op_num_threads={policy.threads}")
        if policy.profile:
            options.enable_profiling = True
            options.profile_file_prefix = os.path.join(tempfile.gettempdir(), "xrt_ort_profile")
        self._static_dims = policy.input_shapes
        if policy.static_shape and not policy.input_shapes:
            self.notes.append("static_shape without input_shapes: outputs are planned from the "
                              "first run's shapes; ORT keeps its shape-generic graph")
        options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
        if policy.allocator != "engine" and self.target.kind == "cpu":
            self.notes.append("CPU outputs are Tensors of xpuruntime's allocator where their "
                              "shapes are known; ORT's arena holds its intermediates")
        if policy.performance_hint != "latency":
            self.unhonoured.append("performance_hint='throughput' is OpenVINO's; ONNX Runtime "
                                   "runs one request at a time (raise threads instead)")
        return options

    def _model_source(self, ort):
        """The model as ORT should load it: the path or bytes as given, or a converted copy
        when the policy's precision asks for one this provider can run."""
        precision = self.exec_policy.precision
        source = self.model.path or self.model.bytes
        if precision == "fp32" or self.precision_by_provider:
            return self._with_static_dims(source)
        if precision in ("fp16", "bf16"):
            if self.target.kind == "cpu":
                self.unhonoured.append(
                    f"precision={precision!r}: ONNX Runtime's CPU provider has {precision} "
                    "kernels for few operators on x86, so the model runs in fp32")
                return self._with_static_dims(source)
            proto = convert_float_model(self.model.proto, precision_onnx_type(precision))
            self.notes.append(f"converted the model's float32 weights and activations to "
                              f"{precision} (inputs and outputs keep their types)")
            self._converted = precision
            return self._with_static_dims(proto.SerializeToString())
        # int8: dynamic quantization of the weights (MatMul/Gemm become integer ops).
        if self.target.kind != "cpu":
            self.unhonoured.append("precision='int8': ONNX Runtime's CUDA provider has no "
                                   "dynamically quantized kernels; the model runs in fp32")
            return self._with_static_dims(source)
        from onnxruntime.quantization import QuantType, quantize_dynamic
        self._tmp = self._tmp or tempfile.TemporaryDirectory(prefix="xrt-ort-")
        out = os.path.join(self._tmp.name, "model.int8.onnx")
        quantize_dynamic(self.model.proto, out, weight_type=QuantType.QInt8)
        self.notes.append("precision='int8': weights quantized to int8 by ONNX Runtime's "
                          "quantize_dynamic (activations quantized per run)")
        return self._with_static_dims(out)

    def _with_static_dims(self, source):
        dims = self._static_dims
        if not dims:
            return source
        proto = self._load_proto(source)
        fix_input_dims(proto, dims)
        self.notes.append(f"static shapes from the policy: {dims}")
        return proto.SerializeToString()

    def _load_proto(self, source):
        if source is self.model.path or source is self.model.bytes:
            import copy
            return copy.deepcopy(self.model.proto)
        import onnx
        return onnx.load_from_string(source) if isinstance(source, bytes) else onnx.load(source)

    def _create(self, ort, source, options):
        providers = self._providers()
        try:
            sess = ort.InferenceSession(source, sess_options=options, providers=providers)
        except Exception as e:
            if getattr(self, "_converted", None):
                # The provider lacks a kernel for the converted types: say so, run fp32.
                self.unhonoured.append(f"precision={self._converted!r}: ONNX Runtime could not "
                                       f"build the converted model ({first_line(e)}); the "
                                       "model runs in fp32")
                self.notes.pop()
                self._converted = None
                source = self._with_static_dims(self.model.path or self.model.bytes)
                sess = ort.InferenceSession(source, sess_options=options, providers=providers)
            else:
                raise _core.XpuRuntimeError(f"ONNX Runtime could not load the model: "
                                            f"{first_line(e)}") from None
        sess.disable_fallback()
        used = sess.get_providers()
        if self.provider[self.target.kind] not in used:
            raise _core.XpuRuntimeError(f"ONNX Runtime did not enable "
                                        f"{self.provider[self.target.kind]} (it enabled "
                                        f"{', '.join(used)})")
        return sess

    def _providers(self):
        if self.target.kind == "cpu":
            return ["CPUExecutionProvider"]
        device = self.target.device
        graphs = self.exec_policy.cuda_graphs and self._graph_output_shapes() is not None
        # Note [ORT on our stream]: a blocking stream needs no events against callers on the
        # legacy default stream. Not while ORT captures graphs: a capture on a blocking
        # stream fails when any thread touches the legacy stream meanwhile.
        self._stream = _core._cuda.Stream(device) if graphs else _core._cuda._blocking_stream(
            device)
        self._blocking = not graphs
        # TF32 follows the kernel policy, as for our own matmuls: ORT's CUDA provider rounds
        # float32 products to TF32 unless told not to (use_tf32, on by default).
        tf32 = bool(getattr(self.kernel_policy, "allow_tf32", False))
        options = {"device_id": str(self.target.index),
                   "user_compute_stream": str(self._stream.ptr),
                   "do_copy_in_default_stream": "0",
                   "use_tf32": "1" if tf32 else "0"}
        self.notes.append(f"TF32 {'allowed' if tf32 else 'off'} for float32 products "
                          "(KernelPolicy.allow_tf32)")
        if self.exec_policy.cuda_graphs:
            if not graphs:
                self.unhonoured.append("cuda_graphs: ORT replays a graph only for fixed shapes; "
                                       "give ExecutionPolicy input_shapes to fix them")
            else:
                options["enable_cuda_graph"] = "1"
                self.notes.append("CUDA graphs: ORT captures the first run and replays it; "
                                  "inputs and outputs pass through buffers of fixed address "
                                  "(one device copy each way)")
        if self.exec_policy.allocator != "engine":
            # ORT's external allocator hooks (gpu_external_alloc/free) pass no stream, and our
            # allocators reuse memory in stream order: a block ORT frees while its kernels
            # still run could go to another stream. So ORT keeps its arena for intermediates.
            self.unhonoured.append(
                f"allocator={self.exec_policy.allocator!r}: outputs come from xpuruntime's "
                "allocator, but ORT's CUDA arena holds its intermediates (ORT's external "
                "allocator hooks carry no stream, so our stream-ordered reuse cannot be safe)")
        return [("CUDAExecutionProvider", options), "CPUExecutionProvider"]

    def _graph_output_shapes(self):
        """The outputs' shapes when the policy fixes every input shape (ONNX shape inference
        over the fixed model), else None."""
        if not self._static_dims:
            return None
        import onnx
        proto = onnx.load_from_string(self._with_static_dims(self.model.bytes))
        inferred = onnx.shape_inference.infer_shapes(proto)
        shapes = {}
        for value in inferred.graph.output:
            dims = value.type.tensor_type.shape.dim
            if not all(d.HasField("dim_value") for d in dims):
                return None
            shapes[value.name] = tuple(d.dim_value for d in dims)
        self._graph_shapes = shapes
        return shapes

    def _lane(self):
        lane = getattr(self._local, "lane", None)
        if lane is None:
            lane = self._local.lane = Lane(self._ort, self._sess, self.target,
                                            self._stream is not None)
        return lane

    def _static_buffers(self, lane, feeds):
        """Note [ORT CUDA graphs]: ORT's captured graph reads and writes the addresses it saw
        when capturing, so inputs are copied into buffers that never move, every output is
        bound once to a buffer that never moves, and each run copies the outputs out into
        fresh Tensors (the caller owns those; the next replay overwrites the buffers)."""
        static = getattr(self, "_static_io", None)
        if static is None:
            device = self.target.device
            inputs = {n: _core.empty(t.shape, dtype=t.dtype, device=device)
                      for n, t in feeds.items()}
            outputs = {o.name: _core.empty(self._graph_shapes[o.name], dtype=o.dtype,
                                           device=device) for o in self.outputs}
            for n, t in inputs.items():
                lane.c.bind_input(n, ONNX_OF_DTYPE[t.dtype], t.shape, t._data_ptr())
            for o in self.outputs:
                t = outputs[o.name]
                lane.c.bind_output(o.name, o.onnx_type, t.shape, t._data_ptr())
            static = self._static_io = (inputs, outputs, lane)
        return static

    def _describe_io(self):
        def info(arg):
            code = ONNX_OF_ORT_NAME.get(arg.type, 0)
            shape = tuple(d if isinstance(d, (int, str)) else None for d in (arg.shape or ()))
            shape = tuple(None if d == "" else d for d in shape)
            return TensorInfo(arg.name, DTYPE_OF_ONNX.get(code), shape, code)
        self.inputs = tuple(info(a) for a in self._sess.get_inputs())
        self.outputs = tuple(info(a) for a in self._sess.get_outputs())
        self._out_info = {o.name: o for o in self.outputs}
        self._fixed_out = {o.name: o.shape for o in self.outputs
                           if all(isinstance(d, int) and d >= 0 for d in o.shape)}
        self._all_fixed = len(self._fixed_out) == len(self.outputs)

    # Running.

    def run(self, feeds, output_names):
        try:
            lane = self._local.lane
        except AttributeError:
            lane = self._lane()
        bound = lane.bound
        shapes = []
        for name, t in feeds.items():
            # An input's dtype is the model's (the session checked it): pointer and shape
            # say whether the binding still holds.
            shape = t.shape
            key = (t._data_ptr(), shape)
            if bound.get(name) != key:
                lane.c.bind_input(name, ONNX_OF_DTYPE[t.dtype], shape, key[0])
                bound[name] = key
            shapes.append(shape)
        shapes_key = tuple(shapes)
        learned = self._out_shapes.get(shapes_key)
        ordered = self._stream is not None
        if ordered:
            current = _core._cuda.current_stream(self.target.device)
            if self._graph_shapes is not None:
                with self._graph_lock:
                    return self._graph_round_trip(feeds, output_names, current)
            # The legacy default stream and ORT's blocking one order themselves.
            ordered = not (self._blocking and current.ptr == 0)
        if ordered:
            lane.ready.record(current)
            self._stream.wait_event(lane.ready)
        # A plan only for shapes that are known before the run: fixed, or learned.
        plan_key = ((shapes_key, tuple(output_names))
                    if learned is not None or self._all_fixed else None)
        results = self._run_bound(lane, output_names, learned, plan_key)
        if ordered:
            lane.done.record(self._stream)
            current.wait_event(lane.done)
            for t in feeds.values():
                _core._cuda.record_stream(t, self._stream)
        if learned is None and not self._data_dependent:
            self._out_shapes[shapes_key] = {n: t.shape for n, t in zip(output_names, results)}
        return results

    def _graph_round_trip(self, feeds, output_names, current):
        # Copies in on the caller's stream, the replay on ORT's, copies out on the caller's
        # again, each ordered after the one before by the two events.
        inputs, outputs, lane = self._static_buffers(self._lane(), feeds)
        for n, t in feeds.items():
            buffer = inputs[n]
            if t.shape != buffer.shape:
                raise ValueError(f"input {n!r} has shape {t.shape}, but the CUDA graph was "
                                 f"captured for {buffer.shape}")
            buffer[...] = t
        lane.ready.record(current)
        self._stream.wait_event(lane.ready)
        try:
            lane.c.run(self._run_options)
        except Exception as e:
            raise _core.XpuRuntimeError(f"ONNX Runtime failed to run the model: "
                                        f"{first_line(e)}") from None
        finally:
            lane.done.record(self._stream)
            current.wait_event(lane.done)
        return [_core.asarray(outputs[name], copy=True) for name in output_names]

    def _run_bound(self, lane, output_names, learned, plan_key, retry=False):
        calls = lane.c
        plan = None if retry else lane.plans.get(plan_key)
        if plan is not None:
            # The outputs were all ours last time for these shapes (Note [ORT IO binding]).
            # Binding a name again replaces its last binding, so the binding needs clearing
            # only when other names were bound last (their old Tensors must not be written).
            if lane.out_names != plan_key[1]:
                calls.clear_outputs()
            device, bind_output, ours = self.target.device, calls.bind_output, []
            for name, shape, dtype, onnx_type in plan:
                t = _core.empty(shape, dtype=dtype, device=device)
                bind_output(name, onnx_type, shape, t._data_ptr())
                ours.append(t)
            lane.out_names = plan_key[1]
            try:
                calls.run(self._run_options)
            except Exception:
                lane.plans.clear()
                return self._run_bound(lane, output_names, learned, None)
            return ours
        calls.clear_outputs()
        lane.out_names = None
        ours = {}
        device = self.target.device
        for name in output_names:
            shape = self._fixed_out.get(name) or (learned or {}).get(name)
            info = self._out_info[name]
            if shape is None or retry or name in self._data_dependent or info.dtype is None:
                calls.bind_output_to_ort(name)
                continue
            t = _core.empty(shape, dtype=info.dtype, device=device)
            calls.bind_output(name, info.onnx_type, shape, t._data_ptr())
            ours[name] = t
        try:
            calls.run(self._run_options)
        except Exception as e:
            if ours:
                # ORT refused an output we bound: its shape depends on the data. Run again
                # with ORT allocating it, and never pre-bind it again.
                results = self._run_bound(lane, output_names, None, None, retry=True)
                self._data_dependent.update(ours)
                return results
            lane.bound.clear()
            raise _core.XpuRuntimeError(f"ONNX Runtime failed to run the model: "
                                        f"{first_line(e)}") from None
        if len(ours) == len(output_names):
            if plan_key is not None:
                lane.plans[plan_key] = [(n, ours[n].shape, ours[n].dtype,
                                         self._out_info[n].onnx_type) for n in output_names]
            return [ours[name] for name in output_names]
        values = calls.get_outputs()
        return [ours[name] if name in ours else self._adopt(value, self._out_info[name])
                for name, value in zip(output_names, values)]

    def _adopt(self, value, info):
        """A Tensor over an output ORT allocated, through DLPack (no copy)."""
        source = value if hasattr(value, "__dlpack__") else value._ortvalue
        tensor = _core.from_dlpack(source)
        if info.dtype is not None and tensor.dtype != info.dtype:
            tensor = tensor._reinterpret(info.dtype)   # bool exported as uint8 by old ORT
        return tensor

    # Explaining.

    def explain(self):
        sess = self._sess
        details = {
            "onnxruntime": self._ort.__version__,
            "providers": sess.get_providers(),
            "provider_options": {k: v for k, v in sess.get_provider_options().items()},
            "precision": getattr(self, "_converted", None) or (
                "int8" if self.exec_policy.precision == "int8" and self.target.kind == "cpu"
                else "fp32"),
            "outputs_from": {n: ("xpuruntime allocator" if n in self._fixed_out
                                 or (self._out_shapes and n not in self._data_dependent)
                                 else "ORT allocator (DLPack)")
                             for n in self._out_info},
        }
        if self._stream is not None:
            details["ort_stream"] = hex(self._stream.ptr)
        placement = node_placement(self._sess)
        if placement is not None:
            details["node_placement"] = placement
        if self.exec_policy.profile:
            details["profile"] = self._profile()
        return details

    def _profile(self):
        if self._profile_file is None:
            self._profile_file = self._sess.end_profiling()
        return profile_by_op(self._profile_file)

    def close(self):
        self._sess = None
        self._local = threading.local()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

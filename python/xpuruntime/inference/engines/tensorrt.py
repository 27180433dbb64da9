"""python/xpuruntime/inference/engines/tensorrt.py: the TensorRT engine: built from ONNX with a
progress bar, a timing cache and an engine cache on disk, run on our tensors and our stream.

Untested on this project's machines: TensorRT's libraries wheel downloads from NVIDIA's own
index at install time, which neither the development machines nor the GPU machine can reach.
The engine is written to TensorRT's documented Python API (10.x and 11.x); its tests run
where ``import tensorrt`` works, and ``python -m xpuruntime info`` says it is untested here.

Note [TensorRT shapes]: TensorRT needs every input shape (or a min/opt/max range) when it
builds. With ``input_shapes`` in the policy the engine builds at session creation for those
shapes; otherwise it builds on the first run for that run's shapes (min = opt = max) and
builds again, once, for each new set of shapes (each cached on disk).

Note [TensorRT precision]: TensorRT 11 removed the precision builder flags (networks are
strongly typed: a layer computes in its tensors' types), so ``precision="fp16"``/``"bf16"``
rewrites the ONNX model to that type before parsing (``_precision.py``), keeping the
inputs' and outputs' types. On TensorRT 10 the builder flag is used instead. ``"int8"``
needs a model with Q/DQ nodes (explicit quantization) on both; without them it is
reported as not honoured.

Note [TensorRT cache]: plans are cached under ``$XPURUNTIME_CACHE_DIR/tensorrt`` (default
``~/.cache/xpuruntime/tensorrt``), keyed by the model's hash, TensorRT's version, the GPU's
name and compute capability, the execution policy and the input shapes; one timing cache
per GPU and TensorRT version speeds up every later build.
"""

import hashlib
import json
import os
import sys
import threading

from ... import _core
from .._engine import Engine, cuda_unusable, missing_package, register_engine
from .._precision import convert_float_model, precision_onnx_type
from .._types import DTYPE_OF_ONNX

_WORKSPACE = 4 << 30


def _trt():
    try:
        import tensorrt
    except ImportError:
        raise missing_package("tensorrt", "tensorrt", "tensorrt") from None
    return tensorrt


def cache_dir():
    root = os.environ.get("XPURUNTIME_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "xpuruntime")
    return os.path.join(root, "tensorrt")


@register_engine
class TensorRtEngine(Engine):
    """TensorRT (Notes [TensorRT shapes], [TensorRT precision], [TensorRT cache])."""

    name = "tensorrt"
    extra = "tensorrt"
    kinds = ("cuda",)
    tested_here = False
    auto_rank = {"cuda": 0}

    @classmethod
    def probe(cls, target):
        try:
            import tensorrt  # noqa: F401
        except ImportError:
            return "the 'tensorrt' package is not installed (pip install xpuruntime[tensorrt])"
        return cuda_unusable(target)

    def __init__(self, model, target, kernel_policy, exec_policy):
        super().__init__(model, target, kernel_policy, exec_policy)
        trt = _trt()
        self._trt = trt
        self._logger = trt.Logger(trt.Logger.WARNING)
        self._runtime = trt.Runtime(self._logger)
        self._major = int(trt.__version__.split(".")[0])
        self.inputs, self.outputs = model.io()
        self._out_info = {o.name: o for o in self.outputs}
        self._onnx = self._network_source()
        self._plans = {}           # input shapes -> (engine, context, scratch Tensor)
        self._lock = threading.Lock()
        self._run_lock = threading.Lock()
        shapes = exec_policy.input_shapes
        if shapes:
            missing = [i.name for i in self.inputs if i.name not in shapes]
            if missing:
                raise ValueError(f"ExecutionPolicy input_shapes lacks inputs {missing}")
            self._plan_for(tuple(tuple(shapes[i.name]) for i in self.inputs))
        if exec_policy.cuda_graphs:
            self.unhonoured.append("cuda_graphs: the TensorRT engine enqueues each run "
                                   "(execute_async_v3); capture it with xrt.cuda.graph instead")
        if exec_policy.allocator == "engine":
            self.notes.append("allocator='engine': TensorRT allocates its own scratch memory")

    # Building.

    def _network_source(self):
        precision = self.exec_policy.precision
        self._flags = []
        if precision in ("fp16", "bf16"):
            if self._major >= 11:
                proto = convert_float_model(self.model.proto, precision_onnx_type(precision))
                self.notes.append(f"precision={precision!r}: the model was rewritten to "
                                  f"{precision} before parsing (TensorRT 11 is strongly typed)")
                return proto.SerializeToString()
            self._flags.append(precision.upper())
            self.notes.append(f"precision={precision!r}: builder flag {precision.upper()}")
        elif precision == "int8":
            ops = {n.op_type for n in self.model.proto.graph.node}
            if "QuantizeLinear" not in ops:
                self.unhonoured.append("precision='int8': TensorRT needs a model with "
                                       "QuantizeLinear/DequantizeLinear nodes; the model runs "
                                       "in its own precision")
        return None   # the model as given

    def _plan_for(self, shapes):
        plan = self._plans.get(shapes)
        if plan is None:
            with self._lock:
                plan = self._plans.get(shapes) or self._load_or_build(shapes)
                self._plans[shapes] = plan
        return plan

    def _key(self, shapes):
        props = _core._cuda.get_device_properties(self.target.index)
        text = json.dumps({"model": self.model.sha256, "trt": self._trt.__version__,
                           "gpu": props.name, "cc": [props.major, props.minor],
                           "policy": self.exec_policy.to_dict(), "shapes": shapes},
                          sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32], props

    def _load_or_build(self, shapes):
        key, props = self._key(shapes)
        os.makedirs(cache_dir(), exist_ok=True)
        path = os.path.join(cache_dir(), f"{key}.plan")
        engine = None
        if os.path.exists(path):
            with open(path, "rb") as f:
                engine = self._runtime.deserialize_cuda_engine(f.read())
            if engine is not None:
                self.notes.append(f"engine for shapes {shapes} loaded from the cache {path}")
        if engine is None:
            plan = self._build(shapes, props)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(plan)
            os.replace(tmp, path)
            engine = self._runtime.deserialize_cuda_engine(plan)
            self.notes.append(f"engine for shapes {shapes} built and cached as {path}")
        return self._context(engine)

    def _build(self, shapes, props):
        trt = self._trt
        builder = trt.Builder(self._logger)
        network = builder.create_network(0)
        parser = trt.OnnxParser(network, self._logger)
        if self._onnx is None and self.model.path is not None:
            ok = parser.parse_from_file(self.model.path)
        else:
            ok = parser.parse(self._onnx if self._onnx is not None else self.model.bytes)
        if not ok:
            errors = [str(parser.get_error(i)) for i in range(parser.num_errors)]
            raise _core.UnsupportedOperationError("TensorRT could not parse the model: " +
                                                  "; ".join(errors))
        config = builder.create_builder_config()
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, _WORKSPACE)
        config.profiling_verbosity = trt.ProfilingVerbosity.DETAILED
        for flag in self._flags:
            config.set_flag(getattr(trt.BuilderFlag, flag))
        profile = builder.create_optimization_profile()
        for info, shape in zip(self.inputs, shapes):
            profile.set_shape(info.name, shape, shape, shape)
        config.add_optimization_profile(profile)
        timing_path = os.path.join(cache_dir(), f"timing-{props.name.replace(' ', '_')}-"
                                   f"sm{props.major}{props.minor}-{trt.__version__}.cache")
        blob = b""
        if os.path.exists(timing_path):
            with open(timing_path, "rb") as f:
                blob = f.read()
        timing = config.create_timing_cache(blob)
        config.set_timing_cache(timing, ignore_mismatch=False)
        monitor = _progress_monitor(trt, self.model.name)
        if monitor is not None:
            config.progress_monitor = monitor
        plan = builder.build_serialized_network(network, config)
        if plan is None:
            raise _core.XpuRuntimeError("TensorRT failed to build the engine (see its log)")
        with open(timing_path + ".tmp", "wb") as f:
            f.write(memoryview(timing.serialize()))
        os.replace(timing_path + ".tmp", timing_path)
        return bytes(plan)

    def _context(self, engine):
        trt = self._trt
        strategy = getattr(trt, "ExecutionContextAllocationStrategy", None)
        scratch = None
        if strategy is not None and self.exec_policy.allocator != "engine":
            context = engine.create_execution_context(strategy.USER_MANAGED)
            size = getattr(engine, "device_memory_size_v2", engine.device_memory_size)
            scratch = _core.empty((max(int(size), 1),), dtype=_core.uint8,
                                  device=self.target.device)
            context.set_device_memory(scratch._data_ptr(), int(size))
        else:
            context = engine.create_execution_context()
        return engine, context, scratch

    # Running.

    def run(self, feeds, output_names):
        # An execution context is one caller's: runs from several threads take turns.
        with self._run_lock:
            return self._run(feeds, output_names)

    def _run(self, feeds, output_names):
        shapes = tuple(feeds[i.name].shape for i in self.inputs)
        engine, context, _ = self._plan_for(shapes)
        for name, t in feeds.items():
            context.set_input_shape(name, t.shape)
            context.set_tensor_address(name, t._data_ptr())
        results = {}
        for i in range(engine.num_io_tensors):
            name = engine.get_tensor_name(i)
            if engine.get_tensor_mode(name) != self._trt.TensorIOMode.OUTPUT:
                continue
            shape = tuple(context.get_tensor_shape(name))
            info = self._out_info.get(name)
            dtype = info.dtype if info is not None else DTYPE_OF_ONNX[1]
            t = _core.empty(shape, dtype=dtype, device=self.target.device)
            context.set_tensor_address(name, t._data_ptr())
            results[name] = t
        stream = _core._cuda.current_stream(self.target.device)
        if not context.execute_async_v3(stream.ptr):
            raise _core.XpuRuntimeError("TensorRT failed to enqueue the run (see its log)")
        return [results[name] for name in output_names]

    def explain(self):
        trt = self._trt
        details = {"tensorrt": trt.__version__, "cache": cache_dir(),
                   "engines": [list(map(list, s)) for s in self._plans]}
        if self._plans:
            engine, context, _ = next(iter(self._plans.values()))
            inspector = engine.create_engine_inspector()
            inspector.execution_context = context
            try:
                info = json.loads(inspector.get_engine_information(
                    trt.LayerInformationFormat.JSON))
                details["layers"] = [_layer_summary(layer) for layer in info.get("Layers", [])]
            except (ValueError, TypeError):
                pass
        return details

    def close(self):
        self._plans.clear()


def _layer_summary(layer):
    # The inspector's JSON changed between 10.x and 11.x ("Bindings" -> "I/O Tensors"): read
    # only the keys both have, defensively.
    if isinstance(layer, str):
        return layer
    return {k: layer[k] for k in ("Name", "LayerType", "TacticName", "Precision")
            if k in layer}


def _progress_monitor(trt, label):
    """A TensorRT progress monitor drawing a bar per build phase (tqdm when installed, else
    a line per finished phase on stderr)."""
    base = getattr(trt, "IProgressMonitor", None)
    if base is None:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None

    class Monitor(base):
        def __init__(self):
            base.__init__(self)
            self._bars = {}
            self._lock = threading.Lock()

        def phase_start(self, phase_name, parent_phase, num_steps):
            with self._lock:
                if tqdm is not None:
                    depth = len(self._bars)
                    self._bars[phase_name] = tqdm(total=num_steps, position=depth,
                                                  desc=f"{label}: {phase_name}", leave=False)
                else:
                    self._bars[phase_name] = num_steps

        def step_complete(self, phase_name, step):
            with self._lock:
                bar = self._bars.get(phase_name)
                if tqdm is not None and bar is not None:
                    bar.update(step + 1 - bar.n)
            return True

        def phase_finish(self, phase_name):
            with self._lock:
                bar = self._bars.pop(phase_name, None)
                if tqdm is not None and bar is not None:
                    bar.close()
                else:
                    print(f"[tensorrt] {label}: {phase_name} done", file=sys.stderr)

    return Monitor()

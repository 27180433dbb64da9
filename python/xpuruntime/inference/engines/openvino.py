"""python/xpuruntime/inference/engines/openvino.py: the OpenVINO engine, on its CPU plugin and,
where one is installed, its NPU plugin (``device="npu"``).

Note [OpenVINO IO]: inputs are ``ov.Tensor``s sharing our host memory (no copy), set again
only when an input's pointer, shape or dtype changed. Outputs larger than 64 KiB are Tensors
we allocate and hand to the request before it runs whenever their shapes are known (fixed in
the model, or learned from a run with the same input shapes); OpenVINO writes into them.
Smaller outputs, and those whose shape we cannot know, are copied out of OpenVINO's own
buffer, which the next run overwrites (``explain()`` counts those copies): below 64 KiB the
copy is cheaper than new output memory for OpenVINO. OpenVINO keeps no reference to the
memory it is given, so the engine holds what it set until the run returns.

Note [OpenVINO precision]: the CPU plugin computes in bfloat16 by itself on hosts with
AVX512-BF16 or AMX unless told otherwise, so ``precision="fp32"`` sets the precision hint to
f32 explicitly, and ``explain()`` reports the precision the compiled model says it uses.
"""

import threading

from ... import _core
from .._engine import Engine, first_line, missing_package, register_engine

_core_instance = None


def _ov():
    try:
        import openvino
    except ImportError:
        raise missing_package("openvino", "openvino", "openvino") from None
    return openvino


def _ov_core():
    # One Core per process, as OpenVINO recommends (plugins are not shared between Cores).
    global _core_instance
    if _core_instance is None:
        _core_instance = _ov().Core()
    return _core_instance


def _plugin(target):
    return "CPU" if target.kind == "cpu" else f"NPU.{target.index}" if target.index else "NPU"


@register_engine
class OpenVinoEngine(Engine):
    """OpenVINO (Note [OpenVINO IO], Note [OpenVINO precision])."""

    name = "openvino"
    extra = "openvino"
    kinds = ("cpu", "npu")
    auto_rank = {"cpu": 1, "npu": 0}

    @classmethod
    def probe(cls, target):
        try:
            import openvino  # noqa: F401
        except ImportError:
            return "the 'openvino' package is not installed (pip install xpuruntime[openvino])"
        devices = _ov_core().available_devices
        plugin = _plugin(target)
        if plugin not in devices and not (plugin == "NPU" and any(
                d.startswith("NPU") for d in devices)):
            return f"OpenVINO has no {plugin} device here (it sees {', '.join(devices)})"
        return None

    def __init__(self, model, target, kernel_policy, exec_policy):
        super().__init__(model, target, kernel_policy, exec_policy)
        ov = _ov()
        self._ov = ov
        core = _ov_core()
        try:
            ov_model = core.read_model(model.path if model.path else model.bytes)
        except Exception as e:
            raise _core.XpuRuntimeError(f"OpenVINO could not read the model: "
                                        f"{first_line(e)}") from None
        self.inputs, self.outputs = model.io()
        self._reshape(ov_model)
        config = self._config(ov)
        try:
            self._compiled = core.compile_model(ov_model, _plugin(target), config)
        except Exception as e:
            raise _core.XpuRuntimeError(f"OpenVINO could not compile the model for "
                                        f"{_plugin(target)}: {first_line(e)}") from None
        self._local = threading.local()   # one _Lane per thread: requests are one caller's
        self._in_index = {p.get_any_name(): i for i, p in enumerate(self._compiled.inputs)}
        self._out_index = {}
        for i, port in enumerate(self._compiled.outputs):
            for name in port.get_names():
                self._out_index[name] = i
        self._out_info = {o.name: o for o in self.outputs}
        self._fixed_out = {o.name: o.shape for o in self.outputs
                           if all(isinstance(d, int) for d in o.shape)}
        self._out_shapes = {}
        self._data_dependent = set()
        self._output_copies = 0
        self._check_precision()

    def _reshape(self, ov_model):
        shapes = self.exec_policy.input_shapes
        if shapes:
            known = {i.name for i in self.inputs}
            unknown = set(shapes) - known
            if unknown:
                raise ValueError(f"ExecutionPolicy input_shapes names unknown inputs "
                                 f"{sorted(unknown)}; the model's inputs are {sorted(known)}")
            ov_model.reshape({name: list(shape) for name, shape in shapes.items()})
            self.notes.append(f"reshaped to static input shapes {shapes}")
        elif self.exec_policy.static_shape:
            self.notes.append("static_shape without input_shapes: OpenVINO compiles for "
                              "dynamic shapes; outputs are planned from the first run")

    def _config(self, ov):
        import openvino.properties as props
        import openvino.properties.hint as hints

        policy = self.exec_policy
        config = {hints.performance_mode: (hints.PerformanceMode.THROUGHPUT
                                           if policy.performance_hint == "throughput"
                                           else hints.PerformanceMode.LATENCY)}
        wanted = {"fp32": ov.Type.f32, "fp16": ov.Type.f16, "bf16": ov.Type.bf16}
        if policy.precision in wanted:
            config[hints.inference_precision] = wanted[policy.precision]
        else:
            self.unhonoured.append("precision='int8': OpenVINO runs int8 only from a model "
                                   "quantized beforehand (NNCF); the model runs in fp32")
            config[hints.inference_precision] = ov.Type.f32
        if policy.threads is not None and self.target.kind == "cpu":
            config[props.inference_num_threads] = policy.threads
        if policy.cuda_graphs:
            self.unhonoured.append("cuda_graphs: OpenVINO does not run on CUDA")
        if policy.profile:
            config[props.enable_profiling] = True
        return config

    def _check_precision(self):
        try:
            used = self._compiled.get_property("INFERENCE_PRECISION_HINT").to_string()
        except Exception:
            return
        self._precision = used
        want = {"fp32": "f32", "fp16": "f16", "bf16": "bf16"}.get(self.exec_policy.precision)
        if want is not None and want != used:
            self.unhonoured.append(f"precision={self.exec_policy.precision!r}: the "
                                   f"{_plugin(self.target)} plugin computes in {used}")

    def _lane(self):
        lane = getattr(self._local, "lane", None)
        if lane is None:
            lane = self._local.lane = _Lane(self._compiled)
        return lane

    def run(self, feeds, output_names):
        import numpy as np
        ov = self._ov
        lane = self._lane()
        shapes_key = tuple([t.shape for t in feeds.values()])
        learned = self._out_shapes.get(shapes_key) or {}
        ours = {}
        for name in output_names:
            info = self._out_info[name]
            shape = self._fixed_out.get(name) or learned.get(name)
            if (shape is not None and name not in self._data_dependent and info.dtype is not None
                    and _nbytes(shape, info.dtype) > _SMALL_OUTPUT):
                ours[name] = _core.empty(shape, dtype=info.dtype)
        if lane.preset_last - ours.keys():
            # An output set to our memory last run and not this run would be written into
            # the caller's earlier Tensor: this run starts from a request of OpenVINO's own.
            lane.reset(self._compiled)
        lane.preset_last = set(ours)
        request = lane.request
        cache = lane.in_cache
        for name, t in feeds.items():
            key = (t._data_ptr(), t.shape, t.dtype)
            if cache.get(name, (None,))[0] != key:
                shared = _shared(ov, np, t)
                request.set_input_tensor(self._in_index[name], shared)
                cache[name] = (key, shared)
        held = [_shared(ov, np, t) for t in ours.values()]   # alive until infer returns
        for name, shared in zip(ours, held):
            request.set_output_tensor(self._out_index[name], shared)
        try:
            request.infer()
        except Exception as e:
            lane.reset(self._compiled)
            if ours:  # a pre-set output of the wrong shape: never pre-set it again
                self._data_dependent.update(ours)
                return self.run(feeds, output_names)
            raise _core.XpuRuntimeError(f"OpenVINO failed to run the model: "
                                        f"{first_line(e)}") from None
        results = []
        for name in output_names:
            produced = request.get_output_tensor(self._out_index[name])
            t = ours.get(name)
            if t is None or tuple(produced.shape) != t.shape:
                if t is not None:
                    self._data_dependent.add(name)
                t = _core.asarray(np.array(produced.data, copy=True))
                self._output_copies += 1
            results.append(t)
        if not learned and not self._data_dependent:
            self._out_shapes[shapes_key] = {n: t.shape for n, t in zip(output_names, results)}
        return results

    def explain(self):
        details = {
            "openvino": self._ov.__version__,
            "plugin": _plugin(self.target),
            "precision": getattr(self, "_precision", None),
            "performance_hint": str(self._compiled.get_property("PERFORMANCE_HINT")),
            "output_copies": self._output_copies,
        }
        try:
            details["threads"] = int(self._compiled.get_property("INFERENCE_NUM_THREADS"))
        except Exception:
            pass
        details["node_placement"] = self._runtime_layers()
        if self.exec_policy.profile:
            by_type = {}
            for info in self._lane().request.profiling_info:
                key = f"{info.node_type} ({info.exec_type})"
                by_type[key] = by_type.get(key, 0.0) + info.real_time.total_seconds() * 1e3
            details["profile"] = {"ms_by_op": {k: round(v, 4) for k, v in sorted(
                by_type.items(), key=lambda kv: -kv[1])}}
        return details

    def _runtime_layers(self):
        """``{plugin: ["LayerType:name (precision) <- original ONNX nodes", ...]}`` from the
        compiled model's runtime graph (inputs, outputs and constants left out)."""
        layers = []
        try:
            ops = self._compiled.get_runtime_model().get_ordered_ops()
        except Exception:
            return {}
        for op in ops:
            info = op.get_rt_info()

            def read(key, info=info):
                return info[key].astype(str) if key in info else ""
            kind = read("layerType")
            if kind in ("Input", "Output", "Const", ""):
                continue
            layers.append(f"{kind}:{op.get_friendly_name()} ({read('runtimePrecision')}) <- "
                          f"{read('originalLayersNames')}")
        return {_plugin(self.target): layers}

    def close(self):
        self._local = threading.local()
        self._compiled = None


class _Lane:
    """One thread's infer request, the inputs set on it and the outputs it holds of ours
    (OpenVINO's requests serve one caller at a time; the compiled model serves many)."""

    __slots__ = ("request", "in_cache", "preset_last")

    def __init__(self, compiled):
        self.reset(compiled)

    def reset(self, compiled):
        self.request = compiled.create_infer_request()
        self.in_cache = {}         # input name -> ((pointer, shape, dtype), ov.Tensor) set last
        self.preset_last = set()


# Outputs up to this size are copied out of OpenVINO's own buffer: a memcpy of 64 KiB costs
# less than handing OpenVINO new output memory each run (set_output_tensor costs ~4 us and
# slows the next infer by ~10 us on the 2-core machine here, measured with a 4x4 model).
_SMALL_OUTPUT = 64 << 10


def _nbytes(shape, dtype):
    n = dtype.itemsize
    for d in shape:
        n *= d
    return n


def _shared(ov, np, tensor):
    """An ov.Tensor over the Tensor's host memory (no copy)."""
    if tensor.dtype == _core.bfloat16:
        raw = np.asarray(tensor._reinterpret(_core.uint16))
        return ov.Tensor(raw, list(tensor.shape), ov.Type.bf16)
    return ov.Tensor(np.asarray(tensor), shared_memory=True)

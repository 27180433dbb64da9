"""python/xpuruntime/inference/_session.py: InferenceSession, one ONNX model on one engine and
one device, with inputs and outputs as xpuruntime Tensors.

What the session does for every engine alike: it reads the model once (``Model``), resolves
the policies (objects or policy files), picks the engine (``EngineRegistry``), checks every
input against the model (name, dtype, rank, fixed and shared symbolic dimensions) before the
engine sees it, brings inputs onto the session's device without a copy where the memory is
already there, and keeps an account of what was copied for ``explain()``. A failed ``run``
leaves the session as it was.

Note [Input conversion]: an input is taken as it is (no copy) when it is a Tensor, or a
DLPack producer (torch, CuPy, JAX, NumPy), already on the session's device, C-contiguous, of
the model's dtype. DLPack imports happen on the session device's current stream, so a
producer's pending writes are ordered before the engine reads (the DLPack stream handshake).
A host array for a CUDA session is copied once (counted as a host-to-device copy); a
non-contiguous one is made contiguous (counted as a layout copy). A wrong dtype is an error,
never a silent cast: the message says which dtype the model wants.

Note [Session overhead]: ``run`` sits on every inference call, and the goal is at most 2 us
over the engine's own API. So the common case takes no detour: a plain dict, a Tensor that
is already right (dtype, device, contiguous) and of the shape the input accepted last time
skips the shape checks, and no profiler range is opened unless a profile or NVTX is on.
"""

import collections.abc
import time

from .. import _core
from ..policies import ExecutionPolicy, KernelPolicy, get_kernel_policy, load_policy_file
from ..profiler._profile import engine_run, quiet
from ._engine import EngineRegistry, Target, parse_target
from ._model import Model

_Tensor = _core.Tensor


class InferenceSession:
    """``InferenceSession(model, device="cpu", engine="auto", kernel_policy=None,
    exec_policy=None)`` runs an ONNX model: ``sess.run({"input": x})`` returns a dict of
    Tensors.

    ``model`` is a path, bytes or an ``onnx.ModelProto``; ``device`` is ``"cpu"``,
    ``"cuda:N"`` or ``"npu"``; ``engine`` is a registered engine's name (see
    ``EngineRegistry.names()``) or ``"auto"`` (the rule in ``EngineRegistry``);
    ``kernel_policy`` and ``exec_policy`` are policy objects or paths of policy files.
    """

    def __init__(self, model, device="cpu", engine="auto", kernel_policy=None,
                 exec_policy=None):
        started = time.perf_counter()
        self._engine = None
        self._model = model if isinstance(model, Model) else Model(model)
        self._target = parse_target(device)
        self._kernel_policy, self._exec_policy = _policies(kernel_policy, exec_policy)
        if engine == "auto":
            cls, self._why = EngineRegistry.pick(self._target)
        else:
            cls = EngineRegistry.get(engine)
            if self._target.kind not in cls.kinds:
                raise ValueError(f"the {cls.name} engine runs on {', '.join(cls.kinds)}, "
                                 f"not on {self._target}")
            reason = cls.probe(self._target)
            if reason is not None:
                raise _core.XpuRuntimeError(f"the {cls.name} engine cannot run on "
                                            f"{self._target}: {reason}")
            self._why = f"engine={cls.name!r} was asked for"
        self._engine = cls(self._model, self._target, self._kernel_policy, self._exec_policy)
        self._build_s = time.perf_counter() - started
        self._inputs = tuple(self._engine.inputs)
        self._outputs = tuple(self._engine.outputs)
        self._checks = {info.name: _InputCheck(info, self._target.device)
                        for info in self._inputs}
        self._shared_symbols = _shared_symbols(self._inputs)
        self._output_names = [info.name for info in self._outputs]
        self._known_outputs = frozenset(self._output_names)
        self._runs = 0
        self._copies = collections.Counter()
        self._last_io = {}

    # What the session is.

    @property
    def inputs(self):
        """The model's inputs (``TensorInfo``: name, dtype, shape with symbolic dims)."""
        return self._inputs

    @property
    def outputs(self):
        return self._outputs

    @property
    def engine(self):
        """The name of the engine that runs the model."""
        return self._engine.name

    @property
    def device(self):
        """Where the model runs: ``"cpu"``, ``"cuda:N"`` or ``"npu:N"``."""
        return str(self._target)

    @property
    def exec_policy(self):
        return self._exec_policy

    @property
    def kernel_policy(self):
        return self._kernel_policy

    def __repr__(self):
        return (f"InferenceSession({self._model.name!r}, device={self.device!r}, "
                f"engine={self.engine!r})")

    # Running.

    def run(self, feeds, output_names=None):
        """Runs the model on ``feeds`` (a dict input name -> Tensor, NumPy array, DLPack
        producer or nested sequence) and returns a dict output name -> Tensor (all outputs,
        or those named in ``output_names``, in that order)."""
        # Every microsecond here is added to the engine's own run (Note [Session overhead]).
        engine = self._engine
        if engine is None:
            raise _core.XpuRuntimeError("this InferenceSession is closed")
        if type(feeds) is not dict and not isinstance(feeds, collections.abc.Mapping):
            raise TypeError(f"run() takes a dict of input name -> array, not "
                            f"{type(feeds).__name__}")
        names = self._output_names if output_names is None else self._outputs_asked(output_names)
        checks = self._checks
        if feeds.keys() != checks.keys():
            self._explain_bad_names(feeds)
        tensors = {}
        for name, value in feeds.items():
            check = checks[name]
            if type(value) is _Tensor and check.accepted is not None and value._shape_if(
                    check.dtype, check.device) == check.accepted:
                tensors[name] = value           # as take would, with the shape known good
                self._last_io[name] = "zero-copy"
            else:
                tensors[name] = check.take(value, self)
        if self._shared_symbols:
            _check_shared_symbols(self._shared_symbols, tensors)
        if quiet():
            results = engine.run(tensors, names)
        else:
            with engine_run(self, tensors):
                results = engine.run(tensors, names)
        self._runs += 1
        return dict(zip(names, results))

    def __call__(self, feeds, output_names=None):
        return self.run(feeds, output_names)

    def _outputs_asked(self, output_names):
        if isinstance(output_names, str) or not isinstance(output_names, collections.abc.Iterable):
            raise TypeError("output_names must be a list of output names")
        names = list(output_names)
        for name in names:
            if name not in self._known_outputs:
                raise ValueError(f"unknown output {name!r}; the model's outputs are "
                                 f"{', '.join(map(repr, self._output_names))}")
        return names

    def _explain_bad_names(self, feeds):
        for name in feeds:
            if name not in self._checks:
                if not isinstance(name, str):
                    raise TypeError(f"input names are strings, got {name!r}")
                raise ValueError(f"unknown input {name!r}; the model's inputs are "
                                 f"{', '.join(str(i) for i in self._inputs)}")
        missing = [str(i) for i in self._inputs if i.name not in feeds]
        raise ValueError(f"missing input{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")

    # Explaining.

    def explain(self):
        """Which engine runs the model and why, on which device, under which policies, what
        it could not honour, whether inputs and outputs stayed on the device, and the
        engine's own details (providers or plugins and the nodes they ran, precision
        actually used, its profile when the policy asked for one)."""
        engine = self._engine
        copies = dict(self._copies)
        return {
            "engine": engine.name,
            "why": self._why,
            "device": self.device,
            "model": {"name": self._model.name, "sha256": self._model.sha256[:16]},
            "tested_here": engine.tested_here,
            "exec_policy": self._exec_policy.to_dict(),
            "kernel_policy": KernelPolicy.to_dict(self._kernel_policy),
            "unhonoured": list(engine.unhonoured),
            "notes": list(engine.notes),
            "build_seconds": round(self._build_s, 4),
            "runs": self._runs,
            "io": {
                "inputs_last_run": dict(self._last_io),
                "input_copies": copies,
                "stayed_on_device": not copies,
            },
            "engine_details": engine.explain(),
        }

    def close(self):
        """Releases the engine (also done when the session is collected)."""
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class _InputCheck:
    """What one input must be; ``take`` checks a value and returns the Tensor the engine gets
    (Note [Input conversion])."""

    __slots__ = ("info", "name", "dtype", "device", "rank", "fixed", "accepted")

    def __init__(self, info, device):
        self.info = info
        self.name = info.name
        self.dtype = info.dtype
        self.device = device
        self.rank = len(info.shape) if info.shape is not None else None
        self.fixed = tuple((axis, d) for axis, d in enumerate(info.shape or ())
                           if isinstance(d, int) and d >= 0)
        self.accepted = None        # the last shape that passed the checks

    def take(self, value, session):
        if type(value) is _Tensor and self.dtype is not None:
            shape = value._shape_if(self.dtype, self.device)
            if shape is not None:
                session._last_io[self.name] = "zero-copy"
                return self._check_shape(value, shape)
        tensor = self._convert(value, self.device, session)
        return self._check_shape(tensor, tensor.shape)

    def _check_shape(self, tensor, shape):
        if self.rank is not None and len(shape) != self.rank:
            raise ValueError(f"input {self.name!r} must have rank {self.rank} "
                             f"(shape {_dims(self.info.shape)}), got shape {shape}")
        for axis, size in self.fixed:
            if shape[axis] != size:
                raise ValueError(f"input {self.name!r} must have size {size} on axis {axis} "
                                 f"(shape {_dims(self.info.shape)}), got shape {shape}")
        self.accepted = shape
        return tensor

    def _convert(self, value, device, session):
        if self.dtype is None:
            raise TypeError(f"input {self.name!r} has ONNX type {self.info.onnx_type}, which "
                            "xpuruntime Tensors cannot hold")
        how = "zero-copy"
        if isinstance(value, _Tensor):
            tensor = value
        elif type(value).__module__ == "numpy":  # shared, also when read-only
            tensor = _core.asarray(value)
        elif hasattr(value, "__dlpack__"):
            try:
                tensor = _core.from_dlpack(value)
            except (BufferError, TypeError, ValueError) as e:
                raise TypeError(f"input {self.name!r}: cannot import {type(value).__name__} "
                                f"through DLPack: {e}") from None
        elif isinstance(value, (list, tuple, int, float, bool)):
            tensor = _core.asarray(value, dtype=self.dtype, device=device)
            how = "converted from Python"
        else:
            raise TypeError(f"input {self.name!r} must be a Tensor, a NumPy array, a DLPack "
                            f"producer or a sequence, not {type(value).__name__}")
        if tensor.dtype != self.dtype:
            raise TypeError(f"input {self.name!r} must have dtype {self.dtype}, got "
                            f"{tensor.dtype} (convert it with xrt.astype(x, xrt.{self.dtype}))")
        if tensor.device != device:
            tensor = tensor.to_device(device)
            how = f"copied {value_device(value)} -> {device}"
            session._copies["to_device"] += 1
        if not tensor._is_contiguous():
            tensor = _core.asarray(tensor, copy=True)
            how = "copied to a contiguous layout" if how == "zero-copy" else how
            session._copies["layout"] += 1
        session._last_io[self.name] = how
        return tensor


def value_device(value):
    device = getattr(value, "device", None)
    return str(device) if device is not None else "host"


def _dims(shape):
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _shared_symbols(inputs):
    """``{symbol: [(input name, axis), ...]}`` for symbolic dims that appear more than once,
    so a batch size that differs between two inputs fails in the session, by name."""
    seen = collections.defaultdict(list)
    for info in inputs:
        for axis, d in enumerate(info.shape or ()):
            if isinstance(d, str) and d:
                seen[d].append((info.name, axis))
    return {sym: places for sym, places in seen.items() if len(places) > 1}


def _check_shared_symbols(shared, tensors):
    for symbol, places in shared.items():
        sizes = {(name, axis): tensors[name].shape[axis] for name, axis in places}
        if len(set(sizes.values())) > 1:
            detail = ", ".join(f"{name}[{axis}]={size}" for (name, axis), size in sizes.items())
            raise ValueError(f"dimension {symbol!r} must be the same in every input that uses "
                             f"it, got {detail}")


def _policies(kernel_policy, exec_policy):
    """The two policies from objects, paths of policy files, or None (the kernel policy in
    force on this thread; the default execution policy)."""
    kernel_from_file = exec_from_file = None
    if isinstance(kernel_policy, str):
        kernel_from_file, exec_from_file = load_policy_file(kernel_policy)
        kernel_policy = kernel_from_file
    if isinstance(exec_policy, str):
        kernel_in_exec_file, exec_policy = load_policy_file(exec_policy)
        if kernel_policy is None:
            kernel_policy = kernel_in_exec_file
    elif exec_policy is None:
        exec_policy = exec_from_file
    if kernel_policy is None:
        kernel_policy = get_kernel_policy()
    if not isinstance(kernel_policy, _core._KernelPolicy):
        raise TypeError(f"kernel_policy must be a KernelPolicy or the path of a policy file, "
                        f"not {type(kernel_policy).__name__}")
    if exec_policy is None:
        exec_policy = ExecutionPolicy()
    if not isinstance(exec_policy, ExecutionPolicy):
        raise TypeError(f"exec_policy must be an ExecutionPolicy or the path of a policy file, "
                        f"not {type(exec_policy).__name__}")
    return kernel_policy, exec_policy


__all__ = ["InferenceSession", "KernelPolicy", "ExecutionPolicy", "Target"]

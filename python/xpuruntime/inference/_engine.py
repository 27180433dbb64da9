"""python/xpuruntime/inference/_engine.py: what an engine is (the interface every engine
implements), how engines register, and the stated rule by which ``engine="auto"`` picks one.

An engine turns one ONNX model into something that runs on one target. The session around it
(``_session.py``) owns everything engines share: loading the model, checking and converting
inputs, explain. An engine owns only what is its own: building, binding, running.

Note [Engine contract]:
- ``Engine.probe(target)`` says, without building anything, whether the engine can serve the
  target here: None when it can, else a sentence (package missing and which extra brings it,
  no such device, provider absent). It must not raise.
- ``Engine(model, target, kernel_policy, exec_policy)`` builds. It fills ``inputs`` and
  ``outputs`` (``TensorInfo``, in the model's order) and appends to ``unhonoured`` a sentence
  for every policy setting it could not apply, and to ``notes`` what it decided.
- ``engine.run(feeds, output_names)`` gets ``feeds`` as a dict name -> ``Tensor`` already on
  ``target.device`` (C-contiguous, dtype and rank checked by the session, current stream set)
  and returns a list of ``Tensor``, one per requested output name. It may not keep references
  to the feeds after it returns, and the tensors it returns belong to the caller (an engine
  that reuses output buffers between runs must copy: never hand out memory the next run
  overwrites).
- ``engine.explain()`` returns a dict of its own details (providers, per-node placement,
  precision actually used, profile); the session adds the common part.
"""

from dataclasses import dataclass

from .. import _core

_ENGINES = {}


@dataclass(frozen=True)
class TensorInfo:
    """One input or output of a model: its name, element type (an xpuruntime dtype, or None
    for a type xpuruntime has no dtype for) and shape, whose dimensions are ints, names of
    symbolic dimensions (str) or None (unknown)."""
    name: str
    dtype: object
    shape: tuple
    onnx_type: int = 0          # TensorProto element type, 0 when not a tensor

    def __str__(self):
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.name}: {self.dtype} [{dims}]"


@dataclass(frozen=True)
class Target:
    """Where a session runs: ``kind`` is ``"cpu"``, ``"cuda"`` or ``"npu"``; ``device`` is the
    xpuruntime Device whose memory holds inputs and outputs (the CPU for an NPU, whose engines
    take host memory)."""
    kind: str
    index: int
    device: object

    def __str__(self):
        return "cpu" if self.kind == "cpu" else f"{self.kind}:{self.index}"


def parse_target(device):
    """A Target from ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"npu"``, ``"npu:N"``, an int (a CUDA
    index) or a Device."""
    if isinstance(device, _core.Device):
        return Target(device.type, device.index if device.type != "cpu" else 0, device)
    if isinstance(device, int) and not isinstance(device, bool):
        return parse_target(_core.Device(device))
    if not isinstance(device, str):
        raise TypeError(f"device must be a string such as 'cpu', 'cuda:0' or 'npu', or a "
                        f"Device, not {type(device).__name__}")
    kind, _, index = device.strip().lower().partition(":")
    if kind == "npu":
        if index and not index.isdigit():
            raise ValueError(f"invalid device {device!r}: expected 'npu' or 'npu:N'")
        return Target("npu", int(index or 0), _core.Device("cpu"))
    try:
        return parse_target(_core.Device(device))
    except (ValueError, TypeError) as e:
        raise ValueError(f"invalid device {device!r}: expected 'cpu', 'cuda', 'cuda:N', "
                         f"'npu' or 'npu:N'") from e


class Engine:
    """Base class of engines (Note [Engine contract]); subclasses set the class attributes
    and register themselves with ``@register_engine``."""

    name = ""                 # what ``engine=`` names
    extra = ""                # the pip extra that brings the engine ("" when in the core install)
    kinds = ("cpu",)          # target kinds the engine can serve
    tested_here = True        # False for engines no machine of this project can run
    auto_rank = {}            # kind -> rank in the "auto" rule (lower wins; absent: never auto)

    def __init__(self, model, target, kernel_policy, exec_policy):
        self.model = model
        self.target = target
        self.kernel_policy = kernel_policy
        self.exec_policy = exec_policy
        self.inputs = ()
        self.outputs = ()
        self.unhonoured = []
        self.notes = []

    @classmethod
    def probe(cls, target):
        raise NotImplementedError

    def run(self, feeds, output_names):
        raise NotImplementedError

    def explain(self):
        return {}

    def close(self):
        """Releases what the engine holds (the session calls it once)."""


def register_engine(cls):
    """Class decorator: makes an Engine subclass available by its ``name``."""
    if not (isinstance(cls, type) and issubclass(cls, Engine)) or not cls.name:
        raise TypeError("register_engine takes an Engine subclass with a name")
    _ENGINES[cls.name] = cls
    return cls


class EngineRegistry:
    """The engines known to this process and the rule that picks one.

    The rule of ``engine="auto"``: among the registered engines that serve the target's kind
    and are usable here (their package is installed and the device is there), take the one
    of lowest ``auto_rank`` for that kind. Ranks: on ``cpu`` ONNX Runtime (the embedded
    default), then OpenVINO, then the native engine; on ``cuda`` TensorRT (the fastest for a
    fixed model when installed), then ONNX Runtime's CUDA EP, then the native engine; on
    ``npu`` OpenVINO's NPU plugin, then ONNX Runtime's QNN EP. The pick and every engine
    passed over, with its reason, go to ``explain()``.
    """

    @staticmethod
    def names():
        _load_builtin_engines()
        return sorted(_ENGINES)

    @staticmethod
    def get(name):
        _load_builtin_engines()
        if not isinstance(name, str):
            raise TypeError(f"engine must be a string, not {type(name).__name__}")
        try:
            return _ENGINES[name]
        except KeyError:
            raise ValueError(f"unknown engine {name!r}; registered engines: "
                             f"{', '.join(sorted(_ENGINES))}, or 'auto'") from None

    @staticmethod
    def status(target):
        """``{name: None or the reason it cannot serve target}`` for every engine."""
        _load_builtin_engines()
        out = {}
        for name, cls in sorted(_ENGINES.items()):
            if target.kind not in cls.kinds:
                out[name] = f"serves {', '.join(cls.kinds)}, not {target.kind}"
            else:
                out[name] = _probe(cls, target)
        return out

    @classmethod
    def pick(cls, target):
        """``(engine class, sentence saying why)`` by the rule in the class docstring."""
        status = cls.status(target)
        ranked = sorted((c.auto_rank[target.kind], name) for name, c in _ENGINES.items()
                        if target.kind in c.auto_rank)
        passed = []
        for _, name in ranked:
            reason = status[name]
            if reason is None:
                why = f"auto on {target}: {name} is the first usable engine in the order " \
                      f"{' > '.join(n for _, n in ranked)}"
                if passed:
                    why += " (passed over: " + "; ".join(passed) + ")"
                return _ENGINES[name], why
            passed.append(f"{name}: {reason}")
        raise _core.UnsupportedOperationError(
            f"no engine can run on {target} here: " + "; ".join(passed or ["none registered"]))


def _probe(cls, target):
    try:
        return cls.probe(target)
    except Exception as e:  # a broken installation says why instead of failing the pick
        return f"probing failed: {type(e).__name__}: {e}"


def cuda_unusable(target):
    """None when target's CUDA device can be used here, else why not (for ``probe``)."""
    status = _core._cuda.status()
    if not status["available"]:
        return f"CUDA is not available: {status['reason']}"
    if target.index >= status["device_count"]:
        return f"there is no {target} ({status['device_count']} CUDA devices)"
    return None


def first_line(error):
    """The first line of an engine's exception text: its libraries write pages."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def missing_package(engine, package, extra):
    """The XpuRuntimeError an engine raises when its package is not installed."""
    return _core.XpuRuntimeError(
        f"the {engine} engine needs the {package!r} package, which is not installed. "
        f"Install it with: pip install xpuruntime[{extra}]")


_loaded = False


def _load_builtin_engines():
    # Importing an engine module registers it; the modules import their packages lazily, so
    # this costs nothing when a package is missing.
    global _loaded
    if not _loaded:
        _loaded = True
        from .engines import load_all
        load_all()

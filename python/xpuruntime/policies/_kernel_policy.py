"""python/xpuruntime/policies/_kernel_policy.py: KernelPolicy (JSON in and out), the current
policy, explain.

The policy itself lives in C++ (the dispatcher reads it without Python); this module adds
what a user touches: construction from keywords, JSON, a context manager, and explain logs.
"""

import contextlib
import difflib
import json
from dataclasses import dataclass, field

from .. import _core
from ._json_file import JsonFile

_SCHEMA = "xpuruntime.KernelPolicy/1"
_DEVICE_TYPES = ("cpu", "cuda")
# Spellings of the design documents and of other libraries, by their squashed form (lower
# case, no '_', '-' or spaces); any spelling that squashes to a registered name is accepted.
_ALIASES = {"flashattention2": "flash_v2", "fa2": "flash_v2", "flashattn2": "flash_v2"}


def _squash(name):
    return name.lower().replace("_", "").replace("-", "").replace(" ", "")


def _did_you_mean(name, candidates):
    close = difflib.get_close_matches(name, sorted(candidates), n=3, cutoff=0.6)
    if not close:
        close = [c for c in sorted(candidates) if _squash(c).startswith(_squash(name)[:3])][:3]
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _resolve(op, kernel):
    """The (key, kernel) a pin is stored under: the op, or "cuda:op" for a pin scoped to a
    device type, and the kernel as it is registered. ValueError, with the nearest names,
    for an op or a kernel that exists on no device."""
    device, _, name = op.rpartition(":")
    if device and device not in _DEVICE_TYPES:
        raise ValueError(f"KernelPolicy: a pin is scoped to a device type {_DEVICE_TYPES}, "
                         f"got {device!r} in {op!r}")
    registered = {}
    for k in _core.list_kernels():
        registered.setdefault(k["op"], set()).add(k["name"])
    if name not in registered:
        raise ValueError(f"KernelPolicy: there is no op {name!r}"
                         f"{_did_you_mean(name, registered)}")
    names = registered[name]
    if kernel not in names:
        by_squash = {_squash(n): n for n in names}
        squashed = _squash(kernel)
        found = by_squash.get(squashed) or by_squash.get(_squash(_ALIASES.get(squashed, "")))
        if found is None:
            raise ValueError(f"KernelPolicy: op {name!r} has no kernel {kernel!r}"
                             f"{_did_you_mean(kernel, names)} (registered: "
                             f"{', '.join(sorted(names))})")
        kernel = found
    return (f"{device}:{name}" if device else name), kernel


class KernelPolicy(JsonFile, _core._KernelPolicy):
    """Which kernel each op uses: ``KernelPolicy(matmul="openblas")``.

    Ops without a pin follow ``auto_strategy``: ``"FirstSupported"`` (the highest-priority
    kernel that supports the inputs) or ``"BestPerformance"`` (time the supporting kernels
    once per shape class and keep the fastest).

    Names are checked when the pin is made: an op or kernel that is registered nowhere
    raises ValueError naming the nearest ones ("did you mean"); other spellings of a kernel
    are accepted (``cublasLt`` for ``cublaslt``, ``flash-v2`` for ``flash_v2``; a kernel of
    your own must be registered before it is pinned). A pin applies on the device types
    that have its kernel: ``matmul="cublaslt"`` leaves CPU matmuls to ``auto_strategy``, and
    ``explain()`` says the pin did not apply there. A pin scoped to a device type,
    ``KernelPolicy(cuda={"matmul": "cublaslt"}, cpu={"matmul": "native"})`` or the key
    ``"cuda:matmul"``, holds on that type only. A pinned kernel that is registered on the
    device but does not support the inputs (or was unregistered since) raises
    UnsupportedOperationError when the op runs.

    ``allow_tf32=True`` lets float32/complex64 matrix products on CUDA round their inputs
    to TF32 on tensor cores (about 8x faster, 10-bit mantissa); off by default, as in
    PyTorch, so results keep float32 precision.
    """

    def __init__(self, auto_strategy="FirstSupported", *, allow_tf32=False, cpu=None,
                 cuda=None, **pins):
        super().__init__()
        self.auto_strategy = auto_strategy
        self.allow_tf32 = allow_tf32
        for op, kernel in pins.items():
            self.set(op, kernel)
        for device, scoped in (("cpu", cpu), ("cuda", cuda)):
            if scoped is None:
                continue
            if not isinstance(scoped, dict):
                raise TypeError(f"{device}= takes a dict of op -> kernel, got {scoped!r}")
            for op, kernel in scoped.items():
                self.set(op, kernel, device=device)

    @property
    def allow_tf32(self):
        return _core._KernelPolicy.allow_tf32.__get__(self)

    @allow_tf32.setter
    def allow_tf32(self, allow):
        if not isinstance(allow, bool):
            raise TypeError(f"allow_tf32 must be True or False, got {allow!r}")
        _core._KernelPolicy.allow_tf32.__set__(self, allow)

    def set(self, op, kernel, device=None):
        """Pins op to kernel (on every device type that has it, or on `device` only:
        "cpu" or "cuda")."""
        if not isinstance(op, str) or not isinstance(kernel, str):
            raise TypeError("KernelPolicy.set(op, kernel) takes two strings")
        if device is not None:
            op = f"{device}:{op}"
        key, kernel = _resolve(op, kernel)
        super().set(key, kernel)
        return self

    def to_dict(self):
        return {"schema": _SCHEMA, "auto_strategy": self.auto_strategy,
                "allow_tf32": self.allow_tf32, "preferences": dict(self.preferences)}

    def to_json(self, indent=2):
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True)

    @classmethod
    def from_dict(cls, data):
        if not isinstance(data, dict):
            raise ValueError("a kernel policy is a JSON object")
        if data.get("schema") == "xpuruntime.Policy/1":  # Note [One policy file]
            section = data.get("kernel_policy")
            return cls() if section is None else cls.from_dict(section)
        schema = data.get("schema", _SCHEMA)
        if schema != _SCHEMA:
            raise ValueError(f"unknown kernel policy schema {schema!r} (expected {_SCHEMA!r})")
        unknown = set(data) - {"schema", "auto_strategy", "allow_tf32", "preferences"}
        if unknown:
            raise ValueError(f"unknown kernel policy fields: {sorted(unknown)}")
        prefs = data.get("preferences", {})
        if not isinstance(prefs, dict):
            raise ValueError("'preferences' must map op names to kernel names")
        return cls(auto_strategy=data.get("auto_strategy", "FirstSupported"),
                   allow_tf32=data.get("allow_tf32", False), **prefs)

    def __eq__(self, other):
        if not isinstance(other, _core._KernelPolicy):
            return NotImplemented
        return (self.auto_strategy == other.auto_strategy
                and self.allow_tf32 == other.allow_tf32
                and self.preferences == other.preferences)

    __hash__ = None

    def __repr__(self):
        pins = "".join(f", {op}={k!r}" for op, k in sorted(self.preferences.items()))
        tf32 = ", allow_tf32=True" if self.allow_tf32 else ""
        return f"KernelPolicy(auto_strategy={self.auto_strategy!r}{tf32}{pins})"


def set_kernel_policy(policy):
    """Makes policy the process-wide kernel policy (threads without a scoped one use it)."""
    if not isinstance(policy, _core._KernelPolicy):
        raise TypeError("set_kernel_policy expects a KernelPolicy")
    _core._set_global_policy(policy)


def get_kernel_policy():
    """The policy in force on this thread (a scoped one, else the global one)."""
    return _core._current_policy()


@contextlib.contextmanager
def kernel_policy(policy=None, **pins):
    """``with kernel_policy(KernelPolicy(...))`` or ``with kernel_policy(matmul="native")``:
    the policy applies to this thread inside the block."""
    if policy is None:
        policy = KernelPolicy(**pins)
    elif pins:
        raise TypeError("pass a KernelPolicy or keyword pins, not both")
    if not isinstance(policy, _core._KernelPolicy):
        raise TypeError("kernel_policy expects a KernelPolicy")
    _core._push_thread_policy(policy)
    try:
        yield policy
    finally:
        _core._pop_thread_policy()


@dataclass(frozen=True)
class Decision:
    """One dispatcher decision: which kernel ran for which op, and why."""
    op: str
    device: str
    dtypes: str
    kernel: str
    kind: str            # "pinned", "first_supported", "best_performance" or "fallback"
    reason: str          # the sentence: the pin, the candidates, the timings
    candidates: tuple = field(default=())

    def __str__(self):
        return f"{self.op}[{self.device}; {self.dtypes}] -> {self.kernel}: {self.reason}"


def _decisions(records):
    return [Decision(**{**r, "candidates": tuple(r["candidates"])}) for r in records]


class ExplainLog:
    """Collects the decisions of every op run on this thread inside ``with explain()``."""

    def __init__(self):
        self.records = []

    def __enter__(self):
        _core._explain_begin()
        return self

    def __exit__(self, *exc):
        self.records = _decisions(_core._explain_end())
        return False

    def kernels(self, op=None):
        """Names of the kernels that ran, in order (for one op when given)."""
        return [r.kernel for r in self.records if op is None or r.op == op]

    def __str__(self):
        if not self.records:
            return "(no ops ran)"
        return "\n".join(str(r) for r in self.records)

    __repr__ = __str__


def explain():
    """``with xrt.explain() as log: ...`` records which kernel each op used and why."""
    return ExplainLog()


def decisions():
    """The dispatcher's cached decisions on this thread."""
    return _decisions(_core._cached_decisions())

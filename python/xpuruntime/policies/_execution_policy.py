"""python/xpuruntime/policies/_execution_policy.py: ExecutionPolicy (how a model or program
runs: precision, static shapes, CUDA graphs, threads, allocator) and the policy file that holds
it beside a KernelPolicy.

Note [One policy file]: a policy file is one JSON object with schema ``xpuruntime.Policy/1``
and up to two sections, ``"kernel_policy"`` and ``"execution_policy"``, each in the schema of
its class. ``KernelPolicy.load`` and ``ExecutionPolicy.load`` read either their own schema or
such a file (taking their section), so the same file steers array code (the kernel section),
inference sessions and the PyTorch adapter (both sections). ``save_policy_file`` writes one.
"""

import json

from ._json_file import JsonFile
from ._kernel_policy import KernelPolicy

_SCHEMA = "xpuruntime.ExecutionPolicy/1"
POLICY_FILE_SCHEMA = "xpuruntime.Policy/1"

PRECISIONS = ("fp32", "fp16", "bf16", "int8")
ALLOCATORS = ("caching", "stream_ordered", "engine")
GRAPH_OPTIMIZATIONS = ("all", "extended", "basic", "none")
PERFORMANCE_HINTS = ("latency", "throughput")


class ExecutionPolicy(JsonFile):
    """How a model runs, for every engine alike; each engine maps it to its own settings and
    reports in ``explain()`` what it could not honour.

    - ``precision``: ``"fp32"`` (the model as it is), ``"fp16"``, ``"bf16"`` or ``"int8"``.
    - ``static_shape``: the shapes of the first run (or ``input_shapes``) are the only ones;
      engines may specialise for them (TensorRT profiles, ORT free-dimension overrides,
      OpenVINO's static reshape), and buffers are planned once.
    - ``input_shapes``: ``{name: shape}`` fixing symbolic dimensions before the first run.
    - ``cuda_graphs``: capture a run once and replay it (CUDA engines that can).
    - ``threads``: CPU threads of the engine (``None``: the engine chooses).
    - ``allocator``: where engines take device memory: ``"caching"`` (xpuruntime's caching
      allocator), ``"stream_ordered"`` or ``"engine"`` (the engine's own arena).
    - ``graph_optimization``: ``"all"``, ``"extended"``, ``"basic"`` or ``"none"``.
    - ``performance_hint``: ``"latency"`` or ``"throughput"`` (OpenVINO's hint).
    - ``profile``: ask the engine for its own per-node profile (shown by ``explain()``).
    """

    __slots__ = ("precision", "static_shape", "input_shapes", "cuda_graphs", "threads",
                 "allocator", "graph_optimization", "performance_hint", "profile")

    def __init__(self, precision="fp32", *, static_shape=False, input_shapes=None,
                 cuda_graphs=False, threads=None, allocator="caching",
                 graph_optimization="all", performance_hint="latency", profile=False):
        _choice("precision", precision, PRECISIONS)
        _choice("allocator", allocator, ALLOCATORS)
        _choice("graph_optimization", graph_optimization, GRAPH_OPTIMIZATIONS)
        _choice("performance_hint", performance_hint, PERFORMANCE_HINTS)
        for name, value in (("static_shape", static_shape), ("cuda_graphs", cuda_graphs),
                            ("profile", profile)):
            if not isinstance(value, bool):
                raise TypeError(f"ExecutionPolicy {name} must be True or False, got {value!r}")
        if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool)
                                    or not 1 <= threads <= 4096):
            raise ValueError(f"ExecutionPolicy threads must be None or an int in [1, 4096], "
                             f"got {threads!r}")
        self.precision = precision
        self.static_shape = static_shape
        self.input_shapes = _shapes(input_shapes)
        self.cuda_graphs = cuda_graphs
        self.threads = threads
        self.allocator = allocator
        self.graph_optimization = graph_optimization
        self.performance_hint = performance_hint
        self.profile = profile

    def replace(self, **changes):
        """A copy with some fields changed."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return ExecutionPolicy(**fields)

    def to_dict(self):
        data = {name: getattr(self, name) for name in self.__slots__}
        data["input_shapes"] = ({k: list(v) for k, v in self.input_shapes.items()}
                                if self.input_shapes is not None else None)
        return {"schema": _SCHEMA, **data}

    def to_json(self, indent=2):
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True)

    @classmethod
    def from_dict(cls, data):
        if not isinstance(data, dict):
            raise ValueError("an execution policy is a JSON object")
        if data.get("schema") == POLICY_FILE_SCHEMA:
            section = data.get("execution_policy")
            return cls() if section is None else cls.from_dict(section)
        schema = data.get("schema", _SCHEMA)
        if schema != _SCHEMA:
            raise ValueError(f"unknown execution policy schema {schema!r} (expected {_SCHEMA!r} "
                             f"or a policy file, {POLICY_FILE_SCHEMA!r})")
        fields = {k: v for k, v in data.items() if k != "schema"}
        unknown = set(fields) - set(cls.__slots__)
        if unknown:
            raise ValueError(f"unknown execution policy fields: {sorted(unknown)} "
                             f"(known: {', '.join(cls.__slots__)})")
        return cls(**fields)

    def __eq__(self, other):
        if not isinstance(other, ExecutionPolicy):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None

    def __repr__(self):
        default = ExecutionPolicy()
        changed = [f"{name}={getattr(self, name)!r}" for name in self.__slots__
                   if getattr(self, name) != getattr(default, name)]
        return f"ExecutionPolicy({', '.join(changed)})"


def _choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"ExecutionPolicy {name} must be one of {', '.join(map(repr, allowed))}, "
                         f"got {value!r}")


def _shapes(input_shapes):
    if input_shapes is None:
        return None
    if not isinstance(input_shapes, dict):
        raise TypeError("ExecutionPolicy input_shapes maps input names to shapes")
    out = {}
    for name, shape in input_shapes.items():
        if not isinstance(name, str) or not isinstance(shape, (list, tuple)) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise ValueError(f"ExecutionPolicy input_shapes[{name!r}] must be a list of "
                             f"non-negative ints, got {shape!r}")
        out[name] = tuple(shape)
    return out


def save_policy_file(path, kernel_policy=None, exec_policy=None):
    """Writes one policy file (Note [One policy file]) holding either policy or both."""
    data = {"schema": POLICY_FILE_SCHEMA}
    if kernel_policy is not None:
        data["kernel_policy"] = kernel_policy.to_dict()
    if exec_policy is not None:
        data["execution_policy"] = exec_policy.to_dict()
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(data, indent=2, sort_keys=True) + "\n")


def load_policy_file(path):
    """``(kernel_policy, exec_policy)`` from a policy file or from a file of either schema; a
    section the file lacks comes back as None."""
    with open(path, encoding="utf-8") as f:
        data = json.loads(f.read())
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a policy file is a JSON object")
    schema = data.get("schema")
    if schema == POLICY_FILE_SCHEMA:
        unknown = set(data) - {"schema", "kernel_policy", "execution_policy"}
        if unknown:
            raise ValueError(f"{path}: unknown policy file sections: {sorted(unknown)}")
        kernel = data.get("kernel_policy")
        execution = data.get("execution_policy")
        return (KernelPolicy.from_dict(kernel) if kernel is not None else None,
                ExecutionPolicy.from_dict(execution) if execution is not None else None)
    if schema == _SCHEMA:
        return None, ExecutionPolicy.from_dict(data)
    return KernelPolicy.from_dict(data), None

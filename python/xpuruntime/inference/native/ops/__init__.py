"""python/xpuruntime/inference/native/ops/__init__.py: the table of ONNX operators the native
engine runs, one module per family, each filling the table with ``@op``.

Note [Op table]: an entry maps ``(domain, op_type)`` to a *builder*. The plan calls the
builder once per node, at construction, with the node's attributes and the opset of its
domain; the builder checks what it can (an attribute value the engine does not implement
raises UnsupportedOperationError then, not at run) and returns the function that runs the
node: ``fn(*inputs) -> tuple of outputs`` on xpuruntime Tensors (None for an absent optional
input). Opset differences live in the builder, which knows the opset.

Two columns steer where values live on a device target:
- ``host_inputs``: the inputs the op reads as integers on the host (a Reshape's shape, a
  Slice's starts). The plan hands them over as CPU tensors; shapes computed from ``Shape``
  stay on the host all along, so on CUDA this costs no device-to-host wait.
- ``shape_only``: the op reads only its input's shape (``Shape``, ``Size``), so its output is
  a host value even when its input is on the device.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class OpSpec:
    domain: str
    op_type: str
    build: object             # build(node) -> fn(*inputs) -> tuple
    host_inputs: frozenset
    shape_only: bool
    since: int                # the first opset of its domain this implementation serves
    family: str               # the module that implements it

OPS = {}

def op(*op_types, domain="", host_inputs=(), shape_only=False, since=1):
    """Decorator: registers a builder for one or more op types of a domain."""
    def register(build):
        family = build.__module__.rsplit(".", 1)[-1]
        for op_type in op_types:
            OPS[(domain, op_type)] = OpSpec(domain, op_type, build, frozenset(host_inputs),
                                            shape_only, since, family)
        return build
    return register

def lookup(domain, op_type):
    return OPS.get(("" if domain == "ai.onnx" else domain, op_type))

def supported_ops():
    """``{domain: sorted op types}`` of every operator the native engine runs (the default
    domain is spelled ``"ai.onnx"``)."""
    out = {}
    for (domain, op_type) in OPS:
        out.setdefault(domain or "ai.onnx", []).append(op_type)
    return {domain: sorted(names) for domain, names in sorted(out.items())}

from . import attention, elementwise, nn, reduce, shape  # noqa: F401  (fill OPS)

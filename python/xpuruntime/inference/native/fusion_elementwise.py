"""python/xpuruntime/inference/native/fusion_elementwise.py: the ``elementwise`` fusion (Note
[Fusions] in fusion.py): chains of elementwise nodes become one
``xpuruntime:ElementwiseChain`` node, a generated kernel (ops/elementwise.py).
"""

import numpy as np

from .rewrite import consumers_of, new_node, producers_of, rewrite

# The C expression of each elementwise op over its operands {0}, {1} (computed in C, the
# compute type: float for 16-bit floats); attributes are filled in by _expression.
_EXPRESSIONS = {
    "Add": "{0} + {1}", "Sub": "{0} - {1}", "Mul": "{0} * {1}", "Div": "{0} / {1}",
    "Neg": "-{0}", "Abs": "fabs({0})", "Exp": "exp({0})", "Log": "log({0})",
    "Sqrt": "sqrt({0})", "Reciprocal": "C(1) / {0}", "Erf": "erf({0})", "Tanh": "tanh({0})",
    "Sigmoid": "C(1) / (C(1) + exp(-{0}))",
    "Relu": "{0} < C(0) ? C(0) : {0}",  # NaN stays NaN, as in ONNX
}


def _literal(value):
    return f"C({float(value)!r})"


def _expression(node, operands):
    """The C expression node computes from its operands' expressions; None if unsupported."""
    op = node.op_type
    if op in _EXPRESSIONS:
        if len(operands) != (2 if op in ("Add", "Sub", "Mul", "Div") else 1):
            return None
        return _EXPRESSIONS[op].format(*operands)
    x = operands[0] if len(operands) == 1 else None
    if x is None:
        return None
    if op == "LeakyRelu":
        return f"{x} < C(0) ? {_literal(node.attrs.get('alpha', 0.01))} * {x} : {x}"
    if op == "Gelu":
        if node.attrs.get("approximate", "none") == "tanh":
            return (f"C(0.5) * {x} * (C(1) + tanh(C(0.7978845608028654) * ({x} + "
                    f"C(0.044715) * {x} * {x} * {x})))")
        return f"C(0.5) * {x} * (C(1) + erf({x} * C(0.7071067811865476)))"
    return None


_CHAIN_OPS = frozenset(_EXPRESSIONS) | {"LeakyRelu", "Gelu"}


def elementwise(nodes, weights, opsets, records, outputs):
    """The ``elementwise`` pass (Note [Fusions] in fusion.py)."""
    consumers = consumers_of(nodes)
    producers = producers_of(nodes)
    position = {id(n): i for i, n in enumerate(nodes)}
    group_of = {}  # id(node) -> the group it is in (nodes in topological order)

    def chainable(node):
        return node.op_type in _CHAIN_OPS and node.domain == "" and \
            len([o for o in node.outputs if o]) == 1 and all(node.inputs)

    # A node joins the groups of the producers whose value it alone reads: each group then
    # has one value leaving it (its last node's), every other is read inside only.
    for node in nodes:
        if not chainable(node):
            continue
        members = {id(node): node}
        for name in node.inputs:
            p = producers.get(name)
            if p is None or id(p) not in group_of or name in outputs or \
                    len(consumers.get(name, [])) != 1:
                continue
            members.update((id(m), m) for m in group_of[id(p)])
        group = sorted(members.values(), key=lambda n: position[id(n)])
        for m in group:
            group_of[id(m)] = group
    replace, seen = {}, set()
    for node in nodes:
        group = group_of.get(id(node))
        if group is None or id(group) in seen or len(group) < 2:
            continue
        seen.add(id(group))
        fused = _chain_node(group, weights)
        if fused is None:
            continue
        replace.update({id(n): None for n in group})
        replace[id(group[-1])] = fused
        records.append({"fusion": "elementwise", "into": fused.name,
                        "nodes": [n.name for n in group]})
    return rewrite(nodes, replace)


def _chain_node(group, weights):
    """The ElementwiseChain node of a group (nodes in topological order), or None."""
    inside = {n.outputs[0] for n in group}
    inputs, scalars, temps, lines = [], {}, {}, []
    for i, node in enumerate(group):
        operands = []
        for name in node.inputs:
            value = weights.get(name)
            if name in inside:
                operands.append(temps[name])
            elif value is not None and value.ndim == 0 and value.dtype.kind == "f" and \
                    np.isfinite(value):
                scalars[name] = value
                operands.append(_literal(value))
            else:
                if name not in inputs:
                    inputs.append(name)
                operands.append(f"c{inputs.index(name)}")
        expression = _expression(node, operands)
        if expression is None:
            return None
        temps[node.outputs[0]] = f"t{i}"
        lines.append(f"C t{i} = {expression};" if i < len(group) - 1 else
                     f"y = (T)({expression});")
    if not inputs:
        return None  # all constant: folding's job
    # The inputs enter in C (T may be a 16-bit float type with no arithmetic of its own).
    operation = "typedef typename xrt::compute_type<T>::type C; " + " ".join(
        [f"C c{i} = (C)a{i};" for i in range(len(inputs))] + lines)
    last = group[-1]
    fused = new_node(last, "ElementwiseChain", inputs, last.outputs,
                      {"operation": operation, "nodes": list(group), "scalars": scalars},
                      "elementwise", domain="xpuruntime")
    fused.constants = {i: weights[i] for i in inputs if i in weights}
    return fused

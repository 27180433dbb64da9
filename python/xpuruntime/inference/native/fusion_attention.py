"""python/xpuruntime/inference/native/fusion_attention.py: the ``attention`` fusion (Note
[Fusions] in fusion.py): the attention pattern exporters write out becomes one
``xpuruntime:ScaledDotProductAttention`` node (ops/attention.py).
"""

import math

import numpy as np

from .rewrite import (
    consumers_of,
    new_node,
    only_consumer,
    other_input,
    producers_of,
    rewrite,
    scalar_of,
)


def _negative_infinity(weights, name):
    value = scalar_of(weights, name)
    return value is not None and value == -math.inf


def _attention_mask(node, score, weights):
    """(mask name, kind) of a Where or Add that masks `score`; None when node is neither.
    kind: "keep" (bool, True where the key takes part), "drop" (True where it is masked),
    "add" (added to the scores)."""
    if node.op_type == "Where" and len(node.inputs) == 3 and node.inputs[0] != score:
        cond, a, b = node.inputs
        if a == score and _negative_infinity(weights, b):
            return cond, "keep"
        if b == score and _negative_infinity(weights, a):
            return cond, "drop"
        return None
    if node.op_type == "Add" and len(node.inputs) == 2 and score in node.inputs:
        other = other_input(node, score)
        if other != score:
            return other, "add"
    return None


def _causal_constant(value, kind):
    """Whether a constant mask is exactly top-left causal (key j for query i when j <= i)."""
    if value is None or value.dtype != np.bool_ or value.ndim < 2 or \
            any(n != 1 for n in value.shape[:-2]):
        return False
    tril = np.tril(np.ones(value.shape[-2:], dtype=bool))
    rows = value.reshape(value.shape[-2:])
    return bool(np.array_equal(rows, tril if kind == "keep" else ~tril))


# Producers of a computed scale factor (from a shape: Shape, Slice, Cast, Sqrt, Div, ...).
_FACTOR_OPS = frozenset({"Sqrt", "Cast", "Div", "Mul", "Reciprocal", "Pow", "Constant"})


def _pre_scale(node, consumers, producers, weights, replace):
    """(the Mul, its data input, its factor) when node multiplies an attention operand by a
    scalar, read by the product alone: the factor a float when constant, else the name of a
    value computed from constants and shapes. None otherwise."""
    if node is None or node.op_type != "Mul" or node.domain != "" or id(node) in replace or \
            len(consumers.get(node.outputs[0], [])) != 1 or len(node.inputs) != 2:
        return None
    for data, factor in (node.inputs, node.inputs[::-1]):
        constant = scalar_of(weights, factor)
        if constant is not None and data not in weights:
            return node, data, constant
    for data, factor in (node.inputs, node.inputs[::-1]):
        made, source = producers.get(factor), producers.get(data)
        if made is not None and made.op_type in _FACTOR_OPS and \
                (source is None or source.op_type not in _FACTOR_OPS) and data not in weights:
            return node, data, factor  # checked to be one value at run time
    return None


def attention(nodes, weights, opsets, records, outputs):
    """The ``attention`` pass (Note [Fusions] in fusion.py)."""
    consumers = consumers_of(nodes)
    producers = producers_of(nodes)
    replace = {}
    for softmax in nodes:
        if softmax.op_type != "Softmax" or softmax.domain != "" or softmax.opset < 13 or \
                softmax.attrs.get("axis", -1) != -1:
            continue
        pv = only_consumer(consumers, softmax.outputs[0], "MatMul")
        if pv is None or pv.inputs[0] != softmax.outputs[0]:
            continue
        group, scale, mask, kind = [softmax, pv], 1.0, None, None
        current, qk, scaled_after_mask = softmax.inputs[0], None, False
        while current in producers:
            node = producers[current]
            if len(consumers.get(current, [])) != 1 or node.domain != "" or id(node) in replace:
                break
            if node.op_type == "MatMul":
                qk = node
                break
            if node.op_type in ("Mul", "Div"):
                x = next((i for i in node.inputs if i not in weights), None)
                c = scalar_of(weights, other_input(node, x)) if x is not None else None
                if c is None or c <= 0 or (node.op_type == "Div" and node.inputs[0] != x):
                    break
                scale = scale * c if node.op_type == "Mul" else scale / c
                scaled_after_mask = scaled_after_mask or mask is None
                group.append(node)
                current = x
                continue
            if mask is not None:
                break
            score = next((i for i in node.inputs if i in producers and
                          producers[i].op_type in ("MatMul", "Mul", "Div")), None)
            found = _attention_mask(node, score, weights) if score else None
            # A scale after an added mask would scale the mask too: not this pattern.
            if found is None or (found[1] == "add" and scaled_after_mask):
                break
            mask, kind = found
            group.append(node)
            current = score
        if qk is None or len(qk.inputs) != 2:
            continue
        group.append(qk)
        causal = kind in ("keep", "drop") and _causal_constant(weights.get(mask), kind)
        # Q and Kᵀ may each be scaled before the product (PyTorch's export of SDPA multiplies
        # both by sqrt(scale), computed from a shape): the factors become inputs.
        operands, roles = list(qk.inputs), []
        for side, role in ((0, "q_scale"), (1, "k_scale")):
            found = _pre_scale(producers.get(operands[side]), consumers, producers, weights,
                               replace)
            if found is None:
                continue
            node, data, factor = found
            group.append(node)
            operands[side] = data
            if isinstance(factor, float):
                scale *= factor
            else:
                roles.append((role, factor))
        inputs = [operands[0], operands[1], pv.inputs[1]]
        if mask is not None and not causal:
            inputs.append(mask)
        inputs += [factor for _, factor in roles]
        attrs = {"scale": scale, "mask": "causal" if causal else (kind or "none"),
                 "factors": [role for role, _ in roles]}
        fused = new_node(pv, "ScaledDotProductAttention", inputs, pv.outputs, attrs,
                          "attention", domain="xpuruntime")
        fused.constants = {i: weights[i] for i in inputs if i in weights}
        replace.update({id(n): None for n in group})
        replace[id(pv)] = fused
        records.append({"fusion": "attention", "into": fused.name,
                        "nodes": [n.name for n in reversed(group)]})
    return rewrite(nodes, replace)

"""python/xpuruntime/inference/native/fusion.py: rewrites of the node list before the plan is
built, each switchable by name and reported in ``explain()``.

Note [Fusions]: a pass earns its place by saving work on our kernels, measured
(docs/native_engine.md has the figures); with no kernel that fuses a chain, merging nodes only
saves the Python loop's few microseconds a node, which is not a fusion worth a name.
- ``gelu``: the erf form of GELU as exporters spell it (Div or Mul by sqrt(2), Erf, Add 1,
  Mul by x, Mul by 0.5) becomes one Gelu node: two full passes fewer, and one erf evaluation
  whose constant factors fold into it.
- ``conv_batchnorm``: a BatchNormalization after a Conv, both with constant parameters, folds
  into the Conv's weights and bias once, at build: the two passes of the normalisation vanish.
- ``linear``: MatMul by a constant matrix (or Gemm by one, alpha = beta = 1), then Add of a
  constant bias vector (or the Gemm's own C, when that is one), then Gelu or Relu (each step
  optional past the first two) becomes
  one ``xpuruntime:FusedLinear`` node on ``xrt.nn.linear``: on CUDA one cuBLASLt call whose
  epilogue adds the bias and applies the activation (Note [Fused linear]); on the CPU the
  bias and activation run in place on the product, with no temporaries.
- ``add_norm``: a residual Add of two computed values whose sum a LayerNormalization (or
  RMSNormalization, SimplifiedLayerNormalization) asking for Y alone normalises becomes one
  ``xpuruntime:AddNorm`` node on ``xrt.nn.add_layer_norm`` / ``add_rms_norm``: one kernel
  writes the sum (which the residual stream goes on with) and its norm, the Add's pass and
  launch gone. At run time, operands of different shapes take the two ops.
- ``attention``: the attention pattern as exporters write it out, MatMul(Q, Kᵀ), then Mul or
  Div by constants, then at most one mask (Where choosing -inf, or Add), then Softmax over the
  last axis, then MatMul by V, becomes one ``xpuruntime:ScaledDotProductAttention`` node on
  ``xrt.nn.scaled_dot_product_attention``: in float16 or bfloat16 one cuDNN fused attention
  kernel (no scores matrix in memory) in place of five kernels. CUDA plans only: on the CPU
  it would run the same five ops. A constant mask that is exactly the lower triangle
  becomes is_causal.
- ``elementwise``: a chain of elementwise nodes (Add, Sub, Mul, Div, Neg, Abs, Exp, Log,
  Sqrt, Reciprocal, Erf, Tanh, Sigmoid, Relu, LeakyRelu, Gelu) whose intermediate values have
  no other reader becomes one ``xpuruntime:ElementwiseChain`` node: one generated NVRTC kernel
  (an ``xrt.ElementwiseKernel``, broadcasting its inputs, computing 16-bit floats in float32)
  in place of one pass per node; scalar constants become literals. CUDA plans only; at run
  time other dtypes or devices (shape arithmetic on the host) take the nodes it replaced.
"""

import math

import numpy as np

from .ops import lookup

FUSIONS = ("gelu", "conv_batchnorm", "linear", "add_norm", "attention", "elementwise")


# Passes whose fused kernel exists on some devices only; elsewhere the pass would merge nodes
# into the same ops (Note [Fusions]). Measured: the attention node on the CPU runs the five
# ops it replaces plus its dispatch, 0.58 -> 0.61 ms on the small transformer.
_DEVICES = {"attention": ("cuda",), "elementwise": ("cuda",)}


def apply(nodes, enabled, weights, opsets, device=None, outputs=()):
    """Runs the enabled passes on ``nodes`` (those for `device`'s type, when given); returns
    the new list and what each pass did. `outputs`: the graph's outputs (values a pass must
    keep)."""
    unknown = set(enabled) - set(FUSIONS)
    if unknown:
        raise ValueError(f"unknown fusions {sorted(unknown)}; known: {', '.join(FUSIONS)}")
    records = []
    for name in FUSIONS:
        if name in enabled and (device is None or device.type in _DEVICES.get(name, (
                device.type,))):
            if name == "elementwise":
                nodes = _elementwise(nodes, weights, opsets, records, set(outputs))
            else:
                nodes = _PASSES[name](nodes, weights, opsets, records)
    return nodes, records


def _consumers(nodes):
    out = {}
    for node in nodes:
        for name in node.inputs:
            out.setdefault(name, []).append(node)
    return out


def _scalar(weights, name):
    value = weights.get(name)
    if value is None or value.size != 1 or value.dtype.kind != "f":
        return None
    return float(value.reshape(-1)[0])


def _only_consumer(consumers, name, op_type):
    users = consumers.get(name, [])
    if len(users) == 1 and users[0].op_type == op_type and users[0].domain == "":
        return users[0]
    return None


def _other(node, name):
    """The input of a two-input node that is not ``name``."""
    a, b = node.inputs[:2]
    return b if a == name else a


def _close(value, target):
    return value is not None and math.isclose(value, target, rel_tol=1e-6)


def _gelu(nodes, weights, opsets, records):
    consumers = _consumers(nodes)
    replace = {}
    for erf in nodes:
        if erf.op_type != "Erf" or erf.domain != "":
            continue
        scaled = next((n for n in nodes if erf.inputs[0] in n.outputs), None)
        if scaled is None or len(consumers.get(scaled.outputs[0], [])) != 1:
            continue
        if scaled.op_type == "Div":
            x, factor = scaled.inputs[0], _scalar(weights, scaled.inputs[1])
            ok = _close(factor, math.sqrt(2))
        elif scaled.op_type == "Mul":
            x = next((i for i in scaled.inputs if i not in weights), None)
            ok = _close(_scalar(weights, _other(scaled, x)), 1 / math.sqrt(2))
        else:
            ok = False
        add = _only_consumer(consumers, erf.outputs[0], "Add")
        if not ok or add is None or not _close(_scalar(weights, _other(add, erf.outputs[0])),
                                                1.0):
            continue
        times_x = _only_consumer(consumers, add.outputs[0], "Mul")
        if times_x is None or _other(times_x, add.outputs[0]) != x:
            continue
        half = _only_consumer(consumers, times_x.outputs[0], "Mul")
        if half is None or not _close(_scalar(weights, _other(half, times_x.outputs[0])), 0.5):
            continue
        group = [scaled, erf, add, times_x, half]
        fused = _new_node(half, "Gelu", [x], half.outputs, {}, "gelu")
        replace.update({id(n): None for n in group})
        replace[id(half)] = fused
        records.append({"fusion": "gelu", "into": fused.name,
                        "nodes": [n.name for n in group]})
    return _rewrite(nodes, replace)


def _conv_batchnorm(nodes, weights, opsets, records):
    consumers = _consumers(nodes)
    replace = {}
    for conv in nodes:
        if conv.op_type != "Conv" or conv.domain != "" or conv.inputs[1] not in weights:
            continue
        has_bias = len(conv.inputs) > 2 and conv.inputs[2]
        if has_bias and conv.inputs[2] not in weights:
            continue
        bn = _only_consumer(consumers, conv.outputs[0], "BatchNormalization")
        if bn is None or not all(i in weights for i in bn.inputs[1:5]) or \
                bn.attrs.get("training_mode", 0) or len([o for o in bn.outputs if o]) > 1:
            continue
        scale, shift, mean, var = (weights[i].astype(np.float64) for i in bn.inputs[1:5])
        w = weights[conv.inputs[1]]
        a = scale / np.sqrt(var + bn.attrs.get("epsilon", 1e-5))
        b = weights[conv.inputs[2]].astype(np.float64) if has_bias else np.zeros_like(mean)
        w_name, b_name = f"{conv.name}.folded_weight", f"{conv.name}.folded_bias"
        weights[w_name] = (w * a.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
        weights[b_name] = ((b - mean) * a + shift).astype(w.dtype)
        fused = _new_node(conv, "Conv", [conv.inputs[0], w_name, b_name], bn.outputs,
                          dict(conv.attrs), "conv_batchnorm")
        fused.constants = {w_name: weights[w_name], b_name: weights[b_name]}
        replace[id(conv)] = fused
        replace[id(bn)] = None
        records.append({"fusion": "conv_batchnorm", "into": fused.name,
                        "nodes": [conv.name, bn.name]})
    return _rewrite(nodes, replace)


def _linear_weight(node, weights):
    """(input, weight name, layout, own bias) when node is a product by a constant matrix
    that xrt.nn.linear takes: MatMul(x, W (k, n)) -> "kn"; Gemm(x, B, C?) with alpha = beta = 1
    and no transA -> "nk" for transB = 1, else "kn", with C (the name, checked by the caller
    to be a bias vector) as its own bias. None otherwise."""
    if node.domain != "":
        return None
    if node.op_type == "MatMul":
        w = weights.get(node.inputs[1])
        if w is None or w.ndim != 2 or w.dtype.kind != "f":
            return None
        return node.inputs[0], node.inputs[1], "kn", None
    if node.op_type == "Gemm":
        if node.attrs.get("alpha", 1.0) != 1.0 or node.attrs.get("beta", 1.0) != 1.0 or \
                node.attrs.get("transA", 0):
            return None
        w = weights.get(node.inputs[1])
        if w is None or w.ndim != 2 or w.dtype.kind != "f":
            return None
        own = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else None
        return (node.inputs[0], node.inputs[1], "nk" if node.attrs.get("transB", 0) else "kn",
                own)
    return None


def _weight_aliases(nodes, weights):
    """Values that are a weight under another name: exporters share equal weights through
    Identity nodes (every LayerNorm's ones and zeros, zero biases)."""
    return {n.outputs[0]: n.inputs[0] for n in nodes
            if n.op_type == "Identity" and n.domain == "" and n.inputs[0] in weights}


def _linear(nodes, weights, opsets, records):
    consumers = _consumers(nodes)
    aliases = _weight_aliases(nodes, weights)
    replace = {}
    for product in nodes:
        found = _linear_weight(product, weights)
        if found is None:
            continue
        x, w_name, layout, own = found
        w = weights[w_name]
        n = w.shape[1] if layout == "kn" else w.shape[0]
        if own is not None:  # a Gemm's C: a bias when it is a constant vector of n
            add, bias = product, aliases.get(own, own)
        else:
            add = _only_consumer(consumers, product.outputs[0], "Add")
            if add is None:
                continue
            bias = _other(add, product.outputs[0])
            bias = aliases.get(bias, bias)
        b = weights.get(bias)
        if b is None or b.shape != (n,) or b.dtype != w.dtype:
            continue
        group, last, activation = [product] + ([add] if add is not product else []), add, None
        for op_type, name in (("Gelu", None), ("Relu", "relu")):
            after = _only_consumer(consumers, add.outputs[0], op_type)
            if after is None:
                continue
            if op_type == "Gelu":
                approximate = after.attrs.get("approximate", "none")
                name = "gelu" if approximate == "none" else "gelu_tanh"
            group.append(after)
            last, activation = after, name
            break
        fused = _new_node(last, "FusedLinear", [x, w_name, bias], last.outputs,
                          {"layout": layout, "activation": activation}, "linear",
                          domain="xpuruntime")
        fused.constants = {w_name: w, bias: b}
        replace.update({id(node): None for node in group})
        replace[id(last)] = fused
        records.append({"fusion": "linear", "into": fused.name,
                        "nodes": [node.name for node in group]})
    return _rewrite(nodes, replace)


_NORMS = ("LayerNormalization", "RMSNormalization", "SimplifiedLayerNormalization")


def _add_norm(nodes, weights, opsets, records):
    consumers = _consumers(nodes)
    aliases = _weight_aliases(nodes, weights)  # such a value is the weight itself
    replace = {}
    for add in nodes:
        if add.op_type != "Add" or add.domain != "" or len(add.inputs) != 2 or \
                any(i in weights or not i for i in add.inputs):
            continue
        norm = next((n for n in consumers.get(add.outputs[0], [])
                     if n.op_type in _NORMS and n.domain == "" and n.inputs[0] == add.outputs[0]
                     and not any(n.outputs[1:]) and id(n) not in replace), None)
        if norm is None or norm.op_type == "LayerNormalization" and norm.opset < 17:
            continue
        rms = norm.op_type != "LayerNormalization"
        vectors = [aliases.get(i, i) for i in norm.inputs[1:3 if not rms else 2]]
        if not all(i in weights for i in vectors if i):
            continue  # scale and bias constant: available where the Add is
        attrs = {"axis": norm.attrs.get("axis", -1), "epsilon": norm.attrs.get("epsilon", 1e-5),
                 "rms": rms}
        inputs = list(add.inputs) + vectors
        fused = _new_node(add, "AddNorm", inputs, [norm.outputs[0], add.outputs[0]], attrs,
                          "add_norm", domain="xpuruntime")
        fused.constants = {i: weights[i] for i in vectors if i}
        replace[id(add)] = fused  # at the Add's place: its sum's other readers come later
        replace[id(norm)] = None
        records.append({"fusion": "add_norm", "into": fused.name,
                        "nodes": [add.name, norm.name]})
    return _rewrite(nodes, replace)


def _producers(nodes):
    return {out: node for node in nodes for out in node.outputs if out}


def _negative_infinity(weights, name):
    value = _scalar(weights, name)
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
        other = _other(node, score)
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
        constant = _scalar(weights, factor)
        if constant is not None and data not in weights:
            return node, data, constant
    for data, factor in (node.inputs, node.inputs[::-1]):
        made, source = producers.get(factor), producers.get(data)
        if made is not None and made.op_type in _FACTOR_OPS and \
                (source is None or source.op_type not in _FACTOR_OPS) and data not in weights:
            return node, data, factor  # checked to be one value at run time
    return None


def _attention(nodes, weights, opsets, records):
    consumers = _consumers(nodes)
    producers = _producers(nodes)
    replace = {}
    for softmax in nodes:
        if softmax.op_type != "Softmax" or softmax.domain != "" or softmax.opset < 13 or \
                softmax.attrs.get("axis", -1) != -1:
            continue
        pv = _only_consumer(consumers, softmax.outputs[0], "MatMul")
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
                c = _scalar(weights, _other(node, x)) if x is not None else None
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
        fused = _new_node(pv, "ScaledDotProductAttention", inputs, pv.outputs, attrs,
                          "attention", domain="xpuruntime")
        fused.constants = {i: weights[i] for i in inputs if i in weights}
        replace.update({id(n): None for n in group})
        replace[id(pv)] = fused
        records.append({"fusion": "attention", "into": fused.name,
                        "nodes": [n.name for n in reversed(group)]})
    return _rewrite(nodes, replace)


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


def _elementwise(nodes, weights, opsets, records, outputs):
    consumers = _consumers(nodes)
    producers = _producers(nodes)
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
    return _rewrite(nodes, replace)


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
    fused = _new_node(last, "ElementwiseChain", inputs, last.outputs,
                      {"operation": operation, "nodes": list(group), "scalars": scalars},
                      "elementwise", domain="xpuruntime")
    fused.constants = {i: weights[i] for i in inputs if i in weights}
    return fused


_PASSES = {"gelu": _gelu, "conv_batchnorm": _conv_batchnorm, "linear": _linear,
           "add_norm": _add_norm, "attention": _attention}


def _new_node(like, op_type, inputs, outputs, attrs, fusion, domain=""):
    from .plan import Node

    node = Node(like.name, op_type, domain, like.opset, attrs, inputs, outputs)
    node.spec = lookup(domain, op_type)
    node.fused = fusion
    return node


def _rewrite(nodes, replace):
    out = []
    for node in nodes:
        new = replace.get(id(node), node)
        if new is not None:
            out.append(new)
    return out

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
  kernel (no scores matrix in memory) in place of five kernels; on the CPU (float32,
  float64) the ``rows`` kernel, products and softmax in one pass per head (Note [CPU
  attention]). An export's scalings of Q and Kᵀ fold into one. A constant mask that is
  exactly the lower triangle becomes is_causal.
- ``elementwise``: a chain of elementwise nodes (Add, Sub, Mul, Div, Neg, Abs, Exp, Log,
  Sqrt, Reciprocal, Erf, Tanh, Sigmoid, Relu, LeakyRelu, Gelu) whose intermediate values have
  no other reader becomes one ``xpuruntime:ElementwiseChain`` node: one generated NVRTC kernel
  (an ``xrt.ElementwiseKernel``, broadcasting its inputs, computing 16-bit floats in float32)
  in place of one pass per node; scalar constants become literals. CUDA plans only; at run
  time other dtypes or devices (shape arithmetic on the host) take the nodes it replaced.
- ``rows``: a linear layer between a head merge and a head split in sequence-first order
  (PyTorch's MultiheadAttention export: Transpose [N, H, L, D] -> [L, N, H, D], Reshape to
  rows, MatMul or Gemm, Reshape, Transpose back) takes its rows batch-first instead, with
  the same values and without the two copies (Note [Rows in any order] in fusion_rows.py);
  it runs first, where shape inference knows the shapes.
- ``views``: a chain of Reshape, Transpose, Unsqueeze, Squeeze and Flatten nodes whose
  intermediate values have no other reader becomes one ``xpuruntime:ViewChain`` node: one
  strided view where the chain as a whole is one though a step alone is not (heads split and
  moved by PyTorch's attention export), so the copies its Reshapes made are gone (Note [View
  chains] in ops/shape.py); elsewhere it runs the chain's ops.
The ``rows`` pass and the last three live in fusion_rows.py, fusion_attention.py,
fusion_elementwise.py and fusion_views.py; rewrite.py holds what the passes share (who reads and makes a value, new
nodes, the rewrite).
"""

import math

import numpy as np

from .fusion_attention import attention
from .fusion_elementwise import elementwise
from .fusion_rows import rows
from .fusion_views import views
from .rewrite import (
    consumers_of,
    is_close,
    new_node,
    only_consumer,
    other_input,
    rewrite,
    scalar_of,
    weight_aliases,
)

FUSIONS = ("rows", "gelu", "conv_batchnorm", "linear", "add_norm", "attention", "elementwise",
           "views")


# Passes whose fused kernel exists on some devices only; elsewhere the pass would merge nodes
# into the same ops (Note [Fusions]). The attention node runs fused kernels on both devices
# (the CPU's: the small transformer, PyTorch's MultiheadAttention export, 0.688 -> 0.645 ms
# with the scalings folded, then 0.660 -> about 0.61 ms with the rows kernel).
_DEVICES = {"elementwise": ("cuda",)}


def apply(nodes, enabled, weights, opsets, device=None, outputs=(), shapes=None):
    """Runs the enabled passes on ``nodes`` (those for `device`'s type, when given); returns
    the new list and what each pass did. `outputs`: the graph's outputs (values a pass must
    keep); `shapes`: {value: static shape} where known (the ``rows`` pass needs them)."""
    unknown = set(enabled) - set(FUSIONS)
    if unknown:
        raise ValueError(f"unknown fusions {sorted(unknown)}; known: {', '.join(FUSIONS)}")
    records = []
    for name in FUSIONS:
        if name in enabled and (device is None or device.type in _DEVICES.get(name, (
                device.type,))):
            if name == "rows":
                nodes = rows(nodes, weights, opsets, records, set(outputs), shapes or {})
            else:
                nodes = _PASSES[name](nodes, weights, opsets, records, set(outputs))
    return nodes, records


def _gelu(nodes, weights, opsets, records, outputs):
    consumers = consumers_of(nodes)
    replace = {}
    for erf in nodes:
        if erf.op_type != "Erf" or erf.domain != "":
            continue
        scaled = next((n for n in nodes if erf.inputs[0] in n.outputs), None)
        if scaled is None or len(consumers.get(scaled.outputs[0], [])) != 1:
            continue
        if scaled.op_type == "Div":
            x, factor = scaled.inputs[0], scalar_of(weights, scaled.inputs[1])
            ok = is_close(factor, math.sqrt(2))
        elif scaled.op_type == "Mul":
            x = next((i for i in scaled.inputs if i not in weights), None)
            ok = is_close(scalar_of(weights, other_input(scaled, x)), 1 / math.sqrt(2))
        else:
            ok = False
        add = only_consumer(consumers, erf.outputs[0], "Add")
        if not ok or add is None or not is_close(scalar_of(weights, other_input(add, erf.outputs[0])),
                                                1.0):
            continue
        times_x = only_consumer(consumers, add.outputs[0], "Mul")
        if times_x is None or other_input(times_x, add.outputs[0]) != x:
            continue
        half = only_consumer(consumers, times_x.outputs[0], "Mul")
        if half is None or not is_close(scalar_of(weights, other_input(half, times_x.outputs[0])), 0.5):
            continue
        group = [scaled, erf, add, times_x, half]
        fused = new_node(half, "Gelu", [x], half.outputs, {}, "gelu")
        replace.update({id(n): None for n in group})
        replace[id(half)] = fused
        records.append({"fusion": "gelu", "into": fused.name,
                        "nodes": [n.name for n in group]})
    return rewrite(nodes, replace)


def _conv_batchnorm(nodes, weights, opsets, records, outputs):
    consumers = consumers_of(nodes)
    replace = {}
    for conv in nodes:
        if conv.op_type != "Conv" or conv.domain != "" or conv.inputs[1] not in weights:
            continue
        has_bias = len(conv.inputs) > 2 and conv.inputs[2]
        if has_bias and conv.inputs[2] not in weights:
            continue
        bn = only_consumer(consumers, conv.outputs[0], "BatchNormalization")
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
        fused = new_node(conv, "Conv", [conv.inputs[0], w_name, b_name], bn.outputs,
                          dict(conv.attrs), "conv_batchnorm")
        fused.constants = {w_name: weights[w_name], b_name: weights[b_name]}
        replace[id(conv)] = fused
        replace[id(bn)] = None
        records.append({"fusion": "conv_batchnorm", "into": fused.name,
                        "nodes": [conv.name, bn.name]})
    return rewrite(nodes, replace)


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


def _linear(nodes, weights, opsets, records, outputs):
    consumers = consumers_of(nodes)
    aliases = weight_aliases(nodes, weights)
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
            add = only_consumer(consumers, product.outputs[0], "Add")
            if add is None:
                continue
            bias = other_input(add, product.outputs[0])
            bias = aliases.get(bias, bias)
        b = weights.get(bias)
        if b is None or b.shape != (n,) or b.dtype != w.dtype:
            continue
        group, last, activation = [product] + ([add] if add is not product else []), add, None
        for op_type, name in (("Gelu", None), ("Relu", "relu")):
            after = only_consumer(consumers, add.outputs[0], op_type)
            if after is None:
                continue
            if op_type == "Gelu":
                approximate = after.attrs.get("approximate", "none")
                name = "gelu" if approximate == "none" else "gelu_tanh"
            group.append(after)
            last, activation = after, name
            break
        fused = new_node(last, "FusedLinear", [x, w_name, bias], last.outputs,
                          {"layout": layout, "activation": activation}, "linear",
                          domain="xpuruntime")
        fused.constants = {w_name: w, bias: b}
        replace.update({id(node): None for node in group})
        replace[id(last)] = fused
        records.append({"fusion": "linear", "into": fused.name,
                        "nodes": [node.name for node in group]})
    return rewrite(nodes, replace)


_NORMS = ("LayerNormalization", "RMSNormalization", "SimplifiedLayerNormalization")


def _add_norm(nodes, weights, opsets, records, outputs):
    consumers = consumers_of(nodes)
    aliases = weight_aliases(nodes, weights)  # such a value is the weight itself
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
        fused = new_node(add, "AddNorm", inputs, [norm.outputs[0], add.outputs[0]], attrs,
                          "add_norm", domain="xpuruntime")
        fused.constants = {i: weights[i] for i in vectors if i}
        replace[id(add)] = fused  # at the Add's place: its sum's other readers come later
        replace[id(norm)] = None
        records.append({"fusion": "add_norm", "into": fused.name,
                        "nodes": [add.name, norm.name]})
    return rewrite(nodes, replace)



# Each pass: (nodes, weights, opsets, records, the graph's outputs) -> the new node list.
_PASSES = {"gelu": _gelu, "conv_batchnorm": _conv_batchnorm, "linear": _linear,
           "add_norm": _add_norm, "attention": attention, "elementwise": elementwise,
           "views": views}

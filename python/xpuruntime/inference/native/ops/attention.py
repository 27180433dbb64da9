"""python/xpuruntime/inference/native/ops/attention.py: the attention operators, opset 23's
``Attention`` and ONNX Runtime's ``com.microsoft.MultiHeadAttention``, on the fused kernel
where it computes the same (``_fused``: 16-bit floats on CUDA, no mask but a top-left causal
one) and else on the unfused path (two matmuls around a softmax whose fully masked rows give
zeros, as ONNX wants), and the ``xpuruntime:ScaledDotProductAttention`` node of the
``attention`` fusion on ``xrt.nn.scaled_dot_product_attention``'s kernels (cuDNN's fused
kernel in 16-bit floats on CUDA, the ``rows`` kernel for float32 and float64 on the CPU).

The two ONNX operators share the helpers below; what differs is layout (3-D inputs are
split into heads here), masks (ONNX: boolean or additive, -inf; ORT: a key padding mask
adding ``mask_filter_value``) and caches (past keys and values concatenated before the
product)."""

import math

import xpuruntime as xrt
from xpuruntime import _attention as attention_kernels

from . import op

_HALF = (xrt.float16, xrt.bfloat16)


def split_heads(x, num_heads):
    """(B, S, N*H) -> (B, N, S, H)."""
    b, s, hidden = x.shape
    return xrt.permute_dims(xrt.reshape(x, (b, s, num_heads, hidden // num_heads)),
                            (0, 2, 1, 3))


def merge_heads(x):
    """(B, N, S, H) -> (B, S, N*H)."""
    b, n, s, h = x.shape
    return xrt.reshape(xrt.permute_dims(x, (0, 2, 1, 3)), (b, s, n * h))


def causal_bias(q_len, kv_len, offset, dtype, device, masked=-math.inf):
    """0 where query i may see key j (j <= i + offset), ``masked`` elsewhere; (q, kv)."""
    rows = xrt.reshape(xrt.arange(q_len, device=device), (q_len, 1))
    cols = xrt.reshape(xrt.arange(kv_len, device=device), (1, kv_len))
    allowed = xrt.less_equal(cols, xrt.add(rows, offset))
    return xrt.where(allowed, xrt.zeros((), dtype=dtype, device=device),
                     xrt.full((), masked, dtype=dtype, device=device))


def masked_softmax(scores):
    """Softmax over the last axis whose fully masked rows (all -inf) give zeros, not NaN."""
    top = xrt.max(scores, axis=-1, keepdims=True)
    top = xrt.where(xrt.isinf(top), xrt.zeros_like(top), top)
    e = xrt.exp(xrt.subtract(scores, top))
    total = xrt.sum(e, axis=-1, keepdims=True)
    return xrt.divide(e, xrt.where(xrt.equal(total, 0), xrt.ones_like(total), total))


def repeat_kv(x, num_heads):
    """Grouped-query attention: each key/value head serves num_heads / kv_heads query heads."""
    kv_heads = x.shape[1]
    if kv_heads == num_heads:
        return x
    return xrt.repeat(x, num_heads // kv_heads, axis=1)


def _fused(q, k, v, causal, scale):
    """softmax(q·kᵀ·scale)·v on the fused kernel (``xrt.nn.scaled_dot_product_attention``:
    cuDNN) where it computes what the unfused path would: 16-bit floats on CUDA, heads shared
    or repeated, no mask (a fully masked row is zeros in ONNX, NaN there) and a causal mask
    only when it is top-left aligned (no past keys). None where it does not apply."""
    if q.dtype not in _HALF or q.device.type != "cuda" or q.ndim != 4:
        return None
    k, v = repeat_kv(k, q.shape[1]), repeat_kv(v, q.shape[1])
    if k.shape[:2] != q.shape[:2] or v.shape[:2] != q.shape[:2]:
        return None
    return xrt.nn.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), scale=scale)


@op("Attention", since=23)
def _attention(node):
    q_heads, kv_heads = node.attr("q_num_heads", None), node.attr("kv_num_heads", None)
    scale_attr, is_causal = node.attr("scale", None), node.attr("is_causal", 0)
    softcap = node.attr("softcap", 0.0)
    mode = node.attr("qk_matmul_output_mode", 0)
    if len(node.inputs) > 6 and node.inputs[6]:
        raise node.unsupported("the nonpad_kv_seqlen input")
    for name in ("left_window_size", "right_window_size"):
        if node.attr(name, -1) != -1:
            raise node.unsupported(f"{name} (sliding windows)")
    # The fused kernel makes no scores: not when the qk output is asked for or capped.
    fusable = softcap == 0 and not (len(node.outputs) > 3 and node.outputs[3])

    def run(q, k, v, mask=None, past_key=None, past_value=None, *unused):
        three_d = q.ndim == 3
        if three_d:
            q, k, v = split_heads(q, q_heads), split_heads(k, kv_heads), split_heads(v, kv_heads)
        if past_key is not None:
            k = xrt.concat([past_key, k], axis=2)
            v = xrt.concat([past_value, v], axis=2)
        present_key, present_value = k, v
        q_len, kv_len = q.shape[2], k.shape[2]
        scale = scale_attr if scale_attr is not None else 1 / math.sqrt(q.shape[3])
        if fusable and mask is None and not (is_causal and past_key is not None):
            y = _fused(q, k, v, is_causal, scale)
            if y is not None:
                return (merge_heads(y) if three_d else y, present_key, present_value, None)
        qk = xrt.multiply(xrt.matmul(q, repeat_kv(k, q.shape[1]).mT), scale)
        if softcap > 0:
            qk = xrt.multiply(xrt.tanh(xrt.divide(qk, softcap)), softcap)
        bias = None
        if mask is not None:
            if mask.dtype == xrt.bool:
                mask = xrt.where(mask, xrt.zeros((), dtype=q.dtype, device=q.device),
                                 xrt.full((), -math.inf, dtype=q.dtype, device=q.device))
            if mask.shape[-1] < kv_len:  # a short mask leaves the rest masked
                pad = xrt.full(mask.shape[:-1] + (kv_len - mask.shape[-1],), -math.inf,
                               dtype=mask.dtype, device=mask.device)
                mask = xrt.concat([mask, pad], axis=-1)
            bias = mask
        if is_causal:
            offset = past_key.shape[2] if past_key is not None else 0
            causal = causal_bias(q_len, kv_len, offset, q.dtype, q.device)
            bias = causal if bias is None else xrt.add(bias, causal)
        scores = qk if bias is None else xrt.add(qk, bias)
        probs = masked_softmax(scores)
        y = xrt.matmul(probs, repeat_kv(v, q.shape[1]))
        if three_d:
            y = merge_heads(y)
        qk_out = (qk, qk, scores, probs)[mode]
        return (y, present_key, present_value, qk_out)
    return run


@op("MultiHeadAttention", domain="com.microsoft")
def _multi_head_attention(node):
    num_heads = node.attr("num_heads")
    scale_attr = node.attr("scale", 0.0)
    filter_value = node.attr("mask_filter_value", -10000.0)
    causal = node.attr("unidirectional", 0)
    if len(node.inputs) > 8 and any(node.inputs[8:]):
        raise node.unsupported("past_sequence_length and cache_indirection (beam search)")

    def run(query, key, value, bias=None, key_padding_mask=None, attention_bias=None,
            past_key=None, past_value=None, *unused):
        if key is None or value is None or key.ndim not in (3, 4):
            raise xrt.UnsupportedOperationError(
                f"node {node.name!r} (MultiHeadAttention): only separate key and value "
                "inputs are implemented (not packed QKV or packed KV)")
        hidden = query.shape[2]
        if bias is not None:
            query = xrt.add(query, bias[:hidden])
            if key.ndim == 3:
                key = xrt.add(key, bias[hidden:2 * hidden])
                value = xrt.add(value, bias[2 * hidden:])
        q = split_heads(query, num_heads)
        k = split_heads(key, num_heads) if key.ndim == 3 else key
        v = split_heads(value, num_heads) if value.ndim == 3 else value
        if past_key is not None:
            k = xrt.concat([past_key, k], axis=2)
            v = xrt.concat([past_value, v], axis=2)
        scale = scale_attr or 1 / math.sqrt(q.shape[3])
        # Its causal mask is bottom-right aligned: the fused one only where that is top-left.
        if key_padding_mask is None and attention_bias is None and \
                not (causal and k.shape[2] != q.shape[2]):
            y = _fused(q, k, v, causal, scale)
            if y is not None:
                return (merge_heads(y), k, v)
        scores = xrt.multiply(xrt.matmul(q, k.mT), scale)
        if attention_bias is not None:
            scores = xrt.add(scores, attention_bias)
        if key_padding_mask is not None:
            if key_padding_mask.ndim != 2:
                raise xrt.UnsupportedOperationError(
                    f"node {node.name!r} (MultiHeadAttention): only a (batch, kv length) "
                    "key_padding_mask is implemented")
            keep = xrt.reshape(xrt.not_equal(key_padding_mask, 0),
                               (key_padding_mask.shape[0], 1, 1, key_padding_mask.shape[1]))
            scores = xrt.add(scores, xrt.where(
                keep, xrt.zeros((), dtype=q.dtype, device=q.device),
                xrt.full((), filter_value, dtype=q.dtype, device=q.device)))
        if causal:
            offset = k.shape[2] - q.shape[2]
            scores = xrt.add(scores, causal_bias(q.shape[2], k.shape[2], offset, q.dtype,
                                                 q.device, filter_value))
        y = merge_heads(xrt.matmul(masked_softmax(scores), v))
        return (y, k, v)
    return run


@op("ScaledDotProductAttention", domain="xpuruntime")
def _fused_attention(node):
    """Made by the ``attention`` fusion (native/fusion_attention.py): softmax(Q·Kᵀ · scale + mask)·V as
    one ``xrt.nn.scaled_dot_product_attention``, from the inputs Q, Kᵀ (the exported graph's
    right operand), V and an optional mask ("keep", "drop" or "add"; "causal" has none).
    Operands whose leading sizes differ (the MatMuls broadcast them) take the ops it
    replaced."""
    scale, kind = node.attr("scale"), node.attr("mask")
    factors = node.attr("factors", [])
    node.computes_in_float32 = True  # the kernels accumulate 16-bit inputs in float32
    # A factor computed on the host (from a shape) is read there, as a number.
    first_factor = 3 + (kind in ("keep", "drop", "add"))
    node.any_place = frozenset(range(first_factor, first_factor + len(factors)))
    kept = {}  # a constant "drop" mask's complement, made once

    def keep_mask(mask):
        if kind != "drop":
            return mask
        if kept.get("of") is not mask:
            kept.update(of=mask, keep=xrt.logical_not(mask))
        return kept["keep"]

    def run(q, kt, v, *rest):
        rest = list(rest)
        mask = rest.pop(0) if kind in ("keep", "drop", "add") else None
        if mask is not None and kind != "add":
            mask = keep_mask(mask)
        factor = scale
        for role, value in zip(factors, rest):
            if value.size == 1 and value.device.type == "cpu":
                factor *= float(xrt.reshape(value, ()))
            elif role == "q_scale":  # not one host value: multiply as the graph did
                q = xrt.multiply(q, value)
            else:
                kt = xrt.multiply(kt, value)
        k = kt.mT
        # The fused kernels are cuDNN's for 16-bit floats on CUDA and the CPU's "rows" for
        # float32 and float64 (Note [CPU attention]); CUDA's other dtypes and broadcasting
        # operands take the ops the fusion replaced, without the op's dispatch.
        # The plan typed and placed the operands: the op without its argument checks.
        if (q.dtype in _HALF or q.device.type == "cpu") and q.ndim == k.ndim == v.ndim and \
                q.shape[:-2] == k.shape[:-2] == v.shape[:-2]:
            if mask is not None:
                mask = attention_kernels.additive_mask(mask, q, k)
            return (attention_kernels.attend(q, k, v, mask, kind == "causal", float(factor)),)
        scores = xrt.multiply(xrt.matmul(q, kt), factor)
        if kind == "add":
            scores = xrt.add(scores, mask)
        elif mask is not None or kind == "causal":
            if kind == "causal":
                mask = attention_kernels.causal_keep(*scores.shape[-2:], q.device)
            scores = xrt.where(mask, scores,
                               attention_kernels.masked_fill_value(scores.dtype, q.device))
        return (xrt.matmul(xrt.nn.softmax(scores, axis=-1), v),)
    return run

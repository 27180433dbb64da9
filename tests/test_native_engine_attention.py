"""tests/test_native_engine_attention.py: attention on the native engine: the pattern
exporters write (MatMul, scale, causal mask, Softmax, MatMul), opset 23's Attention (3-D and
4-D, causal, boolean and additive masks, grouped-query heads, past keys and values) against
the ONNX reference, and com.microsoft.MultiHeadAttention against ONNX Runtime."""

import numpy as np
import pytest
from native_engine_helpers import (
    TensorProto,
    check,
    check_with_onnxruntime,
    helper,
    make_model,
    rng,
    with_output_shapes,
)


def _x(shape, seed=0):
    return rng(seed).standard_normal(shape).astype(np.float32)


def test_the_unfused_attention_pattern(device):
    q, k, v = _x((1, 2, 5, 4), 1), _x((1, 2, 5, 4), 2), _x((1, 2, 5, 4), 3)
    mask = np.triu(np.full((5, 5), -np.inf, np.float32), 1)
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Div", ["s", "scale"], ["ss"]),
             helper.make_node("Add", ["ss", "mask"], ["sm"]),
             helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    model = make_model(nodes, {"q": q, "k": k, "v": v}, {"y": TensorProto.FLOAT},
                       {"scale": np.array(2.0, np.float32), "mask": mask})
    check(model, {"q": q, "k": k, "v": v}, device, atol=1e-6)


def _attention(feeds, optional=(), n_outputs=1, **attrs):
    names = ["q", "k", "v"] + list(optional)
    outputs = ["y", "present_key", "present_value", "qk"][:n_outputs]
    node = helper.make_node("Attention", names, outputs, **attrs)
    return make_model([node], feeds, {o: TensorProto.FLOAT for o in outputs}, opset=23)


@pytest.mark.parametrize("is_causal", (0, 1))
def test_attention_4d(device, is_causal):
    feeds = {"q": _x((2, 3, 4, 8), 1), "k": _x((2, 3, 6, 8), 2), "v": _x((2, 3, 6, 5), 3)}
    check(_attention(feeds, is_causal=is_causal), feeds, device, atol=1e-6)


def test_attention_3d_with_heads_and_scale(device):
    feeds = {"q": _x((2, 4, 12), 1), "k": _x((2, 6, 12), 2), "v": _x((2, 6, 12), 3)}
    check(_attention(feeds, q_num_heads=3, kv_num_heads=3, scale=0.3), feeds, device,
          atol=1e-6)


def test_attention_grouped_query_heads(device):
    feeds = {"q": _x((1, 4, 3, 8), 1), "k": _x((1, 2, 3, 8), 2), "v": _x((1, 2, 3, 8), 3)}
    check(_attention(feeds, is_causal=1), feeds, device, atol=1e-6)


@pytest.mark.parametrize("kind", ("bool", "float", "short"))
def test_attention_masks(device, kind):
    feeds = {"q": _x((1, 2, 4, 8), 1), "k": _x((1, 2, 6, 8), 2), "v": _x((1, 2, 6, 8), 3)}
    if kind == "bool":
        feeds["mask"] = rng(4).random((4, 6)) > 0.3
        feeds["mask"][:, 0] = True  # no row fully masked
    elif kind == "float":
        feeds["mask"] = _x((1, 2, 4, 6), 4)
    else:  # shorter than the keys: the rest is masked
        feeds["mask"] = _x((4, 4), 4)
    check(_attention(feeds, ["mask"]), feeds, device, atol=1e-6)


def test_attention_past_keys_and_values(device):
    feeds = {"q": _x((1, 2, 3, 4), 1), "k": _x((1, 2, 3, 4), 2), "v": _x((1, 2, 3, 4), 3),
             "past_key": _x((1, 2, 5, 4), 4), "past_value": _x((1, 2, 5, 4), 5)}
    model = _attention(feeds, ["", "past_key", "past_value"], n_outputs=3, is_causal=1)
    check(model, feeds, device, atol=1e-6)


@pytest.mark.parametrize("mode", (0, 1, 2, 3))
def test_attention_qk_output_modes(device, mode):
    feeds = {"q": _x((1, 2, 3, 4), 1), "k": _x((1, 2, 5, 4), 2), "v": _x((1, 2, 5, 4), 3),
             "mask": _x((3, 5), 4)}
    model = _attention(feeds, ["mask", "", ""], n_outputs=4, qk_matmul_output_mode=mode,
                       softcap=2.0 if mode else 0.0)
    check(model, feeds, device, atol=1e-6)


def _mha(feeds, inputs, shapes, **attrs):
    node = helper.make_node("MultiHeadAttention", inputs, ["y"], domain="com.microsoft",
                            **attrs)
    model = make_model([node], feeds, {"y": TensorProto.FLOAT}, opset=17,
                       extra_opsets={"com.microsoft": 1})
    return with_output_shapes(model, [shapes])


@pytest.mark.parametrize("with_bias", (False, True))
@pytest.mark.parametrize("unidirectional", (0, 1))
def test_multi_head_attention_matches_onnxruntime(device, with_bias, unidirectional):
    feeds = {"q": _x((2, 5, 8), 1), "k": _x((2, 5, 8), 2), "v": _x((2, 5, 8), 3)}
    inputs = ["q", "k", "v"]
    if with_bias:
        feeds["bias"] = _x((24,), 4)
        inputs.append("bias")
    model = _mha(feeds, inputs, (2, 5, 8), num_heads=2, unidirectional=unidirectional)
    check_with_onnxruntime(model, feeds, device, atol=1e-5)


def test_multi_head_attention_masks_and_bias(device):
    feeds = {"q": _x((2, 3, 8), 1), "k": _x((2, 6, 8), 2), "v": _x((2, 6, 8), 3),
             "mask": np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], np.int32),
             "attn_bias": _x((1, 2, 3, 6), 4)}
    model = _mha(feeds, ["q", "k", "v", "", "mask", "attn_bias"], (2, 3, 8), num_heads=2,
                 scale=0.25)
    check_with_onnxruntime(model, feeds, device, atol=1e-5)


# In 16-bit floats on CUDA the two operators run on the fused kernel where it computes what
# the unfused path would (ops/attention.py's _fused): no mask, a top-left causal one.
FP16_CASES = {
    "attention 4-D": (lambda f: _attention(f), (1, 2, 64, 64), (1, 2, 64, 64)),
    "attention 4-D causal": (lambda f: _attention(f, is_causal=1), (2, 2, 48, 64),
                             (2, 2, 48, 64)),
    "attention 3-D, grouped heads": (lambda f: _attention(f, q_num_heads=4, kv_num_heads=2),
                                     (1, 40, 256), (1, 40, 128)),
    "multi-head attention": (lambda f: _mha(f, ["q", "k", "v"], (2, 40, 256), num_heads=4),
                             (2, 40, 256), (2, 40, 256)),
    "multi-head attention, unidirectional": (
        lambda f: _mha(f, ["q", "k", "v"], (1, 32, 128), num_heads=2, unidirectional=1),
        (1, 32, 128), (1, 32, 128)),
}


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(FP16_CASES))
def test_fp16_attention_operators_take_the_fused_kernel(name):
    import xpuruntime as xrt
    from native_engine_helpers import native_engine, run_native, run_reference
    from xpuruntime import _attention
    from xpuruntime.policies import ExecutionPolicy

    make, q_shape, kv_shape = FP16_CASES[name]
    feeds = {"q": _x(q_shape, 1), "k": _x(kv_shape, 2), "v": _x(kv_shape, 3)}
    model = make(feeds)
    if "multi-head" in name:  # ORT's operator: the CPU's unfused path (checked against ORT)
        want = run_native(model, feeds, "cpu")[0]
    else:
        want = run_reference(with_output_shapes(model, [np.empty(q_shape)]), feeds)[0]
    engine = native_engine(model, "cuda", policy=ExecutionPolicy("fp16"))
    got = run_native(model, feeds, "cuda", engine=engine)[0]
    np.testing.assert_allclose(got, want, atol=2e-2, rtol=2e-2)
    kernels = [k["kernel"] for n in engine.explain()["nodes"] for k in n["kernels"]
               if k["op"] == "attention"]
    assert kernels == (["cudnn"] if _attention.cudnn_available() else ["math"])
    assert xrt.cuda.is_available()

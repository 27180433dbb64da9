"""tests/test_native_engine_nn.py: the native engine's neural-network operators against ONNX's
reference implementation: MatMul, Gemm, softmaxes, normalisations, reductions (axes as an
attribute and as an input), Conv as im2col + matmul (groups, pads, strides, dilations,
auto_pad) and pooling."""

import numpy as np
import pytest
import xpuruntime as xrt
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes
from native_engine_helpers import check, check_with_onnxruntime, one_node, rng, with_output_shapes
from xpuruntime.inference.native import Plan

I64 = np.int64


def _x(shape, seed=0, dtype=np.float32):
    return rng(seed).standard_normal(shape).astype(dtype)


@given(batch=array_shapes(min_dims=0, max_dims=2, max_side=3),
       m=st.integers(1, 5), k=st.integers(1, 5), n=st.integers(1, 5),
       dtype=st.sampled_from((np.float32, np.float64)))
def test_matmul_broadcasts_batches(device, batch, m, k, n, dtype):
    a, b = _x(batch + (m, k), 1, dtype), _x((k, n), 2, dtype)
    check(one_node("MatMul", {"a": a, "b": b}, 1 if dtype == np.float32 else 11),
          {"a": a, "b": b}, device, rtol=1e-5, atol=1e-5)


def test_matmul_of_vectors(device):
    a, b = _x((4,)), _x((4, 3))
    check(one_node("MatMul", {"a": a, "b": b}), {"a": a, "b": b}, device, atol=1e-5)


@pytest.mark.parametrize("trans_a,trans_b", ((0, 0), (1, 0), (0, 1), (1, 1)))
@pytest.mark.parametrize("c_shape", (None, (5,), (3, 1), ()))
def test_gemm(device, trans_a, trans_b, c_shape):
    a = _x((4, 3) if trans_a else (3, 4), 1)
    b = _x((5, 4) if trans_b else (4, 5), 2)
    init = {} if c_shape is None else {"c": _x(c_shape, 3)}
    check(one_node("Gemm", {"a": a, "b": b}, initializers=init, alpha=0.5, beta=2.0,
                   transA=trans_a, transB=trans_b), {"a": a, "b": b}, device, atol=1e-5)


@pytest.mark.parametrize("op", ("Softmax", "LogSoftmax"))
@pytest.mark.parametrize("opset,axis", ((11, 1), (11, -1), (11, 0), (13, 1), (13, -1)))
def test_softmax_opsets(device, op, opset, axis):
    # Before opset 13 the input is coerced to 2-D at axis; since, the axis is the axis. The
    # reference implementation (onnx 1.23) applies opset 13's rule to every opset, so ONNX
    # Runtime, which follows the spec, judges the older opsets.
    x = _x((2, 3, 4)) * 5
    model = one_node(op, {"x": x}, opset=opset, axis=axis)
    if opset < 13:
        check_with_onnxruntime(with_output_shapes(model, [x]), {"x": x}, device)
    else:
        check(model, {"x": x}, device)


@pytest.mark.parametrize("n_outputs", (1, 3))  # Y alone: the fused kernel; with statistics
@pytest.mark.parametrize("axis", (-1, -2, 1))
def test_layer_normalization(device, axis, n_outputs):
    x = _x((2, 3, 8))
    scale = _x(x.shape[axis:], 1)
    bias = _x(x.shape[axis:], 2)
    model = one_node("LayerNormalization", {"x": x}, initializers={"s": scale, "b": bias},
                     opset=17, n_outputs=n_outputs, axis=axis, epsilon=1e-3)
    check(model, {"x": x}, device, atol=1e-5)


def test_layer_normalization_with_a_broadcast_scale(device):
    # A scale that broadcasts to the normalised shape (3, 8) without having it: composed.
    x = _x((2, 3, 8))
    model = one_node("LayerNormalization", {"x": x}, initializers={"s": _x((8,), 1)},
                     opset=17, axis=-2, epsilon=1e-3)
    check(model, {"x": x}, device, atol=1e-5)


@pytest.mark.parametrize("axis", (-1, 1))
def test_rms_normalization_opset_23(device, axis):
    x = _x((2, 3, 8))
    model = one_node("RMSNormalization", {"x": x}, initializers={"s": _x(x.shape[axis:], 1)},
                     opset=23, axis=axis, epsilon=1e-4)
    check(model, {"x": x}, device, atol=1e-5)


def test_batch_normalization_inference(device):
    x = _x((2, 3, 4, 5))
    params = {"s": _x((3,), 1), "b": _x((3,), 2), "m": _x((3,), 3),
              "v": np.abs(_x((3,), 4)) + 0.5}
    check(one_node("BatchNormalization", {"x": x}, initializers=params, opset=15,
                   epsilon=1e-3), {"x": x}, device, atol=1e-5)


@pytest.mark.parametrize("op", ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                                "ReduceProd"))
@pytest.mark.parametrize("opset", (13, 18))
@pytest.mark.parametrize("axes,keepdims", (([1], 1), ([0, -1], 0), (None, 1), ([], 0)))
def test_reductions_axes_attribute_or_input(device, op, opset, axes, keepdims):
    x = _x((2, 3, 4))
    as_input = opset >= (13 if op == "ReduceSum" else 18)
    if as_input:
        init = {} if axes is None else {"a": np.array(axes, I64)}
        model = one_node(op, {"x": x}, initializers=init, opset=opset, keepdims=keepdims)
    else:
        attrs = {} if not axes else {"axes": axes}
        model = one_node(op, {"x": x}, opset=opset, keepdims=keepdims, **attrs)
    check(model, {"x": x}, device, atol=1e-5)


def test_reduce_noop_with_empty_axes(device):
    x = _x((2, 3))
    check(one_node("ReduceSum", {"x": x}, opset=13, noop_with_empty_axes=1), {"x": x}, device)


conv_geometry = st.fixed_dictionaries({
    "kernel": st.tuples(st.integers(1, 3), st.integers(1, 3)),
    "strides": st.tuples(st.integers(1, 2), st.integers(1, 2)),
    "dilations": st.tuples(st.integers(1, 2), st.integers(1, 2)),
    "pads": st.tuples(*[st.integers(0, 2)] * 4),
    "group": st.sampled_from((1, 2)),
    "bias": st.booleans(),
})


@given(g=conv_geometry)
def test_conv_2d(device, g):
    c, m = 4, 6
    x = _x((2, c, 7, 6))
    w = _x((m, c // g["group"]) + g["kernel"], 1)
    init = {"w": w, "b": _x((m,), 2)} if g["bias"] else {"w": w}
    pads = [min(p, k - 1) for p, k in zip(g["pads"], g["kernel"] * 2)]
    model = one_node("Conv", {"x": x}, initializers=init, strides=list(g["strides"]),
                     dilations=list(g["dilations"]), pads=pads, group=g["group"])
    check(model, {"x": x}, device, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("auto_pad", ("SAME_UPPER", "SAME_LOWER", "VALID"))
def test_conv_auto_pad(device, auto_pad):
    x, w = _x((1, 2, 6, 5)), _x((3, 2, 3, 2), 1)
    check(one_node("Conv", {"x": x}, initializers={"w": w}, auto_pad=auto_pad, strides=[2, 1]),
          {"x": x}, device, atol=1e-5)


@pytest.mark.parametrize("op", ("MaxPool", "AveragePool"))
@pytest.mark.parametrize("kernel,strides,pads,ceil_mode", [
    ([2, 2], [2, 2], [0, 0, 0, 0], 0), ([3, 3], [1, 1], [1, 1, 1, 1], 0),
    ([3, 2], [2, 1], [1, 0, 1, 0], 0), ([2, 2], [2, 2], [0, 0, 0, 0], 1)])
def test_pooling(device, op, kernel, strides, pads, ceil_mode):
    x = _x((2, 3, 7, 6))
    check(one_node(op, {"x": x}, kernel_shape=kernel, strides=strides, pads=pads,
                   ceil_mode=ceil_mode), {"x": x}, device, atol=1e-6)


def test_average_pool_counting_the_padding(device):
    x = _x((1, 2, 5, 5))
    check(one_node("AveragePool", {"x": x}, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                   count_include_pad=1), {"x": x}, device, atol=1e-6)


def test_max_pool_dilated_same_upper(device):
    x = _x((1, 1, 8, 8))
    check(one_node("MaxPool", {"x": x}, kernel_shape=[2, 2], dilations=[2, 2],
                   auto_pad="SAME_UPPER"), {"x": x}, device)


@pytest.mark.parametrize("op", ("GlobalAveragePool", "GlobalMaxPool"))
def test_global_pooling(device, op):
    x = _x((2, 3, 4, 5))
    check(one_node(op, {"x": x}), {"x": x}, device, atol=1e-6)


def test_simplified_layer_normalization_matches_onnxruntime():
    # ONNX Runtime's RMS norm in the default domain, where the ONNX checker (and so Model)
    # does not know it: the plan runs it directly, ONNX Runtime judges.
    ort = pytest.importorskip("onnxruntime")
    x, scale = _x((2, 3, 8)), _x((8,), 1)
    model = with_output_shapes(one_node("SimplifiedLayerNormalization", {"x": x},
                                        initializers={"s": scale}, opset=17, axis=-1,
                                        epsilon=1e-5), [x])
    expected = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    plan = Plan(model, xrt.Device("cpu"))
    got = plan.run({"x": xrt.asarray(x)})["y0"]
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)

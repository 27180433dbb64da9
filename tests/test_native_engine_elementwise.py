"""tests/test_native_engine_elementwise.py: the native engine's elementwise operators against
ONNX's reference implementation: every unary and binary op, broadcasting drawn by hypothesis,
integer division and fmod, Pow's mixed types, activations, Erf and Gelu, Cast, Where, Clip."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes
from native_engine_helpers import TensorProto, check, one_node, rng

FLOATS = (np.float32, np.float64)
UNARY = ("Abs", "Neg", "Sqrt", "Reciprocal", "Exp", "Log", "Tanh", "Floor", "Ceil", "Sin",
         "Cos", "Sign", "Round", "Relu", "Sigmoid", "Erf")
POSITIVE = {"Sqrt", "Log"}


def _values(shape, dtype, op=None, seed=0):
    x = rng(seed).standard_normal(shape) * 3
    if op in POSITIVE:
        x = np.abs(x) + 0.1
    if op == "Reciprocal":
        x = np.where(np.abs(x) < 0.1, 1.0, x)
    return x.astype(dtype)


@pytest.mark.parametrize("op", UNARY)
@given(shape=array_shapes(max_dims=4, max_side=5), dtype=st.sampled_from(FLOATS))
def test_unary_matches_reference(device, op, shape, dtype):
    x = _values(shape, dtype, op)
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    check(one_node(op, {"x": x}, elem, opset=13), {"x": x}, device, rtol=2e-6, atol=2e-7)


@pytest.mark.parametrize("op", ("Add", "Sub", "Mul", "Div", "Max", "Min", "Sum"))
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4),
       dtype=st.sampled_from(FLOATS + (np.int32, np.int64)))
def test_binary_broadcasts_like_onnx(device, op, shapes, dtype):
    a = _values(shapes.input_shapes[0], np.float64, seed=1) * 4
    b = _values(shapes.input_shapes[1], np.float64, seed=2) * 4
    if op == "Div":
        b = np.where(np.abs(b) < 1, 3.0, b)
    a, b = a.astype(dtype), b.astype(dtype)
    elem = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
            np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}[dtype]
    check(one_node(op, {"a": a, "b": b}, elem, opset=13), {"a": a, "b": b}, device)


def test_integer_div_truncates_toward_zero(device):
    a = np.array([7, -7, 7, -7, 6, -6], dtype=np.int64)
    b = np.array([2, 2, -2, -2, 3, 3], dtype=np.int64)
    got = check(one_node("Div", {"a": a, "b": b}, TensorProto.INT64), {"a": a, "b": b}, device)
    assert got[0].tolist() == [3, -3, -3, 3, 2, -2]


@pytest.mark.parametrize("fmod", (0, 1))
@pytest.mark.parametrize("dtype", (np.int32, np.float32))
def test_mod_follows_divisor_or_dividend(device, fmod, dtype):
    a = np.array([5, -5, 5, -5, 6, 0], dtype=dtype)
    b = np.array([3, 3, -3, -3, 3, 2], dtype=dtype)
    if dtype == np.int32 and fmod == 0:
        pass
    elem = TensorProto.INT32 if dtype == np.int32 else TensorProto.FLOAT
    if dtype == np.float32 and fmod == 0:
        pytest.skip("ONNX requires fmod=1 for floating-point Mod")
    check(one_node("Mod", {"a": a, "b": b}, elem, fmod=fmod), {"a": a, "b": b}, device)


@pytest.mark.parametrize("exponent", (np.array([2.0, 0.5, 3.0], np.float32),
                                      np.array([2, 1, 3], np.int64)))
def test_pow_keeps_the_base_type(device, exponent):
    base = np.array([1.5, 4.0, 2.0], np.float32)
    check(one_node("Pow", {"x": base, "e": exponent}), {"x": base, "e": exponent}, device)


@pytest.mark.parametrize("alpha", (0.01, 0.2))
def test_leaky_relu(device, alpha):
    x = _values((3, 4), np.float32)
    check(one_node("LeakyRelu", {"x": x}, alpha=alpha), {"x": x}, device)


@pytest.mark.parametrize("approximate", ("none", "tanh"))
def test_gelu_opset_20(device, approximate):
    x = _values((4, 7), np.float32)
    check(one_node("Gelu", {"x": x}, opset=20, approximate=approximate), {"x": x}, device,
          atol=2e-7)


def test_erf_over_its_range(device):
    x = np.linspace(-6, 6, 2001).astype(np.float64)
    check(one_node("Erf", {"x": x}, TensorProto.DOUBLE), {"x": x}, device, rtol=0, atol=2e-7)


@pytest.mark.parametrize("to,np_type", ((TensorProto.INT64, np.int64),
                                        (TensorProto.FLOAT16, np.float16),
                                        (TensorProto.DOUBLE, np.float64),
                                        (TensorProto.BOOL, np.bool_)))
def test_cast(device, to, np_type):
    x = np.array([[1.7, -2.2, 0.0], [3.5, -0.4, 9.0]], np.float32)
    check(one_node("Cast", {"x": x}, to, to=to), {"x": x}, device)


def test_cast_like(device):
    x = np.array([1.5, 2.5], np.float32)
    like = np.array([0], np.int32)
    check(one_node("CastLike", {"x": x, "like": like}, TensorProto.INT32),
          {"x": x, "like": like}, device)


@given(shapes=mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=4))
def test_where_broadcasts_all_three(device, shapes):
    c = rng(3).random(shapes.input_shapes[0]) > 0.5
    a = _values(shapes.input_shapes[1], np.float32, seed=4)
    b = _values(shapes.input_shapes[2], np.float32, seed=5)
    check(one_node("Where", {"c": c, "a": a, "b": b}), {"c": c, "a": a, "b": b}, device)


@pytest.mark.parametrize("op", ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"))
def test_comparisons(device, op):
    a = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    b = np.array([2, 2, 7], np.float32)
    check(one_node(op, {"a": a, "b": b}, TensorProto.BOOL), {"a": a, "b": b}, device)


@pytest.mark.parametrize("op", ("And", "Or", "Xor"))
def test_logic(device, op):
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    check(one_node(op, {"a": a, "b": b}, TensorProto.BOOL), {"a": a, "b": b}, device)


def test_not(device):
    a = np.array([[True, False]])
    check(one_node("Not", {"a": a}, TensorProto.BOOL), {"a": a}, device)


def test_clip_inputs_and_attributes(device):
    x = _values((3, 5), np.float32)
    lo, hi = np.array(-1.0, np.float32), np.array(0.5, np.float32)
    check(one_node("Clip", {"x": x}, initializers={"lo": lo, "hi": hi}, opset=13), {"x": x},
          device)
    check(one_node("Clip", {"x": x}, opset=6, min=-0.5, max=2.0), {"x": x}, device)


def test_isnan(device):
    x = np.array([1.0, np.nan, -np.inf, 0.0], np.float32)
    check(one_node("IsNaN", {"x": x}, TensorProto.BOOL, opset=13), {"x": x}, device)

"""tests/test_native_engine_shape.py: the native engine's shape operators against ONNX's
reference implementation, with their opset variants (attributes that became inputs), and the
host path of shape arithmetic (Shape -> Gather -> Concat -> Reshape)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes
from native_engine_helpers import (
    TensorProto,
    check,
    helper,
    make_model,
    one_node,
    rng,
    run_native,
    with_output_shapes,
)

I64 = np.int64


def _x(shape, dtype=np.float32):
    return rng().standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("shape,allowzero", [((4, 0, -1), 0), ((-1, 6), 0), ((2, 3, 4), 0),
                                             ((0, 4, 6), 1)])
def test_reshape(device, shape, allowzero):
    x = _x((4, 3, 2)) if not allowzero else _x((0, 4, 6))
    check(one_node("Reshape", {"x": x}, initializers={"s": np.array(shape, I64)},
                   allowzero=allowzero), {"x": x}, device)


def test_reshape_opset_1_attribute(device):
    # The reference implements Reshape from opset 5 on: NumPy is the judge here.
    x = _x((2, 6))
    model = one_node("Reshape", {"x": x}, opset=4, shape=[0, 3, -1])
    model = with_output_shapes(model, [(2, 3, 2)])
    np.testing.assert_array_equal(run_native(model, {"x": x}, device)[0], x.reshape(2, 3, 2))


@given(shape=array_shapes(min_dims=1, max_dims=4, max_side=4), data=st.data())
def test_transpose(device, shape, data):
    perm = data.draw(st.permutations(range(len(shape))))
    x = _x(shape)
    check(one_node("Transpose", {"x": x}, perm=list(perm)), {"x": x}, device)
    check(one_node("Transpose", {"x": x}), {"x": x}, device)  # reverses by default


@pytest.mark.parametrize("axis", (0, 1, -1))
def test_concat(device, axis):
    a, b = _x((2, 3, 4)), _x((2, 3, 4))
    check(one_node("Concat", {"a": a, "b": b}, axis=axis), {"a": a, "b": b}, device)


@pytest.mark.parametrize("opset", (11, 13, 18))
def test_split(device, opset):
    x = _x((7, 4))
    if opset == 11:
        model = one_node("Split", {"x": x}, opset=11, n_outputs=2, axis=0, split=[3, 4])
    elif opset == 13:
        model = one_node("Split", {"x": x}, initializers={"s": np.array([2, 5], I64)},
                         opset=13, n_outputs=2)
    else:  # uneven num_outputs: the last piece is smaller
        model = one_node("Split", {"x": x}, opset=18, n_outputs=3, num_outputs=3)
    check(model, {"x": x}, device)


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([1], [3], [0], [1]), ([0, 1], [-1, 100], [0, 1], [1, 2]),
    ([-1], [-100], [1], [-1]), ([5], [0], [0], [-2]),
    ([0], [9223372036854775807], [1], [1]), ([1, 0], [2, 3], None, None)])
def test_slice(device, starts, ends, axes, steps):
    x = _x((6, 5))
    init = {"st": np.array(starts, I64), "en": np.array(ends, I64)}
    if axes is not None:
        init["ax"] = np.array(axes, I64)
        init["sp"] = np.array(steps, I64)
    check(one_node("Slice", {"x": x}, initializers=init, opset=13), {"x": x}, device)


def test_slice_opset_9_attributes(device):
    x = _x((6, 5))
    check(one_node("Slice", {"x": x}, opset=9, starts=[1, 0], ends=[4, -1], axes=[0, 1]),
          {"x": x}, device)


@pytest.mark.parametrize("axis", (0, 1, -1))
@pytest.mark.parametrize("indices", ([0, -1, 2], [[1, 0], [-2, 2]], 1, -1))
def test_gather(device, axis, indices):
    x = _x((3, 4, 5))
    check(one_node("Gather", {"x": x}, initializers={"i": np.array(indices, I64)}, axis=axis),
          {"x": x}, device)


def test_gather_of_a_constant_scalar_is_a_view_and_checks_its_index(device):
    x = _x((3, 4, 5))
    model = one_node("Gather", {"x": x}, initializers={"i": np.array(1, I64)}, axis=1)
    got = run_native(with_output_shapes(model, [x[:, 1]]), {"x": x}, device)[0]
    np.testing.assert_array_equal(got, x[:, 1])
    bad = one_node("Gather", {"x": x}, initializers={"i": np.array(7, I64)}, axis=1)
    with pytest.raises(IndexError, match="out of range"):
        run_native(with_output_shapes(bad, [x[:, 1]]), {"x": x}, device)


@pytest.mark.parametrize("opset", (11, 13))
def test_unsqueeze_and_squeeze(device, opset):
    x = _x((3, 1, 4))
    if opset == 11:
        un = one_node("Unsqueeze", {"x": x}, opset=11, axes=[0, -1])
        sq = one_node("Squeeze", {"x": x}, opset=11, axes=[1])
    else:
        un = one_node("Unsqueeze", {"x": x}, initializers={"a": np.array([0, -1], I64)},
                      opset=13)
        sq = one_node("Squeeze", {"x": x}, initializers={"a": np.array([-2], I64)}, opset=13)
    check(un, {"x": x}, device)
    check(sq, {"x": x}, device)
    check(one_node("Squeeze", {"x": x}, opset=opset), {"x": x}, device)  # every 1


@pytest.mark.parametrize("axis", (0, 1, 2, 3, -1))
def test_flatten(device, axis):
    x = _x((2, 3, 4))
    check(one_node("Flatten", {"x": x}, axis=axis), {"x": x}, device)


@pytest.mark.parametrize("shape", ((2, 1, 4), (3, 1), (1, 1, 1, 4)))
def test_expand_is_bidirectional(device, shape):
    x = _x((3, 4))[:, :1] if shape == (3, 1) else _x((1, 4))
    check(one_node("Expand", {"x": x}, initializers={"s": np.array(shape, I64)}), {"x": x},
          device)


def test_tile(device):
    x = _x((2, 3))
    check(one_node("Tile", {"x": x}, initializers={"r": np.array([2, 3], I64)}), {"x": x},
          device)


@pytest.mark.parametrize("start,end", ((0, None), (1, None), (-2, None), (0, -1)))
def test_shape_start_end(device, start, end):
    x = _x((2, 3, 4))
    attrs = {"start": start} if end is None else {"start": start, "end": end}
    check(one_node("Shape", {"x": x}, TensorProto.INT64, opset=15, **attrs), {"x": x}, device)
    check(one_node("Size", {"x": x}, TensorProto.INT64), {"x": x}, device)


@pytest.mark.parametrize("start,limit,delta,dtype", [(0, 10, 3, I64), (5, -3, -2, I64),
                                                     (0.5, 2.0, 0.25, np.float32)])
def test_range(device, start, limit, delta, dtype):
    init = {n: np.array(v, dtype) for n, v in (("s", start), ("l", limit), ("d", delta))}
    elem = TensorProto.INT64 if dtype == I64 else TensorProto.FLOAT
    x = np.zeros(1, np.float32)  # a feed, so the model has an input
    node = helper.make_node("Range", ["s", "l", "d"], ["y"])
    keep = helper.make_node("Identity", ["x"], ["x_out"])
    check(make_model([node, keep], {"x": x}, {"y": elem, "x_out": TensorProto.FLOAT}, init),
          {"x": x}, device)


def test_constant_of_shape_from_a_shape(device):
    x = _x((2, 3))
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("ConstantOfShape", ["s"], ["y"],
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [2.5]))]
    check(make_model(nodes, {"x": x}, {"y": TensorProto.FLOAT}), {"x": x}, device)


def test_constant_and_identity(device):
    x = _x((2, 2))
    nodes = [helper.make_node("Constant", [], ["c"], value_floats=[1.0, 2.0]),
             helper.make_node("Add", ["x", "c"], ["y"]),
             helper.make_node("Identity", ["y"], ["z"])]
    check(make_model(nodes, {"x": x}, {"z": TensorProto.FLOAT}), {"x": x}, device)


@pytest.mark.parametrize("upper", (0, 1))
@pytest.mark.parametrize("k", (None, -1, 0, 2))
def test_trilu(device, upper, k):
    x = _x((2, 4, 5))
    init = {} if k is None else {"k": np.array(k, I64)}
    check(one_node("Trilu", {"x": x}, initializers=init, upper=upper), {"x": x}, device)


def test_shape_arithmetic_reshapes_with_a_symbolic_batch(device):
    # What exporters write for x.view(x.size(0), -1): the shape stays on the host.
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"])]
    init = {"zero": np.array(0, I64), "axes": np.array([0], I64),
            "minus_one": np.array([-1], I64)}
    for batch in (1, 3):
        x = _x((batch, 2, 3))
        check(make_model(nodes, {"x": x}, {"y": TensorProto.FLOAT}, init), {"x": x}, device)

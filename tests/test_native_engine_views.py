"""tests/test_native_engine_views.py: the ``views`` fusion (Note [View chains] in
native/ops/shape.py): chains of Reshape, Transpose, Unsqueeze, Squeeze and Flatten become one
node, a strided view where the chain as a whole is one, the chain's ops (copying) where not;
both against the ONNX reference, on every device."""

import numpy as np
import pytest
import xpuruntime as xrt
from native_engine_helpers import (
    TensorProto,
    check,
    helper,
    make_model,
    native_engine,
    rng,
    run_native,
    run_reference,
    with_output_shapes,
)
from xpuruntime import _core
from xpuruntime.inference.native.ops.shape import nested_view


def _ints(name, values):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name, TensorProto.INT64, [len(values)], values))


def _heads_model(opset=18):
    """PyTorch's attention export moving heads: x [N, L, E] -> Transpose [L, N, E] ->
    MatMul (a computed [L, N, 2E]) -> Slice of the first E (the query of a joint
    projection) -> Reshape [L, N*H, D] (alone no view: N and H do not merge) -> Transpose
    [N*H, L, D] -> Reshape [N, H, L, D]; then the same heads merged back."""
    n, length, e, h = 2, 5, 12, 3
    d = e // h
    w = rng(0).standard_normal((e, 2 * e)).astype(np.float32)  # p: [L, N, 2E], q its half
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2]),
             helper.make_node("MatMul", ["xt", "w"], ["p"]),
             helper.make_node("Slice", ["p", "s0", "s1", "s2"], ["q"]),
             _ints("shape1", [length, n * h, d]),
             helper.make_node("Reshape", ["q", "shape1"], ["r1"], name="split"),
             helper.make_node("Transpose", ["r1"], ["t1"], perm=[1, 0, 2], name="move"),
             _ints("shape2", [n, h, length, d]),
             helper.make_node("Reshape", ["t1", "shape2"], ["heads"], name="heads"),
             helper.make_node("Transpose", ["heads"], ["back"], perm=[2, 0, 1, 3], name="back"),
             _ints("shape3", [length * n, -1]),
             helper.make_node("Reshape", ["back", "shape3"], ["merged"], name="merge")]
    x = rng(1).standard_normal((n, length, e)).astype(np.float32)
    inits = {"w": w, "s0": np.array([0], np.int64), "s1": np.array([e], np.int64),
             "s2": np.array([2], np.int64)}
    model = make_model(nodes, {"x": x}, {"heads": TensorProto.FLOAT,
                                         "merged": TensorProto.FLOAT}, inits, opset=opset)
    return model, x


def test_nested_layouts_make_one_view_or_none():
    # [L=5, N=2, E=12] with N outermost in memory, heads H=3 of D=4 split and moved.
    shape, strides = (5, 2, 12), (12, 60, 1)
    steps = [("shape", (5, 6, 4)), ("perm", (1, 0, 2)), ("shape", (2, 3, 5, 4))]
    assert nested_view(shape, strides, steps) == ((2, 3, 5, 4), (60, 4, 12, 1))
    # Merging L and N of that layout back is no single stride.
    assert nested_view((2, 3, 5, 4), (60, 4, 12, 1), [("perm", (2, 0, 1, 3)),
                                                      ("shape", (10, 12))]) is None
    assert nested_view((6,), (2,), [("shape", (4, 3))]) is None  # not one size's split
    assert nested_view((0, 3), (3, 1), [("shape", (3, 0))]) is None
    assert nested_view((4, 1, 3), (3, 99, 1), [("shape", (2, 2, 3, 1))]) == \
        ((2, 2, 3, 1), (6, 3, 1, 0))


def test_as_strided_stays_inside_the_tensor():
    x = xrt.reshape(xrt.arange(24), (4, 6))[1:, ::2]
    view = _core._as_strided(x, (3, 3), (6, 2))
    np.testing.assert_array_equal(np.asarray(view), np.asarray(x))
    with pytest.raises(ValueError, match="outside"):
        _core._as_strided(x, (4, 3), (6, 2))
    with pytest.raises(ValueError, match="differ in length"):
        _core._as_strided(x, (3, 3), (6,))
    with pytest.raises(ValueError, match="negative"):
        _core._as_strided(x, (-1, 3), (6, 2))


def test_heads_chains_match_the_reference_and_are_views(device):
    model, x = _heads_model()
    check(model, {"x": x}, device)
    engine = native_engine(model, device)
    chains = [f["nodes"] for f in engine.explain()["fusions"] if f["fusion"] == "views"]
    # "heads" is a graph output, so the chain stops there; "back" and "merge" are another.
    assert chains == [["split", "move", "heads"], ["back", "merge"]]
    heads, merged = engine.run({"x": xrt.asarray(x, device=xrt.Device(device))},
                               ["heads", "merged"])
    # The heads are a view of the product p [L=5, N=2, 2E=24].
    assert heads.strides == (24, 4, 48, 1)
    assert merged.shape == (10, 12)


def test_a_chain_that_is_no_view_runs_its_ops(device):
    x = rng(2).standard_normal((4, 6)).astype(np.float32)
    nodes = [helper.make_node("Relu", ["x"], ["r"]),  # a computed, contiguous [4, 6]
             helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0], name="t"),
             _ints("s", [2, 12]),
             helper.make_node("Reshape", ["t", "s"], ["y"], name="flat"),
             helper.make_node("Unsqueeze", ["y", "zero"], ["z"], name="lift")]
    model = make_model(nodes, {"x": x}, {"z": TensorProto.FLOAT},
                       {"zero": np.array([0], np.int64)})
    check(model, {"x": x}, device)
    engine = native_engine(model, device)
    assert [f["nodes"] for f in engine.explain()["fusions"] if f["fusion"] == "views"] == \
        [["t", "flat", "lift"]]
    z = engine.run({"x": xrt.asarray(x, device=xrt.Device(device))}, ["z"])[0]
    assert z._is_contiguous()  # the Reshape's copy


def test_the_fusion_off_gives_the_same_values(device):
    model, x = _heads_model()
    with_output_shapes(model, run_reference(model, {"x": x}))
    on = run_native(model, {"x": x}, device)
    off = run_native(model, {"x": x}, device, fusions=())
    for a, b in zip(on, off):
        np.testing.assert_array_equal(a, b)


def test_a_linear_of_transposed_rows_runs_on_the_dense_rows(device):
    # x [N, L, E] transposed to [L, N, E] then a fused linear: the product runs on x's own
    # rows and comes back transposed, a view (no copy of x first).
    x = rng(3).standard_normal((3, 5, 8)).astype(np.float32)
    w = rng(4).standard_normal((8, 6)).astype(np.float32)
    bias = rng(5).standard_normal(6).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]),
             helper.make_node("MatMul", ["t", "w"], ["p"]),
             helper.make_node("Add", ["p", "b"], ["y"], name="linear")]
    model = make_model(nodes, {"x": x}, {"y": TensorProto.FLOAT}, {"w": w, "b": bias})
    check(model, {"x": x}, device, rtol=1e-5, atol=1e-5)
    engine = native_engine(model, device)
    assert any(f["fusion"] == "linear" for f in engine.explain()["fusions"])
    y = engine.run({"x": xrt.asarray(x, device=xrt.Device(device))}, ["y"])[0]
    assert y.shape == (5, 3, 6) and y.strides == (6, 30, 1)


def _factorisations(rng, n, parts):
    """A random shape of `parts` sizes whose product is n."""
    sizes = [1] * parts
    for p in (2, 3, 5):
        while n % p == 0:
            n //= p
            sizes[rng.integers(parts)] *= p
    sizes[rng.integers(parts)] *= n
    return tuple(sizes)


def _random_chain_agrees(seed):
    """A permuted, sliced view of a dense array, then random reshapes and transposes: where
    nested_view finds one view, it holds the values NumPy's ops give. Whether it found one."""
    rng = np.random.default_rng(seed)
    base = np.arange(4 * 6 * 10).reshape(4, 6, 10)
    x = xrt.asarray(base)
    perm = tuple(int(a) for a in rng.permutation(3))
    step = int(rng.integers(1, 3))
    xv = xrt.permute_dims(x, perm)[..., ::step]
    want = base.transpose(perm)[..., ::step]
    steps, current = [], want
    for _ in range(int(rng.integers(1, 4))):
        if rng.random() < 0.5:
            axes = tuple(int(a) for a in rng.permutation(current.ndim))
            steps.append(("perm", axes))
            current = current.transpose(axes)
        else:
            shape = _factorisations(rng, current.size, int(rng.integers(1, 5)))
            steps.append(("shape", shape))
            current = current.reshape(shape)
    found = nested_view(xv.shape, xv.strides, steps)
    if found is not None:
        got = _core._as_strided(xv, *found)
        np.testing.assert_array_equal(np.asarray(got), current)
    return found is not None


def test_nested_views_agree_with_numpy_on_random_chains():
    found = sum(_random_chain_agrees(seed) for seed in range(60))
    assert 15 <= found < 60  # both outcomes are exercised


def test_a_chain_called_again_with_other_strides_takes_their_view(device):
    # The chain keeps its last call's view for the same layout and argument objects; an
    # input of the same shape with other strides must get its own.
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2], name="t"),
             _ints("s", [3, 2, 2, 2]),
             helper.make_node("Reshape", ["t", "s"], ["y"], name="split")]
    x = rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    model = make_model(nodes, {"x": x}, {"y": (TensorProto.FLOAT, [3, 2, 2, 2])})
    engine = native_engine(model, device)
    dev = xrt.Device(device)
    dense = xrt.asarray(x, device=dev)
    # The same values laid out [2, 4, 3] in memory: the same shape, other strides.
    strided = xrt.permute_dims(xrt.asarray(np.ascontiguousarray(np.swapaxes(x, 1, 2)),
                                           device=dev), (0, 2, 1))
    assert strided.strides != dense.strides
    assert [f["nodes"] for f in engine.explain()["fusions"] if f["fusion"] == "views"] == \
        [["t", "split"]]
    for given in (dense, strided, dense, strided):
        y = engine.run({"x": given}, ["y"])[0]
        np.testing.assert_array_equal(np.asarray(xrt.asarray(y, device="cpu")),
                                      np.swapaxes(x, 0, 1).reshape(3, 2, 2, 2))
        assert not y._is_contiguous()  # a view of the input, not a copy

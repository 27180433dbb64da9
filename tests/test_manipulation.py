"""tests/test_manipulation.py: the manipulation functions against NumPy: values, dtypes,
which results are views, and the standard's errors."""

import math

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import ALL, assert_tensor_equal, arrays, tensor

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)
nonempty_shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4)
LAYOUTS = ("c", "f", "negative", "step")


def relayout(a, layout):
    """The values of `a` in another memory layout (NumPy view semantics)."""
    if layout == "f":
        return np.asfortranarray(a)
    if layout == "negative" and a.ndim:
        return np.flip(np.ascontiguousarray(np.flip(a)))
    if layout == "step" and a.ndim:
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        return big[..., ::2]
    return a


@st.composite
def inputs(draw, shape=shapes, dtypes=ALL):
    """(NumPy array, Tensor) with equal values; the tensor views the array's memory
    in one of several layouts (bfloat16 travels as a contiguous copy)."""
    name = draw(st.sampled_from(dtypes))
    a = relayout(draw(arrays(name, draw(shape))), draw(st.sampled_from(LAYOUTS)))
    return a, tensor(a)


def shares_memory(t, a):
    return np.shares_memory(np.asarray(t), a)


def native(t, a):
    """True when t views a's memory (not so for bfloat16, which is copied in)."""
    return a.dtype.name != "bfloat16"


# ------------------------------------------------------------------ reshape


@st.composite
def reshape_cases(draw):
    a, t = draw(inputs())
    # A target shape: the size split into random factors, maybe with one -1.
    size, dims = a.size, []
    while size > 1 and len(dims) < 4:
        d = draw(st.sampled_from([f for f in range(1, size + 1) if size % f == 0]))
        dims.append(d)
        size //= d
    if size != 1 or a.size == 0:
        dims.append(size)
    dims = draw(st.permutations(dims + draw(st.lists(st.just(1), max_size=2))))
    if dims and a.size and draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return a, t, tuple(dims)


@given(reshape_cases())
def test_reshape_matches_numpy(case):
    a, t, shape = case
    assert_tensor_equal(xrt.reshape(t, shape), np.reshape(a, shape))


@given(reshape_cases())
def test_reshape_is_a_view_exactly_when_numpy_can_make_one(case):
    a, t, shape = case
    assume(native(t, a) and a.size > 1)
    try:
        np.reshape(a, shape, copy=False)
        can_view = True
    except ValueError:
        can_view = False
    out = xrt.reshape(t, shape)
    assert shares_memory(out, a) == can_view
    if can_view:
        assert shares_memory(xrt.reshape(t, shape, copy=False), a)
    else:
        with pytest.raises(ValueError, match="copy=False"):
            xrt.reshape(t, shape, copy=False)
    copied = xrt.reshape(t, shape, copy=True)
    assert not shares_memory(copied, a)
    assert_tensor_equal(copied, np.reshape(a, shape))


def test_reshape_views_share_writes():
    a = np.zeros((2, 3))
    view = xrt.reshape(xrt.asarray(a), (3, 2))
    a[1, 2] = 7
    assert np.asarray(view)[2, 1] == 7


@pytest.mark.parametrize("shape, message", [
    ((4,), "size 6 into shape"),
    ((-1, -1), "only one dimension may be -1"),
    ((-2, 3), "negative dimension"),
    ((4, -1), "size 6 into shape"),
    ((0, -1), "size 6"),
    ((2**40, 2**40, 0, 2**40), "size 6"),
    ((2**32, 2**32), "size 6"),
])
def test_reshape_errors(shape, message):
    with pytest.raises(ValueError, match=message):
        xrt.reshape(xrt.ones((2, 3)), shape)


def test_reshape_of_empty_arrays():
    t = xrt.reshape(xrt.ones((0, 3)), (3, 0, 5))
    assert t.shape == (3, 0, 5)
    with pytest.raises(ValueError):  # the -1 is ambiguous
        xrt.reshape(xrt.ones((0, 3)), (0, -1))
    assert xrt.reshape(xrt.ones((0, 3)), (-1,)).shape == (0,)
    with pytest.raises(ValueError):  # 2**64 elements, not 0
        xrt.reshape(xrt.ones((0, 3)), (2**32, 2**32))


def test_reshape_argument_types():
    t = xrt.ones((2, 3))
    assert xrt.reshape(t, 6).shape == (6,)
    assert xrt.reshape(t, [3, 2]).shape == (3, 2)
    assert xrt.reshape(t, (np.int64(3), 2)).shape == (3, 2)
    with pytest.raises(TypeError):
        xrt.reshape(t, (2.0, 3))
    with pytest.raises(TypeError):
        xrt.reshape(t, (2, 3), copy=1)
    with pytest.raises(TypeError):
        xrt.reshape(np.ones(6), (2, 3))


# ------------------------------------------------------------ axis shuffles


@given(inputs(shape=nonempty_shapes), st.data())
def test_permute_dims(case, data):
    a, t = case
    axes = data.draw(st.permutations(range(a.ndim)))
    axes = tuple(ax - a.ndim if data.draw(st.booleans()) else ax for ax in axes)
    out = xrt.permute_dims(t, axes)
    assert_tensor_equal(out, np.permute_dims(a, axes))
    assert shares_memory(out, a) or not native(t, a) or a.size == 0


def test_permute_dims_errors():
    t = xrt.ones((2, 3, 4))
    with pytest.raises(ValueError, match="must name each"):
        xrt.permute_dims(t, (0, 1))
    with pytest.raises(ValueError, match="repeated axis"):
        xrt.permute_dims(t, (0, 1, -3))
    with pytest.raises(IndexError, match="out of bounds"):
        xrt.permute_dims(t, (0, 1, 3))


@given(inputs(shape=nonempty_shapes), st.data())
def test_moveaxis(case, data):
    a, t = case
    n = data.draw(st.integers(1, a.ndim))
    source = tuple(data.draw(st.permutations(range(a.ndim)))[:n])
    destination = tuple(data.draw(st.permutations(range(-a.ndim, 0)))[:n])
    assert_tensor_equal(xrt.moveaxis(t, source, destination),
                        np.moveaxis(a, source, destination))
    assert_tensor_equal(xrt.moveaxis(t, source[0], destination[0]),
                        np.moveaxis(a, source[0], destination[0]))


def test_moveaxis_errors():
    t = xrt.ones((2, 3, 4))
    with pytest.raises(ValueError, match="same number"):
        xrt.moveaxis(t, (0, 1), (0,))
    with pytest.raises(ValueError, match="repeated"):
        xrt.moveaxis(t, (0, 0), (1, 2))
    with pytest.raises(IndexError):
        xrt.moveaxis(t, 3, 0)


@given(inputs(), st.data())
def test_expand_dims(case, data):
    a, t = case
    axis = data.draw(st.integers(-a.ndim - 1, a.ndim))
    out = xrt.expand_dims(t, axis)
    assert_tensor_equal(out, np.expand_dims(a, axis))
    assert shares_memory(out, a) or not native(t, a) or a.size == 0
    n = data.draw(st.integers(1, 3))
    axes = data.draw(st.lists(st.integers(-a.ndim - n, a.ndim + n - 1), min_size=n,
                              max_size=n, unique_by=lambda ax: ax % (a.ndim + n)))
    assert_tensor_equal(xrt.expand_dims(t, tuple(axes)), np.expand_dims(a, tuple(axes)))


def test_expand_dims_errors():
    t = xrt.ones((2, 3))
    with pytest.raises(IndexError, match="out of bounds"):
        xrt.expand_dims(t, 3)
    with pytest.raises(IndexError):
        xrt.expand_dims(t, -4)
    with pytest.raises(IndexError):
        xrt.expand_dims(t, (0, 4))  # the result has 4 axes
    with pytest.raises(ValueError, match="repeated"):
        xrt.expand_dims(t, (1, -3))
    with pytest.raises(TypeError):
        xrt.expand_dims(t, 1.0)


@given(inputs(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=3)),
       st.data())
def test_squeeze(case, data):
    a, t = case
    ones = [d for d in range(a.ndim) if a.shape[d] == 1]
    axes = tuple(data.draw(st.lists(st.sampled_from(ones), unique=True))) if ones else ()
    out = xrt.squeeze(t, axes)
    assert_tensor_equal(out, np.squeeze(a, axes))
    assert shares_memory(out, a) or not native(t, a)
    if ones:
        assert_tensor_equal(xrt.squeeze(t, ones[0] - a.ndim), np.squeeze(a, ones[0]))


def test_squeeze_errors():
    t = xrt.ones((1, 3, 1))
    with pytest.raises(ValueError, match="axis 1 has size 3"):
        xrt.squeeze(t, 1)
    with pytest.raises(ValueError, match="repeated"):
        xrt.squeeze(t, (0, -3))
    with pytest.raises(IndexError):
        xrt.squeeze(t, 3)
    assert xrt.squeeze(xrt.ones(()), ()).shape == ()


@given(inputs(), st.data())
def test_flip(case, data):
    a, t = case
    axis = data.draw(st.none() | (st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none())
                     | st.lists(st.integers(0, max(a.ndim - 1, 0)), unique=True,
                                max_size=a.ndim).map(tuple))
    out = xrt.flip(t, axis=axis)
    assert_tensor_equal(out, np.flip(a, axis))
    assert shares_memory(out, a) or not native(t, a) or a.size == 0


def test_flip_gives_negative_strides_and_errors():
    t = xrt.asarray(np.arange(6.0).reshape(2, 3))
    assert xrt.flip(t).strides == (-3, -1)
    assert xrt.flip(xrt.flip(t, axis=1), axis=1).strides == (3, 1)
    with pytest.raises(ValueError, match="repeated"):
        xrt.flip(t, axis=(1, -1))
    with pytest.raises(IndexError):
        xrt.flip(t, axis=2)


@given(inputs(shape=nonempty_shapes), st.data())
def test_unstack(case, data):
    a, t = case
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    out = xrt.unstack(t, axis=axis)
    assert isinstance(out, tuple)
    expected = np.moveaxis(a, axis, 0)
    assert len(out) == expected.shape[0]
    for piece, e in zip(out, expected):
        assert_tensor_equal(piece, e)
        assert shares_memory(piece, a) or not native(t, a) or e.size == 0


def test_unstack_of_a_0d_array_raises():
    with pytest.raises(IndexError):
        xrt.unstack(xrt.ones(()))


# -------------------------------------------------------------- broadcasting


@given(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=4))
def test_broadcast_shapes_and_arrays(shapes_):
    shapes_ = shapes_.input_shapes
    assert xrt.broadcast_shapes(*shapes_) == np.broadcast_shapes(*shapes_)
    sources = [np.arange(math.prod(s), dtype=np.int16).reshape(s) for s in shapes_]
    out = xrt.broadcast_arrays(*[xrt.asarray(s) for s in sources])
    assert isinstance(out, tuple)
    for o, e, s in zip(out, np.broadcast_arrays(*sources), sources):
        assert_tensor_equal(o, e)
        assert shares_memory(o, s) or s.size == 0
    for s in sources:
        assert_tensor_equal(xrt.broadcast_to(xrt.asarray(s), out[0].shape),
                            np.broadcast_to(s, out[0].shape))


def test_broadcast_edge_cases():
    assert xrt.broadcast_shapes() == ()
    assert xrt.broadcast_arrays() == ()
    assert xrt.broadcast_shapes((2, 1), (0,)) == (2, 0)
    with pytest.raises(ValueError, match=r"\(2, 3\), \(4,\) cannot be broadcast"):
        xrt.broadcast_shapes((2, 3), (4,))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        xrt.broadcast_arrays(xrt.ones(2), xrt.ones(3))
    with pytest.raises(ValueError, match="cannot broadcast"):
        xrt.broadcast_to(xrt.ones((2, 3)), (3, 3))
    with pytest.raises(ValueError, match="cannot broadcast"):
        xrt.broadcast_to(xrt.ones((2, 3)), (3,))
    with pytest.raises(ValueError, match="negative"):
        xrt.broadcast_to(xrt.ones(1), (-1,))


# ------------------------------------------------------------------- copies


@st.composite
def concat_cases(draw):
    name = draw(st.sampled_from(ALL))
    base = draw(nonempty_shapes | st.just(()))
    axis = draw(st.none() | (st.integers(-len(base), len(base) - 1) if base else st.none()))
    pieces = []
    for _ in range(draw(st.integers(1, 4))):
        shape = list(base)
        if axis is not None:
            shape[axis] = draw(st.integers(0, 4))
        a = relayout(draw(arrays(name, tuple(shape))), draw(st.sampled_from(LAYOUTS)))
        pieces.append(a)
    return pieces, axis


@given(concat_cases())
def test_concat(case):
    pieces, axis = case
    out = xrt.concat([tensor(p) for p in pieces], axis=axis)
    assert_tensor_equal(out, np.concatenate(pieces, axis=axis))
    assert not any(shares_memory(out, p) for p in pieces if p.dtype.name != "bfloat16")


@pytest.mark.parametrize("a, b, result", [
    ("int8", "int16", "int16"), ("uint8", "int8", "int16"), ("float32", "float64", "float64"),
    ("float32", "complex64", "complex64"), ("bool", "bool", "bool")])
def test_concat_and_stack_promote(a, b, result):
    x = xrt.asarray(np.array([1, 0], dtype=a))
    y = xrt.asarray(np.array([0, 1], dtype=b))
    assert_tensor_equal(xrt.concat((x, y)), np.array([1, 0, 0, 1], dtype=result))
    assert_tensor_equal(xrt.stack((x, y)), np.array([[1, 0], [0, 1]], dtype=result))


def test_concat_errors():
    with pytest.raises(ValueError, match="at least one"):
        xrt.concat([])
    with pytest.raises(ValueError, match="zero-dimensional"):
        xrt.concat([xrt.ones(()), xrt.ones(())])
    assert xrt.concat([xrt.ones(()), xrt.ones(())], axis=None).shape == (2,)
    with pytest.raises(ValueError, match=r"array 1 has shape \(2, 4\)"):
        xrt.concat([xrt.ones((3, 3)), xrt.ones((2, 4))])
    with pytest.raises(ValueError, match="differs"):
        xrt.concat([xrt.ones((3, 3)), xrt.ones(3)])
    with pytest.raises(IndexError):
        xrt.concat([xrt.ones((3, 3))], axis=2)
    with pytest.raises(TypeError, match="promotion"):
        xrt.concat([xrt.ones(2, dtype=xrt.int64), xrt.ones(2, dtype=xrt.uint64)])
    with pytest.raises(TypeError):
        xrt.concat(xrt.ones(3))
    with pytest.raises(TypeError):
        xrt.concat([xrt.ones(3), np.ones(3)])


def test_concat_large_inputs_in_parallel_chunks():
    a = np.random.default_rng(0).random(300_001)
    b = np.arange(200_000, dtype=np.float32)
    c = np.random.default_rng(1).random((400, 700))[:, ::-1]
    assert_tensor_equal(xrt.concat([xrt.asarray(a), xrt.asarray(b)]), np.concatenate([a, b]))
    assert_tensor_equal(xrt.concat([xrt.asarray(c), xrt.asarray(c)], axis=1),
                        np.concatenate([c, c], axis=1))


@given(inputs(), st.integers(1, 3), st.data())
def test_stack(case, n, data):
    a, t = case
    axis = data.draw(st.integers(-a.ndim - 1, a.ndim))
    others = [np.flip(a) for _ in range(n - 1)]
    out = xrt.stack([t] + [tensor(o) for o in others], axis=axis)
    assert_tensor_equal(out, np.stack([a] + others, axis=axis))


def test_stack_errors():
    with pytest.raises(ValueError, match="same shape"):
        xrt.stack([xrt.ones(2), xrt.ones(3)])
    with pytest.raises(ValueError, match="at least one"):
        xrt.stack(())
    with pytest.raises(IndexError):
        xrt.stack([xrt.ones(2)], axis=2)


@given(inputs(shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3)),
       st.lists(st.integers(0, 3), max_size=4))
def test_tile(case, repetitions):
    a, t = case
    assert_tensor_equal(xrt.tile(t, tuple(repetitions)), np.tile(a, tuple(repetitions)))


def test_tile_errors():
    with pytest.raises(ValueError, match="non-negative"):
        xrt.tile(xrt.ones(2), (-1,))
    with pytest.raises(TypeError):
        xrt.tile(xrt.ones(2), (1.5,))


@given(inputs(), st.data())
def test_repeat(case, data):
    a, t = case
    axis = data.draw(st.none() | (st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none()))
    size = a.size if axis is None else a.shape[axis]
    count = data.draw(st.integers(0, 3))
    assert_tensor_equal(xrt.repeat(t, count, axis=axis), np.repeat(a, count, axis=axis))
    dtype = data.draw(st.sampled_from(["int8", "int64", "uint8", "uint64"]))
    counts = np.array(data.draw(st.lists(st.integers(0, 3), min_size=size, max_size=size)),
                      dtype=dtype)
    assert_tensor_equal(xrt.repeat(t, xrt.asarray(counts), axis=axis),
                        np.repeat(a, counts.astype(np.int64), axis=axis))
    assert_tensor_equal(xrt.repeat(t, xrt.asarray(np.array([2], dtype=dtype)), axis=axis),
                        np.repeat(a, 2, axis=axis))


def test_repeat_of_large_and_strided_inputs():
    rng = np.random.default_rng(0)
    a = rng.random((301, 517))[::-1, ::2]
    counts = rng.integers(0, 4, a.shape[1])
    assert_tensor_equal(xrt.repeat(xrt.asarray(a), xrt.asarray(counts), axis=1),
                        np.repeat(a, counts, axis=1))
    assert_tensor_equal(xrt.repeat(xrt.asarray(a), 3, axis=0), np.repeat(a, 3, axis=0))
    assert_tensor_equal(xrt.repeat(xrt.asarray(a), 2), np.repeat(a, 2))
    c = np.arange(200_000, dtype=np.complex128)
    assert_tensor_equal(xrt.repeat(xrt.asarray(c), 2), np.repeat(c, 2))


def test_repeat_errors():
    t = xrt.ones((2, 3))
    with pytest.raises(TypeError, match="integer dtype"):
        xrt.repeat(t, xrt.ones(3), axis=1)
    with pytest.raises(TypeError, match="int or an integer array"):
        xrt.repeat(t, 2.0)
    with pytest.raises(TypeError):
        xrt.repeat(t, True)
    with pytest.raises(ValueError, match="non-negative"):
        xrt.repeat(t, -1)
    with pytest.raises(ValueError, match="non-negative, got -1"):
        xrt.repeat(t, xrt.asarray([1, -1]), axis=0)
    with pytest.raises(ValueError, match=r"must have shape \(1,\) or \(3,\)"):
        xrt.repeat(t, xrt.asarray([1, 2]), axis=1)
    with pytest.raises(ValueError, match="1-D"):
        xrt.repeat(t, xrt.ones((2, 3), dtype=xrt.int64), axis=1)
    with pytest.raises(IndexError):
        xrt.repeat(t, 2, axis=2)


@given(inputs(), st.data())
def test_roll(case, data):
    a, t = case
    shift = data.draw(st.integers(-20, 20))
    assert_tensor_equal(xrt.roll(t, shift), np.roll(a, shift))
    if a.ndim:
        axes = tuple(data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1,
                                        max_size=3)))
        shifts = tuple(data.draw(st.lists(st.integers(-9, 9), min_size=len(axes),
                                          max_size=len(axes))))
        assert_tensor_equal(xrt.roll(t, shifts, axis=axes), np.roll(a, shifts, axis=axes))
        assert_tensor_equal(xrt.roll(t, shift, axis=axes), np.roll(a, shift, axis=axes))
        assert_tensor_equal(xrt.roll(t, shift, axis=axes[0]), np.roll(a, shift, axis=axes[0]))


def test_roll_errors():
    t = xrt.ones((2, 3))
    with pytest.raises(ValueError, match="same length"):
        xrt.roll(t, (1, 2), axis=(0,))
    with pytest.raises(ValueError, match="tuple of axes"):
        xrt.roll(t, (1, 2))
    with pytest.raises(ValueError, match="tuple of axes"):
        xrt.roll(t, (1, 2), axis=0)
    with pytest.raises(IndexError):
        xrt.roll(t, 1, axis=2)
    out = xrt.roll(t, 1)
    assert not shares_memory(out, np.asarray(t))


def test_copies_of_read_only_inputs_are_writable():
    a = np.arange(6.0)
    a.flags.writeable = False
    for out in (xrt.concat([xrt.asarray(a)]), xrt.tile(xrt.asarray(a), (2,)),
                xrt.roll(xrt.asarray(a), 1), xrt.repeat(xrt.asarray(a), 2)):
        assert not out._is_readonly()

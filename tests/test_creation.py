"""tests/test_creation.py: asarray and the creation functions against NumPy."""

import array
import math

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import ALL, NUMERIC, arrays, assert_tensor_equal, numpy_dtype, tensor, to_numpy

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)


def shares_memory(t, source):
    return np.shares_memory(np.asarray(t), source)


# --------------------------------------------------- asarray: Python data


@pytest.mark.parametrize("value, dtype", [
    (True, xrt.bool), (3, xrt.int64), (2.5, xrt.float64),
    (1 - 2j, xrt.complex128)])
def test_scalars_take_the_default_dtypes(value, dtype):
    t = xrt.asarray(value)
    assert t.dtype == dtype
    assert t.shape == ()
    assert_tensor_equal(t, np.asarray(value, dtype=dtype.name))


@pytest.mark.parametrize("values, dtype", [
    ([True, False], "bool"),
    ([True, 2, 3], "int64"),       # bool and int mix to the default integer
    ([1, 2.5], "float64"),
    ([[1, 2], [3.0, 4]], "float64"),
    ([1, 2.0, 3j], "complex128"),
])
def test_nested_sequences_infer_the_standard_dtype(values, dtype):
    assert_tensor_equal(xrt.asarray(values), np.asarray(values, dtype=dtype))


def test_nested_tuples_and_lists():
    values = ((1, 2, 3), [4, 5, 6])
    assert_tensor_equal(xrt.asarray(values), np.asarray(values))


def test_empty_sequences():
    # Note: like NumPy, an empty list gives the default floating dtype.
    assert_tensor_equal(xrt.asarray([]), np.asarray([], dtype=np.float64))
    assert xrt.asarray([[], []]).shape == (2, 0)


def test_dtype_argument_converts(dtype_pair):
    dtype, np_dtype = dtype_pair
    t = xrt.asarray([[0, 1], [1, 0]], dtype=dtype)
    assert_tensor_equal(t, np.asarray([[0, 1], [1, 0]]).astype(np_dtype))


@pytest.mark.parametrize("ragged", [[[1, 2], [3]], [1, [2]], [[[1]], [2]]])
def test_ragged_sequences_raise_ValueError(ragged):
    with pytest.raises(ValueError):
        xrt.asarray(ragged)


@pytest.mark.parametrize("bad", ["abc", [1, "a"], {1: 2}, None, object()])
def test_non_numeric_objects_raise_TypeError(bad):
    with pytest.raises(TypeError):
        xrt.asarray(bad)


# ----------------------------------------------- asarray: buffer protocol


def test_bytes_give_a_read_only_uint8_tensor():
    t = xrt.asarray(b"\x01\x02\x03")
    assert_tensor_equal(t, np.array([1, 2, 3], dtype=np.uint8))
    with pytest.raises(ValueError):
        t += 1


def test_bytearray_shares_memory():
    data = bytearray(b"\x00\x01\x02")
    t = xrt.asarray(data)
    data[0] = 7
    assert_tensor_equal(t, np.array([7, 1, 2], dtype=np.uint8))
    t += 1
    assert data == bytearray(b"\x08\x02\x03")


@pytest.mark.parametrize("code, dtype", [("d", "float64"), ("f", "float32"),
                                         ("h", "int16"), ("Q", "uint64")])
def test_buffer_format_gives_the_dtype(code, dtype):
    buffer = array.array(code, [1, 2, 3])
    assert_tensor_equal(xrt.asarray(buffer), np.array([1, 2, 3], dtype=dtype))


def test_memoryview_with_shape():
    mv = memoryview(bytearray(range(6))).cast("B", (2, 3))
    assert_tensor_equal(xrt.asarray(mv),
                        np.arange(6, dtype=np.uint8).reshape(2, 3))


# -------------------------------------------- asarray: NumPy and Tensors


@pytest.mark.parametrize("view", [
    lambda a: a, lambda a: a[::2].T, lambda a: a[::-1], lambda a: a[1:, 1:]])
def test_numpy_arrays_are_zero_copy(view):
    src = view(np.arange(24.0).reshape(6, 4))
    t = xrt.asarray(src)
    assert_tensor_equal(t, src)
    assert shares_memory(t, src)


def test_tensors_are_zero_copy():
    t = xrt.arange(4)
    assert shares_memory(xrt.asarray(t), np.asarray(t))
    assert shares_memory(xrt.asarray(t, copy=False), np.asarray(t))


@pytest.mark.parametrize("make", [lambda: np.arange(4.0), lambda: xrt.arange(4.0),
                                  lambda: bytearray(4)])
def test_copy_true_always_copies(make):
    src = make()
    t = xrt.asarray(src, copy=True)
    assert not shares_memory(t, np.asarray(src))
    before = to_numpy(t).copy()
    np.asarray(src)[...] = 9
    np.testing.assert_array_equal(to_numpy(t), before)


def test_copy_false_never_copies():
    src = np.arange(4.0)
    assert shares_memory(xrt.asarray(src, copy=False), src)
    assert shares_memory(xrt.asarray(src, dtype=xrt.float64, copy=False), src)


@pytest.mark.parametrize("make", [lambda: [1, 2], lambda: 3, lambda: (1.0,)])
def test_copy_false_on_python_data_raises_ValueError(make):
    with pytest.raises(ValueError):
        xrt.asarray(make(), copy=False)


def test_copy_false_with_another_dtype_raises_ValueError():
    with pytest.raises(ValueError):
        xrt.asarray(np.arange(4.0), dtype=xrt.float32, copy=False)
    with pytest.raises(ValueError):
        xrt.asarray(xrt.arange(4), dtype=xrt.int32, copy=False)


def test_dtype_argument_converts_numpy_input():
    src = np.arange(5, dtype=np.int32)
    t = xrt.asarray(src, dtype=xrt.float32)
    assert_tensor_equal(t, src.astype(np.float32))
    assert not shares_memory(t, src)


# ---------------------------------------------------- creation functions


@given(shape=shapes)
def test_zeros_ones_empty_full(dtype_pair, shape):
    dtype, np_dtype = dtype_pair
    assert_tensor_equal(xrt.zeros(shape, dtype=dtype), np.zeros(shape, np_dtype))
    assert_tensor_equal(xrt.ones(shape, dtype=dtype), np.ones(shape, np_dtype))
    fill = True if dtype == xrt.bool else 3
    assert_tensor_equal(xrt.full(shape, fill, dtype=dtype),
                        np.full(shape, fill, np_dtype))
    empty = xrt.empty(shape, dtype=dtype)
    assert (empty.shape, empty.dtype) == (shape, dtype)


@pytest.mark.parametrize("make", [xrt.zeros, xrt.ones, xrt.empty])
def test_default_dtype_and_integer_shape(make):
    t = make(3)
    assert (t.shape, t.dtype) == ((3,), xrt.float64)


@pytest.mark.parametrize("fill, dtype", [(True, xrt.bool), (7, xrt.int64),
                                         (0.5, xrt.float64),
                                         (1j, xrt.complex128)])
def test_full_infers_the_dtype_from_the_fill_value(fill, dtype):
    assert_tensor_equal(xrt.full((2, 2), fill),
                        np.full((2, 2), fill, dtype=dtype.name))


@pytest.mark.parametrize("value", [1.5, -0.25, float("inf")])
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32"])
def test_full_rounds_to_small_floats(name, value):
    t = xrt.full((2,), value, dtype=getattr(xrt, name))
    assert_tensor_equal(t, np.full((2,), value, dtype=numpy_dtype(name)))


# ---------------------------------------------------------------- arange

small_ints = st.integers(-50, 50)


@given(start=small_ints, stop=small_ints,
       step=small_ints.filter(lambda s: s != 0))
def test_arange_integers(start, stop, step):
    assert_tensor_equal(xrt.arange(start, stop, step),
                        np.arange(start, stop, step, dtype=np.int64))


@given(stop=st.integers(-5, 60))
def test_arange_with_one_argument_counts_from_zero(stop):
    assert_tensor_equal(xrt.arange(stop), np.arange(stop, dtype=np.int64))


small_floats = st.floats(-100, 100, allow_nan=False)


@given(start=small_floats, stop=small_floats,
       step=st.floats(0.05, 10) | st.floats(-10, -0.05))
def test_arange_floats_have_ceil_length(start, stop, step):
    t = xrt.arange(start, stop, step)
    length = max(0, math.ceil((stop - start) / step))
    assert (t.shape, t.dtype) == ((length,), xrt.float64)
    np.testing.assert_allclose(np.asarray(t), start + step * np.arange(length),
                               rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("name", [n for n in NUMERIC if n != "bfloat16"])
def test_arange_dtype(name):
    assert_tensor_equal(xrt.arange(1, 7, 2, dtype=getattr(xrt, name)),
                        np.arange(1, 7, 2, dtype=name))


def test_arange_mixing_ints_and_floats_gives_float64():
    assert_tensor_equal(xrt.arange(0, 2, 0.5), np.arange(0, 2, 0.5))
    assert_tensor_equal(xrt.arange(0.0, 3), np.arange(0.0, 3))


def test_arange_float_arguments_with_an_integer_dtype_are_cast():
    # Note: the values are start + i * step, truncated, as torch computes them (NumPy
    # derives an integer step from its first two values and gives [0, 1, 2, 3] below).
    assert_tensor_equal(xrt.arange(0.5, 5.0, 1.0, dtype=xrt.int64), np.arange(5))
    assert_tensor_equal(xrt.arange(0, 5, 1.5, dtype=xrt.int32),
                        np.array([0, 1, 3, 4], dtype=np.int32))


def test_arange_with_a_zero_step_raises():
    # Note: NumPy raises ZeroDivisionError; ValueError reads better.
    with pytest.raises((ValueError, ZeroDivisionError)):
        xrt.arange(0, 10, 0)


# ---------------------------------------------------------------- astype


@pytest.mark.parametrize("target", ALL)
def test_astype_between_every_pair_of_dtypes(dtype_name, target):
    # 0 and 1 are exact in every dtype, so every cast is well defined.
    values = [[0, 1], [1, 0]]
    expected = np.asarray(values).astype(numpy_dtype(target))
    src = xrt.asarray(values, dtype=getattr(xrt, dtype_name))
    assert_tensor_equal(xrt.astype(src, getattr(xrt, target)), expected)


def test_astype_copies_unless_told_otherwise():
    t = xrt.arange(3)
    assert not shares_memory(xrt.astype(t, xrt.int64), np.asarray(t))
    assert shares_memory(xrt.astype(t, xrt.int64, copy=False), np.asarray(t))


# ---------------------------------------------------------------- *_like

like_sources = st.sampled_from(ALL).flatmap(
    lambda name: arrays(name, shapes).map(lambda a: (name, a)))


@given(like_sources, st.sampled_from((None,) + ALL))
def test_like_functions_take_shape_and_dtype(source, target):
    name, a = source
    t = tensor(a)
    dtype = getattr(xrt, target) if target else None
    np_dtype = numpy_dtype(target or name)
    assert_tensor_equal(xrt.zeros_like(t, dtype=dtype), np.zeros(a.shape, np_dtype))
    assert_tensor_equal(xrt.ones_like(t, dtype=dtype), np.ones(a.shape, np_dtype))
    fill = True if (target or name) == "bool" else 2
    assert_tensor_equal(xrt.full_like(t, fill, dtype=dtype), np.full(a.shape, fill, np_dtype))
    empty = xrt.empty_like(t, dtype=dtype)
    assert (empty.shape, empty.dtype, empty.device) == (a.shape, getattr(xrt, target or name),
                                                      t.device)
    assert not shares_memory(empty, a) or a.size == 0


def test_like_functions_of_views_are_new_contiguous_arrays():
    a = np.arange(12.0).reshape(3, 4)[:, ::-2]
    out = xrt.zeros_like(xrt.asarray(a))
    assert out._is_contiguous() and not shares_memory(out, a)
    assert xrt.full_like(xrt.asarray(a), 1.5).dtype == xrt.float64


def test_full_like_errors():
    t = xrt.ones(3, dtype=xrt.int8)
    with pytest.raises(OverflowError):
        xrt.full_like(t, 300)
    with pytest.raises(TypeError, match="fill_value"):
        xrt.full_like(t, "1")
    with pytest.raises(TypeError):
        xrt.zeros_like(np.ones(3))
    with pytest.raises(TypeError):
        xrt.ones_like(t, dtype="float32")


def test_full_takes_numpy_scalars_and_0d_arrays(device):
    """Note [Array fill values]: as NumPy's and PyTorch's full do (SciPy passes
    xp.full(n, xp.asarray(code), dtype=xp.int32))."""
    cpu = xrt.Device("cpu")

    def host(t):
        assert t.device == xrt.Device(device)
        return np.from_dlpack(t.to_device(cpu))

    got = xrt.full(3, np.int64(5), device=device)  # the Python scalar of its kind
    assert got.dtype == xrt.int64 and host(got).tolist() == [5, 5, 5]
    assert xrt.full(2, np.float32(2.5), device=device).dtype == xrt.float64
    assert host(xrt.full(2, np.bool_(True), device=device)).tolist() == [True, True]
    got = xrt.full((2, 3), xrt.asarray(7, dtype=xrt.int8, device=device), device=device)
    assert got.dtype == xrt.int8 and (host(got) == 7).all()  # the array's dtype
    got = xrt.full(4, xrt.asarray(2.5, device=device), dtype=xrt.int32, device=device)
    assert got.dtype == xrt.int32 and host(got).tolist() == [2, 2, 2, 2]
    got = xrt.full(2, np.asarray(1.5, dtype=np.float32), device=device)  # another device
    assert got.dtype == xrt.float32 and host(got).tolist() == [1.5, 1.5]
    like = xrt.ones((2, 2), dtype=xrt.float32, device=device)
    got = xrt.full_like(like, xrt.asarray(3, device=device))
    assert got.dtype == xrt.float32 and (host(got) == 3).all()  # x's dtype stays
    assert host(xrt.full_like(like, np.int64(4), dtype=xrt.int16)).tolist() == [[4, 4]] * 2
    assert xrt.full(0, xrt.asarray(1.0, device=device), device=device).shape == (0,)
    for bad in (xrt.ones(2, device=device), np.ones((1, 1)), [1], "1", b"1"):
        with pytest.raises(TypeError, match="fill_value"):
            xrt.full(2, bad, device=device)
        with pytest.raises(TypeError, match="fill_value"):
            xrt.full_like(like, bad)


# ------------------------------------------------------------------- eye


@given(st.integers(0, 6), st.none() | st.integers(0, 6), st.integers(-8, 8))
def test_eye(n_rows, n_cols, k):
    assert_tensor_equal(xrt.eye(n_rows, n_cols, k=k), np.eye(n_rows, n_cols, k=k))


@pytest.mark.parametrize("name", ALL)
def test_eye_dtypes(name):
    assert_tensor_equal(xrt.eye(3, 4, k=-1, dtype=getattr(xrt, name)),
                        np.eye(3, 4, k=-1, dtype=numpy_dtype(name)))


def test_eye_edge_cases():
    assert_tensor_equal(xrt.eye(3, k=2**70), np.zeros((3, 3)))
    assert_tensor_equal(xrt.eye(3, k=-(2**63)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        xrt.eye(-1)
    with pytest.raises(TypeError):
        xrt.eye(2.0)


# -------------------------------------------------------------- linspace

finite = st.floats(-1e6, 1e6, allow_nan=False)


@given(finite, finite, st.integers(0, 40), st.booleans())
def test_linspace_matches_numpy(start, stop, num, endpoint):
    t = xrt.linspace(start, stop, num, endpoint=endpoint)
    assert_tensor_equal(t, np.linspace(start, stop, num, endpoint=endpoint))
    if num > 0:
        assert np.asarray(t)[0] == start
    if endpoint and num > 1:
        assert np.asarray(t)[-1] == stop


@given(finite, finite, st.integers(1, 20))
def test_linspace_without_endpoint_is_a_prefix(start, stop, num):
    np.testing.assert_array_equal(
        np.asarray(xrt.linspace(start, stop, num, endpoint=False)),
        np.asarray(xrt.linspace(start, stop, num + 1))[:-1])


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "complex64",
                                  "int8", "int64", "uint8"])
def test_linspace_dtypes(name):
    expected = np.linspace(0, 10, 7).astype(numpy_dtype(name))
    if name.startswith(("int", "uint")):
        expected = np.linspace(0, 10, 7, dtype=name)
    assert_tensor_equal(xrt.linspace(0, 10, 7, dtype=getattr(xrt, name)), expected)


def test_linspace_integer_dtypes_floor_like_numpy():
    assert_tensor_equal(xrt.linspace(-10, 0, 4, dtype=xrt.int64),
                        np.linspace(-10, 0, 4, dtype=np.int64))
    assert_tensor_equal(xrt.linspace(-10.5, 0.5, 5, dtype=xrt.int32),
                        np.linspace(-10.5, 0.5, 5, dtype=np.int32))


def test_linspace_complex():
    assert_tensor_equal(xrt.linspace(1j, 2 - 3j, 5), np.linspace(1j, 2 - 3j, 5))
    assert_tensor_equal(xrt.linspace(0, 1j, 4, endpoint=False),
                        np.linspace(0, 1j, 4, endpoint=False))
    assert xrt.linspace(0, 1j, 3, dtype=xrt.complex64).dtype == xrt.complex64


def test_linspace_edge_cases():
    assert_tensor_equal(xrt.linspace(2.0, 5.0, 0), np.zeros(0))
    assert_tensor_equal(xrt.linspace(2.0, 5.0, 1), np.array([2.0]))
    assert_tensor_equal(xrt.linspace(2.0, 5.0, 1, endpoint=False), np.array([2.0]))
    assert_tensor_equal(xrt.linspace(3, 3, 4), np.full(4, 3.0))
    assert xrt.linspace(0, 1, 3).dtype == xrt.float64
    with pytest.raises(ValueError, match="non-negative"):
        xrt.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="complex dtype"):
        xrt.linspace(0, 1j, 3, dtype=xrt.float64)
    with pytest.raises(TypeError, match="numeric"):
        xrt.linspace(0, 1, 3, dtype=xrt.bool)
    with pytest.raises(TypeError):
        xrt.linspace(0, 1, 3.0)
    with pytest.raises(TypeError):
        xrt.linspace(False, 1, 3)


# -------------------------------------------------------------- meshgrid


@given(st.lists(st.integers(0, 4), min_size=0, max_size=4), st.sampled_from(["xy", "ij"]),
       st.sampled_from(["int32", "float64", "complex64", "bool"]))
def test_meshgrid(lengths, indexing, name):
    vectors = [np.arange(n).astype(name) for n in lengths]
    out = xrt.meshgrid(*[xrt.asarray(v) for v in vectors], indexing=indexing)
    assert isinstance(out, tuple)
    expected = np.meshgrid(*vectors, indexing=indexing)
    assert len(out) == len(expected)
    for o, e in zip(out, expected):
        assert_tensor_equal(o, e)


def test_meshgrid_returns_new_arrays_from_strided_inputs():
    x = np.arange(6.0)[::-2]
    gx, gy = xrt.meshgrid(xrt.asarray(x), xrt.asarray(np.arange(2.0)))
    assert_tensor_equal(gx, np.meshgrid(x, np.arange(2.0))[0])
    assert gx._is_contiguous() and not shares_memory(gx, x)


def test_meshgrid_errors():
    with pytest.raises(ValueError, match="'xy' or 'ij'"):
        xrt.meshgrid(xrt.ones(2), indexing="ji")
    with pytest.raises(ValueError, match="one-dimensional"):
        xrt.meshgrid(xrt.ones((2, 2)))
    with pytest.raises(ValueError, match="one dtype"):
        xrt.meshgrid(xrt.ones(2), xrt.ones(2, dtype=xrt.float32))
    with pytest.raises(TypeError):
        xrt.meshgrid([1, 2])


# ------------------------------------------------------------ tril, triu

matrix_shapes = hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=5)


@given(st.sampled_from(ALL).flatmap(lambda n: arrays(n, matrix_shapes)),
       st.integers(-6, 6), st.sampled_from(["c", "transposed", "reversed"]))
def test_tril_triu(a, k, layout):
    if layout == "transposed":
        a = np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2)
    elif layout == "reversed":
        a = np.flip(np.ascontiguousarray(np.flip(a)))
    t = tensor(a)
    assert_tensor_equal(xrt.tril(t, k=k), np.tril(a, k))
    assert_tensor_equal(xrt.triu(t, k=k), np.triu(a, k))


def test_tril_triu_edge_cases():
    a = np.arange(1.0, 13.0).reshape(3, 4)
    assert_tensor_equal(xrt.tril(xrt.asarray(a), k=2**70), a)
    assert_tensor_equal(xrt.triu(xrt.asarray(a), k=2**70), np.zeros_like(a))
    assert_tensor_equal(xrt.tril(xrt.asarray(a), k=-(2**70)), np.zeros_like(a))
    assert_tensor_equal(xrt.triu(xrt.asarray(a), k=-(2**70)), a)
    big = np.random.default_rng(0).random((3, 300, 257))
    assert_tensor_equal(xrt.tril(xrt.asarray(big), k=-3), np.tril(big, -3))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        xrt.tril(xrt.ones(3))
    with pytest.raises(TypeError):
        xrt.triu(xrt.ones((2, 2)), k=1.0)

"""tests/test_elementwise_add.py: add and the `+` operators against NumPy: broadcasting,
mixed dtypes, strided inputs, Python scalars, in place, edge shapes.

The other functions: test_elementwise_math.py (values against NumPy) and
test_operators.py (operators, Python scalars, promotion, errors). The tests that take the
`device` fixture run on the CPU and on CUDA.
"""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xpuruntime as xrt
from common import COMPLEX, INTEGER, NUMERIC, NUMPY_NATIVE, REAL_FLOATING
from common import arrays, assert_tensor_equal, numpy_dtype, tensor


broadcastable = hnp.mutually_broadcastable_shapes(
    num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4)


def reference_add(a, b, result_dtype=None):
    """NumPy's a + b computed in `result_dtype` (integers wrap around)."""
    result_dtype = result_dtype or a.dtype
    with np.errstate(all="ignore"):
        return np.add(a.astype(result_dtype), b.astype(result_dtype))


@st.composite
def operand_pair(draw, name_a, name_b):
    shapes = draw(broadcastable).input_shapes
    return draw(arrays(name_a, shapes[0])), draw(arrays(name_b, shapes[1]))


# Note: the standard defines add for numeric dtypes only; bool + bool is left
# out here (NumPy's logical-or reading is not the standard's).
@pytest.mark.parametrize("name", NUMERIC)
@given(data=st.data())
def test_add_broadcasts_like_numpy(device, name, data):
    a, b = data.draw(operand_pair(name, name))
    expected = reference_add(a, b)
    assert_tensor_equal(xrt.add(tensor(a, device), tensor(b, device)), expected)
    assert_tensor_equal(tensor(a, device) + tensor(b, device), expected)


MIXED = [("int8", "uint8"), ("int16", "int32"), ("uint8", "uint16"),
         ("uint32", "int64"), ("float32", "float64"), ("float32", "complex64"),
         ("float64", "complex64"), ("float16", "float32"),
         ("float16", "bfloat16")]


@pytest.mark.parametrize("name_a, name_b", MIXED)
@given(data=st.data())
def test_add_promotes_mixed_dtypes(device, name_a, name_b, data):
    a, b = data.draw(operand_pair(name_a, name_b))
    result = xrt.result_type(getattr(xrt, name_a), getattr(xrt, name_b))
    expected = reference_add(a, b, numpy_dtype(result.name))
    assert_tensor_equal(xrt.add(tensor(a, device), tensor(b, device)), expected)
    assert_tensor_equal(tensor(b, device) + tensor(a, device), expected)


@st.composite
def strided_pair(draw, name):
    """Two views base[::2].T of one shape: non-contiguous transposes."""
    rows, cols = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    a, b = (draw(arrays(name, (2 * rows, cols)))[::2].T for _ in range(2))
    return a, b


@pytest.mark.parametrize("name", ["int32", "uint8", "float32", "complex128"])
@given(data=st.data())
def test_add_reads_strided_and_transposed_inputs(name, data):
    a, b = data.draw(strided_pair(name))
    assert_tensor_equal(xrt.asarray(a) + xrt.asarray(b), reference_add(a, b))
    # negative strides too
    assert_tensor_equal(xrt.asarray(a[::-1]) + xrt.asarray(b),
                        reference_add(a[::-1], b))


# ---------------------------------------------------------- Python scalars


def _scalars(name):
    if name in INTEGER:
        return [1, -1] if name.startswith("int") else [1, 200]
    if name in REAL_FLOATING:
        return [1, 1.5, -0.25]
    return [1, 1.5, 0.5 - 2j]


SCALAR_CASES = [(n, s) for n in NUMERIC for s in _scalars(n)]


@pytest.mark.parametrize("name, scalar", SCALAR_CASES)
@given(data=st.data())
def test_python_scalars_keep_the_tensor_dtype(name, scalar, data):
    a = data.draw(arrays(name, hnp.array_shapes(min_dims=0, max_side=4)))
    expected = reference_add(a, np.asarray(scalar).astype(a.dtype))
    assert_tensor_equal(tensor(a) + scalar, expected)
    assert_tensor_equal(scalar + tensor(a), expected)
    assert_tensor_equal(xrt.add(tensor(a), scalar), expected)


def test_integer_scalars_wrap_like_the_tensor_dtype():
    assert_tensor_equal(xrt.asarray([127], dtype=xrt.int8) + 1,
                        np.array([-128], dtype=np.int8))
    assert_tensor_equal(xrt.asarray([255], dtype=xrt.uint8) + 1,
                        np.array([0], dtype=np.uint8))


# ---------------------------------------------------------------- in place


@st.composite
def in_place_shapes(draw):
    """(shape_a, shape_b) where b broadcasts to a without growing it."""
    shape_a = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0,
                                    max_side=4))
    skip = draw(st.integers(0, len(shape_a)))
    shape_b = tuple(draw(st.sampled_from([1, side])) for side in shape_a[skip:])
    return shape_a, shape_b


@pytest.mark.parametrize("name", NUMERIC)
@given(data=st.data())
def test_in_place_add_writes_into_the_left_operand(name, data):
    shape_a, shape_b = data.draw(in_place_shapes())
    a, b = data.draw(arrays(name, shape_a)), data.draw(arrays(name, shape_b))
    expected = reference_add(a, b)  # before t, a view of a, changes it
    t = tensor(a)
    same = t
    t += tensor(b)
    assert t is same
    assert_tensor_equal(t, expected)


def test_in_place_add_is_seen_through_shared_memory():
    base = np.arange(12, dtype=np.int32).reshape(4, 3)
    view = xrt.asarray(base[::2].T)  # zero-copy, strided
    view += 100
    expected = np.arange(12, dtype=np.int32).reshape(4, 3)
    expected[::2] += 100
    np.testing.assert_array_equal(base, expected)


@pytest.mark.parametrize("name", ["int8", "float32", "complex64"])
def test_in_place_add_with_a_python_scalar(name):
    t = xrt.zeros((2, 2), dtype=getattr(xrt, name))
    t += 1
    assert_tensor_equal(t, np.ones((2, 2), dtype=name))


def test_in_place_add_cannot_grow_the_left_operand():
    t = xrt.zeros((3,))
    with pytest.raises(ValueError):
        t += xrt.ones((2, 3))
    assert_tensor_equal(t, np.zeros(3))


# ------------------------------------------------------------ edge shapes


@pytest.mark.parametrize("shape_a, shape_b, shape", [
    ((), (), ()), ((0,), (), (0,)), ((0, 3), (1, 3), (0, 3)),
    ((2, 1, 3), (4, 1), (2, 4, 3))])
def test_result_shapes(shape_a, shape_b, shape):
    assert xrt.add(xrt.ones(shape_a), xrt.ones(shape_b)).shape == shape


@pytest.mark.parametrize("name", [n for n in NUMPY_NATIVE if n in COMPLEX])
def test_complex_parts_add_independently(name):
    a = np.array([1 + 2j, -3.5 + 0j, 1e30 - 1e-30j], dtype=name)
    b = np.array([2 - 2j, 0 + 1j, -1e30 + 1e-30j], dtype=name)
    assert_tensor_equal(xrt.asarray(a) + xrt.asarray(b), a + b)


@pytest.mark.parametrize("name", ["int8", "uint8", "int64", "float32", "complex128", "bool"])
def test_a_python_scalar_operand_is_not_an_op_of_its_own(name):
    # Note [Scalar operands]: the scalar's 0-d host tensor is stored directly, so explain()
    # lists the add alone, where it listed a fill before it.
    scalar = {"bool": True, "complex128": 1 - 2j}.get(name, 3)
    op = xrt.logical_or if name == "bool" else xrt.add
    x = xrt.asarray(np.ones(4, dtype=name))
    with xrt.explain() as log:
        y = op(x, scalar)
    assert [r.op for r in log.records] == [op.__name__]
    expected = np.logical_or(np.ones(4, dtype=name), scalar) if name == "bool" else \
        np.ones(4, dtype=name) + np.asarray(scalar, dtype=name)
    assert_tensor_equal(y, expected)


def test_an_integer_scalar_that_does_not_fit_is_refused():
    with pytest.raises(OverflowError, match="256"):
        xrt.asarray([1], dtype=xrt.uint8) + 256
    with pytest.raises(OverflowError):
        xrt.asarray([1], dtype=xrt.int8) - 129

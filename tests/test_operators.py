"""tests/test_operators.py: the Tensor operators (plain, reflected, in place) are their
elementwise functions; Python scalars, type promotion, and the errors the standard names."""

import operator

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xpuruntime as xrt
from common import ALL, INTEGER, REAL_FLOATING, arrays, numpy_dtype, tensor, to_numpy
from elementwise_reference import BINARY, FUNCTIONS, result_dtype, special_values

# operator -> (function, Python operator, in-place Python operator or None)
BINARY_OPERATORS = {
    "__add__": ("add", operator.add, operator.iadd),
    "__sub__": ("subtract", operator.sub, operator.isub),
    "__mul__": ("multiply", operator.mul, operator.imul),
    "__truediv__": ("divide", operator.truediv, operator.itruediv),
    "__floordiv__": ("floor_divide", operator.floordiv, operator.ifloordiv),
    "__mod__": ("remainder", operator.mod, operator.imod),
    "__pow__": ("pow", operator.pow, operator.ipow),
    "__and__": ("bitwise_and", operator.and_, operator.iand),
    "__or__": ("bitwise_or", operator.or_, operator.ior),
    "__xor__": ("bitwise_xor", operator.xor, operator.ixor),
    "__lshift__": ("bitwise_left_shift", operator.lshift, operator.ilshift),
    "__rshift__": ("bitwise_right_shift", operator.rshift, operator.irshift),
    "__eq__": ("equal", operator.eq, None),
    "__ne__": ("not_equal", operator.ne, None),
    "__lt__": ("less", operator.lt, None),
    "__le__": ("less_equal", operator.le, None),
    "__gt__": ("greater", operator.gt, None),
    "__ge__": ("greater_equal", operator.ge, None),
}
UNARY_OPERATORS = {
    "__neg__": ("negative", operator.neg),
    "__pos__": ("positive", operator.pos),
    "__abs__": ("abs", abs),
    "__invert__": ("bitwise_invert", operator.invert),
}
ARITHMETIC = [op for op, row in BINARY_OPERATORS.items() if row[2] is not None]

broadcastable = hnp.mutually_broadcastable_shapes(
    num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4)


def assert_same(t, expected):
    """Two tensors with one dtype, one shape and the same bytes (NaN payloads too)."""
    assert isinstance(t, xrt.Tensor)
    assert (t.dtype, t.shape) == (expected.dtype, expected.shape)
    assert to_numpy(t).tobytes() == to_numpy(expected).tobytes(), (t, expected)


def fn_of(name):
    return getattr(xrt, FUNCTIONS[name].name)


# ------------------------------------------------------------- operators = functions


@pytest.mark.parametrize("op", sorted(BINARY_OPERATORS))
@settings(max_examples=25)
@given(data=st.data())
def test_binary_operator_is_its_function(op, data):
    name, python_op, _ = BINARY_OPERATORS[op]
    dtype = data.draw(st.sampled_from(FUNCTIONS[name].dtypes), label="dtype")
    shape1, shape2 = data.draw(broadcastable, label="shapes").input_shapes
    t1 = tensor(data.draw(arrays(dtype, shape1), label="x1"))
    t2 = tensor(data.draw(arrays(dtype, shape2), label="x2"))
    assert_same(python_op(t1, t2), fn_of(name)(t1, t2))
    assert_same(getattr(t1, op)(t2), fn_of(name)(t1, t2))


@pytest.mark.parametrize("op", sorted(UNARY_OPERATORS))
@settings(max_examples=25)
@given(data=st.data())
def test_unary_operator_is_its_function(op, data):
    name, python_op = UNARY_OPERATORS[op]
    dtype = data.draw(st.sampled_from(FUNCTIONS[name].dtypes), label="dtype")
    t = tensor(data.draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_side=4)), label="x"))
    assert_same(python_op(t), fn_of(name)(t))


@st.composite
def in_place_shapes(draw):
    """(shape1, shape2) where shape2 broadcasts to shape1 without growing it."""
    shape1 = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    skip = draw(st.integers(0, len(shape1)))
    shape2 = tuple(draw(st.sampled_from([1, side])) for side in shape1[skip:])
    return shape1, shape2


def keeps_dtype(name, dtype):
    return result_dtype(FUNCTIONS[name], dtype) == dtype  # integer / integer is a float


@pytest.mark.parametrize("op", ARITHMETIC)
@settings(max_examples=25)
@given(data=st.data())
def test_in_place_operator_writes_the_function_result_into_x1(op, data):
    name, _, in_place = BINARY_OPERATORS[op]
    dtype = data.draw(st.sampled_from(
        [d for d in FUNCTIONS[name].dtypes if keeps_dtype(name, d) and d != "bfloat16"]),
        label="dtype")
    shape1, shape2 = data.draw(in_place_shapes(), label="shapes")
    x1 = data.draw(arrays(dtype, shape1), label="x1")
    t2 = tensor(data.draw(arrays(dtype, shape2), label="x2"))
    expected = fn_of(name)(tensor(x1.copy()), t2)
    t1 = xrt.asarray(x1)  # zero-copy: the in-place result must land in x1's memory
    result = in_place(t1, t2)
    assert result is t1
    assert_same(t1, expected)
    np.testing.assert_array_equal(x1, to_numpy(expected))


def test_in_place_operators_on_bfloat16():
    t = xrt.astype(xrt.asarray([1.0, 2.5, -3.0]), xrt.bfloat16)
    same = t
    t *= xrt.astype(xrt.asarray([2.0]), xrt.bfloat16)
    t -= 1
    t **= 2
    assert t is same and t.dtype == xrt.bfloat16
    np.testing.assert_array_equal(np.asarray(xrt.astype(t, xrt.float32)), [1.0, 16.0, 49.0])


def test_in_place_operator_with_an_overlapping_view_of_the_same_tensor():
    base = np.arange(9.0).reshape(3, 3)
    t = xrt.asarray(base)
    t += t.T  # x1[...] = x1 + x2: x2 is read before x1 changes
    expected = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(base, expected + expected.T)


def test_in_place_operator_with_overlapping_memory_of_another_tensor():
    # Two tensors over overlapping memory, imported separately (no shared Tensor
    # storage). The standard: x1 must equal x1[...] = x1 + x2, which NumPy also gives.
    base = np.ones(6)
    t1, t2 = xrt.asarray(base[1:]), xrt.asarray(base[:-1])
    expected = np.ones(6)
    expected[1:] += expected[:-1]
    t1 += t2
    np.testing.assert_array_equal(base, expected)


# ------------------------------------------------------------------ Python scalars


def python_scalars(dtype):
    """Python scalars the standard allows next to an array of `dtype` (same kind)."""
    if dtype == "bool":
        return st.booleans()
    if dtype in INTEGER:
        info = np.iinfo(numpy_dtype(dtype))
        return st.integers(int(info.min), int(info.max))
    ints = st.integers(-(2**63), 2**63 - 1)
    if dtype in REAL_FLOATING:
        return st.one_of(ints, st.floats())
    return st.one_of(ints, st.floats(), st.complex_numbers())


def scalar_dtype(value, dtype):
    """The dtype a Python scalar takes next to an array of `dtype`: the array's, except
    that a complex scalar makes a real floating array complex of the same precision."""
    if isinstance(value, complex) and dtype in REAL_FLOATING:
        return xrt.complex128 if dtype == "float64" else xrt.complex64
    return getattr(xrt, dtype)


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=15)
@given(data=st.data())
def test_python_scalar_operand_is_a_0d_array_of_the_array_dtype(name, data):
    dtype = data.draw(st.sampled_from(BINARY[name].dtypes), label="dtype")
    t = tensor(data.draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_side=4)), label="x"))
    s = data.draw(python_scalars(dtype), label="scalar")
    if name.startswith("logical_"):  # Note [Logical ops read truth values]: its own truth
        s_tensor = xrt.full((), bool(s), dtype=xrt.bool)
    else:
        s_tensor = xrt.full((), s, dtype=scalar_dtype(s, dtype))
    fn = fn_of(name)
    assert_same(fn(t, s), fn(t, s_tensor))
    assert_same(fn(s, t), fn(s_tensor, t))
    for op, (op_name, python_op, _) in BINARY_OPERATORS.items():
        if op_name == name:
            assert_same(python_op(t, s), fn(t, s_tensor))
            if op not in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
                assert_same(python_op(s, t), fn(s_tensor, t))  # the reflected operator


@pytest.mark.parametrize("op", ARITHMETIC)
def test_in_place_operators_take_python_scalars(op):
    name, _, in_place = BINARY_OPERATORS[op]
    dtype = "int32" if "integer" in FUNCTIONS[name].category else "float32"
    t = xrt.asarray(np.array([1, 2, 7], dtype=dtype))
    expected = fn_of(name)(t, xrt.full((), 3, dtype=t.dtype))
    same = t
    t = in_place(t, 3)
    assert t is same
    assert_same(t, expected)


@pytest.mark.parametrize("dtype, scalar", [
    ("int8", 1.5), ("int32", 1.0), ("uint8", 2.5), ("int64", 1j), ("uint16", 1 + 0j),
    ("bool", 1), ("bool", 1.0), ("int8", True), ("float32", True), ("complex64", False)])
def test_python_scalars_of_another_kind_are_rejected(dtype, scalar):
    # Note: float with integer arrays and complex with integer arrays are unspecified by
    # the standard (project choice: TypeError); bool with numbers and numbers with bool
    # are outside the standard's allowed pairs.
    t = xrt.asarray(np.array([1, 0], dtype=dtype))
    for python_op in (operator.add, operator.eq):
        with pytest.raises(TypeError, match=dtype):
            python_op(t, scalar)
    with pytest.raises(TypeError, match=dtype):
        operator.mul(scalar, t)
    with pytest.raises(TypeError, match=dtype):
        xrt.multiply(t, scalar)


@pytest.mark.parametrize("dtype, value", [("int8", 128), ("int8", -129), ("uint8", -1),
                                          ("uint64", 2**64), ("int64", 2**63)])
def test_python_ints_out_of_the_dtype_range_raise(dtype, value):
    # Note: unspecified by the standard ("may overflow or raise"); the project raises
    # rather than wrapping silently.
    t = xrt.asarray(np.array([1], dtype=dtype))
    with pytest.raises(OverflowError):
        t + value
    with pytest.raises(OverflowError):
        xrt.add(value, t)


@pytest.mark.parametrize("dtype, expected", [("float16", "complex64"),
                                             ("bfloat16", "complex64"),
                                             ("float32", "complex64"),
                                             ("float64", "complex128")])
def test_complex_scalars_make_real_arrays_complex(dtype, expected):
    t = xrt.astype(xrt.asarray([1.0, -2.0]), getattr(xrt, dtype))
    for result in (t + 1j, 1j * t, xrt.add(t, 1j), xrt.equal(1j, t)):
        assert result.dtype in (getattr(xrt, expected), xrt.bool)
    np.testing.assert_array_equal(np.asarray(t * 2j), np.array([2j, -4j], dtype=expected))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_two_python_scalars_are_rejected(name):
    with pytest.raises(TypeError, match=name):
        fn_of(name)(1, 2)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_non_array_arguments_are_rejected(name):
    fn = FUNCTIONS[name]
    t = xrt.asarray([1.0])
    for bad in ([1.0], np.array([1.0]), None, "1"):
        args = [bad] if fn.arity == 1 else [t, bad]
        with pytest.raises(TypeError, match=name):
            fn_of(name)(*args)


def test_operators_with_unknown_types_raise_type_error():
    t = xrt.asarray([1.0])
    for python_op in (operator.add, operator.mul, operator.lt, operator.and_):
        with pytest.raises(TypeError):
            python_op(t, "1")
        with pytest.raises(TypeError):
            python_op(None, t)


# ---------------------------------------------------------------------- promotion

SAME_KIND_PAIRS = [("int8", "int16"), ("int8", "uint8"), ("uint8", "int64"),
                   ("uint16", "uint32"), ("int32", "uint16"), ("float16", "float32"),
                   ("float16", "bfloat16"), ("bfloat16", "float64"), ("float32", "complex64"),
                   ("float64", "complex64"), ("complex64", "complex128"), ("bool", "bool")]


def promotion_cases():
    for name, fn in sorted(BINARY.items()):
        for d1, d2 in SAME_KIND_PAIRS:
            promoted = xrt.result_type(getattr(xrt, d1), getattr(xrt, d2)).name
            if promoted in fn.dtypes:
                yield name, d1, d2


@pytest.mark.parametrize("name, dtype1, dtype2", list(promotion_cases()))
def test_mixed_dtypes_promote_before_the_function(name, dtype1, dtype2):
    """fn(x1, x2) is fn of both operands cast to the promoted dtype: every pair of the
    special values of the two dtypes."""
    t1 = tensor(special_values(dtype1)[:, None])
    t2 = tensor(special_values(dtype2)[None, :])
    promoted = xrt.result_type(t1, t2)
    fn = fn_of(name)
    for a, b in ((t1, t2), (t2, t1)):
        expected = fn(xrt.astype(a, promoted), xrt.astype(b, promoted))
        assert_same(fn(a, b), expected)


@pytest.mark.parametrize("dtype1, dtype2", [("int8", "float32"), ("uint8", "float16"),
                                            ("int64", "complex128"), ("bool", "int8"),
                                            ("bool", "float32"), ("uint64", "int64")])
def test_mixing_kinds_the_standard_leaves_undefined_raises(dtype1, dtype2):
    t1 = xrt.asarray(np.array([1, 0], dtype=dtype1))
    t2 = xrt.asarray(np.array([1, 0], dtype=dtype2))
    for a, b in ((t1, t2), (t2, t1)):
        for fn in (xrt.add, xrt.equal, operator.mul, operator.ne):
            with pytest.raises(TypeError, match=f"{dtype1}|{dtype2}"):
                fn(a, b)


# -------------------------------------------------------------------------- errors


def outside_category(fn):
    return [d for d in ALL if d not in fn.dtypes]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_dtypes_outside_the_category_raise_type_error_naming_both(name):
    fn = FUNCTIONS[name]
    for dtype in outside_category(fn):
        t = xrt.zeros((2,), dtype=getattr(xrt, dtype))
        with pytest.raises(TypeError, match=rf"{name}.*\b{dtype}\b"):
            fn_of(name)(*[t] * fn.arity)


@pytest.mark.parametrize("op", sorted(BINARY_OPERATORS) + sorted(UNARY_OPERATORS))
def test_operators_on_dtypes_outside_the_category_raise_type_error(op):
    name = (BINARY_OPERATORS.get(op) or UNARY_OPERATORS[op])[0]
    fn = FUNCTIONS[name]
    for dtype in outside_category(fn):
        t = xrt.zeros((2,), dtype=getattr(xrt, dtype))
        with pytest.raises(TypeError, match=rf"{name}.*\b{dtype}\b"):
            getattr(t, op)(*[t] * (fn.arity - 1))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_shapes_that_do_not_broadcast_raise_value_error(name):
    dtype = BINARY[name].dtypes[-1]
    t1 = xrt.zeros((2, 3), dtype=getattr(xrt, dtype))
    for shape in [(2,), (3, 3), (4, 2, 3, 1)]:
        t2 = xrt.zeros(shape, dtype=getattr(xrt, dtype))
        with pytest.raises(ValueError, match=r"\(2, 3\)|\(4, 2, 3, 1\)"):
            fn_of(name)(t1, t2)
        with pytest.raises(ValueError):
            fn_of(name)(t2, t1)


@pytest.mark.parametrize("op", ARITHMETIC)
def test_in_place_operators_that_would_change_the_dtype_raise_type_error(op):
    name, _, in_place = BINARY_OPERATORS[op]
    fn = FUNCTIONS[name]
    pairs = [("int8", "int16"), ("uint8", "int8"), ("float32", "float64"),
             ("float16", "bfloat16"), ("float64", "complex128"), ("int32", "int32")]
    for d1, d2 in pairs:
        promoted = xrt.result_type(getattr(xrt, d1), getattr(xrt, d2)).name
        if promoted not in fn.dtypes or (d1 == promoted and keeps_dtype(name, d1)):
            continue
        base = np.ones(3, dtype=d1)
        t1 = xrt.asarray(base)
        with pytest.raises(TypeError, match=rf"{d1}"):
            in_place(t1, xrt.ones((3,), dtype=getattr(xrt, d2)))
        np.testing.assert_array_equal(base, 1)  # unchanged


def test_in_place_operators_reject_python_scalars_that_change_the_dtype():
    t = xrt.asarray([1.0, 2.0], dtype=xrt.float32)
    with pytest.raises(TypeError):
        t += 1j
    i = xrt.asarray([1, 2], dtype=xrt.int32)
    with pytest.raises(TypeError):
        i /= 2  # integer / integer is float64
    with pytest.raises(TypeError):
        i += 1.5
    np.testing.assert_array_equal(np.asarray(i), [1, 2])


@pytest.mark.parametrize("op", ARITHMETIC)
def test_in_place_operators_that_would_change_the_shape_raise_value_error(op):
    name, _, in_place = BINARY_OPERATORS[op]
    dtype = "int32" if "integer" in FUNCTIONS[name].category else "float64"
    base = np.ones((3,), dtype=dtype)
    t = xrt.asarray(base)
    for shape in [(2, 3), (1, 3), (4,)]:
        with pytest.raises(ValueError):
            in_place(t, xrt.ones(shape, dtype=getattr(xrt, dtype)))
    np.testing.assert_array_equal(base, 1)


@pytest.mark.parametrize("op", ARITHMETIC)
def test_in_place_operators_on_read_only_tensors_raise_value_error(op):
    name, _, in_place = BINARY_OPERATORS[op]
    dtype = "int32" if "integer" in FUNCTIONS[name].category else "float64"
    base = np.full(3, 2, dtype=dtype)
    base.flags.writeable = False
    t = xrt.from_dlpack(base)
    for other in (1, xrt.ones((3,), dtype=getattr(xrt, dtype))):
        with pytest.raises(ValueError, match="read-only"):
            in_place(t, other)
    np.testing.assert_array_equal(base, 2)
    # reading is fine
    assert_same(BINARY_OPERATORS[op][1](t, 1), fn_of(name)(t, xrt.full((), 1, dtype=t.dtype)))


def test_comparison_operators_of_complex_arrays_raise():
    t = xrt.asarray(np.array([1 + 1j]))
    for python_op in (operator.lt, operator.le, operator.gt, operator.ge):
        with pytest.raises(TypeError, match="complex128"):
            python_op(t, t)
    assert np.asarray(t == xrt.asarray(np.array([1 + 1j]))).tolist() == [True]

"""tests/test_operator_slots.py: the Tensor operators run through C slots (Note [Operator
slots] in cpp/bindings/bind_elementwise.cpp) and must behave as the methods do: both operand
orders, Python and NumPy scalars, in place, comparisons reflected, NotImplemented for what
they do not take, the standard's errors, and the methods themselves still callable."""

import operator

import numpy as np
import pytest

import xpuruntime as xrt
from common import assert_tensor_equal, tensor, to_numpy

BINARY = [
    (operator.add, np.add), (operator.sub, np.subtract), (operator.mul, np.multiply),
    (operator.truediv, np.true_divide), (operator.floordiv, np.floor_divide),
    (operator.mod, np.remainder), (operator.pow, np.power),
]
BITWISE = [
    (operator.and_, np.bitwise_and), (operator.or_, np.bitwise_or),
    (operator.xor, np.bitwise_xor), (operator.lshift, np.left_shift),
    (operator.rshift, np.right_shift),
]
COMPARE = [operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge]


@pytest.mark.parametrize("op, ref", BINARY)
def test_arithmetic_in_both_orders_and_with_scalars(device, op, ref):
    # Bit for bit what the functions give (NumPy's pow may differ in the last place).
    a = np.array([1.5, 2.0, 3.0, 4.5], dtype=np.float32)
    b = np.array([0.5, 1.0, 2.0, 3.0], dtype=np.float32)
    x, y = tensor(a, device), tensor(b, device)
    fn = getattr(xrt, ref.__name__.replace("true_divide", "divide").replace("power", "pow"))
    two = xrt.asarray(np.float32(2.0), device=device)
    for got, want, expected in [(op(x, y), fn(x, y), ref(a, b)),
                                (op(x, 2.0), fn(x, two), ref(a, np.float32(2.0))),
                                (op(2.0, x), fn(two, x), ref(np.float32(2.0), a)),
                                (op(np.float64(2.0), x), fn(two, x), ref(np.float32(2.0), a))]:
        assert_tensor_equal(got, to_numpy(want))
        np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-6)


@pytest.mark.parametrize("op, ref", BITWISE)
def test_bitwise_in_both_orders(device, op, ref):
    a = np.array([1, 6, 12, 255], dtype=np.int32)
    x = tensor(a, device)
    assert_tensor_equal(op(x, x), ref(a, a))
    assert_tensor_equal(op(x, 3), ref(a, np.int32(3)))
    assert_tensor_equal(op(3, x), ref(np.int32(3), a))


@pytest.mark.parametrize("op", COMPARE)
def test_comparisons_reflect_for_a_scalar_on_the_left(device, op):
    a = np.array([1.0, 2.0, 3.0])
    x = tensor(a, device)
    assert_tensor_equal(op(x, 2.0), op(a, 2.0))
    assert_tensor_equal(op(2.0, x), op(2.0, a))
    assert_tensor_equal(op(x, x), op(a, a))


def test_in_place_operators_keep_the_object(device):
    a = np.array([1, 2, 3, 4], dtype=np.int64)
    x = tensor(a.copy(), device)  # a CPU tensor would share a's memory
    before = id(x)
    x += 1
    x *= tensor(np.array([2, 2, 2, 2], dtype=np.int64), device)
    x **= 2
    x //= 3
    x <<= 1
    assert id(x) == before
    assert_tensor_equal(x, (((a + 1) * 2) ** 2 // 3) << 1)


def test_unary_operators(device):
    a = np.array([-1.5, 0.0, 2.0], dtype=np.float64)
    x = tensor(a, device)
    assert_tensor_equal(-x, -a)
    assert_tensor_equal(+x, +a)
    assert_tensor_equal(abs(x), np.abs(a))
    assert_tensor_equal(~tensor(np.array([0, 5], dtype=np.int8), device),
                        ~np.array([0, 5], dtype=np.int8))


def test_what_the_operators_do_not_take():
    x = xrt.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="unsupported operand"):
        x + "a"
    with pytest.raises(TypeError):
        [1, 2] * x
    with pytest.raises(TypeError):
        pow(x, 2, 3)
    with pytest.raises(TypeError):
        x < None
    assert (x == None) is False  # noqa: E711 - NotImplemented, then identity
    assert (None != x) is True  # noqa: E711


def test_errors_are_the_standard_s():
    with pytest.raises(TypeError, match="Python float"):
        xrt.asarray([1, 2]) + 1.5
    with pytest.raises(ValueError, match="broadcast"):
        xrt.asarray([1.0, 2.0]) + xrt.asarray([1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        ~xrt.asarray([1.0])
    x = xrt.broadcast_to(xrt.asarray([1.0]), (3,))  # read-only
    with pytest.raises(ValueError):
        x += 1.0
    y = xrt.asarray([1, 2], dtype=xrt.int8)
    with pytest.raises(TypeError):
        y += xrt.asarray([1.0, 2.0])  # would change the dtype


def test_the_methods_are_still_there():
    x = xrt.asarray([1.0, 2.0])
    assert_tensor_equal(x.__add__(1.0), np.array([2.0, 3.0]))
    assert_tensor_equal(x.__rsub__(1.0), np.array([0.0, -1.0]))
    assert x.__add__("a") is NotImplemented
    assert_tensor_equal(x.__lt__(1.5), np.array([True, False]))

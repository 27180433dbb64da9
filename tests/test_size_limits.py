"""tests/test_size_limits.py: shapes whose element count or byte size leaves int64 are refused
with an error naming the shape, wherever a size is formed (Note [Checked sizes]): creation,
views, broadcasting, tile, DLPack import. Each case once crashed the process, so each runs in
a child interpreter, where a crash fails the test instead of ending the run."""

import ctypes

import numpy as np
import pytest

import xpuruntime as xrt
from common import raises_in_child
from dlpack_abi import HandMade

TOO_BIG = [
    # (the call, the exception, a phrase of its message)
    ("x = xrt.empty((2**61,)); x[2**60] = 1.0", "ValueError", "(2305843009213693952,)"),
    ("float(xrt.empty((2**62,))[10**9])", "ValueError", "array is too big"),
    ("xrt.zeros((2**32, 2**32))", "ValueError", "(4294967296, 4294967296)"),
    ("int(xrt.arange(2**63 - 1)[10**7])", "ValueError", "array is too big"),
    ("xrt.eye(2**32)", "ValueError", "array is too big"),
    ("xrt.linspace(0, 1, 2**62)", "ValueError", "array is too big"),
    ("xrt.broadcast_to(xrt.ones(1), (2**40, 2**40))", "ValueError", "array is too big"),
    ("xrt.broadcast_shapes((2**40, 1), (2**40,))", "ValueError", "array is too big"),
    ("xrt.tile(xrt.ones(2**20), (2**44,))", "ValueError", "does not fit in int64"),
    ("xrt.ones((2**31, 2**31, 4), dtype=xrt.int8)", "ValueError", "array is too big"),
    ("xrt.zeros((2**63,))", "OverflowError", "9223372036854775808"),
    ("b = xrt.broadcast_to(xrt.ones(1, dtype=xrt.int8), (2**62,)); xrt.concat([b, b, b])",
     "ValueError", "add up past int64"),
    ("b = xrt.broadcast_to(xrt.ones(1, dtype=xrt.int8), (2**62,))\n"
     "xrt.concat([b, b], axis=None)", "ValueError", "sizes add up past int64"),
    ("xrt.full((2**62, 2), 1.0)", "ValueError", "array is too big"),
    ("xrt.reshape(xrt.ones(4), (2**62, 2**2, -1))", "ValueError", "reshape"),
]


@pytest.mark.parametrize("code, error, phrase", TOO_BIG, ids=[c for c, _, _ in TOO_BIG])
def test_a_size_past_int64_is_refused_not_a_crash(code, error, phrase):
    name, message = raises_in_child(code)
    assert name == error, (name, message)
    assert phrase in message


def test_a_zero_extent_makes_any_other_extent_fine():
    x = xrt.empty((0, 2**62, 2**62))
    assert x.size == 0 and x.shape == (0, 2**62, 2**62)
    assert xrt.broadcast_to(xrt.ones((0, 1)), (0, 2**62)).size == 0


def test_the_largest_broadcast_that_fits_keeps_its_size():
    b = xrt.broadcast_to(xrt.ones(1, dtype=xrt.int8), (2**31, 2**31))
    assert b.size == 2**62


def test_out_of_memory_is_a_memory_error():
    assert issubclass(xrt.OutOfMemoryError, MemoryError)
    assert issubclass(xrt.OutOfMemoryError, xrt.XpuRuntimeError)
    with pytest.raises(MemoryError):
        xrt.empty((2**60,), dtype=xrt.int8)


# ---- DLPack headers that describe memory nobody can address ------------------------------

class Producer:
    """An object with __dlpack__ that hands over a hand-made capsule."""

    def __init__(self, hand_made):
        self.hand_made = hand_made

    def __dlpack__(self, **kwargs):
        return self.hand_made.capsule

    def __dlpack_device__(self):
        return (1, 0)


def test_a_null_data_pointer_is_refused():
    h = HandMade(np.ones(4, dtype=np.float32))
    h.struct.dl_tensor.data = None
    with pytest.raises(BufferError, match="null data pointer"):
        xrt.from_dlpack(Producer(h))


def test_a_null_data_pointer_is_fine_for_an_empty_tensor():
    h = HandMade(np.ones(0, dtype=np.float32))
    h.struct.dl_tensor.data = None
    assert xrt.from_dlpack(Producer(h)).shape == (0,)


@pytest.mark.parametrize("offset", [2**63, 2**64 - 8, 2**63 - 8])
def test_a_byte_offset_past_int64_is_refused(offset):
    h = HandMade(np.ones(4, dtype=np.float32))
    h.struct.dl_tensor.byte_offset = offset
    with pytest.raises(BufferError, match="byte_offset"):
        xrt.from_dlpack(Producer(h))


def test_a_shape_past_int64_is_refused_on_import():
    h = HandMade(np.ones((2, 2), dtype=np.float32))
    h.shape[0] = 2**40
    h.shape[1] = 2**40
    h.strides[0] = 0
    h.strides[1] = 0
    with pytest.raises(BufferError, match="array is too big"):
        xrt.from_dlpack(Producer(h))
    assert ctypes.sizeof(h.struct) > 0  # the header stayed alive through the call

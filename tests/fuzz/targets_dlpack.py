"""tests/fuzz/targets_dlpack.py: from_dlpack of malformed producers: headers with any ndim,
shape, strides, byte offset, dtype, device, version and flags; capsules of the wrong name,
used twice, or not capsules at all. The import refuses with a clear error or makes a tensor;
the memory is never read here (a lying header may point anywhere)."""

import ctypes

import hypothesis.strategies as st
import numpy as np
from hypothesis import given

import xpuruntime as xrt
from dlpack_abi import HandMade
from fuzz_settings import fuzz_settings

ERRORS = (BufferError, TypeError, ValueError, OverflowError, RuntimeError,
          xrt.XpuRuntimeError)
EXTENTS = [0, 1, 2, 3, 8, -1, -(2**63), 2**31, 2**40, 2**62, 2**63 - 1]
STRIDES = [0, 1, 2, -1, -4, 2**61, -(2**62), 2**63 - 1, -(2**63), 2**62 + 3]
OFFSETS = [0, 4, 2**31, 2**62, 2**63, 2**64 - 4]
MAX_NDIM = 70


class Producer:
    def __init__(self, capsule, device=(1, 0)):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs):
        if isinstance(self.capsule, Exception):
            raise self.capsule
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def hand_made(versioned):
    h = HandMade(np.ones(8, dtype=np.float32), versioned=versioned)
    # Room for any ndim the fuzzer declares, so reading the header stays inside it.
    h.shape = (ctypes.c_int64 * MAX_NDIM)(*([8] + [1] * (MAX_NDIM - 1)))
    h.strides = (ctypes.c_int64 * MAX_NDIM)(*([1] * MAX_NDIM))
    h.struct.dl_tensor.shape = h.shape
    h.struct.dl_tensor.strides = h.strides
    return h


@fuzz_settings()
@given(st.booleans(), st.integers(-3, MAX_NDIM), st.lists(st.sampled_from(EXTENTS), max_size=4),
       st.one_of(st.none(), st.lists(st.sampled_from(STRIDES), max_size=4)),
       st.sampled_from(OFFSETS), st.tuples(st.integers(0, 20), st.sampled_from([0, 1, 8, 16,
       32, 64, 128, 255]), st.sampled_from([0, 1, 2, 4])), st.tuples(st.integers(0, 20),
       st.integers(-2, 3)), st.booleans(), st.integers(0, 3), st.integers(0, 2**64 - 1))
def malformed_headers_are_refused_or_imported(versioned, ndim, shape, strides, offset,
                                              dtype, device, null_data, major, flags):
    h = hand_made(versioned)
    dl = h.struct.dl_tensor
    dl.ndim = ndim
    for i, extent in enumerate(shape):
        h.shape[i] = extent
    if strides is None:
        dl.strides = None
    else:
        for i, stride in enumerate(strides):
            h.strides[i] = stride
    dl.byte_offset = offset
    dl.dtype.code, dl.dtype.bits, dl.dtype.lanes = dtype
    dl.device.device_type, dl.device.device_id = device
    if null_data:
        dl.data = None
    if versioned:
        h.struct.version.major = major
        h.struct.flags = flags
    try:
        t = xrt.from_dlpack(Producer(h.capsule, device=(1, 0)))
    except ERRORS:
        return
    assert t.ndim == ndim and t.size >= 0  # metadata only: the header may lie about memory
    del t


@fuzz_settings(0.5)
@given(st.sampled_from(["wrong name", "used twice", "not a capsule", "raises", "none",
                        "bad device"]))
def broken_producers_give_clear_errors(kind):
    h = HandMade(np.ones(4, dtype=np.float32))
    if kind == "wrong name":
        new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))
        producer = Producer(new(ctypes.addressof(h.struct), b"not_dltensor", None))
    elif kind == "used twice":
        xrt.from_dlpack(Producer(h.capsule))
        producer = Producer(h.capsule)
    elif kind == "not a capsule":
        producer = Producer(12345)
    elif kind == "raises":
        producer = Producer(KeyError("producer failed"))
    elif kind == "none":
        producer = Producer(None)
    else:
        producer = Producer(h.capsule, device=("gpu", None))
    try:
        xrt.from_dlpack(producer)
    except (*ERRORS, KeyError):
        return
    raise AssertionError(f"{kind}: the broken producer was accepted")

"""tests/fuzz/atheris_target.py: a coverage-guided fuzz target for atheris (not run in CI).

    pip install atheris
    python tests/fuzz/atheris_target.py -max_total_time=3600

The input bytes choose an action (asarray of a nested structure, indexing, a DLPack header,
a shape) and its arguments; a crash or a non-standard exception is a finding."""

import ctypes
import os
import sys

import atheris

with atheris.instrument_imports():
    import numpy as np

    import xpuruntime as xrt

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from dlpack_abi import HandMade  # noqa: E402

CLEAN = (TypeError, ValueError, IndexError, OverflowError, BufferError, RuntimeError,
         MemoryError, xrt.XpuRuntimeError)


def value(fdp, depth=0):
    kind = fdp.ConsumeIntInRange(0, 5 if depth < 3 else 3)
    if kind == 0:
        return fdp.ConsumeBool()
    if kind == 1:
        return fdp.ConsumeInt(9)
    if kind == 2:
        return fdp.ConsumeRegularFloat()
    if kind == 3:
        return complex(fdp.ConsumeRegularFloat(), fdp.ConsumeRegularFloat())
    items = [value(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 4))]
    return items if kind == 4 else tuple(items)


def key(fdp):
    kind = fdp.ConsumeIntInRange(0, 4)
    if kind == 0:
        return fdp.ConsumeInt(9)
    if kind == 1:
        return slice(fdp.ConsumeInt(9), fdp.ConsumeInt(9), fdp.ConsumeInt(9) or None)
    if kind == 2:
        return None
    if kind == 3:
        return Ellipsis
    return [fdp.ConsumeIntInRange(-4, 4) for _ in range(fdp.ConsumeIntInRange(0, 3))]


class Producer:
    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def one_input(data):
    fdp = atheris.FuzzedDataProvider(data)
    action = fdp.ConsumeIntInRange(0, 3)
    try:
        if action == 0:
            xrt.asarray(value(fdp)).tolist()
        elif action == 1:
            x = xrt.reshape(xrt.arange(24), (2, 3, 4))
            k = tuple(key(fdp) for _ in range(fdp.ConsumeIntInRange(1, 4)))
            if fdp.ConsumeBool():
                x[k] = fdp.ConsumeInt(2)
            else:
                x[k].tolist()
        elif action == 2:
            h = HandMade(np.ones(8, dtype=np.float32))
            h.struct.dl_tensor.ndim = min(fdp.ConsumeIntInRange(0, 1), 1)
            h.shape[0] = fdp.ConsumeInt(8)
            h.strides[0] = fdp.ConsumeInt(8)
            h.struct.dl_tensor.byte_offset = fdp.ConsumeIntInRange(0, 2**64 - 1)
            if fdp.ConsumeBool():
                h.struct.dl_tensor.data = None
            t = xrt.from_dlpack(Producer(h.capsule))
            assert t.ndim <= 1
            ctypes.sizeof(h.struct)
        else:
            shape = tuple(fdp.ConsumeInt(9) for _ in range(fdp.ConsumeIntInRange(0, 4)))
            if all(0 <= d < 64 for d in shape):
                return  # small shapes allocate for real; the fuzzer is after the limits
            xrt.empty(shape, dtype=xrt.int8)
    except CLEAN:
        pass


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()

"""tests/cuda_helpers.py: what the CUDA tests share: fixtures for the peers, busy streams,
and the comparison of a CUDA result with the CPU's (bit for bit, or the same error).
"""

import os

import numpy as np
import pytest

import xpuruntime as xrt
from common import CUDA_DEVICE, numpy_dtype, tensor, to_numpy
from dlpack_abi import managed

# The private extension, for the few tests that reach past the public API (compiling kernel
# samples, warming caches, test-only settings): imported here only, so that a move of the
# module is fixed in one place.
core = xrt._core

# JAX would otherwise take 75% of the GPU at import.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

# About 0.1 s of GPU time on a ~1.7 GHz H100: long enough that a missing wait shows.
SLEEP_CYCLES = 200_000_000


def has_cuda_kernels(*ops):
    return all(any(k["device"] == "cuda" for k in xrt.list_kernels(op)) for op in ops)


def needs_kernels(*ops):
    """Skips a test that runs xpuruntime's own CUDA kernels until they are registered."""
    return pytest.mark.skipif(not has_cuda_kernels(*ops),
                              reason=f"needs xpuruntime CUDA kernels for {', '.join(ops)}")


def data_pointer(t):
    """The device (or host) address of a tensor's first element, through DLPack."""
    capsule = t.__dlpack__(max_version=(1, 0), stream=-1 if t.device.type == "cuda" else None)
    return managed(capsule).dl_tensor.data


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA here")
    return torch


@pytest.fixture(scope="module")
def cupy():
    return pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX has no GPU here")
    return jax


def torch_stream(torch, stream):
    """Our stream as a PyTorch stream (same handle), to run torch kernels on it."""
    if stream.ptr == 0:
        return torch.cuda.default_stream(stream.device.index)
    return torch.cuda.ExternalStream(stream.ptr, device=f"cuda:{stream.device.index}")


def busy(torch, stream, cycles=SLEEP_CYCLES):
    """Queues a long GPU sleep on our stream, so later work there is visibly delayed."""
    with torch.cuda.stream(torch_stream(torch, stream)):
        torch.cuda._sleep(cycles)


# ---- CUDA against the CPU -----------------------------------------------------------------


def small_values(rng, name, shape):
    """Random values of dtype `name` in [-100, 100] (integers) or [-5, 5] (floats, each part
    of a complex), so that sums and products stay exact or nearly."""
    if name == "bool":
        return rng.random(shape) < 0.5
    dtype = numpy_dtype(name)
    if name.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape,
                            endpoint=True).astype(dtype)
    x = rng.uniform(-5, 5, size=shape)
    if name.startswith("complex"):
        x = x + 1j * rng.uniform(-5, 5, size=shape)
    return x.astype(dtype)


def both(a):
    """a as a CPU tensor and as a CUDA tensor."""
    cpu = tensor(np.asarray(a))
    return cpu, cpu.to_device(CUDA_DEVICE)


def host(t):
    return to_numpy(t)


def same_bits(got, want):
    """A CUDA result against the CPU's: same dtype, shape and bytes (NaN payloads and signed
    zeros included)."""
    assert str(got.device) != "cpu"
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    g, w = np.ascontiguousarray(host(got)), np.ascontiguousarray(host(want))
    assert g.tobytes() == w.tobytes(), (g, w)


def same_error(run, cpu, gpu, error):
    """run(cpu) and run(gpu) raise `error` with the same message."""
    with pytest.raises(error) as want:
        run(cpu)
    with pytest.raises(error) as got:
        run(gpu)
    assert str(got.value) == str(want.value)

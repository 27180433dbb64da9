"""tests/cuda_helpers.py: what the CUDA runtime and DLPack tests share.

Until xpuruntime's own CUDA kernels land, GPU work in these tests comes from transfers
(to_device, asarray), DLPack and PyTorch/CuPy kernels running on our streams; a test that
needs our kernels says so with ``needs_kernels(...)``.
"""

import os

import pytest

import xpuruntime as xrt
from dlpack_abi import managed

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

"""tests/test_fft_cuda.py: fft on CUDA alone: a non-default stream, graph capture, threads,
the plan cache, a missing cuFFT, and that list_kernels/explain name the cuFFT kernels;
without a GPU, the sources of the fft family's NVRTC kernels are compiled for sm_90 here.
"""

import subprocess
import sys
import threading

import numpy as np
import pytest

import xpuruntime as xrt
from common import CUDA_DEVICE
from cuda_helpers import busy, core, torch, torch_stream  # noqa: F401 (fixture)
from fft_helpers import random_array, widened, place, check, uses_cufft


# CUDA-only tests run on the first CUDA device.
DEVICE = CUDA_DEVICE


# ---- CUDA: registration and sources (no GPU needed) ----------------------------------------------

@pytest.mark.parametrize("op", ["fft_c2c", "fft_r2c", "fft_c2r"])
def test_transforms_are_registered_as_cufft(op):
    assert uses_cufft(op)


@pytest.mark.parametrize("op", ["fftfreq", "rfftfreq"])
def test_frequencies_are_native(op):
    assert any(k["device"] == "cuda" and k["name"] == "nvrtc" for k in xrt.list_kernels(op))


def test_fft_samples_compile():
    if not xrt.cuda.status()["nvrtc"]["found"]:
        pytest.skip("NVRTC is not installed (pip install nvidia-cuda-nvrtc)")
    result = core._cuda._compile_all(arch="sm_90", family="fft")
    assert result["failures"] == []
    assert result["compiled"] >= 20


def test_cufft_version_or_how_to_install_it():
    try:
        version = xrt.cuda.cufft_version()
    except xrt.CudaError as e:
        assert "pip install nvidia-cufft" in str(e)
    else:
        assert version >= 11000


# ---- CUDA: streams, graphs, threads, dispatch ----------------------------------------------------

@pytest.mark.cuda
def test_transforms_run_on_the_current_stream_without_waiting(torch):  # noqa: F811
    """The inputs are written on a busy stream by torch; transforms queued on that stream
    must read them after the write, and must return before it has happened."""
    a = random_array(11, (64, 1000), "complex64")
    r = np.ascontiguousarray(a[:, :999].real)
    x, xr = place(DEVICE, np.zeros_like(a)), place(DEVICE, np.zeros_like(r))
    s = xrt.cuda.Stream()
    with s:  # plans and kernels made here, so that the calls below only enqueue
        xrt.fft.ifft(x, axis=0), xrt.fft.irfft(x), xrt.fft.rfft(xr)
    sources = torch.from_numpy(a).cuda(), torch.from_numpy(r).cuda()
    torch.cuda.synchronize()
    s.synchronize()
    busy(torch, s)
    with torch.cuda.stream(torch_stream(torch, s)):
        torch.from_dlpack(x).copy_(sources[0])
        torch.from_dlpack(xr).copy_(sources[1])
    with s:
        y = xrt.fft.ifft(x, axis=0)
        z = xrt.fft.irfft(x)
        w = xrt.fft.rfft(xr)
        assert not s.query()  # nothing waited for the sleep
        check(DEVICE, y, np.fft.ifft(widened(a), axis=0), "complex64", 64)
        check(DEVICE, z, np.fft.irfft(widened(a)), "float32", 2000)
        check(DEVICE, w, np.fft.rfft(widened(r)), "complex64", 999)


@pytest.mark.cuda
def test_graph_capture_and_replay(torch):  # noqa: F811
    a = random_array(12, (16, 256), "complex64")
    x = place(DEVICE, a)
    xrt.fft.fft(x), xrt.fft.irfft(x)  # plans are made before the capture
    g = xrt.cuda.CUDAGraph()
    with xrt.cuda.graph(g):
        y = xrt.fft.fft(x)
        z = xrt.fft.irfft(x, norm="ortho")
    b = random_array(13, (16, 256), "complex64")
    torch.from_dlpack(x).copy_(torch.from_numpy(b).cuda())
    torch.cuda.synchronize()
    g.replay()
    check(DEVICE, y, np.fft.fft(widened(b)), "complex64", 256)
    check(DEVICE, z, np.fft.irfft(widened(b), norm="ortho"), "float32", 512)


@pytest.mark.cuda
def test_threads_with_their_own_streams():
    errors = []

    def work(seed):
        try:
            with xrt.cuda.Stream():
                for k in range(20):
                    a = random_array(seed * 100 + k, (8, 100 + seed), "complex64")
                    check(DEVICE, xrt.fft.fft(place(DEVICE, a)), np.fft.fft(widened(a)),
                          "complex64", 100)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.cuda
def test_plan_cache_is_bounded_and_reused():
    xrt.cuda.clear_cufft_plan_cache()
    try:
        xrt.cuda.set_cufft_plan_cache_capacity(3)
        for n in range(100, 108):
            a = random_array(n, (n,), "complex64")
            check(DEVICE, xrt.fft.fft(place(DEVICE, a)), np.fft.fft(widened(a)), "complex64", n)
        info = xrt.cuda.cufft_plan_cache_info(DEVICE)
        assert info["size"] == 3 and info["capacity"] == 3 and info["evictions"] >= 5
        hits = info["hits"]
        a = random_array(0, (107,), "complex64")
        check(DEVICE, xrt.fft.fft(place(DEVICE, a)), np.fft.fft(widened(a)), "complex64", 107)
        assert xrt.cuda.cufft_plan_cache_info(DEVICE)["hits"] == hits + 1
        xrt.cuda.set_cufft_plan_cache_capacity(0)  # no caching: plans die after each call
        check(DEVICE, xrt.fft.fft(place(DEVICE, a)), np.fft.fft(widened(a)), "complex64", 107)
        assert xrt.cuda.cufft_plan_cache_info(DEVICE)["size"] == 0
    finally:
        xrt.cuda.set_cufft_plan_cache_capacity(64)
    with pytest.raises(ValueError):
        xrt.cuda.set_cufft_plan_cache_capacity(-1)


@pytest.mark.cuda
def test_explain_names_the_cufft_kernels():
    a = random_array(14, (4, 8), "complex64")
    x, xr = place(DEVICE, a), place(DEVICE, a.real)
    with xrt.explain() as log:
        xrt.fft.fftn(x)
        xrt.fft.rfft(xr)
        xrt.fft.irfft(x)
        xrt.fft.fftfreq(8, device=DEVICE)
        xrt.fft.rfftfreq(8, device=DEVICE)
    assert log.kernels("fft_c2c") == ["cufft", "cufft"]
    assert log.kernels("fft_r2c") == ["cufft"]
    assert log.kernels("fft_c2r") == ["cufft"]
    assert log.kernels("fftfreq") == ["nvrtc"]
    assert log.kernels("rfftfreq") == ["nvrtc"]


MISSING_CUFFT = """
import numpy as np
import xpuruntime as xrt
xrt._core._cuda.set_library_finder(None)  # cuFFT is opened on first use: hide the wheels
x = xrt.asarray(np.ones(8, np.complex64), device="cuda:0")
try:
    xrt.fft.fft(x)
except xrt.CudaError as e:
    print("CudaError:", e)
else:
    print("loaded")
"""


@pytest.mark.cuda
def test_missing_cufft_is_a_cuda_error():
    run = subprocess.run([sys.executable, "-c", MISSING_CUFFT], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    if run.stdout.startswith("loaded"):
        pytest.skip("cuFFT is on the system's library path too")
    assert "CudaError" in run.stdout and "pip install nvidia-cufft" in run.stdout

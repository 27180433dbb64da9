"""tests/test_cuda_fft.py: the fft extension on CUDA (cuFFT, cuda/fft_kernels.cpp) against
NumPy: every function of xrt.fft, the three norms, n shorter and longer than the axis, axes
anywhere and in any order, prime and odd lengths and length 1, strided, transposed and
negative-stride inputs, float32/complex64 and float64/complex128, a non-default stream,
graph capture, the plan cache, and that list_kernels/explain name the cuFFT kernels.

Tolerances: the error is measured against the largest value of NumPy's double-precision
result, and allowed to grow with log2(n) (cuFFT computes in the dtype's precision; the CPU
kernels compute in double, hence looser float32 bounds than tests/test_fft.py's).

Without a GPU, the sources of the fft family's NVRTC kernels are compiled for sm_90 here.
"""

import itertools
import math
import subprocess
import sys
import threading

import numpy as np
import pytest

import xpuruntime as xrt
from common import tensor, to_numpy
from cuda_helpers import busy, torch, torch_stream  # noqa: F401 (fixture)

DEVICE = "cuda:0"
NORMS = ("backward", "ortho", "forward")
REAL = ("float32", "float64")
COMPLEX_OF = {"float32": "complex64", "float64": "complex128",
              "complex64": "complex64", "complex128": "complex128"}
REAL_OF = {"float32": "float32", "float64": "float64",
           "complex64": "float32", "complex128": "float64"}
cuda = pytest.mark.cuda


def random_array(seed, shape, name):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if name.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(name)


def gpu(a):
    return tensor(np.ascontiguousarray(a)).to_device(DEVICE)


def host(t):
    return to_numpy(t.to_device("cpu"))


def widened(a):
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def check(t, expected, name, n):
    """t: a CUDA tensor of dtype `name` and expected's shape, within the tolerance."""
    assert isinstance(t, xrt.Tensor)
    assert t.device == xrt.Device(DEVICE)
    assert t.dtype == getattr(xrt, name)
    expected = np.asarray(expected)
    assert t.shape == expected.shape
    if expected.size == 0:
        return
    single = name in ("float32", "complex64")
    tol = (4e-7 if single else 2e-15) * (8 + 2 * math.log2(max(n, 2)))
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    error = float(np.max(np.abs(host(t).astype(expected.dtype) - expected)))
    assert error <= tol * scale, (error / scale, tol)


def uses_cufft(op):
    return any(k["device"] == "cuda" and k["name"] == "cufft" for k in xrt.list_kernels(op))


# ---- registration and sources (no GPU needed) ---------------------------------------------

@pytest.mark.parametrize("op", ["fft_c2c", "fft_r2c", "fft_c2r"])
def test_transforms_are_registered_as_cufft(op):
    assert uses_cufft(op)


@pytest.mark.parametrize("op", ["fftfreq", "rfftfreq"])
def test_frequencies_are_native(op):
    assert any(k["device"] == "cuda" and k["name"] == "nvrtc" for k in xrt.list_kernels(op))


def test_fft_samples_compile():
    if not xrt.cuda.status()["nvrtc"]["found"]:
        pytest.skip("NVRTC is not installed (pip install nvidia-cuda-nvrtc)")
    result = xrt._core._cuda._compile_all(arch="sm_90", family="fft")
    assert result["failures"] == []
    assert result["compiled"] >= 20


def test_cufft_version_or_how_to_install_it():
    try:
        version = xrt.cuda.cufft_version()
    except xrt.CudaError as e:
        assert "pip install nvidia-cufft" in str(e)
    else:
        assert version >= 11000


# ---- one axis ------------------------------------------------------------------------------

# A 3-d array puts every transformed axis first, in the middle (batch dimensions on both
# sides: cuFFT writes contiguous lines that a kernel scatters) and last.
SHAPE = (3, 10, 7)


def lengths_for(func, size):
    """n values: the default, shorter and longer than the axis."""
    return [None, max(1, size - 3), size + 4]


@cuda
@pytest.mark.parametrize("func, names", [
    ("fft", ("float32", "complex64", "float64", "complex128")),
    ("ifft", ("float32", "complex64", "float64", "complex128")),
    ("rfft", REAL),
    ("ihfft", REAL),
    ("irfft", ("float32", "complex64", "float64", "complex128")),
    ("hfft", ("float32", "complex64", "float64", "complex128")),
])
def test_one_axis_transforms_match_numpy(func, names):
    out_real = func in ("irfft", "hfft")
    cases = itertools.product(names, (0, 1, 2, -1), NORMS)
    for seed, (name, axis, norm) in enumerate(cases):
        a = random_array(seed, SHAPE, name)
        x = gpu(a)
        for n in lengths_for(func, a.shape[axis]):
            t = getattr(xrt.fft, func)(x, n=n, axis=axis, norm=norm)
            expected = getattr(np.fft, func)(widened(a), n=n, axis=axis, norm=norm)
            size = n or a.shape[axis]
            check(t, expected, REAL_OF[name] if out_real else COMPLEX_OF[name], 2 * size)


LENGTHS = [1, 2, 3, 4, 5, 7, 8, 16, 17, 53, 64, 97, 127, 128, 210, 243, 289, 293, 1000, 1009,
           4096, 2 * 3 * 5 * 7 * 11 * 13, 65537]


@cuda
@pytest.mark.parametrize("name", ["complex64", "complex128"])
@pytest.mark.parametrize("n", LENGTHS)
def test_lengths_primes_and_one(name, n):
    x = random_array(n, (2, n), name)
    d = gpu(x)
    check(xrt.fft.fft(d), np.fft.fft(widened(x)), name, n)
    check(xrt.fft.ifft(d), np.fft.ifft(widened(x)), name, n)
    r = np.ascontiguousarray(x.real)
    check(xrt.fft.rfft(gpu(r)), np.fft.rfft(widened(r)), name, n)
    h = np.ascontiguousarray(x[:, : n // 2 + 1])
    real = REAL_OF[name]
    check(xrt.fft.irfft(gpu(h), n=n), np.fft.irfft(widened(h), n=n), real, n)
    check(xrt.fft.hfft(gpu(h), n=n), np.fft.hfft(widened(h), n=n), real, n)
    check(xrt.fft.ihfft(gpu(r)), np.fft.ihfft(widened(r)), name, n)


@cuda
def test_large_batches_and_long_transforms():
    for shape, axis, name in [((4096, 256), -1, "complex64"), ((256, 4096), 0, "complex64"),
                              ((1 << 20,), 0, "complex128"), ((3, 100003), 1, "complex64")]:
        a = random_array(len(shape), shape, name)
        check(xrt.fft.fft(gpu(a), axis=axis), np.fft.fft(widened(a), axis=axis), name,
              shape[axis])
    r = random_array(4, (1000, 1001), "float32")
    check(xrt.fft.rfft(gpu(r)), np.fft.rfft(widened(r)), "complex64", 1001)


@cuda
def test_imaginary_parts_of_the_real_bins_are_ignored():
    """irfft/hfft read only the real part of X[0] and, for even n, of X[n/2] (as NumPy)."""
    x = np.array([[1 + 5j, 2 - 1j, 3 + 2j, 4 + 7j]] * 2)
    for func, n in itertools.product(("irfft", "hfft"), (6, 7)):
        check(getattr(xrt.fft, func)(gpu(x), n=n), getattr(np.fft, func)(x, n=n), "float64", n)


@cuda
@pytest.mark.parametrize("func", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("name", REAL)
def test_strided_transposed_and_negative_stride_inputs(func, name):
    base_name = name if func in ("rfft", "ihfft") else COMPLEX_OF[name]
    base = random_array(5, (9, 40), base_name)
    d = gpu(base)
    views = [
        (base[::-1, ::-2], d[::-1, ::-2]),
        (base.T, xrt.permute_dims(d, (1, 0))),
        (base[2:7, 1::3], d[2:7, 1::3]),
        (base[:, ::-1].T, xrt.permute_dims(d[:, ::-1], (1, 0))),
        (base[1:, 1:], d[1:, 1:]),  # an odd offset: real data misaligned for R2C
    ]
    out = REAL_OF[name] if func in ("irfft", "hfft") else COMPLEX_OF[name]
    for (view, dview), axis in itertools.product(views, (0, 1)):
        t = getattr(xrt.fft, func)(dview, axis=axis)
        expected = getattr(np.fft, func)(widened(view), axis=axis)
        check(t, expected, out, view.shape[axis] * 2)


@cuda
@pytest.mark.parametrize("func", ["irfft", "hfft", "irfftn", "fftn", "ifftn"])
def test_inputs_are_left_untouched(func):
    """cuFFT's C2R overwrites its input: the kernels hand it a copy."""
    a = random_array(6, (4, 6, 5), "complex64")
    x = gpu(a)
    getattr(xrt.fft, func)(x)
    getattr(xrt.fft, func)(x[:, ::2])
    np.testing.assert_array_equal(host(x), a)


@cuda
def test_empty_batches_and_padding_from_nothing():
    a = np.zeros((0, 5), dtype=np.complex64)
    check(xrt.fft.fft(gpu(a)), np.fft.fft(a), "complex64", 5)
    b = np.zeros((3, 0), dtype=np.complex128)
    t = xrt.fft.fft(gpu(b), n=4)
    np.testing.assert_array_equal(host(t), np.zeros((3, 4), np.complex128))
    t = xrt.fft.irfft(gpu(b), n=6)
    np.testing.assert_array_equal(host(t), np.zeros((3, 6)))


@cuda
def test_nan_and_infinity_propagate():
    x = np.zeros(12, dtype=np.complex64)
    x[3] = np.nan
    assert np.all(np.isnan(host(xrt.fft.fft(gpu(x)))))
    r = np.zeros(8)
    r[2] = np.inf
    assert not np.any(np.isfinite(host(xrt.fft.rfft(gpu(r)))))


# ---- n dimensions --------------------------------------------------------------------------

ND_SHAPE = (4, 6, 5)
ND_AXES = [None, (0,), (2, 0), (1, 2), (-1, -2), (0, 1, 2), (2, 0, 1), (1, 0, 2)]


def sides(a, axes, choice):
    """s: None, shorter or longer than the axes."""
    if choice == 0 or axes is None:
        return None
    return [max(1, a.shape[ax] - 2) if choice == 1 else a.shape[ax] + 3 for ax in axes]


@cuda
@pytest.mark.parametrize("func", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("name", ["float32", "complex64", "float64", "complex128"])
def test_nd_transforms_match_numpy(func, name):
    if func == "rfftn" and name.startswith("complex"):
        return
    a = random_array(7, ND_SHAPE, name)
    x = gpu(a)
    out = REAL_OF[name] if func == "irfftn" else COMPLEX_OF[name]
    for axes, choice, norm in itertools.product(ND_AXES, (0, 1, 2), NORMS):
        s = sides(a, axes, choice)
        t = getattr(xrt.fft, func)(x, s=s, axes=axes, norm=norm)
        expected = getattr(np.fft, func)(widened(a), s=s, axes=axes, norm=norm)
        check(t, expected, out, 2 * a.size)


@cuda
@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_2d_transforms_as_fft2(name):
    """fft2/ifft2/rfft2/irfft2 are the n-d transforms over the last two axes."""
    a = random_array(8, (3, 32, 48), name)
    x = gpu(a)
    for norm in NORMS:
        check(xrt.fft.fftn(x, axes=(-2, -1), norm=norm),
              np.fft.fft2(widened(a), norm=norm), name, 2 * 32 * 48)
        check(xrt.fft.ifftn(x, axes=(-2, -1), norm=norm),
              np.fft.ifft2(widened(a), norm=norm), name, 2 * 32 * 48)
        r = np.ascontiguousarray(a.real)
        check(xrt.fft.rfftn(gpu(r), axes=(-2, -1), norm=norm),
              np.fft.rfft2(widened(r), norm=norm), name, 2 * 32 * 48)
        check(xrt.fft.irfftn(x, axes=(-2, -1), norm=norm),
              np.fft.irfft2(widened(a), norm=norm), REAL_OF[name], 2 * 32 * 94)


@cuda
def test_nd_round_trip_of_a_large_square():
    a = random_array(9, (512, 512), "float32")
    back = xrt.fft.irfftn(xrt.fft.rfftn(gpu(a)), s=(512, 512), axes=(0, 1))
    check(back, a.astype(np.float64), "float32", 512 * 512)


# ---- frequencies and shifts ----------------------------------------------------------------

@cuda
@pytest.mark.parametrize("func", ["fftfreq", "rfftfreq"])
def test_frequencies_are_the_cpu_values(func):
    for n, d, dtype in itertools.product((1, 2, 7, 8, 1000, 99999), (1.0, 0.1, -2.5),
                                         (None, xrt.float32, xrt.float64)):
        kwargs = {} if dtype is None else {"dtype": dtype}
        t = getattr(xrt.fft, func)(n, d=d, device=DEVICE, **kwargs)
        want = getattr(xrt.fft, func)(n, d=d, **kwargs)
        assert t.device == xrt.Device(DEVICE) and t.dtype == want.dtype
        np.testing.assert_array_equal(host(t), to_numpy(want))
        np.testing.assert_allclose(host(t), getattr(np.fft, func)(n, d=d), rtol=1e-6)


@cuda
@pytest.mark.parametrize("func", ["fftshift", "ifftshift"])
def test_shifts_match_numpy(func):
    a = random_array(10, (5, 6, 7), "complex64")
    x = gpu(a)
    for axes in (None, 0, (1,), (2, 0), (-1, -2, -3)):
        np.testing.assert_array_equal(host(getattr(xrt.fft, func)(x, axes=axes)),
                                      getattr(np.fft, func)(a, axes=axes))
    view = a[::-1, 1::2]
    np.testing.assert_array_equal(host(getattr(xrt.fft, func)(x[::-1, 1::2])),
                                  getattr(np.fft, func)(view))


# ---- streams, graphs, threads, dispatch ----------------------------------------------------

@cuda
def test_transforms_run_on_the_current_stream_without_waiting(torch):  # noqa: F811
    """The inputs are written on a busy stream by torch; transforms queued on that stream
    must read them after the write, and must return before it has happened."""
    a = random_array(11, (64, 1000), "complex64")
    r = np.ascontiguousarray(a[:, :999].real)
    x, xr = gpu(np.zeros_like(a)), gpu(np.zeros_like(r))
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
        check(y, np.fft.ifft(widened(a), axis=0), "complex64", 64)
        check(z, np.fft.irfft(widened(a)), "float32", 2000)
        check(w, np.fft.rfft(widened(r)), "complex64", 999)


@cuda
def test_graph_capture_and_replay(torch):  # noqa: F811
    a = random_array(12, (16, 256), "complex64")
    x = gpu(a)
    xrt.fft.fft(x), xrt.fft.irfft(x)  # plans are made before the capture
    g = xrt.cuda.CUDAGraph()
    with xrt.cuda.graph(g):
        y = xrt.fft.fft(x)
        z = xrt.fft.irfft(x, norm="ortho")
    b = random_array(13, (16, 256), "complex64")
    torch.from_dlpack(x).copy_(torch.from_numpy(b).cuda())
    torch.cuda.synchronize()
    g.replay()
    check(y, np.fft.fft(widened(b)), "complex64", 256)
    check(z, np.fft.irfft(widened(b), norm="ortho"), "float32", 512)


@cuda
def test_threads_with_their_own_streams():
    errors = []

    def work(seed):
        try:
            with xrt.cuda.Stream():
                for k in range(20):
                    a = random_array(seed * 100 + k, (8, 100 + seed), "complex64")
                    check(xrt.fft.fft(gpu(a)), np.fft.fft(widened(a)), "complex64", 100)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@cuda
def test_plan_cache_is_bounded_and_reused():
    xrt.cuda.clear_cufft_plan_cache()
    try:
        xrt.cuda.set_cufft_plan_cache_capacity(3)
        for n in range(100, 108):
            a = random_array(n, (n,), "complex64")
            check(xrt.fft.fft(gpu(a)), np.fft.fft(widened(a)), "complex64", n)
        info = xrt.cuda.cufft_plan_cache_info(DEVICE)
        assert info["size"] == 3 and info["capacity"] == 3 and info["evictions"] >= 5
        hits = info["hits"]
        a = random_array(0, (107,), "complex64")
        check(xrt.fft.fft(gpu(a)), np.fft.fft(widened(a)), "complex64", 107)
        assert xrt.cuda.cufft_plan_cache_info(DEVICE)["hits"] == hits + 1
        xrt.cuda.set_cufft_plan_cache_capacity(0)  # no caching: plans die after each call
        check(xrt.fft.fft(gpu(a)), np.fft.fft(widened(a)), "complex64", 107)
        assert xrt.cuda.cufft_plan_cache_info(DEVICE)["size"] == 0
    finally:
        xrt.cuda.set_cufft_plan_cache_capacity(64)
    with pytest.raises(ValueError):
        xrt.cuda.set_cufft_plan_cache_capacity(-1)


@cuda
def test_explain_names_the_cufft_kernels():
    a = random_array(14, (4, 8), "complex64")
    x, xr = gpu(a), gpu(a.real)
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
xrt._core._cuda.set_search_paths([])  # cuFFT is opened on first use: hide the wheels
x = xrt.asarray(np.ones(8, np.complex64), device="cuda:0")
try:
    xrt.fft.fft(x)
except xrt.CudaError as e:
    print("CudaError:", e)
else:
    print("loaded")
"""


@cuda
def test_missing_cufft_is_a_cuda_error():
    run = subprocess.run([sys.executable, "-c", MISSING_CUFFT], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    if run.stdout.startswith("loaded"):
        pytest.skip("cuFFT is on the system's library path too")
    assert "CudaError" in run.stdout and "pip install nvidia-cufft" in run.stdout

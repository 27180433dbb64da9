"""tests/test_cuda_sorting.py: the native CUDA sort, argsort and searchsorted give the CPU's
results bit for bit: every real numeric dtype, ascending and descending, ties kept in input order,
NaN / ±0 / ±inf, rows of every length the kernels tell apart (0, 1, 31, 1000, 2048 in shared
memory; 2049 and up through the onesweep radix sort, around its tiles of 3072 and 4096
keys, up to 2^22), many short rows, batches of long rows, input that makes the radix sort
skip some or all of its passes (equal keys, few distinct bytes), sorted and reversed input,
the 4-bit radix sort behind XPURUNTIME_CUDA_SORT=lsd4, other axes and strided views.

Without a GPU, the kernels' sources are compiled for sm_90 by test_cuda_jit.py's
compile-all test (the family registers samples with kernel_check.h), and the radix kernels
run on the host emulator in test_cuda_sort_emulated.py.
"""

import numpy as np
import pytest

import xpuruntime as xrt
from common import ALL, numpy_dtype, tensor, to_numpy

pytestmark = pytest.mark.cuda

# bool is not a real numeric dtype: sort, argsort and searchsorted reject it (TypeError).
REAL = tuple(n for n in ALL if not n.startswith("complex") and n != "bool")
FLOATS = ("float16", "bfloat16", "float32", "float64")
rng = np.random.default_rng(5)


def values(name, shape, few=False):
    """Random values of dtype `name`; few=True draws from a handful (many ties)."""
    if name == "bool":
        return rng.random(shape) < 0.5
    dtype = numpy_dtype(name)
    if few:
        return rng.integers(0, 4, size=shape).astype(dtype)
    if name.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    x = rng.standard_normal(shape) * 100
    return x.astype(dtype)


def with_specials(a):
    """a (float) with NaNs of two payloads, ±0 and ±inf spread over it."""
    flat = a.reshape(-1)
    k = flat.size
    if k == 0:
        return a
    bits = flat.view(np.uint16 if flat.itemsize == 2 else
                     np.uint32 if flat.itemsize == 4 else np.uint64)
    specials = [np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf]
    positions = rng.integers(0, k, size=max(1, k // 5))
    for i, p in enumerate(positions):
        flat[p] = specials[i % len(specials)]
    if k > 3:  # a NaN with another payload
        q = rng.integers(0, k)
        flat[q] = np.nan
        bits[q] |= 1
    return a


def bits(t):
    a = to_numpy(t.to_device("cpu") if str(t.device) != "cpu" else t)
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def check(a, axis=-1, descending=False, stable=True):
    cpu = tensor(a)
    gpu = cpu.to_device("cuda:0")
    for fn in (xrt.sort, xrt.argsort):
        want = fn(cpu, axis=axis, descending=descending, stable=stable)
        got = fn(gpu, axis=axis, descending=descending, stable=stable)
        assert str(got.device) != "cpu"
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(bits(got), bits(want), err_msg=f"{fn.__name__} {a.dtype}")


def test_native_kernels_registered():
    for op in ("sort", "argsort", "searchsorted"):
        assert any(k["device"] == "cuda" and k["name"] == "nvrtc" for k in xrt.list_kernels(op))


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("n", [0, 1, 2, 31, 1000, 2049])
@pytest.mark.parametrize("descending", [False, True])
def test_lengths(name, n, descending):
    a = values(name, (3, n))
    if name in FLOATS:
        a = with_specials(a)
    check(a, descending=descending)


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("descending", [False, True])
def test_ties_are_stable(name, descending):
    for n in (31, 1000, 5000):
        check(values(name, (2, n), few=True), descending=descending)


@pytest.mark.parametrize("name", ["float32", "float64", "int64", "uint8", "float16", "bfloat16"])
def test_long_row(name):
    a = values(name, (1 << 20,))
    if name in FLOATS:
        a = with_specials(a)
    check(a)
    check(a, descending=True)


@pytest.mark.parametrize("name", ["float32", "float64", "int64", "int32", "float16", "uint8"])
@pytest.mark.parametrize("n", [2048, 2049, 3071, 3072, 3073, 4095, 4096, 4097, 12289])
def test_lengths_around_radix_tiles(name, n):
    # Above 2048 the onesweep radix sort; its tiles hold 4096 keys of up to 32 bits and
    # 3072 of 64 bits.
    a = values(name, (2, n))
    if name in FLOATS:
        a = with_specials(a)
    check(a)
    check(a, descending=True, stable=False)


@pytest.mark.parametrize("name", ["float32", "int64", "float64", "uint32"])
def test_very_long_row(name):
    a = values(name, (1 << 22,))
    if name in FLOATS:
        a = with_specials(a)
    check(a)
    check(a, descending=True)


def test_batches_of_long_rows():
    check(with_specials(values("float32", (16, 70000))))
    check(values("int32", (5, 100000), few=True), descending=True)
    check(values("float64", (64, 4100)), stable=False)


def test_radix_passes_skipped():
    # Equal keys: every pass is skipped and the input order is the result (-0.0 and 0.0
    # are equal keys with their own bits).
    zeros = np.zeros((2, 50000), np.float32)
    zeros[0, ::3] = -0.0
    check(zeros)
    check(np.full((3, 9000), -5, np.int64), descending=True)
    nans = np.full((1, 30000), np.nan)
    nans.view(np.uint64)[0, ::7] |= 5
    check(nans)
    # Few distinct bytes: passes over the constant ones are skipped, rows skip different
    # passes, and every row still finds its keys.
    a = rng.choice(np.array([0, 256, 65536, 1 << 40], np.int64), size=(3, 40000))
    a[1] = rng.integers(0, 7, 40000)
    a[2] = 1 << 50
    check(a)
    check(rng.integers(-3, 3, (4, 20000)).astype(np.int16), descending=True)


def test_sorted_and_reversed_input():
    ramp = np.arange(-60000, 60000, dtype=np.float32)
    check(ramp)
    check(ramp[::-1].copy())
    check(np.arange(200000, dtype=np.int64).reshape(2, -1), descending=True)


@pytest.mark.parametrize("setting", ["lsd4", "onesweep:8", "onesweep:20", "onesweep:12:0",
                                     "onesweep:16:4"])
def test_radix_settings(monkeypatch, setting):
    # The 4-bit radix sort (kept for rows of 2^30 and more, and for comparisons) and
    # other shapes of the onesweep pass (items per thread, launch bound) give the same
    # results.
    monkeypatch.setenv("XPURUNTIME_CUDA_SORT", setting)
    check(with_specials(values("float32", (3, 20000))))
    check(values("int64", (2, 30000)), descending=True)


@pytest.mark.parametrize("name", ["float32", "int16"])
def test_many_short_rows(name):
    check(values(name, (20000, 7)))
    check(values(name, (3000, 100), few=True), descending=True)
    check(values(name, (50, 4000)))


def test_other_axes_and_views():
    a = with_specials(values("float32", (5, 300, 4)))
    for axis in (0, 1, 2, -1):
        check(a, axis=axis)
        check(a, axis=axis, descending=True)
    cpu = tensor(values("int32", (64, 64)))
    gpu = cpu.to_device("cuda:0")
    for view in (lambda t: t[::2, ::-3], lambda t: t.mT):
        np.testing.assert_array_equal(bits(xrt.sort(view(gpu), axis=-1)),
                                      bits(xrt.sort(view(cpu), axis=-1)))
        np.testing.assert_array_equal(bits(xrt.argsort(view(gpu), axis=0)),
                                      bits(xrt.argsort(view(cpu), axis=0)))


@pytest.mark.parametrize("name", ["bool", "complex64"])
def test_rejected_dtypes(name):
    x = tensor(np.zeros(4, numpy_dtype(name))).to_device("cuda:0")
    for fn in (xrt.sort, xrt.argsort):
        with pytest.raises(TypeError):
            fn(x)
    with pytest.raises(TypeError):
        xrt.searchsorted(x, x)


def test_zero_dim_and_empty():
    for shape in [(), (0,), (4, 0), (0, 5)]:
        a = np.zeros(shape, np.float32) if shape == () else values("float32", shape)
        if shape == ():
            with pytest.raises(Exception):
                xrt.sort(tensor(a).to_device("cuda:0"))
            continue
        check(a)


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(name, side):
    a = values(name, (500,), few=True)
    if name in FLOATS:
        a = with_specials(a)
    x1 = xrt.sort(tensor(a))
    needles = values(name, (7, 30), few=True)
    if name in FLOATS:
        needles = with_specials(needles)
    x2 = tensor(needles)
    want = xrt.searchsorted(x1, x2, side=side)
    got = xrt.searchsorted(x1.to_device("cuda:0"), x2.to_device("cuda:0"), side=side)
    np.testing.assert_array_equal(bits(got), bits(want))
    sorter = xrt.argsort(tensor(a))
    want = xrt.searchsorted(tensor(a), x2, side=side, sorter=sorter)
    got = xrt.searchsorted(tensor(a).to_device("cuda:0"), x2.to_device("cuda:0"), side=side,
                           sorter=sorter.to_device("cuda:0"))
    np.testing.assert_array_equal(bits(got), bits(want))


def test_searchsorted_bad_sorter():
    a = tensor(np.arange(10, dtype=np.float32)).to_device("cuda:0")
    sorter = tensor(np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 10], np.int64)).to_device("cuda:0")
    with pytest.raises(IndexError):
        xrt.searchsorted(a, a, sorter=sorter)
    # the device stays usable
    np.testing.assert_array_equal(bits(xrt.searchsorted(a, a)), np.arange(10, dtype=np.uint64))


def test_radix_sort_runs_on_the_current_stream():
    """A sort enqueued on a side stream behind a long sleep there sees the data written
    just before it on that stream, and returns without waiting for it."""
    torch = pytest.importorskip("torch")
    from cuda_helpers import busy, torch_stream

    a = values("float32", (1 << 20,))
    want = bits(xrt.sort(tensor(a)))
    xrt.sort(tensor(a[:5000]).to_device("cuda:0"))  # compiled before the clock runs
    x = tensor(np.zeros_like(a)).to_device("cuda:0")
    stream = xrt.cuda.Stream()
    source = torch.from_numpy(a).cuda()
    torch.cuda.synchronize()
    with stream:
        busy(torch, stream)
        with torch.cuda.stream(torch_stream(torch, stream)):
            torch.from_dlpack(x.__dlpack__(stream=-1)).copy_(source)
        got = xrt.sort(x)
        assert not stream.query()  # still sleeping: the sort did not wait on the host
        host = got.to_device("cpu")  # a copy on the stream, after the sort
    np.testing.assert_array_equal(bits(host), want)

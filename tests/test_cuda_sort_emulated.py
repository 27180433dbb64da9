"""tests/test_cuda_sort_emulated.py: the CUDA onesweep radix sort (radix_sort.cuh) without
a GPU: its kernels run on the host through the emulator of tests/cuda_emulator, with small
tiles (64 threads x 3 keys, several digits per thread; and 256 threads x 5 keys, a digit
per thread as on the GPU) and upsweep chunks of 8 keys per thread, so that short rows
cross many tiles and chunks, and must give the CPU's sort and argsort bit for bit: every key width,
descending, ±0 and NaN payloads (the fix-up), all-equal rows (every pass skipped), few
distinct digits (some passes skipped), sorted and reversed input, several rows at once.
The pre-encoded pairs of radix_sort_pairs (unique and isin sort them) must give NumPy's
stable order of the keys' low bits, carrying any payload (not only positions), with the
caller's buffers reused between passes: every pass count, keys alone, skipped passes; and
the keys of values sorted without a pass of encoding (radix_sort_encoded).
The GPU runs the same kernels with larger blocks (the CUDA tests of test_sorting.py and
test_set_functions.py)."""

import numpy as np
import pytest

import xpuruntime as xrt
from common import numpy_dtype, tensor
import cuda_host_sort

rng = np.random.default_rng(11)


@pytest.fixture(scope="module", params=[(64, 3), (256, 5)], ids=["64x3", "256x5"])
def emulated(request):
    if cuda_host_sort.compiler() is None:
        pytest.skip("no C++ compiler to build the emulator")
    threads, items = request.param
    return cuda_host_sort.EmulatedRadixSort(threads=threads, items=items)


def random_values(name, shape):
    dtype = numpy_dtype(name)
    if name.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    return (rng.standard_normal(shape) * 100).astype(dtype)


def with_specials(a):
    flat = a.reshape(-1)
    width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[flat.itemsize]
    for i, v in enumerate([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf] * 8):
        flat[rng.integers(0, flat.size)] = v
    q = rng.integers(0, flat.size)
    flat[q] = np.nan
    flat.view(width)[q] |= 1  # a NaN with another payload
    return a


def check(emulated, a, descending=False):
    for arg, fn in ((False, xrt.sort), (True, xrt.argsort)):
        want = np.asarray(fn(tensor(a), axis=-1, descending=descending))
        got = emulated(a, arg=arg, descending=descending)
        np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8),
                                      err_msg=f"{fn.__name__} {a.dtype} {a.shape} "
                                              f"descending={descending}")


@pytest.mark.parametrize("name", ["int8", "uint8", "int16", "uint16", "float16", "bfloat16",
                                  "int32", "uint32", "float32", "int64", "uint64", "float64"])
def test_every_key_width(emulated, name):
    a = random_values(name, (2, 500))
    if name.startswith(("float", "bfloat")):
        a = with_specials(a)
    check(emulated, a)
    check(emulated, a, descending=True)


@pytest.mark.parametrize("n", [1, 191, 192, 193, 1279, 1280, 1281, 5000])
def test_lengths_around_tiles_and_chunks(emulated, n):
    # 192 and 1280 are the two configurations' tiles; chunks are 512 or 2048 keys.
    check(emulated, with_specials(random_values("float32", (3, n))))


def test_equal_keys_skip_every_pass(emulated):
    zeros = np.zeros((2, 700), np.float32)
    zeros[0, ::3] = -0.0  # equal keys, different bits: the input order is kept
    check(emulated, zeros)
    check(emulated, np.full((2, 700), 7, np.int64), descending=True)
    nans = np.full((1, 400), np.nan, np.float64)
    nans.view(np.uint64)[0, ::5] |= 3
    check(emulated, nans, descending=True)


def test_few_distinct_digits(emulated):
    # Only some bytes differ: the passes of the others are skipped, the rest must still
    # find their keys in the right buffer; rows differ in which passes they skip.
    a = rng.choice(np.array([0, 256, 65536, 1 << 40], np.int64), size=(3, 900))
    a[2] = rng.integers(0, 5, 900)
    check(emulated, a)
    check(emulated, rng.integers(0, 3, (2, 800)).astype(np.int32), descending=True)
    check(emulated, rng.integers(-2, 2, (2, 800)).astype(np.int16))


def test_sorted_and_reversed(emulated):
    ramp = np.arange(-500, 500, dtype=np.float32).reshape(2, 500)
    check(emulated, ramp)
    check(emulated, ramp[:, ::-1].copy())
    check(emulated, ramp, descending=True)
    check(emulated, np.arange(3000, dtype=np.uint32)[None, ::-1].copy())


def check_pairs(emulated, keys, bits, payload=True):
    order = rng.permutation(keys.size).astype(np.uint32).reshape(keys.shape) if payload else None
    got_keys, got_payload = emulated.pairs(keys, order, bits)
    low = keys & keys.dtype.type((1 << bits) - 1) if bits < 8 * keys.itemsize else keys
    perm = np.argsort(low, axis=-1, kind="stable")
    np.testing.assert_array_equal(got_keys, np.take_along_axis(keys, perm, -1),
                                  err_msg=f"keys {keys.dtype} bits={bits}")
    if payload:
        np.testing.assert_array_equal(got_payload, np.take_along_axis(order, perm, -1),
                                      err_msg=f"payload {keys.dtype} bits={bits}")


@pytest.mark.parametrize("payload", [True, False], ids=["pairs", "keys"])
@pytest.mark.parametrize("dtype,bits", [(np.uint32, 32), (np.uint32, 16), (np.uint32, 8),
                                        (np.uint32, 4), (np.uint32, 24), (np.uint64, 64),
                                        (np.uint64, 4), (np.uint64, 20)])
def test_encoded_pairs(emulated, dtype, bits, payload):
    # Keys hold no bits above `bits` (radix_sort_pairs' contract); many repeats (stability).
    top = min(1 << bits, 1 << 62)
    keys = rng.integers(0, top, size=(2, 1500), dtype=np.uint64).astype(dtype)
    keys[1, ::3] = keys[1, 0]
    check_pairs(emulated, keys, bits, payload)


@pytest.mark.parametrize("payload", [True, False], ids=["pairs", "keys"])
def test_encoded_pairs_skipped_passes(emulated, payload):
    # Every count of moving passes (0 to 4: the result must still land in the caller's
    # second buffer), rows that skip different passes, one row of a single key.
    base = rng.integers(0, 256, size=900).astype(np.uint32)
    rows = np.stack([np.full(900, 0x01020304, np.uint32), base, base << 8 | 7,
                     base | base << 16, base * 0x01010101])
    check_pairs(emulated, rows, 32, payload)
    check_pairs(emulated, np.array([[5]], np.uint32), 32, payload)
    check_pairs(emulated, np.full((1, 700), 3, np.uint64), 4, payload)
    wide = (rng.integers(0, 4, size=(2, 1300)).astype(np.uint64) << 40) | 9
    check_pairs(emulated, wide, 64, payload)


def sort_keys_of(a):
    """sort_keys.cuh's ascending keys of int32 or float64 values, in NumPy."""
    if a.dtype == np.int32:
        return a.view(np.uint32) ^ np.uint32(1 << 31)
    bits = a.view(np.uint64).copy()
    sign = np.uint64(1 << 63)
    bits[bits == sign] = 0  # -0.0 takes +0.0's key
    bits[np.isnan(a)] = ~sign  # every NaN the largest key
    negative = (bits >> np.uint64(63)) != 0
    return np.where(negative, ~bits, bits | sign)


@pytest.mark.parametrize("positions", [True, False], ids=["positions", "keys"])
@pytest.mark.parametrize("name", ["int32", "float64"])
def test_encoded_values(emulated, name, positions):
    a = random_values(name, (3, 1400))
    if name == "float64":
        a = with_specials(a)
    a[1] = a[1, 0]  # every pass skipped: the keys are written from the input
    a[2] = rng.integers(-3, 3, 1400)  # some passes skipped
    keys, order = emulated.encoded(a, positions)
    want = sort_keys_of(a)
    perm = np.argsort(want, axis=-1, kind="stable")
    np.testing.assert_array_equal(keys, np.take_along_axis(want, perm, -1))
    if positions:
        np.testing.assert_array_equal(order, perm.astype(np.uint32))

"""tests/test_float16_blocks.py: float16 elementwise ops on the CPU convert whole blocks
(F16C where the CPU has it, cpu/half_blocks.h) and must give the bits the per-element
conversions gave: every float16 value, NaN payloads, subnormals, tails of any length, a
broadcast scalar on either side, and predicates."""

import numpy as np
import pytest

import xpuruntime as xrt

ALL_HALVES = np.arange(65536, dtype=np.uint16).view(np.float16)


def bits(t):
    return np.from_dlpack(t).view(np.uint16)


def test_every_float16_value_survives_a_round_trip_through_float():
    x = xrt.asarray(ALL_HALVES)
    got = bits(x * 1.0)
    want = (ALL_HALVES * np.float16(1.0)).view(np.uint16)
    finite = ~np.isnan(ALL_HALVES)
    np.testing.assert_array_equal(got[finite], want[finite])
    assert np.isnan(np.from_dlpack(x * 1.0)[~finite]).all()


@pytest.mark.parametrize("n", [1, 7, 8, 9, 511, 512, 513, 4099, 100_003])
def test_add_matches_numpy_bit_for_bit_at_every_length(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float16) * np.float16(1000)
    b = rng.choice(ALL_HALVES[~np.isnan(ALL_HALVES)], n)
    got = bits(xrt.asarray(a) + xrt.asarray(b))
    np.testing.assert_array_equal(got, (a + b).view(np.uint16))


def test_rounding_to_subnormals_and_overflow_to_infinity():
    tiny = np.array([6e-8, 1e-7, 3e-5, 6.1e-5, -6e-8] * 3, dtype=np.float16)
    big = np.array([65504, 65504, -65504, 60000, 40000] * 3, dtype=np.float16)
    for a, b in [(tiny, tiny * np.float16(0.5)), (big, big)]:
        got = bits(xrt.asarray(a) + xrt.asarray(b))
        np.testing.assert_array_equal(got, (a + b).view(np.uint16))


@pytest.mark.parametrize("scalar_first", [False, True])
def test_a_broadcast_scalar_operand(scalar_first):
    a = np.linspace(-3, 3, 1001).astype(np.float16)
    x = xrt.asarray(a)
    got = (1.25 - x) if scalar_first else (x - 1.25)
    want = (np.float16(1.25) - a) if scalar_first else (a - np.float16(1.25))
    np.testing.assert_array_equal(bits(got), want.view(np.uint16))


def test_predicates_and_unary_functions():
    a = np.linspace(0.1, 5, 2049).astype(np.float16)
    b = a[::-1].copy()
    x, y = xrt.asarray(a), xrt.asarray(b)
    np.testing.assert_array_equal(np.from_dlpack(x < y), a < b)
    np.testing.assert_array_equal(bits(xrt.sqrt(x)), np.sqrt(a).view(np.uint16))
    np.testing.assert_allclose(np.from_dlpack(xrt.exp(x)).astype(np.float32),
                               np.exp(a.astype(np.float32)), rtol=1e-3)


def test_strided_float16_still_takes_the_general_path():
    a = np.arange(64, dtype=np.float16)
    x = xrt.asarray(a)
    np.testing.assert_array_equal(np.from_dlpack(x[::3][:21] + x[1::3]),
                                  a[::3][:21] + a[1::3])


@pytest.mark.parametrize("n", [1, 9, 513, 100_003])
def test_astype_between_float_and_float16_is_the_per_element_conversion(n):
    # contiguous runs convert in blocks (copy_kernels.cpp); the bits are NumPy's
    rng = np.random.default_rng(n)
    wide = (rng.standard_normal(n) * rng.choice([1e-7, 1e-3, 1.0, 1e4, 1e6], n)).astype(np.float32)
    wide[: min(n, 6)] = np.array([np.nan, np.inf, -np.inf, 65520.0, -0.0, 2.0**-25],
                                 dtype=np.float32)[: min(n, 6)]
    with np.errstate(over="ignore"):
        want = wide.astype(np.float16)
    got = bits(xrt.astype(xrt.asarray(wide), xrt.float16))
    np.testing.assert_array_equal(got, want.view(np.uint16))
    halves = np.resize(ALL_HALVES, n)
    back = np.from_dlpack(xrt.astype(xrt.asarray(halves), xrt.float32))
    finite = ~np.isnan(halves)
    np.testing.assert_array_equal(back[finite], halves[finite].astype(np.float32))
    assert np.isnan(back[~finite]).all()

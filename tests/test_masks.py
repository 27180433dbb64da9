"""tests/test_masks.py: boolean masks (x[mask], x[mask] = value) and nonzero, on every device
against NumPy, and on CUDA against the CPU.

The tests that take the `device` fixture run on the CPU and on CUDA. On CUDA (the tests
marked cuda), the native mask kernels (nonzero_count, nonzero, masked_gather,
masked_scatter) give the CPU's results bit for bit: x[mask], x[mask] = value and xrt.nonzero
for every dtype, masks over every axis and over some (leading, middle, trailing), strided
data and masks, sizes on both sides of the kernels' tiles, empty selections, NaN / -0.0 /
complex zeros, the CPU's errors word for word, a non-default stream, and x[mask] = scalar
returning without waiting for the stream. Without a GPU, the sources are compiled for sm_90
by test_cuda_jit.py's compile-all test (the families register samples with kernel_check.h).
"""

import functools

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import xpuruntime as xrt
from common import ALL, arrays, assert_tensor_equal, numpy_dtype, tensor
from cuda_helpers import both, busy, host, same_bits, same_error, small_values
from cuda_helpers import torch  # noqa: F401 (fixture)


# ---- every device: setitem, errors and nonzero against NumPy -------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_mask_setitem_every_dtype(device, name):
    dtype = numpy_dtype(name)
    a = (np.arange(30) % 5).astype(dtype).reshape(5, 6)
    mask = (np.arange(30) % 4 == 1).reshape(5, 6)
    fill = a.reshape(-1)[2]
    t = tensor(a.copy(), device)
    t[tensor(mask, device)] = tensor(np.asarray(fill), device)
    expected = a.copy()
    expected[mask] = fill
    assert_tensor_equal(t, expected)
    values = a[mask][::-1].copy()
    t[tensor(mask, device)] = tensor(values, device)
    expected[mask] = values
    assert_tensor_equal(t, expected)


def test_large_mask_setitem(device):
    rng = np.random.default_rng(0)
    n = 300_001
    a = rng.standard_normal(n)
    mask = rng.random(n) < 0.5
    t = tensor(a.copy(), device)
    t[tensor(mask, device)] = 0.0
    expected = a.copy()
    expected[mask] = 0.0
    assert_tensor_equal(t, expected)
    values = rng.standard_normal(int(mask.sum()))
    t[tensor(mask, device)] = tensor(values, device)
    expected[mask] = values
    assert_tensor_equal(t, expected)


@pytest.mark.parametrize("mask_shape", [(2,), (3, 3), (1, 4)])
def test_mask_shape_mismatch_raises_IndexError(device, mask_shape):
    with pytest.raises(IndexError, match="boolean index did not match"):
        xrt.zeros((3, 4), device=device)[tensor(np.ones(mask_shape, dtype=bool), device)]


def test_mask_dimensions_of_size_zero_select_nothing(device):
    # The standard lets a mask dimension be 0 where x's is not.
    out = xrt.zeros((3, 4), device=device)[tensor(np.ones((0, 4), dtype=bool), device)]
    assert out.shape == (0,)


@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
def test_nonzero_matches_numpy(device, data, shape, dtype_pair):
    a = data.draw(arrays(dtype_pair[0].name, shape), label="x")
    out = xrt.nonzero(tensor(a, device))
    expected = np.nonzero(a.astype(np.float32) if dtype_pair[0] == xrt.bfloat16 else a)
    assert isinstance(out, tuple) and len(out) == len(expected)
    for o, e in zip(out, expected, strict=True):
        assert_tensor_equal(o, e.astype(np.int64))


def test_nonzero_special_values(device):
    a = np.array([0.0, -0.0, np.nan, np.inf, 1e-300, 0j.real], dtype=np.float64)
    assert_tensor_equal(xrt.nonzero(tensor(a, device))[0], np.array([2, 3, 4]))
    c = np.array([0j, 1j, 1 + 0j, -0.0 - 0j], dtype=np.complex64)
    assert_tensor_equal(xrt.nonzero(tensor(c, device))[0], np.array([1, 2]))


def test_nonzero_large_and_strided(device):
    rng = np.random.default_rng(2)
    a = rng.random((300, 2000)) < 0.1
    for view in (a, a.T, a[::-1, ::3]):
        for o, e in zip(xrt.nonzero(tensor(view, device)), np.nonzero(view), strict=True):
            assert_tensor_equal(o, e.astype(np.int64))


def test_nonzero_of_0d_raises_ValueError(device):
    with pytest.raises(ValueError):
        xrt.nonzero(xrt.asarray(1.0, device=device))


# ---- every device: against NumPy -----------------------------------------------------------------

@given(st.data())
def test_mask_ops_match_numpy(device, data):
    name = data.draw(st.sampled_from(["bool", "int8", "uint16", "int64", "float32",
                                      "complex128"]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=9))
    dtype = numpy_dtype(name)
    a = data.draw(hnp.arrays(dtype, shape))
    m = data.draw(hnp.arrays(np.bool_, shape))
    x = xrt.asarray(a, device=device)
    mask = xrt.asarray(m, device=device)
    np.testing.assert_array_equal(host(x[mask]), a[m])
    for got, want in zip(xrt.nonzero(x), np.nonzero(a)):
        np.testing.assert_array_equal(host(got), want)
    lead = m.reshape(-1)[: shape[0]] if m.size >= shape[0] else np.zeros(shape[0], bool)
    np.testing.assert_array_equal(host(x[xrt.asarray(lead, device=device)]), a[lead])
    fill = data.draw(hnp.arrays(dtype, ()))
    b = a.copy()
    b[m] = fill
    x[mask] = xrt.asarray(fill, device=device)
    np.testing.assert_array_equal(host(x), b)


# ==== on CUDA against the CPU =====================================================================

DEVICE = "cuda:0"
OPS = ("nonzero_count", "nonzero", "masked_gather", "masked_scatter")
cuda = pytest.mark.cuda
rng = np.random.default_rng(11)
values = functools.partial(small_values, rng)

# Positions per tile of the compaction kernels are 4096 (2048 for 8- and 16-byte data);
# nonzero's by runs 8192 for bytes.
SIZES = [1, 31, 2047, 2048, 4097, 8193, 70001]


def sparse(name, shape, density=0.3):
    """Values of which about `density` are nonzero, with the float zeros of both signs,
    NaN (nonzero) and complex values zero in one part only."""
    a = values(name, shape)
    flat = a.reshape(-1)
    zero = rng.random(flat.size) >= density
    flat[zero] = 0
    if name in ("float16", "bfloat16", "float32", "float64") and flat.size > 4:
        flat[rng.integers(0, flat.size)] = -0.0
        flat[rng.integers(0, flat.size)] = np.nan
    if name.startswith("complex") and flat.size > 4:
        flat[rng.integers(0, flat.size)] = 1j
        flat[rng.integers(0, flat.size)] = complex(-0.0, 0.0)
    return a


def mask_of(shape, density=0.5):
    return rng.random(shape) < density


def test_native_kernels_registered():
    for op in OPS:
        names = [k["name"] for k in xrt.list_kernels(op) if k["device"] == "cuda"]
        assert "nvrtc" in names and "host_fallback" in names, (op, names)


@cuda
def test_explain_names_the_native_kernels():
    x = xrt.asarray(np.arange(12.0).reshape(3, 4), device=DEVICE)
    m = x > 4
    with xrt.explain() as log:
        x[m]
        xrt.nonzero(m)
        x[m] = 0.0
        x[m] = xrt.ones((int(xrt.sum(m)),), dtype=x.dtype, device=DEVICE)
        x[m[:, 0]]
    for op in OPS:
        used = log.kernels(op)
        assert used and set(used) == {"nvrtc"}, (op, used)


# ---- nonzero and its count -----------------------------------------------------------------------

@cuda
@pytest.mark.parametrize("name", ALL)
def test_nonzero_every_dtype(name):
    for shape in [(70001,), (37, 129), (3, 5, 7, 9), (2, 1, 3, 1, 4)]:
        cpu, gpu = both(sparse(name, shape))
        want, got = xrt.nonzero(cpu), xrt.nonzero(gpu)
        assert len(got) == len(want) == len(shape)
        for g, w in zip(got, want):
            same_bits(g, w)


@cuda
@pytest.mark.parametrize("n", SIZES)
def test_nonzero_sizes_and_extremes(n):
    for a in (mask_of(n), np.zeros(n, bool), np.ones(n, bool)):
        cpu, gpu = both(a)
        same_bits(xrt.nonzero(gpu)[0], xrt.nonzero(cpu)[0])
        same_bits(xrt.count_nonzero(gpu), xrt.count_nonzero(cpu))


@cuda
def test_nonzero_over_many_tile_groups():
    """Aligned data goes by runs, one tile a block; groups of 32 tiles publish their counts
    (Note [Nonzero by runs]); unaligned data by ballot rows."""
    for name, shape, density in [("bool", (3000017,), 0.5), ("bool", (1237, 2029), 0.03),
                                 ("int8", (1000003,), 0.97), ("float32", (1000003,), 0.5),
                                 ("float16", (523, 1999), 0.2), ("complex128", (300007,), 0.5)]:
        a = sparse(name, shape, density) if name != "bool" else mask_of(shape, density)
        for view in (lambda t: t, lambda t: xrt.reshape(t, (-1,))[1:]):
            cpu, gpu = both(a)
            for g, w in zip(xrt.nonzero(view(gpu)), xrt.nonzero(view(cpu)), strict=True):
                same_bits(g, w)


@cuda
def test_nonzero_strided_and_errors():
    cpu, gpu = both(sparse("float32", (64, 48)))
    for view in (lambda t: t[::2, ::-3], lambda t: t.mT, lambda t: t[5]):
        for g, w in zip(xrt.nonzero(view(gpu)), xrt.nonzero(view(cpu))):
            same_bits(g, w)
    same_error(xrt.nonzero, *both(np.float32(1)), ValueError)
    for shape in [(0,), (3, 0)]:
        cpu, gpu = both(np.zeros(shape, np.int16))
        for g, w in zip(xrt.nonzero(gpu), xrt.nonzero(cpu)):
            same_bits(g, w)


@cuda
def test_count_of_unaligned_and_strided_masks():
    """The count reads contiguous aligned bool masks 16 bytes at a time, others per element."""
    a = mask_of(10007)
    cpu, gpu = both(a)
    x_cpu, x_gpu = both(values("int32", 10007))
    for view in (lambda t: t, lambda t: t[1:], lambda t: t[3:-5], lambda t: t[::3]):
        same_bits(view(x_gpu)[view(gpu)], view(x_cpu)[view(cpu)])
        same_bits(xrt.nonzero(view(gpu))[0], xrt.nonzero(view(cpu))[0])


# ---- x[mask] -------------------------------------------------------------------------------------

@cuda
@pytest.mark.parametrize("name", ALL)
def test_gather_every_dtype(name):
    for shape in [(SIZES[-1],), (33, 65), (4, 5, 6)]:
        x_cpu, x_gpu = both(values(name, shape))
        m_cpu, m_gpu = both(mask_of(shape))
        same_bits(x_gpu[m_gpu], x_cpu[m_cpu])
        # a mask over the leading axes, then over the middle one
        lead_cpu, lead_gpu = both(mask_of(shape[:1]))
        same_bits(x_gpu[lead_gpu], x_cpu[lead_cpu])
        if len(shape) == 3:
            mid_cpu, mid_gpu = both(mask_of(shape[1:2]))
            same_bits(x_gpu[:, mid_gpu], x_cpu[:, mid_cpu])
            same_bits(x_gpu[1:, mid_gpu, ::2], x_cpu[1:, mid_cpu, ::2])
            tail_cpu, tail_gpu = both(mask_of(shape[1:]))
            same_bits(x_gpu[:, tail_gpu], x_cpu[:, tail_cpu])


@cuda
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("density", [0.0, 0.02, 0.5, 1.0])
def test_gather_sizes_and_densities(n, density):
    x_cpu, x_gpu = both(values("float64", (n,)))
    m_cpu, m_gpu = both(mask_of(n, density))
    same_bits(x_gpu[m_gpu], x_cpu[m_cpu])


@cuda
def test_gather_strided_data_and_masks():
    x_cpu, x_gpu = both(values("complex128", (40, 50)))
    m_cpu, m_gpu = both(mask_of((50, 40)))
    same_bits(x_gpu.mT[m_gpu], x_cpu.mT[m_cpu])          # strided data, whole mask
    same_bits(x_gpu[m_gpu.mT], x_cpu[m_cpu.mT])          # strided mask
    same_bits(x_gpu[::-2][m_gpu.mT[::-2]], x_cpu[::-2][m_cpu.mT[::-2]])  # both
    y_cpu, y_gpu = both(values("int8", (6, 7, 8, 9)))
    k_cpu, k_gpu = both(mask_of((7, 8)))
    same_bits(y_gpu[:, k_gpu], y_cpu[:, k_cpu])          # outer and inner axes
    same_bits(y_gpu[::2, k_gpu, ::-3], y_cpu[::2, k_cpu, ::-3])
    l_cpu, l_gpu = both(mask_of((8, 9)))
    same_bits(y_gpu[..., l_gpu], y_cpu[..., l_cpu])      # trailing axes: outer only
    same_bits(y_gpu[1, 2:5, l_gpu], y_cpu[1, 2:5, l_cpu])


@cuda
def test_gather_mixed_with_integer_arrays():
    """A mask beside integers goes through nonzero and the integer-array gather."""
    x_cpu, x_gpu = both(values("float32", (5, 6, 7)))
    m = np.zeros(6, bool)
    m[[1, 2, 5]] = True
    m_cpu, m_gpu = both(m)
    i_cpu, i_gpu = both(np.array([0, 4, 2]))
    same_bits(x_gpu[i_gpu, m_gpu], x_cpu[i_cpu, m_cpu])
    same_bits(x_gpu[1, m_gpu], x_cpu[1, m_cpu])
    same_bits(x_gpu[:, m_gpu, 3], x_cpu[:, m_cpu, 3])


@cuda
def test_gather_empty_and_errors():
    x_cpu, x_gpu = both(values("float32", (4, 5)))
    for m in (np.zeros((4, 5), bool), np.zeros(4, bool)):
        m_cpu, m_gpu = both(m)
        same_bits(x_gpu[m_gpu], x_cpu[m_cpu])
    e_cpu, e_gpu = both(np.zeros((0, 5), np.float32))
    z_cpu, z_gpu = both(np.zeros((0,), bool))
    same_bits(e_gpu[z_gpu], e_cpu[z_cpu])
    bad_cpu, bad_gpu = both(mask_of((3,)))
    same_error(lambda pair: pair[0][pair[1]], (x_cpu, bad_cpu), (x_gpu, bad_gpu), IndexError)
    bad_cpu, bad_gpu = both(mask_of((4, 6)))
    same_error(lambda pair: pair[0][pair[1]], (x_cpu, bad_cpu), (x_gpu, bad_gpu), IndexError)


# ---- x[mask] = value -----------------------------------------------------------------------------

def assign(x, index, value):
    x[index] = value
    return x


@cuda
@pytest.mark.parametrize("name", ALL)
def test_scatter_every_dtype(name):
    for shape in [(SIZES[-1],), (33, 65), (4, 5, 6)]:
        a = values(name, shape)
        m = mask_of(shape)
        m_cpu, m_gpu = both(m)
        count = int(m.sum())
        fill = values(name, (1,))
        source = values(name, (count,))
        for value in (fill, source, fill.reshape(())):
            x_cpu, x_gpu = both(a.copy())
            v_cpu, v_gpu = both(value)
            same_bits(assign(x_gpu, m_gpu, v_gpu), assign(x_cpu, m_cpu, v_cpu))
        # a mask over the leading axis: one value, rows of values, broadcast rows
        lead = mask_of(shape[:1])
        l_cpu, l_gpu = both(lead)
        rows = values(name, (int(lead.sum()),) + shape[1:])
        row = values(name, shape[1:])
        for value in (fill, rows, row):
            x_cpu, x_gpu = both(a.copy())
            v_cpu, v_gpu = both(value)
            same_bits(assign(x_gpu, l_gpu, v_gpu), assign(x_cpu, l_cpu, v_cpu))


@cuda
def test_scatter_python_scalars_and_views():
    a = values("float32", (30, 40))
    m = mask_of((30, 40))
    m_cpu, m_gpu = both(m)
    for value in (2.5, 0, -0.0):
        x_cpu, x_gpu = both(a.copy())
        same_bits(assign(x_gpu, m_gpu, value), assign(x_cpu, m_cpu, value))
    # strided targets: a transposed view, a sliced view, a mask in the middle
    x_cpu, x_gpu = both(a.copy())
    t_cpu, t_gpu = both(m.T.copy())
    v = values("float32", (int(m.sum()),))
    v_cpu, v_gpu = both(v)
    assign(x_gpu.mT, t_gpu, v_gpu)
    assign(x_cpu.mT, t_cpu, v_cpu)
    same_bits(x_gpu, x_cpu)
    y = values("int16", (5, 6, 7))
    k = mask_of((6,))
    k_cpu, k_gpu = both(k)
    for value in (np.int16(7), values("int16", (5, int(k.sum()), 1)),
                  values("int16", (5, int(k.sum()), 7))):
        y_cpu, y_gpu = both(y.copy())
        v_cpu, v_gpu = both(value)
        same_bits(assign(y_gpu, (slice(None), k_gpu), v_gpu),
                  assign(y_cpu, (slice(None), k_cpu), v_cpu))
        y_cpu, y_gpu = both(y.copy())
        same_bits(assign(y_gpu[::-1, :, ::2], (slice(None), k_gpu), 3),
                  assign(y_cpu[::-1, :, ::2], (slice(None), k_cpu), 3))
        same_bits(y_gpu, y_cpu)


@cuda
@pytest.mark.parametrize("n", SIZES)
def test_scatter_sizes(n):
    a = values("complex64", (n,))
    for density in (0.0, 0.5, 1.0):
        m = mask_of(n, density)
        m_cpu, m_gpu = both(m)
        v_cpu, v_gpu = both(values("complex64", (int(m.sum()),)))
        x_cpu, x_gpu = both(a.copy())
        same_bits(assign(x_gpu, m_gpu, v_gpu), assign(x_cpu, m_cpu, v_cpu))


@cuda
def test_scatter_errors():
    a = values("float32", (4, 5))
    m = mask_of((4, 5), 0.5)
    m[0, 0] = True
    count = int(m.sum())
    m_cpu, m_gpu = both(m)

    def run(value_shape, dtype="float32", index=None):
        def go(pair):
            x, mask = pair
            value = xrt.asarray(values(dtype, value_shape), device=x.device)
            x[mask if index is None else index(mask)] = value
        return go

    cpu = (tensor(a.copy()), m_cpu)
    gpu = (tensor(a.copy()).to_device(DEVICE), m_gpu)
    same_error(run((count + 1,)), cpu, gpu, ValueError)
    same_error(run((2, count)), cpu, gpu, ValueError)
    same_error(run((1, 1)), cpu, gpu, ValueError)      # one value, too many dims
    same_error(run((1,), "float64"), cpu, gpu, TypeError)
    bad_cpu, bad_gpu = both(mask_of((5,)))
    same_error(run((1,)), (cpu[0], bad_cpu), (gpu[0], bad_gpu), IndexError)


# ---- streams -------------------------------------------------------------------------------------

@cuda
def test_masks_run_on_the_current_stream(torch):  # noqa: F811
    """Inputs written late on a busy stream are seen by the mask kernels on that stream."""
    n = 1 << 20
    a = values("float32", (n,))
    m = mask_of(n)
    s = xrt.cuda.Stream()
    base = xrt.asarray(a, device=DEVICE)
    mask = xrt.asarray(m, device=DEVICE)
    xrt.cuda.synchronize()
    with s:
        busy(torch, s)
        x = base + 1.0           # queued behind the sleep
        picked = x[mask]
        coordinates = xrt.nonzero(mask)[0]
        x[mask] = 0.0
        x[~mask] = x[~mask] * 2
        result = x.to_device("cpu")
    np.testing.assert_array_equal(host(picked), (a + 1.0)[m])
    np.testing.assert_array_equal(host(coordinates), np.nonzero(m)[0])
    expected = np.where(m, 0.0, (a + 1.0) * 2).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(result), expected)


@cuda
def test_assigning_one_value_does_not_wait(torch):  # noqa: F811
    """x[mask] = scalar needs no count: it returns with the stream still busy."""
    x = xrt.zeros((1 << 16,), dtype=xrt.float32, device=DEVICE)
    mask = xrt.asarray(mask_of(1 << 16), device=DEVICE)
    x[mask] = 1.0  # compiled and loaded before the stream is held up
    xrt.cuda.synchronize()
    s = xrt.cuda.Stream()
    with s:
        busy(torch, s, cycles=10 * 200_000_000)
        x[mask] = 1.0
        assert not s.query()
    s.synchronize()
    np.testing.assert_array_equal(host(x), host(mask).astype(np.float32))

"""tests/test_indexing_cuda.py: the native creation and indexing kernels on CUDA against
the CPU.

The native creation and indexing kernels (arange, linspace,
tril, triu, integer-array gather and scatter, take, take_along_axis) give the CPU's results
bit for bit: every dtype, every index dtype, negative indices, broadcast index arrays,
indexed axes first, last and in the middle, non-contiguous sources and targets, empty
selections, duplicates in a scatter (the last one wins, as on the CPU), and the CPU's
IndexError, word for word, for out-of-range indices (a scatter then writes nothing). Without
a GPU, the sources of these kernels are compiled for sm_90 by test_cuda_jit.py's compile-all
test.
"""

import functools

import numpy as np
import pytest

import xpuruntime as xrt
from common import ALL, INTEGER, NUMERIC
from cuda_helpers import both, host, same_bits, small_values


DEVICE = "cuda:0"
rng = np.random.default_rng(5)
values = functools.partial(small_values, rng)


def same_error(op_gpu, op_cpu, error=IndexError):
    with pytest.raises(error) as want:
        op_cpu()
    with pytest.raises(error) as got:
        op_gpu()
    assert str(got.value) == str(want.value)


def dtype_of(name):
    return getattr(xrt, name)


def uses_native(op):
    return any(k["device"] == "cuda" and k["name"] == "nvrtc" for k in xrt.list_kernels(op))


@pytest.mark.parametrize("op", ["arange", "linspace", "tril", "triu", "gather", "scatter",
                                "take_along_axis"])
def test_native_kernels_registered(op):
    assert uses_native(op)


# ---- creation ---------------------------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("name", NUMERIC)
def test_arange_every_dtype(name):
    d = dtype_of(name)
    cases = [(0, 37, 1), (5, -20, -3), (0, 0, 1)]
    if name.startswith("uint"):
        cases = [(0, 37, 1), (30, 2, -3), (0, 0, 1)]
    if not name.startswith(("int", "uint")):
        cases += [(-2.5, 7.25, 0.37), (1e3, -1e3, -13.1), (0.1, 0.9, 0.1)]
    else:
        cases += [(0.5, 9.7, 0.9)]  # float scalars with an integer dtype: cast
    for start, stop, step in cases:
        same_bits(xrt.arange(start, stop, step, dtype=d, device=DEVICE),
                  xrt.arange(start, stop, step, dtype=d))


@pytest.mark.cuda
def test_arange_large_and_wrapping():
    n = (1 << 20) + 3
    same_bits(xrt.arange(n, dtype=xrt.int64, device=DEVICE), xrt.arange(n, dtype=xrt.int64))
    same_bits(xrt.arange(0.0, n * 0.1, 0.1, dtype=xrt.float64, device=DEVICE),
              xrt.arange(0.0, n * 0.1, 0.1, dtype=xrt.float64))
    big = (1 << 62)
    same_bits(xrt.arange(-big, big, big // 3, dtype=xrt.int64, device=DEVICE),
              xrt.arange(-big, big, big // 3, dtype=xrt.int64))


@pytest.mark.cuda
@pytest.mark.parametrize("name", NUMERIC)
def test_linspace_every_dtype(name):
    d = dtype_of(name)
    for start, stop, num, endpoint in [(-3.3, 7.9, 50, True), (10, -10, 33, False),
                                       (0, 1, 1, True), (2, 5, 0, True), (0.0, 1e6, 1001, True)]:
        if name.startswith("uint") and min(start, stop) < 0:
            start, stop = abs(start), abs(stop)
        same_bits(xrt.linspace(start, stop, num, dtype=d, device=DEVICE, endpoint=endpoint),
                  xrt.linspace(start, stop, num, dtype=d, endpoint=endpoint))
    if name.startswith("complex"):
        same_bits(xrt.linspace(1 - 2j, -3 + 5.5j, 17, dtype=d, device=DEVICE),
                  xrt.linspace(1 - 2j, -3 + 5.5j, 17, dtype=d))


@pytest.mark.cuda
@pytest.mark.parametrize("name", ALL)
def test_tril_triu_every_dtype(name):
    a = values(name, (3, 5, 6))
    cpu, gpu = both(a)
    for k in (-7, -2, -1, 0, 1, 3, 9):
        same_bits(xrt.tril(gpu, k=k), xrt.tril(cpu, k=k))
        same_bits(xrt.triu(gpu, k=k), xrt.triu(cpu, k=k))


@pytest.mark.cuda
@pytest.mark.parametrize("view", [lambda t: xrt.matrix_transpose(t), lambda t: t[:, ::2, ::-1],
                                  lambda t: t[1:2], lambda t: t[:, :0]])
def test_tril_triu_views(view):
    a = values("float32", (4, 7, 9))
    cpu, gpu = both(a)
    for k in (-1, 0, 2):
        same_bits(xrt.tril(view(gpu), k=k), xrt.tril(view(cpu), k=k))
        same_bits(xrt.triu(view(gpu), k=k), xrt.triu(view(cpu), k=k))
    big = values("int64", (300, 700))
    cpu, gpu = both(big)
    same_bits(xrt.tril(gpu, k=-5), xrt.tril(cpu, k=-5))
    same_bits(xrt.triu(gpu.T, k=5), xrt.triu(cpu.T, k=5))


# ---- gather -----------------------------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("name", ALL)
def test_gather_every_dtype(name):
    a = values(name, (11, 6))
    cpu, gpu = both(a)
    idx = np.array([0, -1, 3, 10, -11, 3, 3], dtype=np.int64)
    ic, ig = both(idx)
    same_bits(gpu[ig], cpu[ic])
    same_bits(gpu[:, ig[:4] % 6], cpu[:, ic[:4] % 6])


@pytest.mark.cuda
@pytest.mark.parametrize("index_dtype", INTEGER)
def test_gather_every_index_dtype(index_dtype):
    a = values("float64", (9, 4, 5))
    cpu, gpu = both(a)
    idx = np.array([[1, 0], [3, 2], [0, 3]], dtype=index_dtype)
    ic, ig = both(idx)
    same_bits(gpu[:, ig], cpu[:, ic])
    same_bits(gpu[ig], cpu[ig.to_device("cpu")])
    if index_dtype.startswith("int"):
        neg = np.array([-1, -4, 2], dtype=index_dtype)
        nc, ng = both(neg)
        same_bits(gpu[:, ng, 1:], cpu[:, nc, 1:])
    same_bits(xrt.take(gpu, ig, axis=2), xrt.take(cpu, ic, axis=2))


@pytest.mark.cuda
def test_gather_broadcast_and_split_arrays():
    a = values("int32", (5, 6, 7, 3))
    cpu, gpu = both(a)
    i = np.array([[0], [4], [-2]])
    j = np.array([[1, -1, 2, 5]])
    ic, ig = both(i)
    jc, jg = both(j)
    same_bits(gpu[ig, jg], cpu[ic, jc])          # broadcast to (3, 4), axes first
    same_bits(gpu[:, ig, jg], cpu[:, ic, jc])    # in the middle
    same_bits(gpu[ig, :, jg], cpu[ic, :, jc])    # split: the result's axes go first
    same_bits(gpu[1, :, ig, jg % 3], cpu[1, :, ic, jc % 3])  # with an integer
    same_bits(gpu[..., jg % 3], cpu[..., jc % 3])


@pytest.mark.cuda
@pytest.mark.parametrize("view", [lambda t: t.T, lambda t: t[::2, ::-1], lambda t: t[:, 1:4],
                                  lambda t: xrt.permute_dims(t, (1, 0))[::3]])
def test_gather_non_contiguous_sources(view):
    a = values("complex128", (12, 9))
    cpu, gpu = both(a)
    idx = np.array([2, -1, 0, 1, 2], dtype=np.int16)
    ic, ig = both(idx)
    same_bits(view(gpu)[ig], view(cpu)[ic])
    same_bits(view(gpu)[:, ig[:3]], view(cpu)[:, ic[:3]])
    # A non-contiguous index array.
    big = np.array([[0, 1, 2], [-1, -2, 0]], dtype=np.int64)
    bc, bg = both(big)
    same_bits(view(gpu)[bg.T], view(cpu)[bc.T])


@pytest.mark.cuda
def test_gather_empty_and_large():
    a = values("float32", (7, 0, 3))
    cpu, gpu = both(a)
    idx = np.array([1, -7, 6])
    ic, ig = both(idx)
    same_bits(gpu[ig], cpu[ic])                       # nothing to move, indices checked
    e = np.zeros((0,), dtype=np.int64)
    ec, eg = both(e)
    same_bits(gpu[eg], cpu[ec])
    b = values("float32", (4, 5))
    bc, bg = both(b)
    same_bits(bg[eg], bc[ec])
    same_bits(bg[:, eg], bc[:, ec])
    large = values("uint16", (1 << 20,))
    lc, lg = both(large)
    pick = rng.integers(-(1 << 20), 1 << 20, size=300_000)
    pc, pg = both(pick)
    same_bits(lg[pg], lc[pc])


@pytest.mark.cuda
def test_gather_out_of_range():
    a = values("float32", (5, 4))
    cpu, gpu = both(a)
    cases = [("int64", [0, 5, 1, -9]), ("int64", [-6]), ("int8", [2, 2, 4, 100]),
             ("uint8", [0, 5, 1]), ("uint64", [2, 2, 4, 100]), ("int16", [1, -6, 7])]
    for dt, idx in cases:
        ic, ig = both(np.array(idx, dtype=dt))
        same_error(lambda: gpu[ig], lambda: cpu[ic])
        same_error(lambda: gpu[:, ig - 1], lambda: cpu[:, ic - 1])
        same_error(lambda: xrt.take(gpu, ig, axis=0), lambda: xrt.take(cpu, ic, axis=0))
    i, j = both(np.array([0, 1])), both(np.array([3, 4]))
    same_error(lambda: gpu[i[1], j[1]], lambda: cpu[i[0], j[0]])  # the second array is bad
    huge = both(np.array([1, 2**63 + 5], dtype=np.uint64))
    same_error(lambda: gpu[huge[1]], lambda: cpu[huge[0]])


# ---- take_along_axis --------------------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("name", ALL)
def test_take_along_axis_every_dtype(name):
    a = values(name, (4, 6, 5))
    cpu, gpu = both(a)
    for axis in (0, 1, -1):
        n = a.shape[axis]
        shape = list(a.shape)
        shape[axis] = 3
        idx = rng.integers(-n, n, size=shape)
        ic, ig = both(idx)
        same_bits(xrt.take_along_axis(gpu, ig, axis=axis), xrt.take_along_axis(cpu, ic, axis=axis))


@pytest.mark.cuda
@pytest.mark.parametrize("index_dtype", INTEGER)
def test_take_along_axis_broadcast_views_and_errors(index_dtype):
    a = values("float16", (6, 7))
    cpu, gpu = both(a)
    idx = np.array([[0, 3, 6, 1]], dtype=index_dtype)  # broadcasts along axis 0
    ic, ig = both(idx)
    same_bits(xrt.take_along_axis(gpu, ig, axis=1), xrt.take_along_axis(cpu, ic, axis=1))
    same_bits(xrt.take_along_axis(gpu.T, ig[:, :3] % 6, axis=1),
              xrt.take_along_axis(cpu.T, ic[:, :3] % 6, axis=1))
    col = np.array([[1], [5], [0]], dtype=index_dtype)
    cc, cg = both(col)
    same_bits(xrt.take_along_axis(gpu[:, ::-2], cg, axis=0),
              xrt.take_along_axis(cpu[:, ::-2], cc, axis=0))
    empty_c, empty_g = both(np.zeros((0, 7), dtype=index_dtype))
    same_bits(xrt.take_along_axis(gpu, empty_g, axis=0), xrt.take_along_axis(cpu, empty_c, axis=0))
    bad = np.array([[0, 7, 1, 9]], dtype=index_dtype)
    bc, bg = both(bad)
    same_error(lambda: xrt.take_along_axis(gpu, bg, axis=1),
               lambda: xrt.take_along_axis(cpu, bc, axis=1))


# ---- scatter ----------------------------------------------------------------------------

def scatter_both(a, index, value):
    """x[index] = value on a CPU and a CUDA copy of a; index(t) builds the index from the
    tensor's device copies of the arrays."""
    cpu, gpu = both(a)
    index_c, index_g = index
    value_c, value_g = value
    cpu[index_c] = value_c
    gpu[index_g] = value_g
    same_bits(gpu, cpu)


@pytest.mark.cuda
@pytest.mark.parametrize("name", ALL)
def test_scatter_every_dtype_with_duplicates(name):
    a = values(name, (10, 3))
    idx = np.array([1, -1, 4, 1, 9, 4, 1], dtype=np.int64)  # 1 three times, 4 and 9 twice
    ic, ig = both(idx)
    v = values(name, (7, 3))
    vc, vg = both(v)
    scatter_both(a, (ic, ig), (vc, vg))
    scatter_both(a, ((slice(None), ic[:3] % 3), (slice(None), ig[:3] % 3)),
                 both(values(name, (10, 3))))
    s = values(name, ())
    sc, sg = both(s)
    scatter_both(a, (ic, ig), (sc, sg))  # one value repeated


@pytest.mark.cuda
@pytest.mark.parametrize("index_dtype", INTEGER)
def test_scatter_index_dtypes_and_many_duplicates(index_dtype):
    a = values("float32", (50,))
    info = np.iinfo(index_dtype)
    idx = rng.integers(0 if info.min == 0 else -50, 50, size=5000).astype(index_dtype)
    ic, ig = both(idx)
    v = values("float32", (5000,))
    scatter_both(a, (ic, ig), both(v))


@pytest.mark.cuda
def test_scatter_broadcast_arrays_views_and_errors():
    a = values("int16", (6, 5, 4))
    i = np.array([[0], [5], [-1]])
    j = np.array([[1, -1, 2, 4]])
    ic, ig = both(i)
    jc, jg = both(j)
    scatter_both(a, ((ic, jc), (ig, jg)), both(values("int16", (3, 4, 4))))
    scatter_both(a, ((ic, slice(None), jc % 4), (ig, slice(None), jg % 4)),
                 both(values("int16", (3, 4, 5))))
    scatter_both(a, ((slice(None), jc), (slice(None), jg)), both(values("int16", (1, 4, 4))))
    # A non-contiguous target: the view writes through to its base.
    cpu, gpu = both(a)
    vc, vg = cpu[::2, :, ::-1], gpu[::2, :, ::-1]
    val = both(values("int16", (3, 4, 4)))
    vc[:, jc[0] % 4] = val[0]
    vg[:, jg[0] % 4] = val[1]
    same_bits(gpu, cpu)
    # Out of range: the CPU's message, and nothing written.
    bad = both(np.array([0, 2, 6, 1]))
    before = host(gpu).copy()
    same_error(lambda: gpu.__setitem__(bad[1], 7), lambda: cpu.__setitem__(bad[0], 7))
    same_error(lambda: gpu.__setitem__((slice(None), bad[1] - 9), val[1][0, 0, 0]),
               lambda: cpu.__setitem__((slice(None), bad[0] - 9), val[0][0, 0, 0]))
    assert host(gpu).tobytes() == before.tobytes()
    # Empty selections write nothing.
    e = both(np.zeros((0,), dtype=np.int32))
    scatter_both(a, (e[0], e[1]), both(values("int16", (0, 5, 4))))

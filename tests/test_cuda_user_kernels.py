"""tests/test_cuda_user_kernels.py: user kernels on the GPU: RawKernel, RawModule,
ElementwiseKernel and ReductionKernel against CuPy's classes (bit for bit for the same
source) and NumPy, on contiguous, strided and broadcast inputs; argument types; streams
shared with torch and CuPy; the JIT's caches. The CPU half is test_user_kernels.py."""

import numpy as np
import pytest

import xpuruntime as xrt
from common import to_numpy
from cuda_helpers import busy, core, cupy, jax, torch, torch_stream  # noqa: F401

pytestmark = pytest.mark.cuda

SCALE = r'''
extern "C" __global__ void scale(const float* x, float* y, float a, float b, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * a + b;
}
'''

# Writes each argument's bytes as the kernel's signature reads them, to check C types.
ARG_TYPES = r'''
extern "C" __global__ void arg_types(double* out, bool b, long long i, double f, float f32,
                                     short s, unsigned char u8, double re, double im) {
  out[0] = b; out[1] = (double)i; out[2] = f; out[3] = f32; out[4] = s; out[5] = u8;
  out[6] = re; out[7] = im;
}
'''


def dev(a):
    return xrt.asarray(np.ascontiguousarray(a), device="cuda:0")


def test_raw_kernel_matches_cupy_bit_for_bit(cupy):
    n = 1000
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    ours, theirs = xrt.RawKernel(SCALE, "scale"), cupy.RawKernel(SCALE, "scale")
    y = xrt.empty((n,), dtype=xrt.float32, device="cuda:0")
    ours(((n + 127) // 128,), (128,), (dev(x), y, np.float32(1.7), np.float32(0.3), n))
    cy = cupy.empty(n, dtype=cupy.float32)
    theirs(((n + 127) // 128,), (128,), (cupy.asarray(x), cy, np.float32(1.7),
                                         np.float32(0.3), n))
    assert to_numpy(y).tobytes() == cupy.asnumpy(cy).tobytes()


def test_raw_kernel_takes_dlpack_arrays_without_copies(cupy, torch):
    n = 256
    ours = xrt.RawKernel(SCALE, "scale")
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    y = cupy.zeros(n, dtype=cupy.float32)
    ours((2,), (128,), (x, y, np.float32(2), np.float32(1), n))
    torch.cuda.synchronize()
    assert np.array_equal(cupy.asnumpy(y), np.arange(n, dtype=np.float32) * 2 + 1)


def test_raw_kernel_argument_types_follow_cupy():
    k = xrt.RawKernel(ARG_TYPES, "arg_types")
    out = xrt.zeros((8,), dtype=xrt.float64, device="cuda:0")
    k((1,), (1,), (out, True, 2**40 + 3, 0.1, np.float32(0.25), np.int16(-7), np.uint8(200),
                   1.5, -2.5))
    assert to_numpy(out).tolist() == [1, 2**40 + 3, 0.1, 0.25, -7, 200, 1.5, -2.5]


# A static __shared__ array beside dynamic shared memory: each thread writes and reads
# back its slot of both, at the far end of the dynamic part.
SHARED_BOTH = r'''
extern "C" __global__ void shared_both(float* out, int floats) {
  __shared__ float own[256];
  extern __shared__ float dynamic[];
  own[threadIdx.x] = threadIdx.x;
  dynamic[floats - 1 - threadIdx.x] = 2.f * threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = own[threadIdx.x] + dynamic[floats - 1 - threadIdx.x];
}
'''


@pytest.mark.parametrize("dynamic_kb", [47, 48, 64])
def test_raw_kernel_dynamic_shared_memory_beside_static_past_48_kb(dynamic_kb):
    """The launch opts the function in when static and dynamic memory together pass 48 KB
    (48 KB of dynamic memory beside 1 KB of static failed with CUDA_ERROR_INVALID_VALUE)."""
    k = xrt.RawKernel(SHARED_BOTH, "shared_both")
    out = xrt.zeros((256,), dtype=xrt.float32, device="cuda:0")
    floats = dynamic_kb * 1024 // 4
    k((1,), (256,), (out, np.int32(floats)), shared_mem=dynamic_kb * 1024)
    assert to_numpy(out).tolist() == [3.0 * i for i in range(256)]


def test_raw_kernel_bad_arguments_are_type_errors():
    k = xrt.RawKernel(SCALE, "scale")
    with pytest.raises(TypeError, match="exactly one element"):
        k((1,), (1,), (np.ones(3, np.float32),))
    with pytest.raises(TypeError, match="a kernel argument must be"):
        k((1,), (1,), (object(),))
    with pytest.raises(ValueError, match="live on a CUDA device"):
        k((1,), (1,), (xrt.asarray([1.0]),))


def test_raw_kernel_compile_error_carries_nvrtc_log():
    k = xrt.RawKernel('extern "C" __global__ void k(float* x) { x[0] = y; }', "k")
    with pytest.raises(xrt.CudaError, match="could not compile kernel 'k'(.|\\n)*"
                                            'identifier "y" is undefined'):
        k((1,), (1,), (xrt.zeros((1,), device="cuda:0"),))
    missing = xrt.RawKernel('extern "C" __global__ void k() {}', "other")
    with pytest.raises(xrt.CudaError, match="not defined by its source"):
        missing((1,), (1,), ())


def test_raw_kernel_uses_the_jit_caches():
    source = SCALE.replace("scale", "scale_cached")
    xrt.RawKernel(source, "scale_cached").compile()
    before = core._cuda.jit_cache_info()["compiles"]
    xrt.RawKernel(source, "scale_cached").compile()
    assert core._cuda.jit_cache_info()["compiles"] == before
    attributes = xrt.RawKernel(source, "scale_cached").attributes
    assert attributes["max_threads_per_block"] >= 128 and attributes["num_regs"] > 0


def test_raw_module_template_kernels_match_cupy(cupy):
    code = "template <class T> __global__ void fx3(T* x, int n) { " \
           "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 3; }"
    exprs = ["fx3<float>", "fx3<double>"]
    ours, theirs = xrt.RawModule(code=code, name_expressions=exprs), \
        cupy.RawModule(code=code, name_expressions=exprs)
    for e, dtype in zip(exprs, (np.float32, np.float64)):
        a = np.arange(10, dtype=dtype) / 3
        x, cx = dev(a), cupy.asarray(a)
        ours.get_function(e)((1,), (32,), (x, np.int32(10)))
        theirs.get_function(e)((1,), (32,), (cx, np.int32(10)))
        assert to_numpy(x).tobytes() == cupy.asnumpy(cx).tobytes()


GLOBALS = r'''
__constant__ float table[4];
__device__ int offset;
template <class T> __device__ T scale;
extern "C" __global__ void read_globals(float* out) {
  int i = threadIdx.x;
  if (i < 4) out[i] = table[i] * scale<float> + offset;
}
'''


def test_raw_module_globals_are_the_memory_its_kernels_read():
    # A variable template's name expression forms its address, as NVRTC asks (and CuPy).
    m = xrt.RawModule(code=GLOBALS, name_expressions=["&scale<float>"])
    table = m.get_global("table", dtype=xrt.float32)
    assert table.shape == (4,) and table.dtype == xrt.float32 and table.device == xrt.Device("cuda:0")
    raw = m.get_global("table")
    assert raw.shape == (16,) and raw.dtype == xrt.uint8
    assert raw._data_ptr() == table._data_ptr()
    table[...] = xrt.asarray([1.0, 2.0, 3.0, 4.0], dtype=xrt.float32, device="cuda:0")
    m.get_global("offset", dtype=xrt.int32)[...] = xrt.asarray([10], dtype=xrt.int32,
                                                              device="cuda:0")
    m.get_global("&scale<float>", dtype=xrt.float32, shape=())[...] = 2.0
    out = xrt.zeros((4,), dtype=xrt.float32, device="cuda:0")
    m.get_function("read_globals")((1,), (32,), (out,))
    np.testing.assert_array_equal(to_numpy(out), [12.0, 14.0, 16.0, 18.0])
    # Another module of the same source is the same module (the JIT's cache): same memory.
    again = xrt.RawModule(code=GLOBALS, name_expressions=["&scale<float>"])
    np.testing.assert_array_equal(to_numpy(again.get_global("table", dtype=xrt.float32)),
                                  [1.0, 2.0, 3.0, 4.0])
    assert to_numpy(m.get_global("table", dtype=xrt.float32, shape=(2, 2))).tolist() == \
        [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(xrt.CudaError, match="no global variable 'missing'"):
        m.get_global("missing")
    with pytest.raises(ValueError, match="whole number"):
        m.get_global("offset", dtype=xrt.float64)  # 4 bytes
    with pytest.raises(ValueError, match="need"):
        m.get_global("table", dtype=xrt.float32, shape=(5,))
    with pytest.raises(TypeError, match="dtype"):
        m.get_global("table", dtype=np.float32)
    # A module that does not compile names the global asked for, not a kernel.
    broken = xrt.RawModule(code="__device__ int g; __device__ int h = y;")
    with pytest.raises(xrt.CudaError, match="could not compile the module of global 'g'"):
        broken.get_global("g")


def test_raw_kernel_orders_on_a_torch_stream(torch):
    n = 1 << 20
    s = xrt.cuda.Stream("cuda:0")
    x = xrt.zeros((n,), dtype=xrt.float32, device="cuda:0")
    y = xrt.zeros((n,), dtype=xrt.float32, device="cuda:0")
    tx = torch.from_dlpack(x)
    busy(torch, s)
    with torch.cuda.stream(torch_stream(torch, s)):
        tx.fill_(5.0)  # queued behind the sleep on s
    xrt.RawKernel(SCALE, "scale")(((n + 255) // 256,), (256,),
                                  (x, y, np.float32(2), np.float32(1), n), stream=s)
    s.synchronize()
    assert float(to_numpy(y).min()) == 11.0


def test_raw_kernel_orders_on_a_cupy_stream(cupy):
    n = 4096
    cs = cupy.cuda.Stream(non_blocking=True)
    with cs:
        cx = cupy.full(n, 3, dtype=cupy.float32)
        cy = cupy.zeros(n, dtype=cupy.float32)
        xrt.RawKernel(SCALE, "scale")((n // 256,), (256,),
                                      (cx, cy, np.float32(2), np.float32(0), n), stream=cs)
        cz = cy + 1  # CuPy work after ours, on the same stream
    cs.synchronize()
    assert np.all(cupy.asnumpy(cz) == 7)


# ---- ElementwiseKernel --------------------------------------------------------------------

OPERATION = "z = x * y + (T)3"
DTYPES = ["int8", "uint8", "int16", "int32", "int64", "uint32", "float16", "float32",
          "float64"]


def values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 10, size=shape)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "strided", "broadcast"])
def test_elementwise_matches_cupy_and_numpy(cupy, dtype, layout):
    a, b = values(dtype, (6, 8)), values(dtype, (6, 8), 1)
    ours = xrt.ElementwiseKernel("T x, T y", "T z", OPERATION, "ew_mad")
    theirs = cupy.ElementwiseKernel("T x, T y", "T z", OPERATION, "ew_mad")
    if layout == "contiguous":
        xa, xb, ca, cb, na, nb = dev(a), dev(b), cupy.asarray(a), cupy.asarray(b), a, b
    elif layout == "strided":
        xa, xb = dev(a).mT, dev(b)[::2].mT
        ca, cb = cupy.asarray(a).T, cupy.asarray(b)[::2].T
        na, nb = a.T, b[::2].T
        xa, ca, na = xa[:, ::2], ca[:, ::2], na[:, ::2]
    else:
        xa, xb = dev(a), dev(b[:1, :])
        ca, cb, na, nb = cupy.asarray(a), cupy.asarray(b[:1, :]), a, b[:1, :]
    got, want = ours(xa, xb), theirs(ca, cb)
    assert got.shape == want.shape
    assert to_numpy(got).tobytes() == cupy.asnumpy(want).tobytes()
    expected = (na * nb + np.asarray(3, dtype=dtype)).astype(dtype)
    np.testing.assert_array_equal(to_numpy(got), expected)


def test_elementwise_raw_and_scalars_match_cupy(cupy):
    op = "y = x[_ind.size() - 1 - i] * s"
    ours = xrt.ElementwiseKernel("raw T x, T s", "T y", op, "ew_rev")
    theirs = cupy.ElementwiseKernel("raw T x, T s", "T y", op, "ew_rev")
    a = np.arange(10, dtype=np.float32)
    got = ours(dev(a), np.float32(2), xrt.empty((10,), dtype=xrt.float32, device="cuda:0"))
    want = theirs(cupy.asarray(a), np.float32(2), cupy.empty(10, dtype=cupy.float32))
    assert to_numpy(got).tobytes() == cupy.asnumpy(want).tobytes()


def test_elementwise_raw_strided_arrays_index_through_their_strides():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    k = xrt.ElementwiseKernel("raw T x", "raw T y", "y[i] = x[i]", "ew_rawcopy")
    y = xrt.empty((6, 4), dtype=xrt.float32, device="cuda:0")
    k(dev(a).mT, y, size=24)
    np.testing.assert_array_equal(to_numpy(y), a.T)


def test_elementwise_writes_into_strided_outputs():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    out = xrt.zeros((4, 3), dtype=xrt.float64, device="cuda:0").mT
    xrt.ElementwiseKernel("T x", "T y", "y = -x", "ew_neg")(dev(a), out)
    np.testing.assert_array_equal(to_numpy(out), -a)


# ---- ReductionKernel ----------------------------------------------------------------------

NORM = ("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "rk_l2")


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True),
                                            ((0, 2), False)])
def test_reduction_matches_numpy(axis, keepdims):
    a = np.random.default_rng(3).standard_normal((5, 7, 9))
    got = xrt.ReductionKernel(*NORM)(dev(a), axis=axis, keepdims=keepdims)
    want = np.sqrt((a * a).sum(axis=axis, keepdims=keepdims))
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-12)


def test_reduction_integer_sum_matches_cupy_exactly(cupy):
    args = ("T x", "T y", "x", "a + b", "y = a", "0", "rk_sum")
    a = np.arange(4 * 1000, dtype=np.int64).reshape(4, 1000)
    got = xrt.ReductionKernel(*args)(dev(a).mT, axis=0)
    want = cupy.ReductionKernel(*args)(cupy.asarray(a).T, axis=0)
    np.testing.assert_array_equal(to_numpy(got), cupy.asnumpy(want))


def test_reduction_is_deterministic():
    a = np.random.default_rng(4).standard_normal((3, 100_000)).astype(np.float32)
    k = xrt.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rk_det")
    x = dev(a)
    first = to_numpy(k(x, axis=1)).tobytes()
    assert all(to_numpy(k(x, axis=1)).tobytes() == first for _ in range(5))


def test_reduction_without_identity_and_broadcast_inputs():
    k = xrt.ReductionKernel("T x, T w", "T y", "x * w", "max(a, b)", "y = a", None,
                            "rk_wmax")
    a = np.random.default_rng(5).standard_normal((6, 5))
    w = np.linspace(-1, 1, 5)
    got = k(dev(a), dev(w), axis=1)
    np.testing.assert_array_equal(to_numpy(got), (a * w).max(axis=1))
    with pytest.raises(ValueError, match="needs an identity"):
        k(dev(a[:, :0]), dev(w[:0]), axis=1)


@pytest.mark.parametrize("identity", ["0", None])
@pytest.mark.parametrize("shape, axis", [((300, 70), 0), ((5, 1000, 33), (0, 1)),
                                         ((2, 64, 3), 1), ((4097, 3), 1)])
def test_reduction_columns_and_rows_match_numpy(identity, shape, axis):
    # Note [Reduction kernel shapes]: columns for the first three (outputs adjacent).
    k = xrt.ReductionKernel("T x", "T y", "x", "a + b", "y = a", identity, "rk_cols")
    a = np.arange(np.prod(shape), dtype=np.int64).reshape(shape) % 97
    got = k(dev(a), axis=axis)
    np.testing.assert_array_equal(to_numpy(got), a.sum(axis=axis))


def test_reduction_replays_with_scalars_and_out():
    k = xrt.ReductionKernel("T x, T s", "T y", "x * s", "a + b", "y = a", "0", "rk_scaled")
    a = np.random.default_rng(6).standard_normal((64, 40))
    x = dev(a)
    for s in (2.0, 3.0, np.float64(0.5)):
        np.testing.assert_allclose(to_numpy(k(x, s, axis=0)), (a * s).sum(axis=0), rtol=1e-12)
    out = xrt.empty((40,), dtype=xrt.float64, device="cuda:0")
    for s in (1.0, 4.0):
        assert k(x, s, out=out, axis=0) is out
        np.testing.assert_allclose(to_numpy(out), (a * s).sum(axis=0), rtol=1e-12)
    first = to_numpy(k(x, 1.0, axis=0)).tobytes()
    assert all(to_numpy(k(x, 1.0, axis=0)).tobytes() == first for _ in range(3))


def test_elementwise_replays_convert_scalars_and_refuse_read_only_outputs():
    k = xrt.ElementwiseKernel("T x, T s", "T y", "y = x * s", "ew_scale_replay")
    x = xrt.ones((4, 5), dtype=xrt.float32, device="cuda:0")
    y = xrt.empty((4, 5), dtype=xrt.float32, device="cuda:0")
    for s in (2.0, 3.0, np.float32(4)):
        assert k(x, s, y) is y
        np.testing.assert_array_equal(to_numpy(y), np.full((4, 5), s, np.float32))
        np.testing.assert_array_equal(to_numpy(k(x, s)), np.full((4, 5), s, np.float32))
    ro = xrt.broadcast_to(xrt.zeros((5,), dtype=xrt.float32, device="cuda:0"), (4, 5))
    for _ in range(2):
        with pytest.raises(ValueError, match="read-only"):
            k(x, 2.0, ro)



def test_elementwise_replays_raw_and_several_outputs_on_any_stream():
    # Note [Replaying a user kernel call]: the first call records, the next ones replay
    # from C++ (_cuda._Replay), allocating both outputs and packing the raw one.
    k = xrt.ElementwiseKernel("T x", "T y, raw T z", "y = x + 1; z[i] = x * 2", "ew_two_out")
    a = np.arange(12.0).reshape(3, 4)
    x = dev(a)
    stream = xrt.cuda.Stream("cuda:0")
    for s in (None, None, stream, stream):
        y, z = k(x, stream=s)
        if s is not None:
            s.synchronize()
        np.testing.assert_array_equal(to_numpy(y), a + 1)
        np.testing.assert_array_equal(to_numpy(z), a * 2)
    assert [type(r) for r in k._recipes.values()] == [xrt._core._cuda._Replay]
    with pytest.raises(TypeError, match="stream"):
        k(x, stream=3.5)


def test_replay_tables_stay_bounded_over_many_shapes():
    # Note [Bounded replay tables]: each new shape is a new layout; the tables start over.
    from xpuruntime.kernels._layout import MAX_REPLAYS

    k = xrt.ElementwiseKernel("T x", "T y", "y = x + 1", "ew_many_shapes")
    for n in range(1, MAX_REPLAYS + 6):
        y = k(xrt.zeros((n,), dtype=xrt.float32, device="cuda:0"))
        assert len(k._recipes) <= MAX_REPLAYS and k._recorded <= MAX_REPLAYS
    np.testing.assert_array_equal(to_numpy(y), np.ones(MAX_REPLAYS + 5, np.float32))
    assert len(k._recipes) == k._recorded == 5
    np.testing.assert_array_equal(to_numpy(k(xrt.zeros((3,), device="cuda:0"))), [1, 1, 1])


def test_recorded_calls_replay_from_cpp_by_layout_and_keywords():
    """Note [Calling a recorded kernel from C++]: the second call of a layout replays from
    the C++ __call__ (its table grows once per key: the layout and the keywords as passed);
    what it returns is what the Python path returns, a new layout or a keyword that is not
    None, a bool, an int or a tuple of ints takes the Python path."""
    ew = xrt.ElementwiseKernel("T x, T s", "T y", "y = x * s", "ew_cpp_replay")
    a = np.arange(12.0).reshape(3, 4)
    x = dev(a)
    y = xrt.empty((3, 4), dtype=xrt.float64, device="cuda:0")
    for s in (2.0, 3.0, 4.0):
        np.testing.assert_array_equal(to_numpy(ew(x, s)), a * s)
        assert ew(x, s, y) is y
        np.testing.assert_array_equal(to_numpy(y), a * s)
        np.testing.assert_array_equal(to_numpy(ew(x, s, block_size=64)), a * s)
        np.testing.assert_array_equal(to_numpy(ew(x, s, stream=None)), a * s)
    assert ew._recorded == 4  # (x, s), (x, s, y), block_size=64, stream=None
    stream = xrt.cuda.Stream("cuda:0")
    for _ in range(2):  # a Stream is not part of a key: the Python path replays it
        got = ew(x, 5.0, stream=stream)
        stream.synchronize()
        np.testing.assert_array_equal(to_numpy(got), a * 5)
    assert ew._recorded == 4
    x32 = dev(a.astype(np.float32))  # another layout: recorded once more
    for _ in range(2):
        np.testing.assert_array_equal(to_numpy(ew(x32, 2.0)), (a * 2).astype(np.float32))
    assert ew._recorded == 5
    with pytest.raises(TypeError, match="unexpected keyword"):
        ew(x, 2.0, sizes=3)
    with pytest.raises(TypeError):
        ew(x)  # too few arguments: no recorded layout, the Python path's error

    two = xrt.ElementwiseKernel("T x", "T y, T z", "y = x + 1; z = x * 2", "ew_cpp_two")
    tup = xrt.ElementwiseKernel("T x", "T y", "y = -x", "ew_cpp_tuple", return_tuple=True)
    none = xrt.ElementwiseKernel("T x, raw T z", "", "z[i] = x * 3", "ew_cpp_none",
                                 no_return=True)
    z = xrt.zeros((3, 4), dtype=xrt.float64, device="cuda:0")
    for _ in range(3):
        p, q = two(x)
        np.testing.assert_array_equal(to_numpy(p), a + 1)
        np.testing.assert_array_equal(to_numpy(q), a * 2)
        (r,) = tup(x)
        np.testing.assert_array_equal(to_numpy(r), -a)
        assert none(x, z) is None
        np.testing.assert_array_equal(to_numpy(z), a * 3)
    assert two._recorded == tup._recorded == none._recorded == 1

    red = xrt.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rk_cpp_replay")
    out = xrt.empty((3,), dtype=xrt.float64, device="cuda:0")
    for _ in range(3):
        np.testing.assert_array_equal(to_numpy(red(x, axis=1)), a.sum(axis=1))
        np.testing.assert_array_equal(to_numpy(red(x, axis=(0, 1), keepdims=True)),
                                      a.sum(keepdims=True))
        np.testing.assert_array_equal(to_numpy(red(x)), a.sum())
        assert red(x, out=out, axis=1) is out  # a Tensor keyword: the Python path
        np.testing.assert_array_equal(to_numpy(out), a.sum(axis=1))
    assert red._recorded == 3


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_replayed_scalars_convert_as_numpy_does(dtype):
    """Note [Scalars of a replayed call]: a replay converts Python scalars in C++ where the
    value fits, and through the first call's conversion (NumPy's) otherwise; either way the
    kernel gets the same bytes, and the same errors, as the first call."""
    import warnings

    from xpuruntime.kernels._layout import scalar_value

    k = xrt.ElementwiseKernel(f"T x, {dtype} s", f"{dtype} y", "y = s", f"ew_scalar_{dtype}")
    x = xrt.zeros((3,), dtype=xrt.float32, device="cuda:0")
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    values = [True, False, 0, 1, 7, -1, 2.5, -0.0, float("nan"), float("inf"), 1e40, 2**53 + 1,
              2**63 - 1, 2**64, 2j]
    if info is not None:
        values += [int(info.min), int(info.max), int(info.min) - 1, int(info.max) + 1]
    for value in values:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = scalar_value(value, dtype)
        except (OverflowError, ValueError, TypeError) as error:
            for _ in range(2):  # the first call records, the second replays
                with pytest.raises(type(error)):
                    k(x, value)
            continue
        for _ in range(2):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = to_numpy(k(x, value))
            assert got.tobytes() == np.full(3, expected).tobytes(), (value, got, expected)


def test_reduction_replay_returns_fresh_outputs():
    k = xrt.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "rk_fresh")
    x = dev(np.ones((8, 16)))
    first, second = k(x, axis=1), k(x, axis=1)
    assert first is not second and first._data_ptr() != second._data_ptr()
    np.testing.assert_array_equal(to_numpy(first), np.full(8, 16.0))
    np.testing.assert_array_equal(to_numpy(second), np.full(8, 16.0))


# ---- the registry ------------------------------------------------------------------------


def test_pinned_user_kernel_replaces_the_builtin_and_shows_in_explain():
    k = xrt.ElementwiseKernel("T x1, T x2", "T y", "y = x1 + x2 + (T)1", "add_plus_one")
    xrt.register_kernel("add", "add_plus_one", k, device="cuda",
                        supports=lambda x1, x2: x1.dtype == xrt.float32)
    a = xrt.ones((4, 5), dtype=xrt.float32, device="cuda:0")
    try:
        with xrt.kernel_policy(xrt.KernelPolicy(add="add_plus_one")):
            with xrt.explain() as log:
                result = a + a
        np.testing.assert_array_equal(to_numpy(result), np.full((4, 5), 3, np.float32))
        assert any(r.kernel == "add_plus_one" for r in log.records if r.op == "add")
        np.testing.assert_array_equal(to_numpy(a + a), np.full((4, 5), 2, np.float32))
    finally:
        xrt.unregister_kernel("add", "add_plus_one", device="cuda")


def test_pinned_reduction_kernel_gets_axis_and_keepdims():
    k = xrt.ReductionKernel("T x", "T y", "x", "a + b", "y = a + (T)100", "0", "sum_plus")
    xrt.register_kernel("sum", "sum_plus", k, device="cuda",
                        supports=lambda x, **kw: x.dtype == xrt.float64)
    a = xrt.ones((3, 4), dtype=xrt.float64, device="cuda:0")
    try:
        with xrt.kernel_policy(xrt.KernelPolicy(sum="sum_plus")):
            got = xrt.sum(a, axis=1, keepdims=True)
        np.testing.assert_array_equal(to_numpy(got), np.full((3, 1), 104.0))
    finally:
        xrt.unregister_kernel("sum", "sum_plus", device="cuda")


# ---- adapters ----------------------------------------------------------------------------


class OnlyInterface:
    """Exposes another array's __cuda_array_interface__ and nothing else (as Numba does)."""

    def __init__(self, array):
        self.__cuda_array_interface__ = array.__cuda_array_interface__


def test_cuda_array_interface_export_is_read_by_cupy(cupy):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = dev(a).mT
    cai = t.__cuda_array_interface__
    assert cai["version"] == 3 and cai["typestr"] == "<f4" and cai["strides"] == (4, 16)
    c = cupy.asarray(OnlyInterface(t))
    assert c.data.ptr == t._data_ptr()
    np.testing.assert_array_equal(cupy.asnumpy(c), a.T)


def test_cuda_array_interface_import_is_zero_copy(cupy):
    c = cupy.arange(10, dtype=cupy.int32)[::2]
    t = xrt.asarray(OnlyInterface(c))
    assert t._data_ptr() == c.data.ptr and t.strides == (2,)
    np.testing.assert_array_equal(to_numpy(t), np.arange(0, 10, 2))
    out = xrt.ElementwiseKernel("T x", "T y", "y = x * 2", "ew_twice")(OnlyInterface(c))
    np.testing.assert_array_equal(to_numpy(out), np.arange(0, 20, 4))


def test_cupy_allocator_uses_ours_and_stats_agree(cupy):
    from xpuruntime.adapters import cupy as adapter

    before = xrt.cuda.memory_stats()["allocated_bytes.all.current"]
    with adapter.using_xpuruntime_allocator():
        c = cupy.ones(1 << 20, dtype=cupy.float32)
        assert xrt.cuda.memory_stats()["allocated_bytes.all.current"] >= before + (4 << 20)
        assert float((c * 2).sum()) == 2 * (1 << 20)
    del c


def test_cupy_streams_are_shared_both_ways(cupy):
    from xpuruntime.adapters import cupy as adapter

    s = xrt.cuda.Stream("cuda:0")
    assert adapter.to_cupy_stream(s).ptr == s.ptr
    cs = cupy.cuda.Stream(non_blocking=True)
    assert adapter.from_cupy_stream(cs).ptr == cs.ptr
    with adapter.shared_stream(s):
        assert cupy.cuda.get_current_stream().ptr == s.ptr
        assert xrt.cuda.current_stream().ptr == s.ptr


def test_jax_zero_copy_both_ways(jax):
    from xpuruntime.adapters import jax as adapter

    t = xrt.arange(8, dtype=xrt.float32, device="cuda:0")
    j = adapter.to_jax(t)
    np.testing.assert_array_equal(np.asarray(j), np.arange(8, dtype=np.float32))
    back = adapter.from_jax(j)
    assert back._data_ptr() == t._data_ptr()

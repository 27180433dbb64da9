"""tests/test_elementwise_cuda_layouts.py: elementwise functions on CUDA against the CPU
for layouts (broadcasting, strides, negative strides, unaligned views, 0-d, empty, many
dimensions, 64-bit offsets), in-place operators, Python scalars (host scalars in the kernel
arguments, captured by value in graphs) and where.
"""

import math

import numpy as np
import pytest

import xpuruntime as xrt
from common import COMPLEX, INTEGER, tensor, to_numpy
from elementwise_cuda_helpers import CUDA, rng, _random, gpu, host, same, close, both


# Exact functions, so that the layout alone decides (transcendental ones have their tests).
LAYOUT_CASES = {
    "transposed": lambda to, a, b: xrt.add(to(a).mT, to(b).mT),
    "step slices": lambda to, a, b: xrt.multiply(to(a)[::2, 1::3], to(b)[1::2, ::3]),
    "negative strides": lambda to, a, b: xrt.subtract(to(a)[::-1, ::-2], to(b)[:, ::2]),
    "row broadcast": lambda to, a, b: xrt.divide(to(a), to(b)[0]),
    "column broadcast": lambda to, a, b: xrt.copysign(to(a)[:, :1], to(b)),
    "outer": lambda to, a, b: xrt.multiply(to(a)[:, 0][:, None], to(b)[0][None, :]),
    "0-d and array": lambda to, a, b: xrt.divide(to(a)[2, 3], to(b)),
    "0-d": lambda to, a, b: xrt.square(to(a)[1, 1]),
    "0-d and 0-d": lambda to, a, b: xrt.maximum(to(a)[0, 0], to(b)[1, 2]),
    "empty": lambda to, a, b: xrt.add(to(a)[:0], to(b)[:0]),
    "empty broadcast": lambda to, a, b: xrt.add(to(a)[:, :0], to(b)[0, :0]),
    "unaligned": lambda to, a, b: xrt.add(xrt.reshape(to(a), (-1,))[1:],
                                          xrt.reshape(to(b), (-1,))[:-1]),
    "unaligned unary": lambda to, a, b: xrt.negative(xrt.reshape(to(a), (-1,))[3:]),
    "mixed dtypes": lambda to, a, b: xrt.add(to(a), xrt.astype(to(b), xrt.float16)),
    "where": lambda to, a, b: xrt.where(to(a) > 0, to(a), to(b)),
    "where broadcast": lambda to, a, b: xrt.where(to(a)[:, :1] > 0, to(b)[0], 0.5),
    "where strided": lambda to, a, b: xrt.where(to(a).mT > to(b).mT, to(a).mT, -to(b).mT),
    "clip": lambda to, a, b: xrt.clip(to(a), -0.5, to(b)[0]),
}


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(LAYOUT_CASES))
def test_layouts(name):
    a = rng.standard_normal((6, 9)).astype(np.float32)
    b = rng.standard_normal((6, 9)).astype(np.float32)
    got, want = both(lambda to: LAYOUT_CASES[name](to, a, b))
    same(got, want)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "float64",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("n", [1, 7, 4099, (1 << 20) + 5])
def test_sizes_around_vector_and_grid_boundaries(dtype, n):
    a, b = _random(dtype, n), _random(dtype, n)
    for op in ("equal", "where") + (("logical_xor",) if dtype == "bool" else ("multiply",)):
        if op == "where":
            make = lambda to: xrt.where(to(a != b), to(a), to(b))  # noqa: E731
        else:
            make = lambda to: getattr(xrt, op)(to(a), to(b))  # noqa: E731
        got, want = both(make)
        same(got, want)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["int16", "float32", "complex128"])
def test_many_dimensions(dtype):
    """Shapes that stay 5-d and 10-d after collapsing (kernels beyond the cached ones)."""
    for shape in [(2, 3, 2, 3, 2), (2,) * 10]:
        a = _random(dtype, math.prod(shape)).reshape(shape)
        b = _random(dtype, math.prod(shape)).reshape(shape)
        axes = tuple(reversed(range(len(shape))))
        got, want = both(lambda to: xrt.add(xrt.permute_dims(to(a), axes), to(b)[..., ::-1]))
        same(got, want)


# Note [Rows layout]: inputs stepping through their rows a few elements at a time are
# gathered into the rows kernel's vectors; a 1-D plan is one row; wider steps stay strided.
GATHER_CASES = {
    "step-2 columns transposed": lambda to, a, b: to(a)[:, ::2].mT + 1,
    "step-2 columns and dense": lambda to, a, b: to(a)[:, ::2] * to(b)[:, :16],
    "step-3 and flipped": lambda to, a, b: to(a)[:, ::3][:, :8] - to(b)[:, ::-4],
    "flipped rows and columns": lambda to, a, b: to(a)[::-1, ::-1] + to(b),
    "step 4 and step 5": lambda to, a, b: to(a)[:, :24:4] + to(b)[:, :30:5],
    "unaligned rows": lambda to, a, b: to(a)[:, 1:17] + to(b)[:, :16],
    "1-D step 2": lambda to, a, b: xrt.reshape(to(a), (-1,))[::2] * 3,
    "1-D flipped, odd start": lambda to, a, b: xrt.reshape(to(a), (-1,))[-2:0:-1] - 1,
    "1-D step 2 and a scalar array": lambda to, a, b: xrt.multiply(
        xrt.reshape(to(a), (-1,))[1::2], to(b)[3, 3]),
    "where gathered": lambda to, a, b: xrt.where(to(a)[:, ::2] == to(b)[:, :16],
                                                 to(a)[:, ::2], to(b)[:, 1::2]),
}


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "int64", "complex64"])
@pytest.mark.parametrize("name", sorted(GATHER_CASES))
def test_gathered_rows(name, dtype):
    a = _random(dtype, 16 * 32).reshape(16, 32)
    b = _random(dtype, 16 * 32).reshape(16, 32)
    got, want = both(lambda to: GATHER_CASES[name](to, a, b))
    same(got, want)


@pytest.mark.cuda
def test_offsets_beyond_32_bits():
    """A view reaching past 2**31 bytes takes the 64-bit index kernel."""
    big = xrt.zeros(((1 << 31) + 64,), dtype=xrt.uint8, device=CUDA)
    view = big[:: 1 << 30]  # three elements, 2**30 bytes apart
    view += xrt.asarray(np.array([1, 2, 3], dtype=np.uint8), device=CUDA)
    got = view * 3
    assert host(got).tolist() == [3, 6, 9]
    assert host(big[(1 << 31) - 1: (1 << 31) + 1]).tolist() == [0, 3]


INPLACE_CASES = {
    "+=": lambda x, y: x.__iadd__(y),
    "-= scalar": lambda x, y: x.__isub__(1.5),
    "*= broadcast": lambda x, y: x.__imul__(y[0]),
    "/=": lambda x, y: x.__itruediv__(y),
    "**= scalar": lambda x, y: x.__ipow__(3),
    "//=": lambda x, y: x.__ifloordiv__(y),
    "%=": lambda x, y: x.__imod__(y),
}


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(INPLACE_CASES))
@pytest.mark.parametrize("view", ["whole", "strided"])
def test_inplace_operators(name, view):
    a = rng.standard_normal((4, 6))
    b = rng.standard_normal((4, 6)) + 3

    def make(to):
        x, y = to(a), to(b)
        target = x if view == "whole" else x[:, ::2]
        INPLACE_CASES[name](target, y if view == "whole" else y[:, ::2])
        return x
    got, want = both(make)
    (close if "**" in name else same)(got, want)


@pytest.mark.cuda
def test_inplace_integer_and_bool_operators():
    a = rng.integers(-100, 100, (5, 8)).astype(np.int32)
    b = rng.integers(1, 9, (5, 8)).astype(np.int32)

    def make(to):
        x, y = to(a), to(b)
        x <<= y
        x ^= 5
        x >>= 1
        m = to(a > 0)
        m &= to(b > 4)
        m |= to(a < -90)
        return xrt.where(m, x, -x)
    got, want = both(make)
    same(got, want)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float16", "bfloat16", "float32",
                                   "complex64"])
def test_python_scalars(dtype):
    a = _random(dtype, 50)
    int_ok = dtype not in COMPLEX

    def make(to):
        x = to(a)
        results = [x + 1, 2 * x, x - 3, x == 0, x ** 2]
        if int_ok:
            results += [x // 3, x % 5, x > 1]
        if dtype not in INTEGER:
            results += [x * 0.5, 1.5 / x]
        return results
    for i, (got, want) in enumerate(zip(*both(make))):
        (close if i == 4 else same)(got, want)  # x ** 2 is pow


@pytest.mark.cuda
def test_where_every_dtype_and_scalar_branches():
    for dtype in ("bool", "int8", "uint16", "int32", "float16", "bfloat16", "float64",
                  "complex64", "complex128"):
        x, y = _random(dtype, 300), _random(dtype, 300)
        c = rng.integers(0, 2, 300).astype(bool)
        same(*both(lambda to: xrt.where(to(c), to(x), to(y))))
        same(*both(lambda to: xrt.where(to(c)[::-2], xrt.reshape(to(x)[::2], (1, -1)),
                                        to(y)[0])))


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["bool", "uint64", "int64", "float16", "float64",
                                   "complex128"])
def test_host_scalars_ride_in_the_arguments(dtype):
    """Note [Host scalars]: a Python scalar is not made a device array; every layout reads
    its value from the launch's arguments (16 bytes for complex128)."""
    a = _random(dtype, 4099)
    if dtype == "bool":
        s = True
    elif dtype in ("uint64", "int64"):
        s = (1 << 62) + 3 if dtype == "uint64" else -(1 << 61) - 7
    elif dtype == "complex128":
        s = complex(1.0 / 3.0, -2.5e-300)
    else:
        s = 1.0 / 3.0
    op = xrt.logical_xor if dtype == "bool" else xrt.add

    def make(to):
        x = to(a)
        m = xrt.reshape(x[:4096], (64, 64))
        return [op(x, s), op(s, x),                 # dense, both sides, vectorised
                op(x[1:], s),                      # unaligned: one element per load
                op(m.mT, s), op(s, m[::2, ::-3]),  # strided kernels
                op(x[5], s), op(s, x[5])]          # 0-d: one element
    for got, want in zip(*both(make)):
        same(got, want)
    with xrt.explain() as log:
        op(gpu(a), s)
    assert log.kernels(op.__name__) == ["nvrtc"]


@pytest.mark.cuda
def test_host_scalars_in_place_and_operators():
    a = rng.standard_normal((8, 10)).astype(np.float32)

    def make(to):
        x = to(a)
        v = x[:, ::3]
        v += 2.5        # strided in place
        x *= 0.5        # dense in place
        y = 1 - x       # reflected
        z = 2 ** x[0]   # reflected pow
        w = x[1, 1]
        w -= 4          # 0-d in place
        return [x, y, z, w, x > 0.25, 3 % (x + 10.0)]
    for got, want in zip(*both(make)):
        close(got, want)


@pytest.mark.cuda
def test_a_cpu_array_with_a_cuda_array_is_still_an_error():
    x = xrt.ones(4, device=CUDA)
    for other in (xrt.asarray(1.0), xrt.ones(4)):
        with pytest.raises(ValueError, match="different devices"):
            x + other
        with pytest.raises(ValueError, match="different devices"):
            other * x
        with pytest.raises(ValueError, match="different devices"):
            x += other


@pytest.mark.cuda
def test_host_scalars_are_captured_by_value_in_graphs():
    x = xrt.arange(16, dtype=xrt.float32, device=CUDA)
    g = xrt.cuda.CUDAGraph()
    with xrt.cuda.graph(g):
        y = x * 3.0 + 1.0
    for _ in range(2):
        x += 1.0  # the graph reads x's memory, and keeps the scalars it was captured with
        xrt.cuda.synchronize()
        g.replay()
        xrt.cuda.synchronize()
        np.testing.assert_array_equal(host(y), host(x) * 3 + 1)


# Views whose copy widens its accesses (Note [Widened copies] in cuda/copy_kernels.cpp), and
# views that must not: runs of 1, 3, 8 and 64 elements, offsets that break the alignment,
# negative outer strides, and element sizes of 1 to 16 bytes.
WIDENING_CASES = {
    "heads": lambda t: xrt.permute_dims(xrt.reshape(t, (2, 5, 3, 64)), (0, 2, 1, 3)),
    "runs of 8": lambda t: xrt.reshape(t, (-1, 3, 8)).mT.mT[:, ::2],
    "runs of 3": lambda t: xrt.reshape(t, (-1, 10, 3))[:, ::3],
    "single elements": lambda t: xrt.reshape(t, (-1, 16)).mT,
    "offset start": lambda t: xrt.reshape(xrt.reshape(t, (-1,))[1:1 + 29 * 64], (29, 64))[::2],
    "negative outer": lambda t: xrt.reshape(t, (30, 64))[::-3, 8:40],
}


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "bfloat16", "float32",
                                   "complex128"])
@pytest.mark.parametrize("name", sorted(WIDENING_CASES))
def test_strided_copies_match_the_host(dtype, name):
    data = _random("float32" if dtype == "bfloat16" else dtype, 1920 + 64)

    def make(to):
        t = to(data)
        if dtype == "bfloat16":
            t = xrt.astype(t, xrt.bfloat16)
        view = WIDENING_CASES[name](t[:1920])
        copied = xrt.asarray(view, copy=True)
        assert copied.shape == view.shape
        return copied

    got, want = both(make)
    same(got, want)


# ---- Replayed calls (Note [Replayed calls] in cpp/src/core/dispatcher.cpp) -------------

def replayed():
    return xrt._core._replayed_calls()


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int32", "int64",
                                   "uint8", "complex64", "complex128", "bool"])
@pytest.mark.parametrize("shape", [(), (1,), (16,), (37,), (3, 129), (2, 3, 1025)])
def test_cuda_replayed_calls_match_the_cpu(dtype, shape):
    """A repeated call runs its kept launch: results equal the CPU's call after call, for
    every vector width and grid the dense kernels take."""
    n = int(np.prod(shape))
    a_host = _random(dtype, n).reshape(shape)
    b_host = _random(dtype, n).reshape(shape)
    a, b = gpu(a_host), gpu(b_host)
    binary = [xrt.logical_or, xrt.not_equal] if dtype == "bool" else [xrt.add, xrt.not_equal]
    unary = [xrt.logical_not] if dtype == "bool" else [xrt.negative, xrt.abs]
    calls = [(lambda x, y, op=op: op(x, y), same) for op in binary]
    # abs of a complex has a real output, and is inexact: within the module's 8 ulp.
    calls += [(lambda x, y, op=op: op(x), close) for op in unary]
    for call, check in calls:
        want = call(tensor(a_host), tensor(b_host))
        call(a, b)
        before = replayed()
        for _ in range(3):
            got = call(a, b)
            assert got.shape == shape and got.dtype == want.dtype
            check(got, want)
        assert replayed() == before + 3


@pytest.mark.cuda
def test_cuda_replay_declines_views_off_the_vector_alignment():
    """A call of the kept shape on views 4 bytes off the 16-byte alignment cannot take the
    kept vector launch: it is dispatched, to the same values, and the aligned plan stays;
    and a call made on such views keeps no plan, so later aligned calls keep their vector
    loads."""
    base_a = _random("float32", 65)
    base_b = _random("float32", 65)
    a, b = gpu(base_a), gpu(base_b)
    full_a, full_b = a[:64], b[:64]
    full_a + full_b
    full_a + full_b
    before = replayed()
    same(a[1:] + b[1:], base_a[1:] + base_b[1:])  # the key matches; the plan declines
    same(a[1:] + b[1:], base_a[1:] + base_b[1:])
    assert replayed() == before
    same(full_a + full_b, base_a[:64] + base_b[:64])  # the aligned plan is still kept
    assert replayed() == before + 1
    # Misaligned first: nothing kept, every such call dispatched.
    c, d = gpu(base_a[:33]), gpu(base_b[:33])
    x, y = xrt.reshape(c, (-1,))[1:], xrt.reshape(d, (-1,))[1:]
    x * y
    before = replayed()
    same(x * y, base_a[1:33] * base_b[1:33])
    assert replayed() == before


SCALARS = {"bool": [True, False, True], "int": [3, -7, 11], "uint": [3, 7, 200],
           "float": [0.5, -2.25, 3.0],
           "complex": [1 + 2j, -0.5j, 2.0]}


@pytest.mark.cuda
@pytest.mark.parametrize("dtype,kind", [
    ("float32", "float"), ("float64", "int"), ("float16", "float"), ("int32", "int"),
    ("int64", "int"), ("uint8", "uint"), ("complex64", "complex"), ("complex128", "float"),
    ("bool", "bool"), ("int8", "int"),
])
@pytest.mark.parametrize("shape", [(), (1,), (37,), (3, 129)])
def test_cuda_replayed_calls_with_host_scalars_match_the_cpu(dtype, kind, shape):
    """`x + 1.0` on CUDA (a host scalar beside the array) repeats its kept launch, in either
    order and in place, and reads each call's own value."""
    n = int(np.prod(shape))
    x_host = _random(dtype, n).reshape(shape)
    x = gpu(x_host)
    ops = [xrt.logical_or] if dtype == "bool" else [xrt.multiply, xrt.not_equal]
    for op in ops:
        for scalar_first in (False, True):
            def call(t, v, op=op, first=scalar_first):
                return op(v, t) if first else op(t, v)
            wants = [call(tensor(x_host), v) for v in SCALARS[kind]]  # (CPU replays count)
            call(x, SCALARS[kind][0])  # decided and kept
            before = replayed()
            gots = [call(x, v) for v in SCALARS[kind]]
            assert replayed() == before + 3
            for got, want in zip(gots, wants):
                assert got.shape == shape and got.dtype == want.dtype
                same(got, want)
    if dtype == "bool":
        return
    want = tensor(x_host.copy())
    for v in SCALARS[kind]:
        want *= v
    y = gpu(x_host)
    y * SCALARS[kind][0]
    before = replayed()
    for v in SCALARS[kind]:
        y *= v
    assert replayed() == before + 3
    same(y, want)


@pytest.mark.cuda
def test_cuda_replayed_host_scalar_off_the_vector_alignment_takes_its_own_path():
    base = _random("float32", 65)
    a = gpu(base)
    a[:64] + 2.0
    a[:64] + 2.0
    before = replayed()
    same(a[1:] + 2.0, base[1:] + np.float32(2.0))  # the key matches; the plan declines
    same(3.0 - a[1:], np.float32(3.0) - base[1:])
    assert replayed() == before
    same(a[:64] + 4.0, base[:64] + np.float32(4.0))
    assert replayed() == before + 1


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "complex64"])
def test_cuda_inplace_operators_repeat_the_kept_call(dtype):
    a_host = _random(dtype, 300)
    b_host = _random(dtype, 300)
    a, b = gpu(a_host), gpu(b_host)
    want = tensor(a_host)
    for _ in range(3):
        want = want - tensor(b_host)
    a - b
    before = replayed()
    for _ in range(3):
        a -= b
    assert replayed() == before + 3
    same(a, want)
    # Overlapping shifted: the operator copies its operand first.
    x_host = _random(dtype, 301)
    x = gpu(x_host)
    front, back = x[:300], x[1:]
    before = replayed()
    front -= back
    assert replayed() == before
    want = x_host.copy()
    want[:300] = to_numpy(tensor(x_host[:300]) - tensor(x_host[1:]))
    same(x, tensor(want))


@pytest.mark.cuda
def test_cuda_replays_keep_stream_order_and_graph_capture():
    from xpuruntime import runtime as rt

    a = gpu(np.arange(1000, dtype=np.float32))
    one = gpu(np.ones(1000, np.float32))
    c = a + one
    xrt.cuda.synchronize()  # c is read on the new stream
    before = replayed()
    with rt.Stream(CUDA):
        for _ in range(50):
            c = c + one
        got = host(c)
    np.testing.assert_array_equal(got, np.arange(1000, dtype=np.float32) + 51)
    assert replayed() == before + 50  # each launched on the new stream from the kept plan
    graph = xrt.cuda.CUDAGraph()
    before = replayed()
    with xrt.cuda.graph(graph):
        d = a + one
        e = d + one
    assert replayed() == before + 2  # captured from the kept plan
    graph.replay()
    xrt.cuda.synchronize()
    np.testing.assert_array_equal(host(e), np.arange(1000, dtype=np.float32) + 2)

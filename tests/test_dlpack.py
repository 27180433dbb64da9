"""tests/test_dlpack.py: DLPack export and import, checked with NumPy and at
the level of the capsule's C structs; on CUDA, zero-copy both ways with PyTorch, CuPy and
JAX, and the stream handshake (the producer's stream work is seen by the consumer's stream).

The CUDA handshake's arguments are also checked without a GPU, with a hand-made capsule that
claims to live on cuda:0 (never read); the tests that need a GPU are marked cuda.
"""

import gc
import weakref

import numpy as np
import pytest

import xpuruntime as xrt
from common import ALL, NUMPY_NATIVE, assert_tensor_equal
from cuda_helpers import busy, cupy, data_pointer, jax, torch, torch_stream  # noqa: F401
from dlpack_abi import (BFLOAT, BOOL, COMPLEX, CPU, CUDA, FLOAT, INT, IS_COPIED,
                        LEGACY, OPAQUE, OPENCL, READ_ONLY, UINT, VERSIONED,
                        HandMade, capsule_name, managed, shape_and_strides)


V1 = (1, 0)

VIEWS = {
    "0-d": lambda a: a[0, 0, ...],
    "empty": lambda a: a[:0],
    "contiguous": lambda a: a,
    "strided": lambda a: a[::2],
    "transposed": lambda a: a.T,
    "negative strides": lambda a: a[::-1],
    "byte offset": lambda a: a[1:, 2:],
    "everything": lambda a: a[1::2, ::-3].T,
}


def base_array(name):
    return np.arange(48).reshape(6, 8).astype(name)


def array_pointer(a):
    """The address of a NumPy array's first element."""
    return a.__array_interface__["data"][0]


# ------------------------------------------------------ round trips, NumPy


@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS.keys())
@pytest.mark.parametrize("name", NUMPY_NATIVE)
def test_numpy_round_trip_is_zero_copy(name, view):
    a = view(base_array(name))
    t = xrt.from_dlpack(a)
    assert_tensor_equal(t, a)
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, a, strict=True)
    assert array_pointer(back) == array_pointer(a)
    assert back.strides == a.strides or a.size <= 1


def test_numpy_subclasses_still_name_their_device():
    """Note [NumPy arrays live on the host]: only numpy.ndarray itself skips
    __dlpack_device__; a subclass may live anywhere, so it is asked."""
    asked = []

    class Elsewhere(np.ndarray):
        def __dlpack_device__(self):
            asked.append(True)
            return super().__dlpack_device__()

    a = np.arange(6.0).view(Elsewhere)
    t = xrt.from_dlpack(a)
    assert asked and t.device == xrt.Device("cpu")
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(6.0))
    readonly = np.arange(3)
    readonly.flags.writeable = False
    assert xrt.from_dlpack(readonly).device == xrt.Device("cpu")  # the fast path: flags kept
    with pytest.raises(BufferError):
        xrt.from_dlpack(np.arange(3), device="cuda:0", copy=False)


def test_bfloat16_round_trip_through_dlpack():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    t = xrt.astype(xrt.arange(6, dtype=xrt.float32), xrt.bfloat16)
    again = xrt.from_dlpack(t)
    assert again.dtype == xrt.bfloat16
    t += 1  # shared memory: the import sees it
    np.testing.assert_array_equal(
        np.asarray(again), np.arange(1, 7).astype(ml_dtypes.bfloat16))


def test_from_dlpack_accepts_a_bare_capsule():
    t = xrt.arange(4, dtype=xrt.int16)
    for capsule in (t.__dlpack__(), t.__dlpack__(max_version=V1)):
        assert_tensor_equal(xrt.from_dlpack(capsule),
                            np.arange(4, dtype=np.int16))


def test_producers_with_dlpack_on_the_object_or_its_type():
    """__dlpack__ is found on the producer's type (the fast lookup) or, failing that, on the
    object itself; an object with neither is a TypeError, for from_dlpack and asarray alike."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)

    class Holder:
        pass

    held = Holder()
    held.__dlpack__ = a.__dlpack__
    held.__dlpack_device__ = a.__dlpack_device__
    for convert in (xrt.from_dlpack, xrt.asarray):
        assert_tensor_equal(convert(held), a)
    with pytest.raises(TypeError, match="does not support DLPack"):
        xrt.from_dlpack(Holder())
    with pytest.raises(TypeError):
        xrt.asarray(Holder())

    class Proxy:  # no __dict__: its __getattr__ answers for the array it wraps
        __slots__ = ("wrapped",)

        def __init__(self, wrapped):
            self.wrapped = wrapped

        def __getattr__(self, name):
            return getattr(self.wrapped, name)

    for convert in (xrt.from_dlpack, xrt.asarray):
        assert_tensor_equal(convert(Proxy(a)), a)
    with pytest.raises(TypeError, match="does not support DLPack"):
        xrt.from_dlpack(Proxy(object()))


def test_dlpack_device_of_a_cpu_tensor():
    device = xrt.zeros(3).__dlpack_device__()
    assert tuple(int(v) for v in device) == (CPU, 0)


# ------------------------------------------------------------- capsules

DL_DTYPES = {
    "bool": (BOOL, 8), "int8": (INT, 8), "int16": (INT, 16),
    "int32": (INT, 32), "int64": (INT, 64), "uint8": (UINT, 8),
    "uint16": (UINT, 16), "uint32": (UINT, 32), "uint64": (UINT, 64),
    "float16": (FLOAT, 16), "bfloat16": (BFLOAT, 16), "float32": (FLOAT, 32),
    "float64": (FLOAT, 64), "complex64": (COMPLEX, 64),
    "complex128": (COMPLEX, 128),
}


@pytest.mark.parametrize("max_version, name", [
    (None, LEGACY), ((0, 8), LEGACY), (V1, VERSIONED), ((1, 7), VERSIONED),
    ((2, 0), VERSIONED)])
def test_capsule_kind_follows_max_version(max_version, name):
    capsule = xrt.zeros(3).__dlpack__(max_version=max_version)
    assert capsule_name(capsule) == name
    assert f'"{name}"' in repr(capsule)
    if name == VERSIONED:
        assert managed(capsule).version.major == 1


@pytest.mark.parametrize("name", ALL)
def test_capsule_describes_dtype_shape_and_device(name):
    t = xrt.zeros((2, 3), dtype=getattr(xrt, name))
    capsule = t.__dlpack__(max_version=V1)
    dl = managed(capsule).dl_tensor
    assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == (*DL_DTYPES[name], 1)
    assert (dl.device.device_type, dl.device.device_id) == (CPU, 0)
    shape, strides = shape_and_strides(dl)
    assert shape == (2, 3)
    assert strides in (None, (3, 1))
    assert managed(capsule).flags == 0


def test_capsule_of_a_view_points_into_the_same_memory():
    a = base_array("float32")[1::2, ::-3].T
    capsule = xrt.from_dlpack(a).__dlpack__(max_version=V1)
    dl = managed(capsule).dl_tensor
    assert dl.data + dl.byte_offset == array_pointer(a)
    assert shape_and_strides(dl) == (a.shape, tuple(s // 4 for s in a.strides))


def test_consuming_a_capsule_renames_it():
    t = xrt.zeros(3)
    legacy, versioned = t.__dlpack__(), t.__dlpack__(max_version=V1)
    xrt.from_dlpack(legacy), xrt.from_dlpack(versioned)
    assert capsule_name(legacy) == "used_dltensor"
    assert capsule_name(versioned) == "used_dltensor_versioned"


def test_a_consumed_capsule_raises_BufferError():
    capsule = xrt.zeros(3).__dlpack__(max_version=V1)
    xrt.from_dlpack(capsule)
    with pytest.raises(BufferError):
        xrt.from_dlpack(capsule)


def test_unconsumed_capsules_clean_up():
    t = xrt.arange(1000)
    for _ in range(100):
        t.__dlpack__()
        t.__dlpack__(max_version=V1)
    gc.collect()
    assert_tensor_equal(t, np.arange(1000))


# ---------------------------------------------------------- copy and device


def test_copy_true_exports_a_copy():
    t = xrt.arange(4.0)
    capsule = t.__dlpack__(max_version=V1, copy=True)
    assert managed(capsule).flags & IS_COPIED
    copied = np.from_dlpack(t, copy=True)
    t += 10
    np.testing.assert_array_equal(copied, np.arange(4.0))


def test_copy_true_imports_a_copy():
    a = np.arange(4.0)
    t = xrt.from_dlpack(a, copy=True)
    a += 10
    assert_tensor_equal(t, np.arange(4.0))


def test_copy_false_never_copies():
    a = np.arange(4.0)
    t = xrt.from_dlpack(a, copy=False)
    assert array_pointer(np.from_dlpack(t, copy=False)) == array_pointer(a)
    assert not managed(t.__dlpack__(max_version=V1, copy=False)).flags & IS_COPIED


def test_dl_device_cpu_is_accepted():
    t = xrt.arange(3)
    capsule = t.__dlpack__(max_version=V1, dl_device=(CPU, 0))
    assert managed(capsule).dl_tensor.device.device_type == CPU
    assert_tensor_equal(xrt.from_dlpack(t, device="cpu"), np.arange(3))


def test_dl_device_cuda_without_copy_raises_BufferError():
    with pytest.raises(BufferError):
        xrt.arange(3).__dlpack__(max_version=V1, dl_device=(CUDA, 0),
                                 copy=False)


# ---------------------------------------------------------------- lifetimes


def test_import_keeps_the_producer_alive_and_then_releases_it():
    a = np.arange(6.0)
    producer = weakref.ref(a)
    t = xrt.from_dlpack(a)
    del a
    gc.collect()
    assert producer() is not None
    assert_tensor_equal(t, np.arange(6.0))
    del t
    gc.collect()
    assert producer() is None


def test_export_outlives_the_tensor():
    t = xrt.arange(1000, dtype=xrt.int32)
    view = np.from_dlpack(t)
    del t
    gc.collect()
    scratch = [xrt.full((1000,), 7, dtype=xrt.int32) for _ in range(10)]
    np.testing.assert_array_equal(view, np.arange(1000, dtype=np.int32))
    view[:] = -1  # still ours to write
    assert int(xrt.sum(scratch[-1])) == 7000


def test_a_chain_of_imports_releases_the_first_producer():
    a = np.arange(8.0)
    producer = weakref.ref(a)
    last = np.from_dlpack(xrt.from_dlpack(np.from_dlpack(xrt.from_dlpack(a))))
    del a
    gc.collect()
    np.testing.assert_array_equal(last, np.arange(8.0))
    del last
    gc.collect()
    assert producer() is None


def test_tensor_is_released_after_its_export_dies():
    t = xrt.arange(5)
    try:
        ref = weakref.ref(t)
    except TypeError:
        pytest.skip("Tensor does not support weak references")
    view = np.from_dlpack(t)
    capsule = t.__dlpack__(max_version=V1)
    del t, view, capsule
    gc.collect()
    assert ref() is None


# ---------------------------------------------------------------- read-only


def read_only_array():
    a = np.arange(4.0)
    a.flags.writeable = False
    return a


def test_read_only_import_refuses_in_place_writes():
    a = read_only_array()
    t = xrt.from_dlpack(a)
    with pytest.raises(ValueError):
        t += 1
    np.testing.assert_array_equal(a, np.arange(4.0))


def test_read_only_survives_re_export():
    t = xrt.from_dlpack(read_only_array())
    assert managed(t.__dlpack__(max_version=V1)).flags & READ_ONLY
    assert not np.from_dlpack(t).flags.writeable


def test_read_only_flag_of_a_hand_made_capsule_is_honoured():
    src = np.arange(4, dtype=np.float32)
    made = HandMade(src, flags=READ_ONLY)
    t = xrt.from_dlpack(made.capsule)
    with pytest.raises(ValueError):
        t += 1
    np.testing.assert_array_equal(src, np.arange(4, dtype=np.float32))


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("garbage", [object(), 3, [1, 2], "dltensor", None])
def test_non_producers_raise_TypeError(garbage):
    with pytest.raises(TypeError):
        xrt.from_dlpack(garbage)


@pytest.mark.parametrize("array", [
    np.array(["2020-01-01"], dtype="datetime64[D]"),
    np.zeros(2, dtype=[("a", "i4"), ("b", "f4")]),
    np.array(["text"]),
], ids=["datetime64", "structured", "unicode"])
def test_unsupported_numpy_dtypes_raise_with_a_message(array):
    with pytest.raises((TypeError, BufferError)) as info:
        xrt.from_dlpack(array)
    assert str(info.value)


def test_hand_made_capsule_imports_zero_copy():
    src = np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::-1]
    for versioned in (True, False):
        made = HandMade(src, versioned=versioned)
        t = xrt.from_dlpack(made.capsule)
        assert_tensor_equal(t, src)
        assert array_pointer(np.from_dlpack(t)) == array_pointer(src)
        del t


@pytest.mark.parametrize("header", [
    {"dtype": (FLOAT, 128, 1)}, {"dtype": (FLOAT, 32, 4)},
    {"dtype": (OPAQUE, 64, 1)}, {"dtype": (INT, 7, 1)}, {"dtype": (99, 32, 1)},
    {"device": (OPENCL, 0)}, {"version": (2, 0)}, {"ndim": -1},
], ids=lambda h: f"{next(iter(h))}={next(iter(h.values()))}")
def test_bad_capsules_raise_and_stay_unconsumed(header):
    made = HandMade(np.arange(4, dtype=np.float32), **header)
    with pytest.raises((TypeError, BufferError)) as info:
        xrt.from_dlpack(made.capsule)
    assert str(info.value)
    assert capsule_name(made.capsule) == VERSIONED


# ==== CUDA: the handshake, and zero copy with PyTorch, CuPy and JAX ===============================

cuda = pytest.mark.cuda


class FakeCudaProducer:
    """A producer whose capsule says cuda:0; records what the consumer passed."""

    def __init__(self, legacy=False):
        self.made = HandMade(np.arange(4, dtype=np.float32), device=(CUDA, 0))
        self.legacy = legacy
        self.calls = []

    def __dlpack_device__(self):
        return (CUDA, 0)

    def __dlpack__(self, *, stream=None, **kwargs):
        if self.legacy and kwargs:
            raise TypeError("unexpected keyword")
        self.calls.append(dict(kwargs, stream=stream))
        return self.made.capsule


# ------------------------------------------------------------------ without a GPU


def test_from_dlpack_gives_a_cuda_producer_our_stream():
    producer = FakeCudaProducer()
    t = xrt.from_dlpack(producer)
    assert t.__dlpack_device__() == (CUDA, 0)
    assert producer.calls == [{"max_version": (1, 1), "stream": 1}]  # 1: legacy default
    del t


def test_from_dlpack_asks_an_old_producer_with_the_stream_alone():
    producer = FakeCudaProducer(legacy=True)
    del producer.calls[:]
    t = xrt.from_dlpack(producer)
    assert producer.calls == [{"stream": 1}]
    del t


def test_from_dlpack_gives_a_host_producer_no_stream():
    calls = []

    class HostProducer:
        def __init__(self):
            self.a = np.arange(3.0)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

        def __dlpack__(self, **kwargs):
            calls.append(kwargs)
            return self.a.__dlpack__(**kwargs)

    t = xrt.from_dlpack(HostProducer())
    assert "stream" not in calls[0]
    np.testing.assert_array_equal(np.asarray(t), np.arange(3.0))


@pytest.mark.parametrize("stream, error", [(0, ValueError), (-2, ValueError),
                                           ("1", TypeError), (1.5, TypeError)])
def test_export_of_a_cuda_tensor_checks_the_stream(stream, error):
    producer = FakeCudaProducer()
    t = xrt.from_dlpack(producer)
    with pytest.raises(error):
        t.__dlpack__(stream=stream)
    # -1 asks for no synchronisation: nothing to wait for, no GPU needed.
    capsule = t.__dlpack__(stream=-1, max_version=(1, 0))
    assert managed(capsule).dl_tensor.device.device_type == CUDA
    del capsule, t


def test_wrapped_negative_strides_are_read_as_negative():
    """CuPy 14 exports a negative stride -k as 2**64 // itemsize - k (an unsigned
    division); no real view spans that far, so it can only mean -k."""
    src = np.arange(6, dtype=np.float32)[::-1]
    made = HandMade(src)
    made.strides[0] = (2**64 - 4) // 4  # what CuPy writes for -1
    t = xrt.from_dlpack(made.capsule)
    assert t.strides == (-1,)
    np.testing.assert_array_equal(np.asarray(t), src)


def test_strides_past_the_address_space_raise_BufferError():
    made = HandMade(np.arange(6, dtype=np.float32))
    made.strides[0] = 2**61
    with pytest.raises(BufferError, match="address space"):
        xrt.from_dlpack(made.capsule)


# ------------------------------------------------------------------ helpers


def _fresh(n=1 << 20):
    """A CUDA tensor of zeros whose upload has finished."""
    x = xrt.asarray(np.zeros(n, dtype=np.float32), device="cuda")
    xrt.cuda.synchronize()
    return x


def _host(x):
    return np.asarray(x.to_device("cpu"))


# ------------------------------------------------------------------ PyTorch


@cuda
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "bool", "complex64"])
def test_torch_round_trip_is_zero_copy(torch, dtype):
    t = torch.arange(12, device="cuda").reshape(3, 4).to(getattr(torch, dtype))
    x = xrt.from_dlpack(t)
    assert x.device == xrt.Device("cuda:0") and x.shape == (3, 4)
    assert data_pointer(x) == t.data_ptr()
    np.testing.assert_array_equal(_host(x), t.cpu().numpy())
    back = torch.from_dlpack(x)
    assert back.data_ptr() == t.data_ptr() and back.dtype == t.dtype
    assert torch.equal(back, t)


@cuda
def test_strided_views_cross_both_ways(torch):
    t = torch.arange(24.0, device="cuda").reshape(4, 6)
    x = xrt.from_dlpack(t[:, ::2])
    np.testing.assert_array_equal(_host(x), t[:, ::2].cpu().numpy())
    host = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    y = xrt.asarray(host, device="cuda")
    ty = torch.from_dlpack(y.T)
    assert ty.stride() == (1, 6)
    np.testing.assert_array_equal(ty.cpu().numpy(), host.T)


@cuda
def test_torch_work_on_a_side_stream_is_seen_by_our_stream(torch):
    """PyTorch writes late on its side stream; our import makes our stream wait for it."""
    t = torch.zeros(1 << 20, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    ours = xrt.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        t.fill_(5.0)
        with ours:
            x = xrt.from_dlpack(t)  # __dlpack__(stream=ours.ptr): ours waits for side
            back = _host(x)         # a copy on ours
    assert (back == 5.0).all()


@cuda
def test_torch_work_is_seen_by_our_legacy_stream(torch):
    t = torch.zeros(1 << 20, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(torch.cuda.Stream()):
        torch.cuda._sleep(200_000_000)
        t.fill_(3.0)
        x = xrt.from_dlpack(t)  # stream=1
    assert (_host(x) == 3.0).all()


@cuda
def test_our_work_is_seen_by_torch_on_its_side_stream(torch):
    """Our stream writes late; torch.from_dlpack on torch's side stream must wait for it."""
    x = _fresh()
    ours = xrt.cuda.Stream()
    with torch.cuda.stream(torch_stream(torch, ours)):  # work on our stream, via torch
        torch.cuda._sleep(200_000_000)
        torch.from_dlpack(x.__dlpack__(stream=-1)).fill_(9.0)
    side = torch.cuda.Stream()
    with ours, torch.cuda.stream(side):
        t = torch.from_dlpack(x)  # __dlpack__(stream=side): side waits for ours
        copy = t.clone()          # runs on side
    side.synchronize()
    assert (copy == 9.0).all().item()


@cuda
def test_stream_minus_one_and_the_per_thread_stream(torch):
    x = _fresh(16)
    for stream in (-1, 1, 2):
        capsule = x.__dlpack__(stream=stream, max_version=(1, 0))
        assert managed(capsule).dl_tensor.data == data_pointer(x)
        del capsule


@cuda
def test_torch_keeps_our_memory_alive(torch):
    host = np.arange(1 << 20, dtype=np.float32)
    x = xrt.asarray(host, device="cuda")
    t = torch.from_dlpack(x)
    ptr = t.data_ptr()
    del x
    gc.collect()
    others = [xrt.empty((1 << 20,), dtype=xrt.float32, device="cuda") for _ in range(4)]
    for o in others:
        assert data_pointer(o) != ptr
        torch.from_dlpack(o).fill_(-1.0)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(t.cpu().numpy(), host)


@cuda
def test_the_producer_deleter_runs_when_our_last_view_dies(torch):
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    t = torch.ones(1 << 24, device="cuda")  # 64 MiB
    x = xrt.from_dlpack(t)
    view = x[1:]
    del t
    gc.collect()
    assert torch.cuda.memory_allocated() >= base + (1 << 26)  # we still hold it
    del x
    gc.collect()
    assert torch.cuda.memory_allocated() >= base + (1 << 26)  # the view still holds it
    del view
    gc.collect()
    assert torch.cuda.memory_allocated() == base


@cuda
def test_copy_and_device_arguments(torch):
    t = torch.arange(8.0, device="cuda")
    c = xrt.from_dlpack(t, copy=True)
    assert data_pointer(c) != t.data_ptr()
    t.fill_(0.0)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(_host(c), np.arange(8.0, dtype=np.float32))
    assert data_pointer(xrt.from_dlpack(t, copy=False)) == t.data_ptr()
    assert data_pointer(xrt.asarray(t)) == t.data_ptr()
    t.fill_(4.0)
    host = xrt.from_dlpack(t, device="cpu")
    assert host.device == xrt.Device("cpu")
    np.testing.assert_array_equal(np.asarray(host), np.full(8, 4.0, np.float32))
    with pytest.raises(BufferError):
        xrt.from_dlpack(t, device="cpu", copy=False)
    on_gpu = xrt.from_dlpack(np.arange(3.0), device="cuda:0")
    assert on_gpu.device == xrt.Device("cuda:0")
    np.testing.assert_array_equal(_host(on_gpu), np.arange(3.0))


@cuda
def test_export_to_the_host_through_dl_device():
    host = np.arange(6, dtype=np.int32)
    x = xrt.asarray(host, device="cuda")
    capsule = x.__dlpack__(max_version=(1, 0), dl_device=(1, 0))
    m = managed(capsule)
    assert m.dl_tensor.device.device_type == 1 and m.flags & IS_COPIED
    del m, capsule
    np.testing.assert_array_equal(np.from_dlpack(x, device="cpu"), host)
    with pytest.raises(BufferError):
        x.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)


@cuda
def test_dlpack_device_of_a_cuda_tensor():
    x = _fresh(4)
    assert x.__dlpack_device__() == (CUDA, 0)
    with pytest.raises(ValueError, match="ambiguous"):
        x.__dlpack__(stream=0)


# ------------------------------------------------------------------ CuPy


@cuda
def test_cupy_round_trip_is_zero_copy(cupy):
    a = cupy.arange(10, dtype=cupy.float64)
    x = xrt.from_dlpack(a)
    assert data_pointer(x) == a.data.ptr
    np.testing.assert_array_equal(_host(x), cupy.asnumpy(a))
    b = cupy.from_dlpack(x)
    assert b.data.ptr == a.data.ptr
    assert bool((b == a).all())


@cuda
def test_cupy_negative_strides_both_ways(cupy):
    c = cupy.arange(24, dtype=cupy.float32).reshape(4, 6)[::2, ::-1].T
    x = xrt.from_dlpack(c)
    assert x.strides == (-1, 12)  # whatever CuPy writes in the header (Note [Wrapped strides])
    np.testing.assert_array_equal(_host(x), cupy.asnumpy(c))
    back = cupy.from_dlpack(x[::-1])
    np.testing.assert_array_equal(cupy.asnumpy(back), cupy.asnumpy(c)[::-1])


@cuda
def test_cupy_side_stream_both_ways(cupy, torch):
    a = cupy.zeros(1 << 20, dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    side = cupy.cuda.Stream(non_blocking=True)
    with side:
        torch_side = torch.cuda.ExternalStream(side.ptr)
        with torch.cuda.stream(torch_side):
            torch.cuda._sleep(200_000_000)  # CuPy has no sleep kernel
        a.fill(2.0)
        with xrt.cuda.Stream():
            x = xrt.from_dlpack(a)  # CuPy's side stream -> our stream
            back = _host(x)
    assert (back == 2.0).all()

    ours = xrt.cuda.Stream()
    y = _fresh()
    busy(torch, ours)
    with torch.cuda.stream(torch_stream(torch, ours)):
        torch.from_dlpack(y.__dlpack__(stream=-1)).fill_(8.0)
    other = cupy.cuda.Stream(non_blocking=True)
    with ours, other:
        b = cupy.from_dlpack(y)  # our stream -> CuPy's side stream
        total = b.sum()
    # The sum ran on CuPy's non-blocking side stream; reading it from another stream
    # (float() copies on the current one) needs that stream finished first.
    other.synchronize()
    assert float(total) == 8.0 * (1 << 20)


@cuda
def test_cupy_keeps_our_memory_alive(cupy):
    host = np.arange(4096, dtype=np.float32)
    x = xrt.asarray(host, device="cuda")
    b = cupy.from_dlpack(x)
    del x
    gc.collect()
    np.testing.assert_array_equal(cupy.asnumpy(b), host)


# ------------------------------------------------------------------ JAX


@cuda
def test_jax_round_trip_is_zero_copy(jax):
    jnp = jax.numpy
    gpu = [d for d in jax.devices() if d.platform == "gpu"][0]
    a = jax.device_put(jnp.arange(16, dtype=jnp.float32), gpu)
    a.block_until_ready()
    x = xrt.from_dlpack(a)
    assert x.device == xrt.Device(f"cuda:{gpu.id}")
    assert data_pointer(x) == a.unsafe_buffer_pointer()
    np.testing.assert_array_equal(_host(x), np.arange(16, dtype=np.float32))
    host = np.arange(32, dtype=np.float32)
    y = xrt.asarray(host, device="cuda")
    b = jnp.from_dlpack(y)
    assert b.unsafe_buffer_pointer() == data_pointer(y)
    np.testing.assert_array_equal(np.asarray(b), host)


def test_a_cpu_tensor_takes_no_stream():
    """The standard: stream must be None for host memory; the check comes before any work."""
    t = xrt.asarray(np.arange(3.0))
    for stream in (1, -1, "1"):
        with pytest.raises(ValueError, match="stream must be None for a cpu tensor"):
            t.__dlpack__(stream=stream)
    assert t.__dlpack__(stream=None, max_version=(1, 0)) is not None


def test_from_dlpack_arguments_as_its_signature_says():
    """Note [from_dlpack's call]: its entry reads x and the keywords itself."""
    import inspect

    assert str(inspect.signature(xrt.from_dlpack)) == "(x, /, *, device=None, copy=None)"
    a = np.arange(6.0)
    assert np.shares_memory(np.asarray(xrt.from_dlpack(a)), a)
    assert not np.shares_memory(np.asarray(xrt.from_dlpack(a, copy=True)), a)
    assert xrt.from_dlpack(a, device="cpu", copy=None).device == xrt.Device("cpu")
    bad = [((), {}, TypeError, "takes 1 positional argument"),
           ((a, a), {}, TypeError, "takes 1 positional argument"),
           ((a,), {"stream": None}, TypeError, "unexpected keyword argument 'stream'"),
           ((a,), {"copy": 1}, TypeError, "copy must be True, False or None"),
           ((a,), {"device": "tpu"}, ValueError, "unknown device"),
           ((), {"x": a}, TypeError, "positional-only")]
    for args, kwargs, error, message in bad:
        with pytest.raises(error, match=message):
            xrt.from_dlpack(*args, **kwargs)

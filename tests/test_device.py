"""tests/test_device.py: Device values, CUDA availability and `xpuruntime info`; CUDA devices,
streams, events, graphs and the default device.

The tests marked cuda need a GPU; the others check what holds without one (clear errors,
the default device on the cpu, `python -m xpuruntime info`).
"""

import re
import subprocess
import sys
import threading

import numpy as np
import pytest

import xpuruntime as xrt
from cuda_helpers import (  # noqa: F401
    SLEEP_CYCLES, busy, data_pointer, needs_kernels, torch, torch_stream)


def test_cpu_device():
    cpu = xrt.Device("cpu")
    assert cpu.type == "cpu"
    assert str(cpu) == "cpu"
    assert cpu == xrt.Device("cpu")


@pytest.mark.parametrize("spelled", [("cuda:1",), ("cuda", 1)])
def test_cuda_device_can_be_named_without_cuda(spelled):
    device = xrt.Device(*spelled)
    assert device.type == "cuda"
    assert device.index == 1
    assert str(device) == "cuda:1"


def test_equality_and_hash():
    assert xrt.Device("cuda:0") == xrt.Device("cuda", 0)
    assert hash(xrt.Device("cuda:0")) == hash(xrt.Device("cuda", 0))
    assert xrt.Device("cuda:0") != xrt.Device("cuda:1")
    assert xrt.Device("cpu") != xrt.Device("cuda:0")
    assert len({xrt.Device("cpu"), xrt.Device("cpu"), xrt.Device("cuda:0")}) == 2


@pytest.mark.parametrize("bad", ["gpu", "", "cuda:", "cuda:x", "cuda:-1",
                                 "cpu:0:1", "CUDA 0"])
def test_bad_device_strings_raise_ValueError(bad):
    with pytest.raises(ValueError):
        xrt.Device(bad)


def test_tensors_live_on_the_cpu_by_default():
    t = xrt.zeros((2,))
    assert t.device == xrt.Device("cpu")
    assert xrt.zeros((2,), device="cpu").device == xrt.Device("cpu")
    assert xrt.zeros((2,), device=xrt.Device("cpu")).device == xrt.Device("cpu")


def test_cuda_availability_is_explained():
    available = xrt.cuda.is_available()
    assert isinstance(available, bool)
    reason = xrt.cuda.why_unavailable()
    if not available:
        assert isinstance(reason, str) and reason


@pytest.mark.cuda
def test_tensor_on_cuda_round_trips_to_cpu():
    t = xrt.arange(6, dtype=xrt.float32, device="cuda:0")
    assert t.device == xrt.Device("cuda:0")
    back = t.to_device("cpu")
    assert back.device == xrt.Device("cpu")
    np.testing.assert_array_equal(np.asarray(back),
                                  np.arange(6, dtype=np.float32))


def test_info_command_reports_version_and_cuda():
    result = subprocess.run([sys.executable, "-m", "xpuruntime", "info"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    out = result.stdout.lower()
    assert "version" in out
    assert "cuda" in out
    assert "blas" in out


# ==== CUDA devices, streams, events, graphs and the default device ================================

cuda = pytest.mark.cuda
no_cuda = pytest.mark.skipif(xrt.cuda.is_available(), reason="CUDA is available here")


@pytest.fixture(autouse=True)
def default_device_back_to_cpu():
    yield
    xrt.set_default_device(None)


# ------------------------------------------------------------------ without a GPU


@no_cuda
def test_why_unavailable_is_a_sentence():
    assert not xrt.cuda.is_available()
    reason = xrt.cuda.why_unavailable()
    assert isinstance(reason, str) and len(reason) > 10
    assert xrt.cuda.device_count() == 0


@no_cuda
@pytest.mark.parametrize("make", [
    lambda: xrt.cuda.Stream(),
    lambda: xrt.cuda.current_stream(),
    lambda: xrt.cuda.Event().record(),
    lambda: xrt.cuda.synchronize(),
    lambda: xrt.cuda.get_device_properties(0),
    lambda: xrt.cuda.set_device(0),
    lambda: xrt.cuda.CUDAGraph().capture_begin(),
    lambda: xrt.zeros((2,), device="cuda:0"),
], ids=["Stream", "current_stream", "Event.record", "synchronize", "properties",
        "set_device", "capture_begin", "zeros"])
def test_cuda_objects_raise_CudaError_with_the_reason(make):
    with pytest.raises(xrt.CudaError, match=re.escape(xrt.cuda.why_unavailable())):
        make()


@no_cuda
def test_set_default_device_cuda_raises_CudaError_and_keeps_the_cpu():
    with pytest.raises(xrt.CudaError, match=re.escape(xrt.cuda.why_unavailable())):
        xrt.set_default_device("cuda:0")
    with pytest.raises(xrt.CudaError):
        with xrt.Device("cuda:0"):
            pass
    assert xrt.get_default_device() == xrt.Device("cpu")
    assert xrt.zeros((1,)).device == xrt.Device("cpu")


def test_unused_event_and_graph_need_no_driver():
    e = xrt.cuda.Event(enable_timing=True)
    assert e.query() and not e.is_recorded and e.device is None
    e.synchronize()  # nothing recorded: nothing to wait for
    g = xrt.cuda.CUDAGraph()
    assert not g.is_captured and not g.is_capturing and g.num_nodes == 0
    g.reset()
    with pytest.raises(ValueError, match="no capture"):
        g.replay()
    with pytest.raises(ValueError, match="without capture_begin"):
        g.capture_end()


def test_elapsed_time_errors_are_clear():
    with pytest.raises(ValueError, match="enable_timing=True"):
        xrt.cuda.Event().elapsed_time(xrt.cuda.Event())
    with pytest.raises(ValueError, match="record"):
        xrt.cuda.Event(enable_timing=True).elapsed_time(xrt.cuda.Event(enable_timing=True))


def test_bad_capture_mode_is_a_ValueError():
    with pytest.raises(ValueError, match="capture_error_mode"):
        xrt.cuda.CUDAGraph().capture_begin(capture_error_mode="sometimes")


def test_default_device_is_the_cpu_and_can_be_set_to_it():
    assert xrt.get_default_device() == xrt.Device("cpu")
    xrt.set_default_device("cpu")
    assert xrt.get_default_device() == xrt.Device("cpu")
    xrt.set_default_device(xrt.Device("cpu"))
    assert xrt.__array_namespace_info__().default_device() == xrt.Device("cpu")
    with pytest.raises(ValueError):
        xrt.set_default_device("tpu")
    with pytest.raises(TypeError):
        xrt.set_default_device(3)


def test_device_context_manager_nests_and_restores():
    cpu = xrt.Device("cpu")
    with cpu as entered:
        assert entered == cpu
        assert xrt.get_default_device() == cpu
        with xrt.Device("cpu"):
            assert xrt.zeros((1,)).device == cpu
        assert xrt.get_default_device() == cpu
    assert xrt.get_default_device() == cpu


def test_device_scope_is_left_on_an_exception():
    with pytest.raises(KeyError):
        with xrt.Device("cpu"):
            raise KeyError
    with pytest.raises(ValueError, match="never entered"):
        xrt.Device("cpu").__exit__(None, None, None)


def test_plain_buffers_follow_the_default_device_and_arrays_keep_theirs():
    assert xrt.asarray(bytearray(b"\x01\x02")).device == xrt.Device("cpu")
    assert xrt.asarray(np.arange(3)).device == xrt.Device("cpu")


def test_namespace_info_lists_the_cpu_first():
    devices = xrt.__array_namespace_info__().devices()
    assert devices[0] == xrt.Device("cpu")
    assert len(devices) == 1 + xrt.cuda.device_count()


def test_info_lists_devices_and_libraries():
    out = subprocess.run([sys.executable, "-m", "xpuruntime", "info"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "default     cpu" in text
    for lib in ("driver", "nvrtc", "cublas", "cublaslt"):
        assert re.search(rf"^  {lib}\s", text, re.M), lib
    if xrt.cuda.is_available():
        assert re.search(r"^  cuda:0 ", text, re.M)
        assert "capability  sm_" in text and "GiB free" in text
    else:
        assert xrt.cuda.why_unavailable() in text


# ------------------------------------------------------------------ devices


@cuda
def test_device_properties(torch):
    n = xrt.cuda.device_count()
    assert n == torch.cuda.device_count() and n >= 1
    assert xrt.__array_namespace_info__().devices()[1:] == tuple(
        xrt.Device(f"cuda:{i}") for i in range(n))
    p = xrt.cuda.get_device_properties(0)
    theirs = torch.cuda.get_device_properties(0)
    assert p.name == theirs.name
    assert p.total_memory == theirs.total_memory
    assert p.compute_capability == (theirs.major, theirs.minor)
    assert p.multi_processor_count == theirs.multi_processor_count
    assert 0 < p.free_memory <= p.total_memory
    assert re.fullmatch(r"GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", p.uuid)
    assert str(theirs.uuid) in p.uuid
    assert re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.0", p.pci_bus_id)
    cc = p.major * 10 + p.minor
    assert p.supports_fp16 == (cc >= 53) and p.supports_bf16 == (cc >= 80)
    assert p.supports_int8 == (cc >= 61) and p.supports_fp8 == (cc >= 89)
    assert p.warp_size == 32 and p.max_threads_per_block == 1024
    assert "sm_" in repr(p)
    assert xrt.cuda.get_device_properties("cuda:0").uuid == p.uuid
    assert xrt.cuda.get_device_properties(xrt.Device("cuda:0")).uuid == p.uuid


@cuda
def test_bad_devices_raise_ValueError():
    n = xrt.cuda.device_count()
    for call in (xrt.cuda.get_device_properties, xrt.cuda.set_device, xrt.cuda.synchronize,
                 xrt.cuda.current_stream, xrt.cuda.Stream):
        with pytest.raises(ValueError):
            call(n)
    with pytest.raises(ValueError):
        xrt.cuda.synchronize("cpu")
    with pytest.raises(ValueError):
        xrt.set_default_device(f"cuda:{n}")


@cuda
def test_current_device_is_per_thread():
    assert xrt.cuda.current_device() == 0
    xrt.cuda.set_device(0)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(xrt.cuda.current_device()))
    thread.start()
    thread.join()
    assert seen == [0]


@cuda
def test_synchronize_waits_without_the_gil(torch):
    busy(torch, xrt.cuda.default_stream())
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        before = count[0]
        xrt.cuda.synchronize()
        during = count[0] - before
    finally:
        stop.set()
        thread.join()
    assert xrt.cuda.default_stream().query()
    assert during > 1000  # the other thread ran while we waited for the GPU


# ------------------------------------------------------------------ streams


@cuda
def test_stream_identity_and_protocols():
    s, t = xrt.cuda.Stream(), xrt.cuda.Stream()
    assert s.ptr != 0 and t.ptr != 0 and s != t
    assert s == s and hash(s) == hash(xrt.cuda.ExternalStream(s.ptr))
    assert s.device == xrt.Device("cuda:0")
    assert s.__cuda_stream__() == (0, s.ptr)
    assert xrt.cuda.ExternalStream(s) == s  # through __cuda_stream__
    assert xrt.cuda.ExternalStream(s.ptr).device == s.device
    assert xrt.cuda.Stream.null.ptr == 0
    assert xrt.cuda.ExternalStream(1) == xrt.cuda.Stream.null  # 1 is the legacy stream too
    assert xrt.cuda.Stream.ptds.ptr == 2
    assert xrt.cuda.default_stream() == xrt.cuda.Stream.null
    assert xrt.cuda.current_stream() == xrt.cuda.Stream.null
    assert s != "stream" and s != None  # noqa: E711
    with pytest.raises(TypeError):
        xrt.cuda.ExternalStream("0x10")


@cuda
def test_stream_priority_is_clamped(torch):
    assert xrt.cuda.Stream().priority == 0
    greatest = xrt.cuda.Stream(priority=-1000).priority
    assert greatest < 0  # every GPU since sm_35 has high-priority streams
    assert xrt.cuda.Stream(priority=greatest - 1).priority == greatest
    assert xrt.cuda.Stream(priority=greatest + 1).priority == greatest + 1
    assert xrt.cuda.Stream(priority=1000).priority == 0  # the least priority is 0
    # PyTorch narrows the driver's range to its own pools.
    assert greatest <= torch.cuda.Stream.priority_range()[1]


@cuda
def test_stream_handles_are_reused_only_after_death():
    s = xrt.cuda.Stream()
    ptr = s.ptr
    live = [xrt.cuda.Stream() for _ in range(4)]
    assert ptr not in {x.ptr for x in live}
    del s
    assert xrt.cuda.Stream().ptr == ptr  # the pooled handle comes back


@cuda
def test_with_stream_sets_and_restores_the_current_stream():
    s, t = xrt.cuda.Stream(), xrt.cuda.Stream()
    null = xrt.cuda.Stream.null
    with s as entered:
        assert entered is s
        assert xrt.cuda.current_stream() == s
        with xrt.cuda.stream(t):
            assert xrt.cuda.current_stream() == t
        assert xrt.cuda.current_stream() == s
        with xrt.cuda.stream(None):
            assert xrt.cuda.current_stream() == s
    assert xrt.cuda.current_stream() == null
    with pytest.raises(KeyError):
        with s:
            raise KeyError
    assert xrt.cuda.current_stream() == null
    xrt.cuda.set_stream(t)
    assert xrt.cuda.current_stream() == t
    xrt.cuda.set_stream(null)


@cuda
def test_current_stream_is_per_thread():
    s = xrt.cuda.Stream()
    inside, entered, release = [], threading.Event(), threading.Event()

    def worker():
        with s:
            inside.append(xrt.cuda.current_stream())
            entered.set()
            release.wait(10)
        inside.append(xrt.cuda.current_stream())

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait(10)
    assert xrt.cuda.current_stream() == xrt.cuda.Stream.null  # not the worker's stream
    release.set()
    thread.join()
    assert inside == [s, xrt.cuda.Stream.null]


@cuda
def test_current_stream_outlives_its_python_object():
    xrt.cuda.set_stream(xrt.cuda.Stream())  # no other reference to the stream
    try:
        current = xrt.cuda.current_stream()
        assert current.ptr != 0
        assert xrt.cuda.Stream() != current  # its handle is not handed out again
        x = xrt.asarray(np.arange(4.0), device="cuda")
        np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), np.arange(4.0))
    finally:
        xrt.cuda.set_stream(xrt.cuda.Stream.null)


@cuda
def test_copies_run_on_the_current_stream(torch):
    s = xrt.cuda.Stream()
    busy(torch, s)
    host = np.arange(1 << 16, dtype=np.float32)
    with s:
        x = xrt.asarray(host, device="cuda")  # queued behind the sleep
        # The default stream is not held up by s (non-blocking stream).
        assert xrt.cuda.default_stream().query()
        back = x.to_device("cpu")  # same stream: after the upload
    np.testing.assert_array_equal(np.asarray(back), host)
    assert s.query()


def test_to_device_stream_must_be_None_between_cpu_tensors():
    with pytest.raises(ValueError):
        xrt.asarray([1.0]).to_device("cpu", stream=1)


@cuda
def test_a_blocking_stream_and_the_legacy_stream_order_each_other(torch):
    """What the ORT engine relies on (Note [ORT on our stream]): no events between them."""
    b = xrt._core._cuda._blocking_stream()
    assert b.ptr not in (0, 1, 2) and b != xrt.cuda.Stream()
    x = _zeros_on_gpu(1 << 16)
    legacy = torch.cuda.default_stream()
    with torch.cuda.stream(legacy):                 # the legacy stream writes late
        torch.cuda._sleep(SLEEP_CYCLES)
        torch.from_dlpack(x).fill_(3.0)
    with torch.cuda.stream(torch_stream(torch, b)):  # b reads after it, then writes late
        y = torch.from_dlpack(x) * 2.0
        torch.cuda._sleep(SLEEP_CYCLES)
        y.add_(1.0)
    back = np.asarray(xrt.from_dlpack(y).to_device("cpu", stream=xrt.cuda.Stream.null))
    assert (back == 7.0).all()                      # the legacy stream read after b's write
    del b
    assert xrt.cuda.Stream().ptr != xrt._core._cuda._blocking_stream().ptr  # pooled apart


@cuda
def test_to_device_runs_on_the_given_stream(torch):
    s = xrt.cuda.Stream()
    x = _zeros_on_gpu(1 << 16)
    with torch.cuda.stream(torch_stream(torch, s)):
        torch.cuda._sleep(SLEEP_CYCLES)
        torch.from_dlpack(x).fill_(4.0)
    for stream in (s, s.ptr):  # our copy is queued on s, after the write
        assert (np.asarray(x.to_device("cpu", stream=stream)) == 4.0).all()
    assert xrt.cuda.current_stream() == xrt.cuda.Stream.null
    with pytest.raises(ValueError):
        x.to_device("cpu", stream=0)
    with pytest.raises(TypeError):
        x.to_device("cpu", stream="s")
    host = np.arange(8.0)
    y = xrt.asarray(host).to_device("cuda:0", stream=xrt.cuda.Stream.ptds)
    np.testing.assert_array_equal(np.asarray(y.to_device("cpu", stream=2)), host)


@cuda
def test_query_and_synchronize(torch):
    s = xrt.cuda.Stream()
    assert s.query()
    busy(torch, s)
    assert not s.query()
    s.synchronize()
    assert s.query()


# ------------------------------------------------------------------ events


def _zeros_on_gpu(n):
    x = xrt.asarray(np.zeros(n, dtype=np.float32), device="cuda")
    xrt.cuda.synchronize()
    return x


@cuda
@pytest.mark.parametrize("how", ["wait_event", "wait_stream", "event.wait"])
def test_event_orders_work_between_streams(torch, how):
    """A slow write on stream a, an event, a wait on b: b's copy must see the write."""
    a, b = xrt.cuda.Stream(), xrt.cuda.Stream()
    x = _zeros_on_gpu(1 << 20)
    tx = torch.from_dlpack(x)
    with torch.cuda.stream(torch_stream(torch, a)):
        torch.cuda._sleep(200_000_000)
        tx.fill_(7.0)
    if how == "wait_event":
        e = a.record_event()
        assert isinstance(e, xrt.cuda.Event) and e.device == a.device
        b.wait_event(e)
    elif how == "wait_stream":
        b.wait_stream(a)
    else:
        e = xrt.cuda.Event()
        e.record(a)
        e.wait(b)
    with b:
        back = np.asarray(x.to_device("cpu"))
    assert (back == 7.0).all()


@cuda
def test_event_query_synchronize_and_elapsed_time(torch):
    s = xrt.cuda.Stream()
    start, end = xrt.cuda.Event(enable_timing=True), xrt.cuda.Event(enable_timing=True)
    start.record(s)
    busy(torch, s)
    s.record_event(end)
    assert not end.query()
    end.synchronize()
    assert end.query() and start.query()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms > 0
    with pytest.raises(ValueError, match="enable_timing"):
        s.record_event().elapsed_time(end)


@cuda
def test_event_record_defaults_to_the_current_stream(torch):
    s = xrt.cuda.Stream()
    e = xrt.cuda.Event()
    with s:
        busy(torch, s)
        e.record()
    assert e.is_recorded and not e.query()
    e.synchronize()
    assert e.query()


# ------------------------------------------------------------------ graphs


@cuda
def test_capture_needs_a_non_default_stream():
    g = xrt.cuda.CUDAGraph()
    with pytest.raises(ValueError, match="default stream"):
        g.capture_begin()
    assert not g.is_capturing


def _capture_torch_ops(torch, g, tx):
    """Captures y = (x + 1) * 2 with torch kernels on the capture stream; y is allocated
    inside the capture (from the graph's pool). Returns y."""
    with xrt.cuda.graph(g):
        capture = xrt.cuda.current_stream()
        assert capture.ptr != 0
        y = xrt.empty(tuple(tx.shape), dtype=xrt.float32, device="cuda")
        tmp = xrt.empty(tuple(tx.shape), dtype=xrt.float32, device="cuda")
        with torch.cuda.stream(torch_stream(torch, capture)):
            ty, ttmp = torch.from_dlpack(y), torch.from_dlpack(tmp)
            torch.add(tx, 1.0, out=ttmp)
            torch.mul(ttmp, 2.0, out=ty)
        del ty, ttmp, tmp  # dies inside the capture: the pool keeps its memory for replays
    return y


@cuda
def test_graph_capture_and_replay(torch):
    n = 1 << 16
    tx = torch.zeros(n, device="cuda")
    g = xrt.cuda.CUDAGraph()
    y = _capture_torch_ops(torch, g, tx)
    assert g.is_captured and g.num_nodes >= 2
    assert xrt.cuda.current_stream() == xrt.cuda.Stream.null  # restored after the block
    for value in (3.0, -1.5):
        tx.fill_(value)
        torch.cuda.synchronize()
        g.replay()
        np.testing.assert_array_equal(np.asarray(y.to_device("cpu")),
                                      np.full(n, (value + 1) * 2, np.float32))
    g.reset()
    assert not g.is_captured


@cuda
def test_graph_pool_memory_is_not_handed_out_while_the_graph_lives(torch):
    n = 1 << 16
    tx = torch.full((n,), 2.0, device="cuda")
    g = xrt.cuda.CUDAGraph()
    y = _capture_torch_ops(torch, g, tx)
    # Buffers of the same size made after the capture: if one of them got the memory of the
    # temporary that died inside the capture, the replay would overwrite its NaNs.
    others = [xrt.empty((n,), dtype=xrt.float32, device="cuda") for _ in range(4)]
    for o in others:
        torch.from_dlpack(o).fill_(float("nan"))
    torch.cuda.synchronize()
    g.replay()
    xrt.cuda.synchronize()
    np.testing.assert_array_equal(np.asarray(y.to_device("cpu")), np.full(n, 6.0, np.float32))
    for o in others:
        assert np.isnan(np.asarray(o.to_device("cpu"))).all()
    assert data_pointer(y) not in {data_pointer(o) for o in others}


@cuda
def test_host_copies_and_waits_inside_a_capture_raise_and_leave_it_intact(torch):
    n = 1024
    tx = torch.ones(n, device="cuda")
    before = xrt.asarray(np.arange(3.0), device="cuda")
    g = xrt.cuda.CUDAGraph()
    with xrt.cuda.graph(g):
        with pytest.raises(xrt.CudaError, match="graph"):
            float(before[0])
        with pytest.raises(xrt.CudaError, match="graph"):
            before.to_device("cpu")
        with pytest.raises(xrt.CudaError, match="graph"):
            xrt.asarray(np.arange(3.0), device="cuda")
        with pytest.raises(xrt.CudaError, match="graph"):
            xrt.cuda.synchronize()
        with pytest.raises(xrt.CudaError, match="graph"):
            xrt.cuda.current_stream().synchronize()
        y = xrt.empty((n,), dtype=xrt.float32, device="cuda")
        with torch.cuda.stream(torch_stream(torch, xrt.cuda.current_stream())):
            torch.add(tx, 41.0, out=torch.from_dlpack(y))
    assert g.is_captured
    g.replay()
    np.testing.assert_array_equal(np.asarray(y.to_device("cpu")), np.full(n, 42.0, np.float32))


@cuda
def test_an_exception_inside_a_capture_discards_it():
    g = xrt.cuda.CUDAGraph()
    with pytest.raises(KeyError):
        with xrt.cuda.graph(g):
            xrt.empty((8,), dtype=xrt.float32, device="cuda")
            raise KeyError
    assert not g.is_captured and not g.is_capturing
    assert xrt.cuda.current_stream() == xrt.cuda.Stream.null
    xrt.cuda.synchronize()  # no capture is left behind
    with xrt.cuda.graph(g):  # the graph can capture again
        pass
    assert g.is_captured
    with pytest.raises(ValueError, match="reset"):
        g.capture_begin()


@cuda
def test_graph_on_a_given_stream(torch):
    s = xrt.cuda.Stream()
    g = xrt.cuda.CUDAGraph()
    tx = torch.full((16,), 1.0, device="cuda")
    with xrt.cuda.graph(g, stream=s):
        assert xrt.cuda.current_stream() == s
        y = xrt.empty((16,), dtype=xrt.float32, device="cuda")
        with torch.cuda.stream(torch_stream(torch, s)):
            torch.neg(tx, out=torch.from_dlpack(y))
    with s:
        g.replay()  # replays on the current stream
        out = np.asarray(y.to_device("cpu"))
    np.testing.assert_array_equal(out, -np.ones(16, np.float32))


@cuda
@needs_kernels("add", "multiply")
def test_graph_of_xpuruntime_ops():
    x = xrt.asarray(np.arange(1024, dtype=np.float32), device="cuda")
    g = xrt.cuda.CUDAGraph()
    with xrt.cuda.graph(g):
        y = (x + 1) * 2
    g.replay()
    np.testing.assert_array_equal(np.asarray(y.to_device("cpu")),
                                  (np.arange(1024, dtype=np.float32) + 1) * 2)


# ------------------------------------------------------------------ default device


@cuda
def test_default_device_reaches_the_creation_functions():
    gpu = xrt.Device("cuda:0")
    xrt.set_default_device("cuda:0")
    assert xrt.get_default_device() == gpu
    assert xrt.__array_namespace_info__().default_device() == gpu
    assert xrt.asarray([1.0, 2.0]).device == gpu
    assert xrt.asarray(bytearray(b"\x01")).device == gpu
    assert xrt.empty((2,)).device == gpu
    host = xrt.asarray(np.arange(3), device="cpu")
    assert xrt.asarray(host).device == xrt.Device("cpu")  # arrays keep their device
    assert xrt.empty_like(host).device == xrt.Device("cpu")
    assert xrt.asarray([1, 2], device="cpu").device == xrt.Device("cpu")
    xrt.set_default_device(None)
    assert xrt.empty((2,)).device == xrt.Device("cpu")


@cuda
@needs_kernels("fill", "arange", "linspace")
def test_default_device_reaches_the_kernel_creation_functions():
    gpu = xrt.Device("cuda:0")
    with gpu:
        for make in (lambda: xrt.zeros(2), lambda: xrt.ones(2), lambda: xrt.full(2, 1.0),
                     lambda: xrt.arange(3), lambda: xrt.linspace(0, 1, 3), lambda: xrt.eye(2),
                     lambda: xrt.asarray(1.0)):
            assert make().device == gpu


@cuda
def test_device_scope_is_per_thread():
    gpu, cpu = xrt.Device("cuda:0"), xrt.Device("cpu")
    seen, entered, release = [], threading.Event(), threading.Event()

    def worker():
        with gpu:
            seen.append(xrt.empty((1,)).device)
            entered.set()
            release.wait(10)
        seen.append(xrt.get_default_device())

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait(10)
    assert xrt.empty((1,)).device == cpu
    release.set()
    thread.join()
    assert seen == [gpu, cpu]

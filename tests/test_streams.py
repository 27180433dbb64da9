"""tests/test_streams.py: the device-neutral Stream and Event (xrt.runtime), on every device.

A stream names its device; on the CPU there is one stream, the host's program order, and an
event is the time it was recorded. CUDA-only behaviour (priorities, foreign handles, graphs)
is in test_device.py.
"""

import numpy as np
import pytest

import xpuruntime as xrt
from common import tensor, to_numpy
from xpuruntime import runtime as rt


def test_a_new_stream_names_its_device(device):
    s = rt.Stream(device)
    assert s.device == xrt.Device(device)
    assert s.query()
    s.synchronize()
    assert s == s and hash(s) == hash(s)
    assert s != rt.Stream("cpu") or device == "cpu"


def test_a_stream_scope_makes_the_stream_current_and_restores_the_previous(device):
    before = rt.current_stream(device)
    s = rt.Stream(device)
    with s:
        assert rt.current_stream(device) == s
        x = tensor(np.arange(6.0), device)
        y = to_numpy(xrt.exp(x))
    assert rt.current_stream(device) == before
    np.testing.assert_allclose(y, np.exp(np.arange(6.0)))


def test_an_exit_without_an_enter_is_a_value_error(device):
    with pytest.raises(ValueError, match="never entered"):
        rt.Stream(device).__exit__(None, None, None)


def test_events_order_and_time_work_on_a_stream(device):
    s = rt.Stream(device)
    start, end = rt.Event(enable_timing=True), rt.Event(enable_timing=True)
    assert start.device is None and not start.is_recorded
    start.record(s)
    with s:
        x = xrt.sum(tensor(np.ones(1 << 16), device) * 2)
    end.record(s)
    other = rt.Stream(device)
    other.wait_event(end)
    other.wait_stream(s)
    end.synchronize()
    assert start.query() and end.query()
    assert start.device == xrt.Device(device)
    assert start.elapsed_time(end) >= 0.0
    assert float(x) == 2.0 * (1 << 16)


def test_elapsed_time_needs_timing_and_records(device):
    plain, timed = rt.Event(), rt.Event(enable_timing=True)
    with pytest.raises(ValueError, match="enable_timing"):
        plain.elapsed_time(timed)
    with pytest.raises(ValueError, match="recorded"):
        timed.elapsed_time(rt.Event(enable_timing=True))
    s = rt.current_stream(device)
    plain.record(s)
    plain.synchronize()
    assert plain.query()


def test_an_event_stays_on_the_device_of_its_first_record():
    e = rt.Event()
    e.record(rt.Stream("cpu"))
    assert e.device == xrt.Device("cpu")
    if xrt.cuda.is_available():
        with pytest.raises(ValueError, match="belongs to cpu"):
            e.record(rt.Stream("cuda:0"))


def test_the_cpu_has_one_stream():
    s = rt.Stream("cpu")
    assert s == rt.current_stream("cpu") == rt.default_stream("cpu")
    assert s.ptr == 0 and s.priority == 0
    with pytest.raises(TypeError, match="cpu"):
        s.__cuda_stream__()


def test_no_number_becomes_a_stream():
    with pytest.raises(TypeError):
        rt.Stream("cpu").wait_stream(0)
    with pytest.raises(TypeError):
        rt.set_stream(0)
    with pytest.raises(TypeError):
        rt.Stream("cpu").wait_event(1)


@pytest.mark.cuda
def test_streams_of_two_kinds_of_device_do_not_wait_for_each_other():
    with pytest.raises(ValueError, match="cannot wait"):
        rt.Stream("cuda:0").wait_stream(rt.Stream("cpu"))


@pytest.mark.cuda
def test_record_stream_takes_a_stream_or_a_foreign_handle():
    x = xrt.ones(1024, device="cuda:0")
    s = rt.Stream("cuda:0")
    xrt.cuda.record_stream(x, s)
    xrt.cuda.record_stream(x, s.ptr)  # a CUstream handle, as an int
    xrt.cuda.record_stream(x, xrt.cuda.ExternalStream(s.ptr))
    with pytest.raises(TypeError):
        xrt.cuda.record_stream(x, "s")
    with pytest.raises(ValueError, match="lives on cpu"):
        xrt.cuda.record_stream(xrt.ones(3), s)
    del x
    s.synchronize()

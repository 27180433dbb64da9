"""tests/test_runtime_device.py: the design documents' device API (``xrt.runtime`` and the top
level): Device(N), what a Device tells about itself, the device functions and the managers.

Without a GPU the CPU is the only device and the current one; the CUDA parts need a GPU.
"""

import threading

import pytest

import xpuruntime as xrt

cuda = pytest.mark.cuda
no_cuda = pytest.mark.skipif(xrt.cuda.is_available(), reason="CUDA is available here")

FUNCTIONS = ["get_device_count", "get_all_devices", "get_current_device", "set_current_device",
             "synchronize"]


# ------------------------------------------------------------------ Device values


def test_an_int_names_a_cuda_device():
    assert xrt.Device(0) == xrt.Device("cuda:0") == xrt.Device("cuda", 0)
    assert xrt.Device(3).type == "cuda" and xrt.Device(3).index == 3
    assert str(xrt.Device(2)) == "cuda:2"
    assert hash(xrt.Device(1)) == hash(xrt.Device("cuda:1"))
    assert xrt.Device("cpu").type == "cpu"


@pytest.mark.parametrize("bad", [True, False, 1.0, [0], b"cpu"])
def test_a_device_from_other_types_is_a_TypeError(bad):
    with pytest.raises(TypeError):
        xrt.Device(bad)


@pytest.mark.parametrize("bad", [-1, 32768, 2**70])
def test_a_bad_device_index_is_a_ValueError(bad):
    with pytest.raises(ValueError):
        xrt.Device(bad)


def test_one_device_type_everywhere():
    assert xrt.runtime.Device is xrt.Device
    x = xrt.zeros((2,), device=xrt.Device("cpu"))
    assert type(x.device) is xrt.Device
    assert x.device.name == xrt.Device("cpu").name


def test_the_cpu_describes_itself():
    cpu = xrt.Device("cpu")
    assert isinstance(cpu.name, str) and cpu.name
    assert isinstance(cpu.total_memory, int) and cpu.total_memory > 0
    assert cpu.compute_capability is None
    assert cpu.supports_fp16 and cpu.supports_bf16 and cpu.supports_int8
    assert cpu.synchronize() is None


# ------------------------------------------------------------------ the device functions


def test_the_functions_are_at_the_top_level_and_in_runtime():
    for name in FUNCTIONS + ["DeviceManager", "MemoryManager"]:
        assert getattr(xrt, name) is getattr(xrt.runtime, name)
        assert name in xrt.runtime.__all__


def test_all_devices_list_the_cpu_first_then_each_cuda_device():
    count = xrt.get_device_count()
    assert count == xrt.cuda.device_count()
    devices = xrt.get_all_devices()
    assert devices == [xrt.Device("cpu")] + [xrt.Device(i) for i in range(count)]
    assert xrt.__array_namespace_info__().devices() == tuple(devices)


def test_synchronize_takes_a_device_or_none():
    assert xrt.synchronize() is None
    assert xrt.synchronize("cpu") is None
    assert xrt.synchronize(xrt.Device("cpu")) is None
    with pytest.raises(TypeError):
        xrt.synchronize(1.5)


@no_cuda
def test_without_a_gpu_the_cpu_is_the_only_and_current_device():
    assert xrt.get_device_count() == 0
    assert xrt.get_all_devices() == [xrt.Device("cpu")]
    assert xrt.get_current_device() == xrt.Device("cpu")
    xrt.set_current_device("cpu")
    assert xrt.get_current_device() == xrt.Device("cpu")


@no_cuda
@pytest.mark.parametrize("device", [0, "cuda:0", xrt.Device(0)])
def test_without_a_gpu_cuda_devices_raise_CudaError_with_the_reason(device):
    reason = xrt.cuda.why_unavailable()
    with pytest.raises(xrt.CudaError, match="not available"):
        xrt.set_current_device(device)
    with pytest.raises(xrt.CudaError) as info:
        xrt.Device(0).name
    assert reason in str(info.value)
    with pytest.raises(xrt.CudaError):
        xrt.synchronize(device)


def test_the_managers_are_single_facades_over_the_functions():
    manager = xrt.DeviceManager.instance()
    assert manager is xrt.DeviceManager.instance()
    for name in FUNCTIONS:
        assert getattr(manager, name) is getattr(xrt, name)
    assert manager.get_all_devices() == xrt.get_all_devices()
    memory = xrt.MemoryManager.instance()
    assert memory is xrt.MemoryManager.instance()
    for name in ("memory_stats", "memory_allocated", "empty_cache", "reset_peak_memory_stats",
                 "set_per_process_memory_fraction"):
        assert getattr(memory, name) is getattr(xrt.cuda, name)


# ------------------------------------------------------------------ with a GPU


@cuda
def test_a_cuda_device_describes_itself():
    for device in xrt.get_all_devices()[1:]:
        p = xrt.cuda.get_device_properties(device.index)
        assert device.name == p.name
        assert device.total_memory == p.total_memory
        assert device.compute_capability == (p.major, p.minor)
        assert device.supports_fp16 == p.supports_fp16
        assert device.supports_bf16 == p.supports_bf16
        assert device.supports_int8 == p.supports_int8
        x = xrt.ones((1000,), device=device) * 2
        assert device.synchronize() is None
        assert x.device == device


@cuda
def test_the_current_device_is_the_threads_cuda_device():
    assert xrt.get_current_device() == xrt.Device(xrt.cuda.current_device())
    last = xrt.Device(xrt.get_device_count() - 1)
    seen = []

    def other_thread():
        xrt.set_current_device(last)
        seen.append((xrt.get_current_device(), xrt.cuda.current_device()))

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert seen == [(last, last.index)]
    xrt.set_current_device(0)
    assert xrt.get_current_device() == xrt.Device(0)
    assert xrt.synchronize() is None


@cuda
def test_the_cpu_cannot_become_the_current_device_beside_a_gpu():
    with pytest.raises(ValueError, match="set_default_device"):
        xrt.set_current_device("cpu")
    with pytest.raises(ValueError):
        xrt.set_current_device(xrt.get_device_count())

"""tests/test_device.py: Device values, CUDA availability and `xpuruntime info`."""

import subprocess
import sys

import numpy as np
import pytest

import xpuruntime as xrt


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

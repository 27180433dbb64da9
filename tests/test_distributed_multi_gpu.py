"""tests/test_distributed_multi_gpu.py: 2 processes on 2 GPUs through the launcher and
torchrun: every collective and dtype against NumPy, graphs, handles, a torch-bootstrapped
communicator, and a rank that dies making the other raise within the timeout."""

import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time

import pytest

import xpuruntime as xrt

WORKER = str(pathlib.Path(__file__).with_name("distributed_worker.py"))
pytestmark = [
    pytest.mark.cuda, pytest.mark.multi_gpu,
    pytest.mark.skipif(xrt.cuda.device_count() < 2, reason="needs 2 GPUs"),
]


def env(**extra):
    e = dict(os.environ, NCCL_NVLS_ENABLE=os.environ.get("NCCL_NVLS_ENABLE", "0"))
    e.update(extra)
    return e


def run(command, timeout=300, **extra):
    out = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                         env=env(**extra))
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_every_collective_through_the_launcher():
    out = run([sys.executable, "-m", "xpuruntime.distributed.run", "-n", "2", WORKER, "check"])
    assert "rank 0 ok" in out and "rank 1 ok" in out


def test_every_collective_through_torchrun():
    torchrun = shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("torchrun is not installed")
    out = run([torchrun, "--nproc-per-node", "2", WORKER, "check"])
    assert "rank 0 ok" in out and "rank 1 ok" in out


def test_the_id_can_travel_through_torch_distributed():
    pytest.importorskip("torch")
    out = run([sys.executable, "-m", "xpuruntime.distributed.run", "-n", "2", WORKER,
               "torch_pg"])
    assert "rank 0 ok" in out and "rank 1 ok" in out


def test_a_rank_that_dies_makes_the_other_raise_within_the_timeout():
    with socket.socket() as s:
        s.bind(("", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, WORKER, "die"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env=env(RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="2",
                                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                                      XRT_TEST_TIMEOUT="15"))
             for r in range(2)]
    start = time.monotonic()
    out0, _ = procs[0].communicate(timeout=120)
    procs[1].communicate(timeout=60)
    assert procs[0].returncode == 0, out0
    assert "RAISED" in out0, out0
    assert time.monotonic() - start < 60

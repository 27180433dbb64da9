"""tests/test_distributed_multi_gpu.py: 2 processes on 2 GPUs (and 4 on 4, where the machine
has them) through the launcher and torchrun: every collective and dtype against NumPy,
graphs, handles, a torch-bootstrapped communicator, and a rank that dies making the others
raise within the timeout."""

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


# World sizes: 2, and 4 where there are 4 GPUs.
WORLDS = [pytest.param(n, marks=pytest.mark.skipif(xrt.cuda.device_count() < n,
                                                   reason=f"needs {n} GPUs"))
          for n in (2, 4)]


def ranks_ok(out, world):
    return all(f"rank {r} ok" in out for r in range(world))


def run(command, timeout=300, **extra):
    out = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                         env=env(**extra))
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


@pytest.mark.parametrize("world", WORLDS)
def test_every_collective_through_the_launcher(world):
    out = run([sys.executable, "-m", "xpuruntime.distributed.run", "-n", str(world), WORKER,
               "check"])
    assert ranks_ok(out, world), out


@pytest.mark.parametrize("world", WORLDS)
def test_every_collective_through_torchrun(world):
    torchrun = shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("torchrun is not installed")
    out = run([torchrun, "--nproc-per-node", str(world), WORKER, "check"])
    assert ranks_ok(out, world), out


@pytest.mark.parametrize("world", WORLDS)
def test_the_id_can_travel_through_torch_distributed(world):
    pytest.importorskip("torch")
    out = run([sys.executable, "-m", "xpuruntime.distributed.run", "-n", str(world), WORKER,
               "torch_pg"])
    assert ranks_ok(out, world), out


@pytest.mark.parametrize("world", WORLDS)
def test_a_rank_that_dies_makes_the_others_raise_within_the_timeout(world):
    with socket.socket() as s:
        s.bind(("", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, WORKER, "die"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env=env(RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world),
                                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                                      XRT_TEST_TIMEOUT="15"))
             for r in range(world)]
    start = time.monotonic()
    outs = [p.communicate(timeout=120)[0] for p in procs]
    for r in (0, *range(2, world)):  # rank 1 is the one that dies
        assert procs[r].returncode == 0, outs[r]
        assert "RAISED" in outs[r], outs[r]
    assert time.monotonic() - start < 60

"""tests/test_distributed_cuda.py: a single-rank communicator on one GPU, where every
collective degenerates to a copy (or nothing): every dtype, handles, groups, graph capture,
DLPack inputs and the checks that need a device."""

import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import xpuruntime as xrt
import xpuruntime.distributed as dist

pytestmark = pytest.mark.cuda
ReduceOp = dist.ReduceOp
REDUCIBLE = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
             "float32", "float64"]
MOVABLE = REDUCIBLE + ["bool", "int16", "uint16", "complex64", "complex128"]


@pytest.fixture(scope="module")
def comm():
    c = dist.Communicator(dist.Communicator.unique_id(), 1, 0, device=0, timeout=60)
    yield c
    c.destroy()


def values(name, shape=(3, 5)):
    v = (np.arange(np.prod(shape)).reshape(shape) % 7) + 1
    if name == "bool":
        return xrt.asarray(v % 2 == 1, device="cuda:0")
    x = xrt.asarray(v.astype(np.float32), device="cuda:0")
    return xrt.astype(x, getattr(xrt, name))


def same(a, b):
    return bool(xrt.all(a == b))


@pytest.mark.parametrize("name", REDUCIBLE)
def test_reductions_of_one_rank_leave_the_values(comm, name):
    ops = [ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MIN, ReduceOp.MAX]
    ops += [ReduceOp.AVG] if "float" in name else []
    for op in ops:
        x = values(name)
        comm.all_reduce(x, op)
        assert same(x, values(name)), op
        comm.reduce(x, 0, op)
        assert same(x, values(name)), op
        out = xrt.zeros((3, 5), dtype=x.dtype, device="cuda:0")
        comm.reduce_scatter(out, x, op)
        assert same(out, x), op


@pytest.mark.parametrize("name", MOVABLE)
def test_data_movement_of_one_rank_copies(comm, name):
    x = values(name)
    comm.broadcast(x, 0)
    assert same(x, values(name))
    for shape in ((3, 5), (1, 3, 5)):
        out = xrt.zeros(shape, dtype=x.dtype, device="cuda:0")
        comm.all_gather(out, x)
        assert same(xrt.reshape(out, (3, 5)), x)
    parts = [xrt.zeros((3, 5), dtype=x.dtype, device="cuda:0")]
    comm.all_gather(parts, x)
    assert same(parts[0], x)
    out = xrt.zeros((3, 5), dtype=x.dtype, device="cuda:0")
    comm.all_to_all(out, x)
    assert same(out, x)
    got = xrt.zeros((3, 5), dtype=x.dtype, device="cuda:0")
    with dist.group():
        comm.send(x, 0)
        comm.recv(got, 0)
    assert same(got, x)


@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_complex_sums_as_pairs_of_reals(comm, name):
    x = xrt.asarray(np.array([1 + 2j, 3 - 4j], dtype=name), device="cuda:0")
    comm.all_reduce(x, ReduceOp.AVG)
    assert np.array_equal(np.from_dlpack(x.to_device("cpu")), [1 + 2j, 3 - 4j])


def test_empty_tensors_queue_nothing(comm):
    x = xrt.zeros((0, 4), device="cuda:0")
    comm.all_reduce(x)
    comm.all_gather(xrt.zeros((0, 4), device="cuda:0"), x)


def test_work_handles(comm):
    x = xrt.ones((1 << 20,), device="cuda:0")
    work = comm.all_reduce(x, async_op=True)
    assert work.wait() is True
    work.synchronize()
    assert work.is_completed()
    assert comm.all_reduce(x) is None
    with dist.group():
        grouped = comm.all_reduce(x, async_op=True)
    grouped.synchronize()
    assert grouped.is_completed()


def test_graph_capture_and_replay(comm):
    x = xrt.ones((1024,), device="cuda:0")
    comm.all_reduce(x)  # warm-up outside the capture
    g = xrt.cuda.CUDAGraph()
    with xrt.cuda.graph(g):
        comm.all_reduce(x)
        y = x * 2
    # One rank's in-place all_reduce may add no node of its own (NCCL has nothing to move);
    # the two-rank capture is checked in test_distributed_multi_gpu.py.
    assert g.num_nodes >= 1
    g.replay()
    xrt.cuda.synchronize()
    assert float(y[0]) == 2.0


def test_checks_that_need_a_device(comm):
    with pytest.raises(ValueError, match="is on cpu"):
        comm.all_reduce(xrt.ones((4,)))
    x = xrt.ones((4, 4), device="cuda:0")
    with pytest.raises(ValueError, match="contiguous"):
        comm.all_reduce(x.mT)
    with pytest.raises(ValueError, match="is on cpu"):  # NumPy arrives through DLPack
        comm.all_reduce(np.ones(4))
    with pytest.raises(TypeError, match="DLPack"):
        comm.all_reduce([1.0, 2.0])
    with pytest.raises(ValueError, match="has 2 tensors"):
        comm.all_gather([x, x], x)


def test_torch_tensors_are_reduced_in_place():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    c = dist.Communicator(dist.Communicator.unique_id(), 1, 0, device=0, timeout=60)
    x = torch.arange(8, dtype=torch.float32, device="cuda:0")
    c.all_reduce(x, ReduceOp.MAX)
    c.broadcast(x, 0)
    xrt.cuda.synchronize()
    assert x.tolist() == list(range(8))
    c.destroy()


def test_process_group_of_one_over_tcp():
    with socket.socket() as s:
        s.bind(("", 0))
        port = s.getsockname()[1]
    dist.init_process_group(rank=0, world_size=1, init_method=f"tcp://127.0.0.1:{port}",
                            device="cuda:0", timeout=60)
    try:
        assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
        x = xrt.ones((5,), device="cuda:0")
        dist.all_reduce(x)
        dist.barrier()
        assert float(xrt.sum(x)) == 5.0
        with pytest.raises(dist.DistributedError, match="already initialized"):
            dist.init_process_group(rank=0, world_size=1)
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()


def test_destroyed_and_aborted_communicators_refuse_work():
    c = dist.Communicator(dist.Communicator.unique_id(), 1, 0, device=0, timeout=60)
    c.abort()
    with pytest.raises(xrt.CudaError, match="destroyed"):
        c.all_reduce(xrt.ones((4,), device="cuda:0"))
    c.abort()  # idempotent


def test_nccl_is_reported():
    assert xrt.cuda.library_status("nccl")["found"]
    assert xrt.cuda.nccl_version() >= 21400


JOIN_ALONE = """
import time, xpuruntime as xrt, xpuruntime.distributed as dist
start = time.monotonic()
try:
    dist.Communicator(dist.Communicator.unique_id(), 2, 0, device=0, timeout=2)
except xrt.CudaError as e:
    print(f"RAISED after {time.monotonic() - start:.1f} s: {e}", flush=True)
else:
    print("JOINED ALONE", flush=True)
"""


@pytest.mark.parametrize("blocking", ["1", "0"])
def test_a_rank_that_never_joins_makes_the_join_raise_within_the_timeout(blocking):
    # In a child: a blocking join that timed out leaves its thread inside NCCL's bootstrap.
    env = dict(os.environ, XPURUNTIME_NCCL_BLOCKING=blocking)
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-c", JOIN_ALONE], capture_output=True, text=True,
                         timeout=120, env=env, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "RAISED" in out.stdout and "within the timeout" in out.stdout, out.stdout
    assert time.monotonic() - start < 60


@pytest.mark.parametrize("blocking", ["1", "0"])
def test_both_kinds_of_communicator_reduce_and_destroy(blocking):
    code = ("import xpuruntime as xrt, xpuruntime.distributed as dist\n"
            "c = dist.Communicator(dist.Communicator.unique_id(), 1, 0, device=0, timeout=30)\n"
            "x = xrt.ones((1000,), device='cuda:0')\n"
            "for _ in range(100): c.all_reduce(x)\n"
            "c.destroy()\n"
            "print('ok', float(xrt.sum(x)))\n")
    env = dict(os.environ, XPURUNTIME_NCCL_BLOCKING=blocking)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ok 1000.0" in out.stdout, out.stdout

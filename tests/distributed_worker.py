"""tests/distributed_worker.py: one rank of the multi-GPU tests (test_distributed_multi_gpu.py
starts it through the launcher, torchrun, or by hand). Modes:

- check: every collective and dtype against NumPy, async handles, group, graph capture,
  a torch tensor through DLPack; exits 0 when all agree.
- torch_pg: the unique id travels through an initialized torch.distributed group.
- die: rank 1 vanishes after init; rank 0 must raise within the timeout (prints RAISED).
"""

import os
import sys
import time

import numpy as np

import xpuruntime as xrt
import xpuruntime.distributed as dist

ReduceOp = dist.ReduceOp
REDUCIBLE = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
             "float32", "float64"]
MOVABLE = REDUCIBLE + ["bool", "int16", "uint16", "complex64", "complex128"]


def numpy_of(x):
    if x.dtype in (xrt.bfloat16, xrt.float16):
        x = xrt.astype(x, xrt.float32)
    return np.from_dlpack(x.to_device("cpu"))


def tensor(values, name, device):
    """values (small integers, exact in every dtype) as a tensor of dtype name."""
    if name == "bool":
        return xrt.asarray(np.asarray(values) % 2 == 1, device=device)
    if name in ("bfloat16", "float16"):
        return xrt.astype(xrt.asarray(np.asarray(values, np.float32), device=device),
                          getattr(xrt, name))
    np_dtype = np.dtype(name)
    return xrt.asarray(np.asarray(values).astype(np_dtype), device=device)


def base(rank, shape=(4, 6)):
    return (np.arange(np.prod(shape)).reshape(shape) % 5) + rank + 1


def factors(rank, shape=(4, 6)):
    """1s and 2s: their product over up to 6 ranks (64) is exact in every dtype, int8's
    range and bfloat16's 8 bits included (base's products over 4 ranks reach 1680)."""
    return ((np.arange(np.prod(shape)).reshape(shape) + rank) % 2) + 1


def expect(got, want, what):
    got = numpy_of(got)
    if not np.array_equal(got.astype(np.complex128), np.asarray(want).astype(np.complex128)):
        raise AssertionError(f"{what}: got {got.ravel()[:8]}, want {np.ravel(want)[:8]}")


def check_all(rank, n, device):
    everyone = [base(k) for k in range(n)]
    for name in REDUCIBLE:
        ops = [(ReduceOp.SUM, np.sum), (ReduceOp.PROD, np.prod), (ReduceOp.MIN, np.min),
               (ReduceOp.MAX, np.max)]
        if name.startswith(("float", "bfloat")):
            ops.append((ReduceOp.AVG, np.mean))
        for op, fold in ops:
            of = factors if op == ReduceOp.PROD else base
            everyone = [of(k) for k in range(n)]
            x = tensor(of(rank), name, device)
            dist.all_reduce(x, op)
            expect(x, fold(everyone, axis=0), f"all_reduce {name} {op}")
            x = tensor(of(rank), name, device)
            dist.reduce(x, n - 1, op)
            expect(x, fold(everyone, axis=0) if rank == n - 1 else of(rank),
                   f"reduce {name} {op}")
            inp = tensor(np.concatenate([of(rank)[:2]] * n), name, device)
            out = tensor(np.zeros((2, 6)), name, device)
            dist.reduce_scatter(out, inp, op)
            expect(out, fold([of(k)[:2] for k in range(n)], axis=0),
                   f"reduce_scatter {name} {op}")
        everyone = [base(k) for k in range(n)]
    for name in ("complex64", "complex128"):
        x = tensor(base(rank) * (1 + 1j), name, device)
        dist.all_reduce(x)
        want = np.sum(everyone, axis=0) * (1 + 1j)
        expect(x, want, f"all_reduce {name}")
    for name in MOVABLE:
        x = tensor(base(rank), name, device)
        dist.broadcast(x, src=n - 1)
        expect(x, numpy_of(tensor(base(n - 1), name, device)), f"broadcast {name}")
        gathered = tensor(np.zeros((4 * n, 6)), name, device)
        dist.all_gather(gathered, tensor(base(rank), name, device))
        want = np.concatenate([numpy_of(tensor(base(k), name, device)) for k in range(n)])
        expect(gathered, want, f"all_gather {name}")
        parts = [tensor(np.zeros((4, 6)), name, device) for _ in range(n)]
        dist.all_gather(parts, tensor(base(rank), name, device))
        for k in range(n):
            expect(parts[k], numpy_of(tensor(base(k), name, device)), f"all_gather list {name}")
        src = tensor(np.arange(4 * n * 3).reshape(4 * n, 3) + 100 * rank, name, device)
        out = tensor(np.zeros((4 * n, 3)), name, device)
        dist.all_to_all(out, src)
        want = np.concatenate([numpy_of(tensor(np.arange(4 * n * 3).reshape(4 * n, 3)
                                                + 100 * k, name, device))[4 * rank:4 * rank + 4]
                               for k in range(n)])
        expect(out, want, f"all_to_all {name}")
        # A ring: send to the right, receive from the left, batched in one group.
        mine, got = tensor(base(rank), name, device), tensor(np.zeros((4, 6)), name, device)
        with dist.group():
            dist.send(mine, (rank + 1) % n)
            dist.recv(got, (rank - 1) % n)
        expect(got, numpy_of(tensor(base((rank - 1) % n), name, device)), f"send/recv {name}")
    # reduce_scatter from a list.
    parts = [tensor(base(rank) * (k + 1), "float32", device) for k in range(n)]
    out = tensor(np.zeros((4, 6)), "float32", device)
    dist.reduce_scatter(out, parts)
    expect(out, np.sum(everyone, axis=0) * (rank + 1), "reduce_scatter list")


def check_async_and_graphs(rank, n, device):
    x = tensor(np.full((1 << 20,), rank + 1.0), "float32", device)
    work = dist.all_reduce(x, async_op=True)
    work.wait()
    work.synchronize()
    assert work.is_completed()
    expect(x[:4], np.full(4, n * (n + 1) / 2), "async all_reduce")
    # Async on a side stream, then the current stream waits through the handle.
    side = xrt.cuda.Stream(device)
    y = tensor(np.ones(1024), "float32", device)
    side.wait_stream(xrt.cuda.current_stream(device))
    with xrt.cuda.stream(side):
        work = dist.all_reduce(y, async_op=True)
    work.wait()
    expect(y, np.full(1024, n), "all_reduce on a side stream")
    # Graph capture: warm up, capture, replay twice.
    z = tensor(np.ones(4096), "float32", device)
    dist.all_reduce(z)
    xrt.cuda.synchronize()
    g = xrt.cuda.CUDAGraph()
    with xrt.cuda.graph(g):
        dist.all_reduce(z)
    expect(z, np.full(4096, n), "before replay")
    g.replay()
    g.replay()
    xrt.cuda.synchronize()
    expect(z, np.full(4096, n ** 3), "graph replays")
    dist.barrier()


def check_torch(rank, n, device):
    try:
        import torch
    except ImportError:
        return
    if not torch.cuda.is_available():
        return
    x = torch.full((1000,), float(rank + 1), device=f"cuda:{rank}")
    torch.cuda.synchronize()
    dist.all_reduce(x)
    xrt.cuda.synchronize()
    torch.cuda.synchronize()
    assert float(x[0]) == n * (n + 1) / 2, x[:4]


def main():
    mode = sys.argv[1]
    timeout = float(os.environ.get("XRT_TEST_TIMEOUT", "120"))
    if mode == "torch_pg":
        import torch.distributed

        torch.distributed.init_process_group("gloo")
    dist.init_process_group(timeout=timeout)
    rank, n = dist.get_rank(), dist.get_world_size()
    device = f"cuda:{int(os.environ.get('LOCAL_RANK', rank))}"
    if mode == "die":
        dist.barrier()
        if rank == 1:
            os._exit(0)  # gone without a word
        x = tensor(np.ones(1 << 20), "float32", device)
        start = time.monotonic()
        try:
            dist.all_reduce(x, async_op=True).synchronize()
            dist.barrier()
        except xrt.XpuRuntimeError as e:
            print(f"RAISED after {time.monotonic() - start:.1f} s: {e}", flush=True)
            os._exit(0)
        print("NOT RAISED", flush=True)
        os._exit(1)
    if mode == "torch_pg":
        x = tensor(np.ones(16), "float32", device)
        dist.all_reduce(x)
        expect(x, np.full(16, n), "all_reduce over a torch-bootstrapped communicator")
    else:
        check_all(rank, n, device)
        check_async_and_graphs(rank, n, device)
        check_torch(rank, n, device)
    dist.destroy_process_group()
    print(f"rank {rank} ok", flush=True)


if __name__ == "__main__":
    main()

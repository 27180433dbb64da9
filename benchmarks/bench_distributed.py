"""benchmarks/bench_distributed.py: all-reduce bus bandwidth of xpuruntime.distributed against
torch.distributed (NCCL backend), same processes, same GPUs, same run.

Started without RANK in the environment, it launches itself on 2 GPUs through
``python -m xpuruntime.distributed.run``. Each rank makes our communicator first (its
rendezvous frees MASTER_PORT once done), then torch's over env://. For each size from 8 KB to
1 GiB (float32) both libraries run the same number of back-to-back in-place all-reduces on
their current stream, timed by events on the device; the two alternate per size and the best
of a few repetitions counts. busbw = algbw * 2 (n - 1) / n, nccl-tests' definition. The host
cost column is the wall time per call of issuing 8 KB all-reduces without waiting (Python
call to return), which is what limits small messages.

    python benchmarks/bench_distributed.py [--nproc 2] [--max-mib 1024] [--json out.json]
"""

import argparse
import json
import os
import subprocess
import sys
import time


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--max-mib", type=int, default=1024)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", default=None)
    return p.parse_args()


def sizes(max_bytes):
    """8 KiB, 32 KiB, ... (x4) and max_bytes itself (1 GiB by default)."""
    s = 8 << 10
    while s < max_bytes:
        yield s
        s *= 4
    yield max_bytes


def iterations(nbytes):
    return max(5, min(200, (256 << 20) // nbytes * 5))


def time_ours(dist, xrt, x, iters):
    start, end = xrt.cuda.Event(enable_timing=True), xrt.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        dist.all_reduce(x)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


def time_torch(torch, y, iters):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        torch.distributed.all_reduce(y)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


def host_cost(call, sync, n=2000):
    for _ in range(50):
        call()
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    t1 = time.perf_counter()
    sync()
    return (t1 - t0) / n


def rank_main(args):
    import torch
    import torch.distributed

    import xpuruntime as xrt
    import xpuruntime.distributed as dist

    dist.init_process_group()
    rank, n = dist.get_rank(), dist.get_world_size()
    device = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(device)
    torch.distributed.init_process_group("nccl", device_id=torch.device("cuda", device))
    factor = 2 * (n - 1) / n
    rows = []
    for nbytes in sizes(args.max_mib << 20):
        count = nbytes // 4
        x = xrt.ones((count,), dtype=xrt.float32, device=f"cuda:{device}")
        y = torch.ones(count, device=f"cuda:{device}")
        iters = iterations(nbytes)
        dist.all_reduce(x)
        torch.distributed.all_reduce(y)
        best_ours = best_torch = float("inf")
        for _ in range(args.repeats):
            dist.barrier()
            best_ours = min(best_ours, time_ours(dist, xrt, x, iters))
            torch.distributed.barrier()
            best_torch = min(best_torch, time_torch(torch, y, iters))
        rows.append({"bytes": nbytes, "ours_s": best_ours, "torch_s": best_torch,
                     "ours_busbw": nbytes / best_ours * factor / 1e9,
                     "torch_busbw": nbytes / best_torch * factor / 1e9})
        del x, y
    small_x = xrt.ones((2048,), dtype=xrt.float32, device=f"cuda:{device}")
    small_y = torch.ones(2048, device=f"cuda:{device}")
    dist.barrier()
    ours_host = host_cost(lambda: dist.all_reduce(small_x), xrt.cuda.synchronize)
    torch.distributed.barrier()
    torch_host = host_cost(lambda: torch.distributed.all_reduce(small_y),
                           torch.cuda.synchronize)
    if rank == 0:
        gpu = torch.cuda.get_device_name(device)
        print(f"all_reduce float32 in place, {n} ranks on {gpu}; torch {torch.__version__}, "
              f"NCCL {xrt.cuda.nccl_version()} (ours), "
              f"{'.'.join(map(str, torch.cuda.nccl.version()))} (torch's)")
        print(f"{'size':>10} {'ours us':>10} {'torch us':>10} {'ours busbw':>11} "
              f"{'torch busbw':>12} {'ratio':>7}")
        for r in rows:
            size = r["bytes"]
            label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
            print(f"{label:>10} {r['ours_s'] * 1e6:10.1f} {r['torch_s'] * 1e6:10.1f} "
                  f"{r['ours_busbw']:9.1f} GB/s {r['torch_busbw']:8.1f} GB/s "
                  f"{r['ours_busbw'] / r['torch_busbw']:6.3f}x")
        print(f"host cost per 8 KiB all_reduce call: ours {ours_host * 1e6:.2f} us, torch "
              f"{torch_host * 1e6:.2f} us ({torch_host / ours_host:.2f}x less for ours)")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"gpu": gpu, "ranks": n, "rows": rows, "host_us":
                           {"ours": ours_host * 1e6, "torch": torch_host * 1e6}}, f, indent=1)
    torch.distributed.destroy_process_group()
    dist.destroy_process_group()


def main():
    args = parse()
    if "RANK" not in os.environ:
        command = [sys.executable, "-m", "xpuruntime.distributed.run", "-n", str(args.nproc),
                   os.path.abspath(__file__)] + sys.argv[1:]
        return subprocess.call(command)
    rank_main(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""tools/soak.py: a soak test, run by hand (not in CI): many mixed operations on the CPU and on
CUDA with the process's RSS and the CUDA allocator's statistics sampled as they run, then the
CUDA out-of-memory path (allocate past the card, catch OutOfMemoryError, free, go on)
repeated. Memory must stay flat: the report gives the first and last samples of each loop and
the growth per million operations after a warm-up.

    python tools/soak.py                    # 10**6 operations per device, 100 OOM rounds
    python tools/soak.py --ops 100000 --devices cpu --json out.json
"""

import argparse
import json
import os
import sys
import time

import numpy as np

import xpuruntime as xrt


def rss_mib():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def cuda_stats(device):
    if not device.startswith("cuda"):
        return {}
    s = xrt.cuda.memory_stats(device)
    return {"allocated_mib": s.get("allocated_bytes.all.current", 0) / 2**20,
            "reserved_mib": s.get("reserved_bytes.all.current", 0) / 2**20}


def mixed_ops(device, rng):
    """One round of about 40 operations of every family, on small and mid-sized inputs."""
    n = int(rng.integers(1, 2000))
    a = xrt.asarray(rng.standard_normal(n), device=device)
    b = xrt.asarray(rng.standard_normal(n), device=device)
    m = xrt.reshape(xrt.asarray(rng.standard_normal(64), device=device), (8, 8))
    ops = [
        lambda: a + b, lambda: a * 2.0, lambda: xrt.exp(a), lambda: xrt.sin(b),
        lambda: xrt.where(a > 0, a, b), lambda: xrt.sum(a), lambda: xrt.max(b),
        lambda: xrt.cumulative_sum(a), lambda: xrt.sort(a), lambda: xrt.argsort(b),
        lambda: m @ m, lambda: xrt.linalg.inv(m + 8 * xrt.eye(8, device=device)),
        lambda: xrt.fft.fft(a), lambda: a[::2], lambda: a[a > 0], lambda: xrt.flip(a),
        lambda: xrt.concat([a, b]), lambda: xrt.stack([a, b]), lambda: xrt.astype(a, xrt.float32),
        lambda: xrt.unique_values(xrt.astype(a * 4, xrt.int32)), lambda: xrt.tile(a[:3], (4,)),
        lambda: xrt.broadcast_to(a[:1], (3, 4)) + 1, lambda: xrt.asarray(a, copy=True),
        lambda: xrt.zeros((n,), device=device), lambda: xrt.arange(n, device=device),
        lambda: xrt.mean(m, axis=0), lambda: xrt.std(a), lambda: xrt.clip(a, -1, 1),
        lambda: xrt.take(a, xrt.asarray([0], device=device)), lambda: xrt.matmul(m, m.mT),
        lambda: xrt.nonzero(a > 0), lambda: xrt.roll(a, 3), lambda: xrt.isnan(a),
        lambda: xrt.expand_dims(a, axis=0), lambda: xrt.permute_dims(m, (1, 0)),
        lambda: xrt.searchsorted(xrt.sort(a), b), lambda: xrt.linalg.vector_norm(a),
        lambda: np.from_dlpack(a.to_device("cpu")), lambda: float(xrt.sum(a)),
    ]
    for op in ops:
        op()
    a[0] = 1.0
    return len(ops) + 1


def soak(device, total_ops, samples=20, seed=0):
    rng = np.random.default_rng(seed)
    done, records, start = 0, [], time.perf_counter()
    step = max(1, total_ops // samples)
    next_sample = 0
    while done < total_ops:
        done += mixed_ops(device, rng)
        if done >= next_sample:
            if device.startswith("cuda"):
                xrt.cuda.synchronize()
            records.append({"ops": done, "rss_mib": round(rss_mib(), 1), **{
                k: round(v, 1) for k, v in cuda_stats(device).items()}})
            next_sample += step
    # Warm-up is the first fifth of the run: on CUDA the JIT and the library handles grow
    # the process for the first ~150k ops (seen on the H100: 456 -> 515 MiB, then flat).
    warm = records[min(max(2, len(records) // 5), len(records) - 1)]
    last = records[-1]
    per_million = (last["rss_mib"] - warm["rss_mib"]) / max(1, last["ops"] - warm["ops"]) * 1e6
    return {"device": device, "ops": done, "seconds": round(time.perf_counter() - start, 1),
            "samples": records, "rss_growth_mib_per_million_ops": round(per_million, 2)}


def oom_rounds(device, rounds):
    """Allocates past the card each round; OutOfMemoryError must come, and after freeing
    the allocator must hold what it held before."""
    total = xrt.Device(device).total_memory
    too_big = total * 2
    keep = xrt.ones((2**20,), device=device)  # something alive across the rounds
    before = cuda_stats(device)
    caught = 0
    for _ in range(rounds):
        try:
            xrt.empty((too_big,), dtype=xrt.int8, device=device)
        except xrt.OutOfMemoryError:
            caught += 1
        scratch = xrt.ones((2**22,), device=device)  # the allocator still works
        del scratch
    xrt.cuda.synchronize()
    after = cuda_stats(device)
    del keep
    return {"device": device, "rounds": rounds, "caught": caught, "before": before,
            "after": after, "card_bytes": total}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10**6)
    parser.add_argument("--oom-rounds", type=int, default=100)
    parser.add_argument("--devices", default="cpu,cuda:0")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    report = {"soak": [], "oom": []}
    for device in args.devices.split(","):
        if device.startswith("cuda") and not xrt.cuda.is_available():
            print(f"{device}: skipped ({xrt.cuda.why_unavailable()})")
            continue
        r = soak(device, args.ops)
        report["soak"].append(r)
        first, last = r["samples"][0], r["samples"][-1]
        print(f"{device}: {r['ops']} ops in {r['seconds']} s; RSS {first['rss_mib']} -> "
              f"{last['rss_mib']} MiB ({r['rss_growth_mib_per_million_ops']} MiB per million "
              f"ops after warm-up); allocator {cuda_stats(device) or 'n/a'}")
        if device.startswith("cuda"):
            o = oom_rounds(device, args.oom_rounds)
            report["oom"].append(o)
            print(f"{device}: OutOfMemoryError caught {o['caught']}/{o['rounds']}; allocator "
                  f"before {o['before']}, after {o['after']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    ok = all(o["caught"] == o["rounds"] and o["after"].get("allocated_mib") ==
             o["before"].get("allocated_mib") for o in report["oom"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

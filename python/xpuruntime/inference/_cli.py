"""python/xpuruntime/inference/_cli.py: ``python -m xpuruntime run`` (one model, one engine,
the outputs) and ``python -m xpuruntime bench`` (every engine and policy on the same inputs,
outputs checked to agree, a table and a plot): which engine and policy to ship, and why.
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np


def _parser(command):
    p = argparse.ArgumentParser(prog=f"python -m xpuruntime {command}")
    p.add_argument("model", help="an ONNX model file")
    p.add_argument("--device", default="cpu", help="cpu, cuda[:N] or npu (default: cpu)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an input from a .npy file (others are drawn at random)")
    p.add_argument("--dim", action="append", default=[], metavar="SYMBOL=SIZE",
                   help="size of a symbolic dimension for random inputs (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    if command == "run":
        p.add_argument("--engine", default="auto")
        p.add_argument("--policy", default=None, help="a policy file (kernel and/or execution)")
        p.add_argument("--save", default=None, metavar="DIR",
                       help="write each output to DIR/<name>.npy")
        p.add_argument("--explain", action="store_true", help="print the session's explain()")
    else:
        p.add_argument("--engines", default="auto",
                       help="comma-separated engines (default: every engine usable here)")
        p.add_argument("--policies", default="", metavar="FILE[,FILE...]",
                       help="policy files to compare (default: the default policy)")
        p.add_argument("--runs", type=int, default=50, help="timed runs per case")
        p.add_argument("--warmup", type=int, default=5)
        p.add_argument("--rtol", type=float, default=None,
                       help="tolerance of the agreement check (default by precision)")
        p.add_argument("--plot", default=None, metavar="FILE.png", help="write a bar chart")
    return p


def _pairs(items, what):
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"--{what} expects NAME=VALUE, got {item!r}")
        out[name] = value
    return out


def make_inputs(infos, files, dims, seed):
    """The feeds: files where given, else random data of each input's dtype and shape."""
    import xpuruntime as xrt

    rng = np.random.default_rng(seed)
    feeds = {}
    for info in infos:
        if info.name in files:
            feeds[info.name] = np.load(files[info.name])
            continue
        shape = tuple(d if isinstance(d, int) else int(dims.get(d, 1)) for d in info.shape)
        np_dtype = xrt.dtype_to_numpy(info.dtype) if info.dtype is not None else None
        if np_dtype is None:
            raise SystemExit(f"input {info.name!r}: give it with --input (type "
                             f"{info.onnx_type} cannot be drawn at random)")
        if np.issubdtype(np_dtype, np.floating):
            feeds[info.name] = rng.standard_normal(shape).astype(np_dtype)
        elif np_dtype == np.bool_:
            feeds[info.name] = rng.random(shape) < 0.5
        else:
            feeds[info.name] = rng.integers(0, 8, size=shape).astype(np_dtype)
    unknown = set(files) - {i.name for i in infos}
    if unknown:
        raise SystemExit(f"--input names unknown inputs {sorted(unknown)}; the model's inputs "
                         f"are {[i.name for i in infos]}")
    return feeds


def run_main(argv):
    import xpuruntime as xrt

    args = _parser("run").parse_args(argv)
    files, dims = _pairs(args.input, "input"), _pairs(args.dim, "dim")
    started = time.perf_counter()
    sess = xrt.InferenceSession(args.model, device=args.device, engine=args.engine,
                                kernel_policy=args.policy, exec_policy=args.policy)
    built = time.perf_counter() - started
    feeds = make_inputs(sess.inputs, files, dims, args.seed)
    started = time.perf_counter()
    outputs = sess.run(feeds)
    host = {name: _to_numpy(t) for name, t in outputs.items()}
    ran = time.perf_counter() - started
    print(f"{sess.engine} on {sess.device}: built in {built * 1e3:.1f} ms, ran in "
          f"{ran * 1e3:.2f} ms")
    for name, a in host.items():
        stats = (f"min {a.min():.4g} max {a.max():.4g} mean {a.mean():.4g}"
                 if a.size and np.issubdtype(a.dtype, np.number) else "")
        print(f"  {name}: {a.dtype} {list(a.shape)} {stats}")
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            np.save(os.path.join(args.save, f"{name}.npy"), a)
    explained = sess.explain()
    for sentence in explained["unhonoured"]:
        print(f"  not honoured: {sentence}")
    if args.explain:
        import json
        print(json.dumps(explained, indent=2, default=str))
    return 0


def _to_numpy(t):
    import xpuruntime as xrt

    if t.device != xrt.Device("cpu"):
        t = t.to_device("cpu")
    return np.asarray(t)


def bench_main(argv):
    import xpuruntime as xrt

    args = _parser("bench").parse_args(argv)
    files, dims = _pairs(args.input, "input"), _pairs(args.dim, "dim")
    engines = _engines(args.engines, args.device)
    policies = [p for p in args.policies.split(",") if p] or [None]
    cases = [(e, p) for e in engines for p in policies]
    rows, reference, feeds = [], None, None
    progress = _progress(len(cases))
    for engine, policy in cases:
        label = engine + (f" + {os.path.basename(policy)}" if policy else "")
        progress.set_description(label)
        try:
            started = time.perf_counter()
            sess = xrt.InferenceSession(args.model, device=args.device, engine=engine,
                                        kernel_policy=policy, exec_policy=policy)
            built = time.perf_counter() - started
            if feeds is None:
                feeds = make_inputs(sess.inputs, files, dims, args.seed)
                device = xrt.inference.parse_target(args.device).device
                feeds = {k: xrt.asarray(v, device=device) for k, v in feeds.items()}
            times = _time(sess, feeds, args.warmup, args.runs, args.device)
            outputs = {k: _to_numpy(v) for k, v in sess.run(feeds).items()}
            precision = sess.exec_policy.precision
        except Exception as e:   # one engine failing does not stop the comparison
            rows.append({"case": label, "error": f"{type(e).__name__}: {e}"})
            progress.update()
            continue
        if reference is None:
            reference = (label, outputs)
        diff = _max_diff(reference[1], outputs)
        rtol = args.rtol if args.rtol is not None else {"fp32": 1e-4, "fp16": 2e-2,
                                                        "bf16": 5e-2, "int8": 1e-1}[precision]
        rows.append({"case": label, "build_ms": built * 1e3,
                     "mean_ms": statistics.fmean(times) * 1e3,
                     "p50_ms": statistics.median(times) * 1e3,
                     "p90_ms": sorted(times)[int(0.9 * (len(times) - 1))] * 1e3,
                     "max_rel_diff": diff, "agrees": diff <= rtol,
                     "unhonoured": sess.explain()["unhonoured"]})
        sess.close()
        progress.update()
    progress.close()
    _print_table(rows, reference[0] if reference else None, args)
    if args.plot:
        _plot(rows, args.plot, args.model, args.device)
    return 0 if all("error" not in r and r["agrees"] for r in rows) else 1


def _engines(spec, device):
    import xpuruntime as xrt

    if spec != "auto":
        return [e.strip() for e in spec.split(",") if e.strip()]
    target = xrt.inference.parse_target(device)
    return [name for name, reason in xrt.EngineRegistry.status(target).items() if reason is None]


def _time(sess, feeds, warmup, runs, device):
    import xpuruntime as xrt

    sync = (lambda: xrt.synchronize(device)) if device.startswith("cuda") else (lambda: None)
    for _ in range(warmup):
        sess.run(feeds)
    sync()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        sess.run(feeds)
        sync()
        times.append(time.perf_counter() - start)
    return times


def _max_diff(ref, out):
    worst = 0.0
    for name, a in ref.items():
        b = out.get(name)
        if b is None or a.shape != b.shape:
            return float("inf")
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        scale = max(float(np.abs(a64).max()) if a.size else 0.0, 1e-6)
        worst = max(worst, float(np.abs(a64 - b64).max()) / scale if a.size else 0.0)
    return worst


def _progress(total):
    try:
        from tqdm import tqdm
        return tqdm(total=total, file=sys.stderr, leave=False)
    except ImportError:
        class Plain:
            def set_description(self, text):
                print(f"... {text}", file=sys.stderr)

            def update(self):
                pass

            def close(self):
                pass
        return Plain()


def _print_table(rows, reference, args):
    fastest = min((r["mean_ms"] for r in rows if "error" not in r), default=None)
    print(f"{args.model} on {args.device}: {args.runs} runs each; outputs compared with "
          f"{reference} (relative to its largest magnitude)")
    head = f"{'case':<34} {'build ms':>9} {'mean ms':>9} {'p50 ms':>9} {'p90 ms':>9} " \
           f"{'vs best':>8} {'max diff':>9}  agree"
    print(head)
    print("-" * len(head))
    for r in rows:
        if "error" in r:
            print(f"{r['case']:<34} failed: {r['error']}")
            continue
        print(f"{r['case']:<34} {r['build_ms']:>9.1f} {r['mean_ms']:>9.3f} {r['p50_ms']:>9.3f} "
              f"{r['p90_ms']:>9.3f} {fastest / r['mean_ms']:>7.2f}x {r['max_rel_diff']:>9.2e}  "
              f"{'yes' if r['agrees'] else 'NO'}")
        for sentence in r["unhonoured"]:
            print(f"{'':<34} not honoured: {sentence}")


def _plot(rows, path, model, device):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot needs matplotlib (pip install xpuruntime[bench])", file=sys.stderr)
        return
    ok = [r for r in rows if "error" not in r]
    fig, ax = plt.subplots(figsize=(7, 0.5 + 0.45 * max(len(ok), 1)))
    ax.barh([r["case"] for r in ok], [r["p50_ms"] for r in ok],
            xerr=[[r["p50_ms"] - min(r["p50_ms"], r["mean_ms"]) for r in ok],
                  [r["p90_ms"] - r["p50_ms"] for r in ok]],
            color=["tab:green" if r["agrees"] else "tab:red" for r in ok])
    ax.invert_yaxis()
    ax.set_xlabel("ms per run (median, bar to p90)")
    ax.set_title(f"{os.path.basename(model)} on {device}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")

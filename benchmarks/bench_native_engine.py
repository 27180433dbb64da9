"""benchmarks/bench_native_engine.py: the native engine against ONNX Runtime (CPU EP, same
thread count) and PyTorch eager (and, on CUDA, PyTorch's CUDA graph) on the issue's small
transformer (2 layers, d=256, 4 heads, batch 1, 64 tokens), outputs checked to agree.

Prints each time and the ratio peer time / native time (above 1: native is faster).
``native_rows`` is the helper benchmarks/bench_inference.py calls for its native rows.

    python benchmarks/bench_native_engine.py                      # CPU
    python benchmarks/bench_native_engine.py --device cuda --precision fp16
    python benchmarks/bench_native_engine.py --profile            # cProfile of native runs
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
# The models are the tests' (one definition for the model tests and this benchmark).
sys.path.append(os.path.join(os.path.dirname(__file__), os.pardir, "tests"))
import xpuruntime as xrt
from common import per_call, table
from xpuruntime.inference._engine import EngineRegistry, parse_target
from xpuruntime.inference._model import Model
from xpuruntime.policies import ExecutionPolicy


def _sync(device):
    if device != "cpu":
        xrt.cuda.synchronize()


def native_rows(model, x, device="cpu", precision="fp32", check=None, tolerance=1e-3):
    """``{row name: seconds per run}`` of the native engine on ``model`` (an onnx.ModelProto)
    with input ``x`` (NumPy): eager, static shapes, and on CUDA static shapes + CUDA graph.
    ``check``, when given, is the expected output: each row's output must agree."""
    cls = EngineRegistry.get("native")
    policies = {"native": ExecutionPolicy(precision=precision),
                "native static": ExecutionPolicy(precision=precision, static_shape=True)}
    if device != "cpu":
        policies["native graph"] = ExecutionPolicy(precision=precision, static_shape=True,
                                                   cuda_graphs=True)
    name = model.graph.input[0].name
    out_name = model.graph.output[0].name
    feed = xrt.asarray(x, device=xrt.Device(device))
    rows = {}
    for row, policy in policies.items():
        engine = cls(Model(model), parse_target(device), None, policy)

        def run(engine=engine):
            out = engine.run({name: feed}, [out_name])
            _sync(device)
            return out
        got = np.asarray(run()[0].to_device(xrt.Device("cpu")))
        if check is not None:
            np.testing.assert_allclose(got, check, rtol=tolerance, atol=tolerance,
                                       err_msg=f"{row} disagrees")
        rows[row] = per_call(run, repeat=5, budget=1.0)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precision", default="fp32", choices=("fp32", "fp16"))
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--d", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    import torch
    from native_engine_models import Transformer, export

    torch.manual_seed(0)
    module = Transformer(args.layers, args.d, args.heads).eval()
    x = np.random.default_rng(0).standard_normal((args.batch, args.tokens, args.d))
    x = x.astype(np.float32)
    model = export(module, torch.from_numpy(x))
    threads = xrt.num_threads()
    torch.set_num_threads(threads)
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    tolerance = 1e-3 if args.precision == "fp32" else 5e-2

    times = native_rows(model, x, args.device, args.precision, expected, tolerance)
    if args.device == "cpu":
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        np.testing.assert_allclose(session.run(None, {"x": x})[0], expected, rtol=1e-3,
                                   atol=1e-3)
        times["onnxruntime cpu"] = per_call(lambda: session.run(None, {"x": x}), repeat=5,
                                            budget=1.0)
        tx = torch.from_numpy(x)
        with torch.no_grad():
            times["torch eager"] = per_call(lambda: module(tx), repeat=5, budget=1.0)
    else:
        times.update(_torch_cuda(module, x, args.precision))

    native = times["native static"] if args.device == "cpu" else times["native graph"]
    rows = [(name, f"{t * 1e3:.3f}", f"{t / native:.2f}") for name, t in times.items()]
    print(f"small transformer: {args.layers} layers, d={args.d}, batch {args.batch}, "
          f"{args.tokens} tokens, {args.precision}, {args.device}, {threads} CPU threads")
    print(table(rows, ("engine", "ms", "time / native best")))
    if args.profile:
        _profile(model, x, args.device, args.precision)


def _torch_cuda(module, x, precision):
    import torch

    dtype = torch.float16 if precision == "fp16" else torch.float32
    module = module.cuda().to(dtype)
    tx = torch.from_numpy(x).cuda().to(dtype)

    def eager():
        with torch.no_grad():
            module(tx)
        torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad():
        for _ in range(3):
            module(tx)
        torch.cuda.synchronize()
        with torch.cuda.graph(graph):
            module(tx)

    def replay():
        graph.replay()
        torch.cuda.synchronize()
    return {"torch eager": per_call(eager, repeat=5, budget=1.0),
            "torch graph": per_call(replay, repeat=5, budget=1.0)}


def _profile(model, x, device, precision):
    import cProfile
    import pstats

    engine = EngineRegistry.get("native")(Model(model), parse_target(device), None,
                                          ExecutionPolicy(precision=precision,
                                                          static_shape=True, profile=True))
    feed = {"x": xrt.asarray(x, device=xrt.Device(device))}
    for _ in range(3):
        engine.run(feed, ["y"])
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(50):
        engine.run(feed, ["y"])
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(12)
    by_op = {}
    for node in engine.explain()["nodes"]:
        by_op[node["op"]] = by_op.get(node["op"], 0.0) + node.get("seconds", 0.0)
    total = sum(by_op.values())
    print("time per op type (profiled runs, node by node):")
    for op_type, seconds in sorted(by_op.items(), key=lambda kv: -kv[1]):
        print(f"  {op_type:<20} {100 * seconds / total:5.1f}%")


if __name__ == "__main__":
    main()

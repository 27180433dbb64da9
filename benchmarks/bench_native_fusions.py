"""benchmarks/bench_native_fusions.py: the native engine's CUDA-only fusions, each on and off in
one run, against PyTorch eager on the same computation, outputs checked to agree:

- ``elementwise``: a SwiGLU-style gate, silu(g) * up + bias then a tanh GELU (ONNX Sigmoid,
  Mul, Mul, Add, Gelu: five passes unfused, one generated kernel fused);
- ``attention``: one causal attention, MatMul, Mul, Where, Softmax, MatMul.
The models are float16 throughout (inputs, weights, outputs), so no conversion is timed.

    python benchmarks/bench_native_fusions.py [--tokens 4096] [--width 4096]

Prints ms per run and the ratios unfused / fused and torch / fused (above 1: fused is faster).
"""

import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import xpuruntime as xrt
from common import per_call, table
from xpuruntime.inference._engine import EngineRegistry, parse_target
from xpuruntime.inference._model import Model
from xpuruntime.inference.native import FUSIONS
from xpuruntime.policies import ExecutionPolicy


def gate_model(tokens, width):
    from onnx import TensorProto, helper, numpy_helper

    bias = np.random.default_rng(0).standard_normal(width).astype(np.float16)
    nodes = [helper.make_node("Sigmoid", ["g"], ["s"]),
             helper.make_node("Mul", ["g", "s"], ["silu"]),
             helper.make_node("Mul", ["silu", "up"], ["h"]),
             helper.make_node("Add", ["h", "bias"], ["hb"]),
             helper.make_node("Gelu", ["hb"], ["y"], approximate="tanh")]
    info = [helper.make_tensor_value_info(n, TensorProto.FLOAT16, [tokens, width])
            for n in ("g", "up")]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [tokens, width])]
    graph = helper.make_graph(nodes, "gate", info, out, [numpy_helper.from_array(bias, "bias")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=10)
    return model, bias


def attention_model(tokens, heads, dim):
    from onnx import TensorProto, helper, numpy_helper

    shape = [1, heads, tokens, dim]
    init = [numpy_helper.from_array(np.float16(1 / math.sqrt(dim)), "scale"),
            numpy_helper.from_array(np.float16(-np.inf), "ninf"),
            numpy_helper.from_array(~np.tril(np.ones((tokens, tokens), dtype=bool)), "drop")]
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "scale"], ["ss"]),
             helper.make_node("Where", ["drop", "ninf", "ss"], ["m"]),
             helper.make_node("Softmax", ["m"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    info = [helper.make_tensor_value_info(n, TensorProto.FLOAT16, shape) for n in "qkv"]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT16, shape)]
    graph = helper.make_graph(nodes, "attention", info, out, init)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)


def native_times(model, feeds, fusion):
    cls = EngineRegistry.get("native")
    device = xrt.Device("cuda:0")
    tensors = {n: xrt.asarray(a, device=device) for n, a in feeds.items()}
    policy = ExecutionPolicy(static_shape=True)  # the models are float16 throughout
    rows, outputs = {}, {}
    for name, fusions in (("fused", FUSIONS), ("unfused", [f for f in FUSIONS if f != fusion])):
        engine = cls(Model(model), parse_target("cuda:0"), None, policy, fusions=fusions)
        assert (fusion in [f["fusion"] for f in engine.explain()["fusions"]]) == \
            (name == "fused"), name

        def run(engine=engine):
            out = engine.run(tensors, ["y"])
            xrt.cuda.synchronize()
            return out
        outputs[name] = np.asarray(run()[0].to_device(xrt.Device("cpu")), dtype=np.float32)
        rows[f"native {name}"] = per_call(run, repeat=7, budget=1.0)
    np.testing.assert_allclose(outputs["fused"], outputs["unfused"], rtol=2e-2, atol=2e-2)
    return rows, outputs["fused"]


def torch_time(fn, check):
    import torch

    def run():
        out = fn()
        torch.cuda.synchronize()
        return out
    got = run().float().cpu().numpy()
    np.testing.assert_allclose(got, check, rtol=3e-2, atol=3e-2)
    return per_call(run, repeat=7, budget=1.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--dim", type=int, default=64)
    args = parser.parse_args()
    import torch
    import torch.nn.functional as F

    rng = np.random.default_rng(1)
    g, up = (rng.standard_normal((args.tokens, args.width)).astype(np.float16)
             for _ in range(2))
    model, bias = gate_model(args.tokens, args.width)
    rows, fused = native_times(model, {"g": g, "up": up}, "elementwise")
    tg, tu, bias = (torch.from_numpy(a).cuda().half() for a in (g, up, bias))
    rows["torch eager"] = torch_time(
        lambda: F.gelu(F.silu(tg) * tu + bias, approximate="tanh"), fused)
    report(f"elementwise: silu(g) * up + bias, tanh GELU, {args.tokens}x{args.width} fp16",
           rows)

    q, k, v = (rng.standard_normal((1, args.heads, 1024, args.dim)).astype(np.float16)
               for _ in range(3))
    rows, fused = native_times(attention_model(1024, args.heads, args.dim),
                               {"q": q, "k": k, "v": v}, "attention")
    tq, tk, tv = (torch.from_numpy(a).cuda().half() for a in (q, k, v))
    mask = torch.ones(1024, 1024, dtype=torch.bool, device="cuda").tril()

    def unfused_torch():
        s = (tq @ tk.transpose(-1, -2)) * (1 / math.sqrt(args.dim))
        return s.masked_fill(~mask, float("-inf")).softmax(-1) @ tv
    rows["torch eager"] = torch_time(unfused_torch, fused)
    report(f"attention: causal, 1x{args.heads}x1024x{args.dim} fp16 (torch as written)", rows)


def report(title, rows):
    fused = rows["native fused"]
    print(title)
    print(table([(n, f"{t * 1e3:.3f}", f"{t / fused:.2f}") for n, t in rows.items()],
                ("run", "ms", "time / fused")))


if __name__ == "__main__":
    main()

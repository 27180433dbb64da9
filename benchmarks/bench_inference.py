"""benchmarks/bench_inference.py: InferenceSession against each engine's own API, and every
engine against PyTorch on the demo transformer, in one run.

Part 1, host overhead: the per-``run`` time of a tiny model (4x4 MLP) through our session
and through each engine's own Python API on the same inputs; the difference is what the
session adds (goal: at most 2 us, on CPU and on CUDA). For ONNX Runtime the peers are its
``run(None, feeds)`` and its IO binding (``bind_input`` by pointer + ``bind_output`` +
``run_with_iobinding`` + ``get_outputs``), through its public wrappers and through the
compiled module beneath them (what our engine calls); on CUDA also ``run_with_iobinding`` of
pre-bound buffers, the floor: no binding at all, and each run overwrites the last one's
output, where a session run returns a fresh output the caller owns. For OpenVINO, ``CompiledModel.__call__`` with shared
inputs.

Part 2, the engine table: a pre-norm transformer (``--layers``, ``--d``, ``--heads``,
``--batch``, ``--tokens``) exported from PyTorch to ONNX, run by every engine usable on the
device and by PyTorch (eager, and replayed as a CUDA graph on the GPU), outputs checked to
agree. On CUDA the model runs in fp16 (engines through ExecutionPolicy(precision="fp16")).

    python benchmarks/bench_inference.py --device cpu             # small transformer
    python benchmarks/bench_inference.py --device cuda --layers 12 --d 768 --heads 12 \\
        --batch 8 --tokens 512 [--kernels]

``--kernels`` lists the device kernels of one run of PyTorch eager and of the native engine
(CUPTI through torch.profiler): where the device time of each goes.
"""

import argparse
import io
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import per_call, table  # noqa: E402

import xpuruntime as xrt  # noqa: E402
from xpuruntime.inference import EngineRegistry, parse_target  # noqa: E402


def tiny_model():
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.eye(4, dtype=np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
        "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model.SerializeToString()


def overhead_rows(device):
    rows = []
    data = tiny_model()
    x_np = np.ones((1, 4), np.float32)
    target = parse_target(device)
    status = EngineRegistry.status(target)
    if status.get("onnxruntime") is None:
        import onnxruntime as ort

        ours = xrt.InferenceSession(data, device=device, engine="onnxruntime")
        x = xrt.asarray(x_np, device=target.device)
        if target.kind == "cpu":
            sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
            binding = sess.io_binding()

            def ort_bound():
                binding.bind_input("x", "cpu", 0, np.float32, (1, 4), x_np.ctypes.data)
                binding.bind_output("y", "cpu")
                sess.run_with_iobinding(binding)
                return binding.get_outputs()

            peers = {"ort run(None, feeds)": lambda: sess.run(None, {"x": x_np}),
                     "ort IO binding (bind + run + get_outputs)": ort_bound,
                     "ort C-level IO binding per run (bind + run + get_outputs)":
                     _compiled_per_run(ort, sess, "cpu", 0, x, ort.RunOptions())}
            sync = None
        else:
            stream = xrt.cuda.Stream()
            providers = [("CUDAExecutionProvider", {"user_compute_stream": str(stream.ptr)})]
            sess = ort.InferenceSession(data, providers=providers)
            binding = sess.io_binding()
            y = xrt.empty((1, 4), dtype=xrt.float32, device=target.device)
            binding.bind_input("x", "cuda", 0, np.float32, (1, 4), x._data_ptr())
            binding.bind_output("y", "cuda", 0, np.float32, (1, 4), y._data_ptr())
            options = ort.RunOptions()
            options.add_run_config_entry("disable_synchronize_execution_providers", "1")
            c_sess, c_binding = sess._sess, binding._iobinding
            fresh = ort.InferenceSession(data, providers=providers)
            peers = {"ort run_with_iobinding (pre-bound, async)":
                     lambda: sess.run_with_iobinding(binding, options),
                     "ort C-level run_with_iobinding (pre-bound, async)":
                     lambda: c_sess.run_with_iobinding(c_binding, options),
                     "ort C-level IO binding per run (bind + run + get_outputs)":
                     _compiled_per_run(ort, fresh, "cuda", target.index, x, options)}
            sync = xrt.cuda.synchronize
        ours_fn = lambda: ours.run({"x": x})  # noqa: E731
        for name, fn in peers.items():
            theirs_s, ours_s = _interleaved(fn, ours_fn, sync)
            rows.append(("onnxruntime", device, name, f"{theirs_s * 1e6:.2f}",
                         f"{ours_s * 1e6:.2f}", f"{(ours_s - theirs_s) * 1e6:+.2f}"))
    if target.kind == "cpu" and status.get("openvino") is None:
        import openvino as ov

        ours = xrt.InferenceSession(data, engine="openvino")
        x = xrt.asarray(x_np)
        compiled = ov.Core().compile_model(ov.Core().read_model(data), "CPU")
        request = compiled.create_infer_request()
        peers = {"ov CompiledModel(inputs)": lambda: compiled({"x": x_np}),
                 "ov request.infer(share_inputs)": lambda: request.infer({"x": x_np},
                                                                         share_inputs=True)}
        for name, fn in peers.items():
            theirs_s, ours_s = _interleaved(fn, lambda: ours.run({"x": x}), None)
            rows.append(("openvino", device, name, f"{theirs_s * 1e6:.2f}",
                         f"{ours_s * 1e6:.2f}", f"{(ours_s - theirs_s) * 1e6:+.2f}"))
    return rows


def _compiled_per_run(ort, sess, device_type, device_id, x, options):
    """A run with a fresh output through the compiled calls beneath ORT's Python wrappers
    (what our engine calls): x (1x4 float32) bound by pointer, the output left to ORT's
    allocator, run, the output taken."""
    c_sess, c_binding = sess._sess, sess.io_binding()._iobinding
    c_device = ort.OrtDevice.make(device_type, device_id)._get_c_device()

    def run():
        c_binding.bind_input("x", c_device, 1, [1, 4], x._data_ptr())   # 1: ONNX FLOAT
        c_binding.bind_output("y", c_device)
        c_sess.run_with_iobinding(c_binding, options)
        return c_binding.get_outputs()[0]
    return run


def _interleaved(theirs, ours, sync, rounds=5):
    best_t = best_o = float("inf")
    for _ in range(rounds):
        best_t = min(best_t, per_call(theirs, repeat=3, budget=0.3))
        best_o = min(best_o, per_call(ours, repeat=3, budget=0.3))
        if sync is not None:
            sync()
    return best_t, best_o


# Part 2: the transformer.

def transformer(layers, d, heads):
    import torch
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            h = self.norm1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.ff(self.norm2(x))

    torch.manual_seed(0)
    return nn.Sequential(*[Block() for _ in range(layers)]).eval()


def export(module, example):
    import torch

    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (example,), buffer, input_names=["x"], output_names=["y"],
                          opset_version=17, dynamo=False)
    return buffer.getvalue()


def engine_rows(args):
    import torch

    cuda = args.device.startswith("cuda")
    module = transformer(args.layers, args.d, args.heads)
    example = torch.randn(args.batch, args.tokens, args.d)
    data = export(module, example)
    target = parse_target(args.device)
    dev = torch.device("cuda" if cuda else "cpu")
    half = torch.float16 if cuda else torch.float32
    tmodule = module.to(dev, half)
    tx = example.to(dev, half)
    with torch.no_grad():
        reference = tmodule(tx).float().cpu().numpy()
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    results = {}

    def measure(fn, n):
        for _ in range(3):
            fn()
        sync()
        start = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        return (time.perf_counter() - start) / n

    with torch.no_grad():
        results["torch eager"] = (measure(lambda: tmodule(tx), args.runs), 0.0)
        if cuda:
            graph = torch.cuda.CUDAGraph()
            static_x = tx.clone()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    tmodule(static_x)
            torch.cuda.current_stream().wait_stream(side)
            with torch.cuda.graph(graph):
                static_y = tmodule(static_x)
            results["torch CUDA graph"] = (measure(graph.replay, args.runs), float(
                np.abs(static_y.float().cpu().numpy() - reference).max()))

            def replay_as_a_session():
                # What a session's replay does (Note [ORT CUDA graphs], the native engine's
                # graphs): the caller's input copied in, a fresh output copied out.
                static_x.copy_(tx)
                graph.replay()
                return static_y.clone()
            results["torch CUDA graph, input copied in, output out"] = (
                measure(replay_as_a_session, args.runs), float(
                    np.abs(replay_as_a_session().float().cpu().numpy() - reference).max()))
    policy = xrt.ExecutionPolicy("fp16" if cuda else "fp32", threads=args.threads)
    policies = {policy.precision: policy}
    if cuda:
        policies[f"{policy.precision}, CUDA graph"] = policy.replace(
            static_shape=True, input_shapes={"x": list(example.shape)}, cuda_graphs=True)
    x = xrt.asarray(example.numpy(), device=target.device)
    for name, reason in EngineRegistry.status(target).items():
        if reason is not None:
            print(f"  {name}: skipped ({reason})")
            continue
        for label, pol in policies.items():
            try:
                sess = xrt.InferenceSession(data, device=args.device, engine=name,
                                            exec_policy=pol)
                out = sess.run({"x": x})["y"]
                err = float(np.abs(np.asarray(out.to_device("cpu")) - reference).max())
                seconds = measure(lambda: sess.run({"x": x}), args.runs)
                results[f"{name} ({label})"] = (seconds, err)
                for sentence in sess.explain()["unhonoured"]:
                    print(f"  {name} ({label}): not honoured: {sentence}")
                sess.close()
            except Exception as e:   # one engine failing does not hide the others
                print(f"  {name} ({label}): failed: {type(e).__name__}: {e}")
    if cuda and args.kernels:
        native = xrt.InferenceSession(data, device=args.device, engine="native",
                                      exec_policy=policy)
        with torch.no_grad():
            _print_kernels("torch eager", lambda: tmodule(tx))
        _print_kernels("native", lambda: native.run({"x": x}))
        native.close()
    eager = results["torch eager"][0]
    rows = [(name, f"{s * 1e3:.3f}", f"{eager / s:.2f}x", f"{err:.2e}")
            for name, (s, err) in results.items()]
    return rows


def _print_kernels(label, fn, top=12):
    """The device kernels of one call of fn, from CUPTI (torch.profiler): what a ratio in the
    table is made of."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.key_averages() if e.device_time_total > 0]
    kernels.sort(key=lambda e: -e.device_time_total)
    total = sum(e.device_time_total for e in kernels)
    print(f"\n{label}: {total:.0f} us of device time in one run (CUPTI), by kernel:")
    for e in kernels[:top]:
        print(f"  {e.device_time_total:9.1f} us  {e.count:4d}x  {e.key[:90]}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--d", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--skip-overhead", action="store_true")
    p.add_argument("--skip-table", action="store_true", help="the host overhead part only")
    p.add_argument("--kernels", action="store_true",
                   help="on CUDA: also list the device kernels of one run of torch eager and "
                        "of the native engine (CUPTI, through torch.profiler)")
    args = p.parse_args()
    if args.device == "cuda":
        args.device = "cuda:0"
    if not args.skip_overhead:
        print(f"per-run host time of a 4x4 model on {args.device} (us; best of interleaved "
              "rounds)")
        print(table(overhead_rows(args.device),
                    ("engine", "device", "their API", "theirs", "ours", "added")))
    if args.skip_table:
        return
    print(f"\ntransformer: {args.layers} layers, d={args.d}, {args.heads} heads, batch "
          f"{args.batch}, {args.tokens} tokens on {args.device} (ms per run; ratio = "
          "torch eager / case)")
    print(table(engine_rows(args), ("case", "ms", "vs torch eager", "max abs diff")))


if __name__ == "__main__":
    main()

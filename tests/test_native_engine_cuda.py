"""tests/test_native_engine_cuda.py: the native engine on CUDA: whole models in fp32 and fp16,
eager and captured as a CUDA graph, shape arithmetic kept on the host, outputs that survive the
next replay. (Every op test of test_native_engine_*.py also runs on CUDA through the device
fixture.)"""

import numpy as np
import pytest

pytest.importorskip("onnx")
torch = pytest.importorskip("torch")

import xpuruntime as xrt
from native_engine_helpers import native_engine, run_native
from native_engine_models import CNN, Transformer, export
from xpuruntime.policies import ExecutionPolicy

CUDA = "cuda:0"
pytestmark = pytest.mark.cuda


@pytest.fixture(scope="module")
def transformer():
    torch.manual_seed(0)
    module = Transformer(layers=2, d=64, heads=4).eval()
    x = np.random.default_rng(1).standard_normal((2, 16, 64)).astype(np.float32)
    axes = {"x": {0: "batch", 1: "tokens"}, "y": {0: "batch", 1: "tokens"}}
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    return export(module, torch.from_numpy(x), axes), x, expected


@pytest.mark.parametrize("precision,tolerance", (("fp32", 1e-4), ("fp16", 3e-2)))
@pytest.mark.parametrize("graphs", (False, True))
def test_transformer_on_cuda(transformer, precision, tolerance, graphs):
    model, x, expected = transformer
    policy = ExecutionPolicy(precision=precision, static_shape=graphs, cuda_graphs=graphs)
    engine = native_engine(model, CUDA, policy)
    for _ in range(4):  # eager, capture, replays
        got = run_native(model, {"x": x}, CUDA, engine=engine)[0]
        np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)
    explain = engine.explain()
    assert explain["cuda_graph"] is graphs, explain["unhonoured"]
    assert not explain["unhonoured"]
    kernels = {k["kernel"] for n in explain["nodes"]
               if n["op"] in ("MatMul", "FusedLinear", "ScaledDotProductAttention")
               for k in n["kernels"] if k["op"] in ("matmul", "linear", "attention")}
    assert kernels and not kernels & {"host_fallback"}


def test_shape_values_stay_on_the_host(transformer):
    model, x, _ = transformer
    engine = native_engine(model, CUDA)
    run_native(model, {"x": x}, CUDA, engine=engine)
    places = {n["op"]: n["device"] for n in engine.explain()["nodes"]}
    assert places.get("FusedLinear") == "cuda:0"
    assert places.get("ScaledDotProductAttention") == "cuda:0"
    host_ops = {n["op"] for n in engine.explain()["nodes"] if n["device"] == "host"}
    assert host_ops <= {"Gather", "Unsqueeze", "Concat", "Div", "Mul", "Add", "Sub", "Slice",
                        "Cast", "Squeeze", "Equal", "Where", "Range", "ConstantOfShape",
                        "Reshape", "Expand"}


@pytest.mark.parametrize("precision", ("fp32", "fp16"))
def test_graph_outputs_are_not_overwritten_by_the_next_replay(transformer, precision):
    """Note [Graph IO]: each replay's output is the caller's (in fp16, the conversion back
    to the model's float32 is that copy), and a new input reaches the graph (in fp16, the
    conversion to the plan's dtype is the copy in)."""
    model, x, _ = transformer
    policy = ExecutionPolicy(precision=precision, static_shape=True, cuda_graphs=True)
    engine = native_engine(model, CUDA, policy)
    eager = native_engine(model, CUDA, ExecutionPolicy(precision=precision))
    feed = xrt.asarray(x, device=CUDA)
    for _ in range(2):
        engine.run({"x": feed}, ["y"])
    assert engine.explain()["cuda_graph"]
    first = engine.run({"x": feed}, ["y"])[0]
    assert first.dtype == xrt.float32
    kept = np.asarray(first.to_device(xrt.Device("cpu")))
    doubled = xrt.asarray(x * 2, device=CUDA)
    second = engine.run({"x": doubled}, ["y"])[0]
    np.testing.assert_array_equal(np.asarray(first.to_device(xrt.Device("cpu"))), kept)
    want = np.asarray(eager.run({"x": doubled}, ["y"])[0].to_device(xrt.Device("cpu")))
    # Close, not equal: under capture the libraries may pick other algorithms.
    tolerance = 2e-3 if precision == "fp16" else 1e-5
    np.testing.assert_allclose(np.asarray(second.to_device(xrt.Device("cpu"))), want,
                               rtol=tolerance, atol=tolerance)


def test_cnn_on_cuda():
    torch.manual_seed(0)
    module = CNN().eval()
    x = np.random.default_rng(2).standard_normal((2, 3, 16, 16)).astype(np.float32)
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    model = export(module, torch.from_numpy(x), {"x": {0: "batch"}})
    engine = native_engine(model, CUDA, ExecutionPolicy(static_shape=True, cuda_graphs=True))
    for _ in range(3):
        got = run_native(model, {"x": x}, CUDA, engine=engine)[0]
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    assert engine.explain()["cuda_graph"]


@pytest.mark.parametrize("graphs", (False, True))
@pytest.mark.parametrize("heads", (2, 4))
def test_attention_fusion_runs_cudnn_in_fp16(graphs, heads):
    from xpuruntime import _attention

    if not _attention.cudnn_available():
        pytest.skip("cuDNN not found")
    torch.manual_seed(0)
    module = Transformer(layers=2, d=128, heads=heads).eval()
    x = np.random.default_rng(2).standard_normal((1, 32, 128)).astype(np.float32)
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    model = export(module, torch.from_numpy(x))  # static: the causal mask is a constant
    policy = ExecutionPolicy(precision="fp16", static_shape=graphs, cuda_graphs=graphs)
    engine = native_engine(model, CUDA, policy)
    for _ in range(3):
        got = run_native(model, {"x": x}, CUDA, engine=engine)[0]
        np.testing.assert_allclose(got, expected, rtol=3e-2, atol=3e-2)
    nodes = [n for n in engine.explain()["nodes"] if n["op"] == "ScaledDotProductAttention"]
    assert len(nodes) == 2
    assert {k["kernel"] for n in nodes for k in n["kernels"] if k["op"] == "attention"} == {
        "cudnn"}
    assert [f["fusion"] for f in engine.explain()["fusions"]].count("attention") == 2


@pytest.mark.parametrize("graphs", (False, True))
@pytest.mark.parametrize("kernel", ("math", "cudnn", "flash_v2", "torch"))
def test_transformer_with_each_attention_kernel(transformer, kernel, graphs):
    """The engine's attention nodes on each kernel a policy can pin, in fp16. Without the
    pin, which kernel runs depends on what the process has registered (the adapter adds
    flash_v2 and torch when imported), so a fault in one of them could hide."""
    from xpuruntime import _attention

    if kernel == "cudnn" and not _attention.cudnn_available():
        pytest.skip("cuDNN not found")
    if kernel in ("flash_v2", "torch"):
        import xpuruntime.pytorch  # noqa: F401  (registers the adapter's kernels)
    model, x, expected = transformer
    policy = ExecutionPolicy(precision="fp16", static_shape=graphs, cuda_graphs=graphs)
    engine = native_engine(model, CUDA, policy, kernel_policy=xrt.KernelPolicy(attention=kernel))
    for _ in range(4):  # eager, capture, replays
        got = run_native(model, {"x": x}, CUDA, engine=engine)[0]
        np.testing.assert_allclose(got, expected, rtol=3e-2, atol=3e-2)
    explain = engine.explain()
    assert explain["cuda_graph"] is graphs, explain["unhonoured"]
    nodes = [n for n in explain["nodes"] if n["op"] == "ScaledDotProductAttention"]
    assert len(nodes) == 2
    assert {k["kernel"] for n in nodes for k in n["kernels"] if k["op"] == "attention"} == {
        kernel}

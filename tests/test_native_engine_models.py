"""tests/test_native_engine_models.py: whole models exported from PyTorch (an MLP, a small
transformer, a small CNN) give PyTorch's outputs on the native engine, with symbolic batch and
sequence dimensions, static shapes, fp16 and the fusions on or off."""

import numpy as np
import pytest

pytest.importorskip("onnx")
torch = pytest.importorskip("torch")

from native_engine_helpers import native_engine, run_native
from native_engine_models import CNN, MLP, Transformer, export
from xpuruntime.policies import ExecutionPolicy


def _torch(module, x):
    with torch.no_grad():
        return module(torch.from_numpy(x)).numpy()


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    module = MLP().eval()
    x = np.random.default_rng(0).standard_normal((5, 16)).astype(np.float32)
    return module, export(module, torch.from_numpy(x), {"x": {0: "batch"}}), x


@pytest.fixture(scope="module")
def transformer():
    torch.manual_seed(0)
    module = Transformer(layers=2, d=32, heads=4).eval()
    x = np.random.default_rng(1).standard_normal((2, 6, 32)).astype(np.float32)
    axes = {"x": {0: "batch", 1: "tokens"}, "y": {0: "batch", 1: "tokens"}}
    return module, export(module, torch.from_numpy(x), axes), x


@pytest.fixture(scope="module")
def cnn():
    torch.manual_seed(0)
    module = CNN().eval()
    with torch.no_grad():  # a BatchNorm that does something
        module.features[1].running_mean.uniform_(-0.5, 0.5)
        module.features[1].running_var.uniform_(0.5, 2.0)
    x = np.random.default_rng(2).standard_normal((2, 3, 16, 16)).astype(np.float32)
    return module, export(module, torch.from_numpy(x), {"x": {0: "batch"}}), x


def test_mlp_matches_pytorch(device, mlp):
    module, model, x = mlp
    for batch in (5, 1, 9):  # a symbolic batch, bound per run
        xb = np.resize(x, (batch, 16))
        got = run_native(model, {"x": xb}, device)[0]
        np.testing.assert_allclose(got, _torch(module, xb), rtol=1e-5, atol=1e-5)


def test_transformer_matches_pytorch(device, transformer):
    module, model, x = transformer
    engine = native_engine(model, device)
    for tokens in (6, 3):
        xt = np.ascontiguousarray(x[:, :tokens])
        got = run_native(model, {"x": xt}, device, engine=engine)[0]
        np.testing.assert_allclose(got, _torch(module, xt), rtol=1e-4, atol=1e-4)
    fusions = [f["fusion"] for f in engine.explain()["fusions"]]
    assert "gelu" in fusions
    # Every residual add before a LayerNorm (the norms share weights through Identity).
    assert fusions.count("add_norm") == 2 * len(module.blocks)


def test_cnn_matches_pytorch(device, cnn):
    module, model, x = cnn
    got = run_native(model, {"x": x}, device)[0]
    np.testing.assert_allclose(got, _torch(module, x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("fixture", ("mlp", "transformer", "cnn"))
def test_fusions_off_gives_the_same_result(device, fixture, request):
    _, model, x = request.getfixturevalue(fixture)
    plain = native_engine(model, device, ExecutionPolicy(graph_optimization="none"))
    fused = native_engine(model, device)
    np.testing.assert_allclose(run_native(model, {"x": x}, device, engine=plain)[0],
                               run_native(model, {"x": x}, device, engine=fused)[0],
                               rtol=1e-5, atol=1e-5)
    assert plain.explain()["fusions"] == [] and plain.explain()["folded_constants"] == 0


def test_static_shape_freezes_the_shape_arithmetic(device, transformer):
    module, model, x = transformer
    engine = native_engine(model, device, ExecutionPolicy(static_shape=True))
    before = len(engine.plan.nodes)
    first = run_native(model, {"x": x}, device, engine=engine)[0]
    second = run_native(model, {"x": x}, device, engine=engine)[0]
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(second, _torch(module, x), rtol=1e-4, atol=1e-4)
    assert engine.explain()["static_shape"] and len(engine.plan.nodes) < before
    with pytest.raises(ValueError, match="static_shape"):
        run_native(model, {"x": np.ascontiguousarray(x[:, :3])}, device, engine=engine)


@pytest.mark.parametrize("precision", ("fp16", "bf16"))
def test_reduced_precision_keeps_declared_types(device, transformer, precision):
    module, model, x = transformer
    engine = native_engine(model, device, ExecutionPolicy(precision=precision))
    got = run_native(model, {"x": x}, device, engine=engine)[0]
    assert got.dtype == np.float32  # the declared output type
    tolerance = 2e-2 if precision == "fp16" else 1e-1
    np.testing.assert_allclose(got, _torch(module, x), rtol=tolerance, atol=tolerance)
    low = {"fp16": "float16", "bf16": "bfloat16"}[precision]
    kernels = [k for n in engine.explain()["nodes"]
               if n["op"] in ("MatMul", "FusedLinear", "ScaledDotProductAttention")
               for k in n["kernels"] if k["op"] in ("matmul", "linear", "attention")]
    assert kernels and all(low in k["dtypes"] for k in kernels)
    norms = [k for n in engine.explain()["nodes"] if n["op"] == "LayerNormalization"
             for k in n["kernels"] if k["op"] == "layer_norm"]
    # The row kernels take 16-bit rows and accumulate in float32 (Note [Row ops]).
    assert norms and all(k["dtypes"].startswith(low) for k in norms)

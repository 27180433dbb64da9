"""tests/test_native_engine_rows.py: the ``rows`` fusion (Note [Rows in any order] in
native/fusion_rows.py): a linear layer between a sequence-first head merge and head split
takes its rows batch-first, with the reference's values, where the shapes are known and the
cuts fall where the transposes move axes; elsewhere the graph runs as written."""

import numpy as np
import pytest
import xpuruntime as xrt
from native_engine_helpers import (
    TensorProto,
    check,
    helper,
    make_model,
    native_engine,
    rng,
    run_native,
)

N, H, L, D, F = 2, 3, 5, 4, 7
E = H * D


def _ints(name, values):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name, TensorProto.INT64, [len(values)], values))


def _projection_model(linear="gemm", split=(L, N, F), back=(1, 0, 2), bias_rows=1):
    """a [N, H, L, D] (an attention output) -> Transpose [L, N, H, D] -> Reshape [L*N, E]
    -> the output projection -> Reshape `split` -> Transpose `back`: PyTorch's
    MultiheadAttention export (batch_first) after its attention."""
    w = rng(0).standard_normal((F, E)).astype(np.float32)
    b = rng(1).standard_normal((bias_rows, F) if bias_rows > 1 else (F,)).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["a"], ["t"], perm=[2, 0, 1, 3], name="merge_t"),
             _ints("rows", [L * N, E]),
             helper.make_node("Reshape", ["t", "rows"], ["r"], name="merge")]
    inits = {"b": b}
    if linear == "gemm":
        inits["w"] = w
        nodes.append(helper.make_node("Gemm", ["r", "w", "b"], ["p"], transB=1, name="proj"))
    else:
        inits["w"] = np.ascontiguousarray(w.T)
        nodes += [helper.make_node("MatMul", ["r", "w"], ["m"], name="proj"),
                  helper.make_node("Add", ["m", "b"], ["p"], name="bias")]
    nodes += [_ints("split_shape", list(split)),
              helper.make_node("Reshape", ["p", "split_shape"], ["s"], name="split"),
              helper.make_node("Transpose", ["s"], ["y"], perm=list(back), name="split_t")]
    a = rng(2).standard_normal((N, H, L, D)).astype(np.float32)
    return make_model(nodes, {"a": a}, {"y": TensorProto.FLOAT}, inits), a


def _rows(engine):
    return [f["nodes"] for f in engine.explain()["fusions"] if f["fusion"] == "rows"]


@pytest.mark.parametrize("linear", ["gemm", "matmul"])
def test_the_projection_takes_its_rows_batch_first(device, linear):
    model, a = _projection_model(linear)
    check(model, {"a": a}, device)
    engine = native_engine(model, device)
    middle = ["proj"] if linear == "gemm" else ["proj", "bias"]
    assert _rows(engine) == [["merge_t", "merge", *middle, "split", "split_t"]]
    on = run_native(model, {"a": a}, device)
    off = run_native(model, {"a": a}, device, fusions=())
    np.testing.assert_allclose(on[0], off[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("variant", [
    {"split": (N, L, F)},          # the split does not undo the merge's order
    {"back": (0, 1, 2)},           # no transpose back (a Transpose of identity order)
    {"bias_rows": L * N},          # a bias per row: the rows are not independent
])
def test_other_shapes_run_as_written(device, variant):
    model, a = _projection_model(**variant)
    check(model, {"a": a}, device)
    assert _rows(native_engine(model, device)) == []


def test_unknown_shapes_run_as_written(device):
    model, a = _projection_model()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    check(model, {"a": a}, device)
    assert _rows(native_engine(model, device)) == []


def test_pytorch_multihead_attention_export_loses_its_copies(device):
    """The export the note is about, end to end: each layer's projection fused, the values
    PyTorch's."""
    torch = pytest.importorskip("torch")
    import io
    import warnings

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.LayerNorm(16)
            self.attn = torch.nn.MultiheadAttention(16, 4, batch_first=True)

        def forward(self, x):
            h = self.norm(x)
            return x + self.attn(h, h, h, need_weights=False)[0]

    torch.manual_seed(0)
    module = torch.nn.Sequential(Block(), Block()).eval()
    x = torch.randn(3, 6, 16)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (x,), buffer, input_names=["x"], output_names=["y"],
                          opset_version=17, dynamo=False)
    with torch.no_grad():
        expected = module(x).numpy()
    sess = xrt.InferenceSession(buffer.getvalue(), device=device, engine="native")
    got = sess.run({"x": xrt.asarray(x.numpy(), device=xrt.Device(device))})["y"]
    np.testing.assert_allclose(np.asarray(got.to_device(xrt.Device("cpu"))), expected,
                               rtol=1e-4, atol=1e-5)
    fused = [f for f in sess.explain()["engine_details"]["fusions"] if f["fusion"] == "rows"]
    assert len(fused) == 2

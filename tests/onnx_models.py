"""tests/onnx_models.py: small ONNX models for the inference tests, built with ``onnx.helper``
or exported from small PyTorch modules, each with a NumPy or PyTorch reference.

Imported as ``from onnx_models import ...``; every builder skips the calling test when the
package it needs (onnx, torch) is missing.
"""

import numpy as np
import pytest


def _onnx():
    return pytest.importorskip("onnx")


def mlp(batch="batch", d_in=16, d_hidden=32, d_out=8, seed=0, opset=17):
    """x @ W1 + b1 -> relu -> @ W2: ``(model, reference(x) -> y)``."""
    onnx = _onnx()
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((d_in, d_hidden)).astype(np.float32)
    b1 = rng.standard_normal(d_hidden).astype(np.float32)
    w2 = rng.standard_normal((d_hidden, d_out)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h"], name="fc1"),
             helper.make_node("Add", ["h", "b1"], ["h1"], name="bias1"),
             helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
             helper.make_node("MatMul", ["h2", "W2"], ["y"], name="fc2")]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, d_in])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, d_out])],
        [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "W2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    onnx.checker.check_model(model)

    def reference(x):
        return np.maximum(x @ w1 + b1, 0) @ w2

    return model, reference


def two_inputs():
    """y = a * b + a, with a shared symbolic dimension 'n' and a fixed one: for the checks."""
    onnx = _onnx()
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Mul", ["a", "b"], ["ab"]),
             helper.make_node("Add", ["ab", "a"], ["y"])]
    graph = helper.make_graph(
        nodes, "two_inputs",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def nonzero_model():
    """NonZero: an output whose shape depends on the data."""
    onnx = _onnx()
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["idx"])], "nonzero",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("idx", TensorProto.INT64, [1, None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model


def typed_identity(elem_type, shape=(2, 3)):
    """y = Identity(x) for one element type."""
    onnx = _onnx()
    from onnx import helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "identity",
        [helper.make_tensor_value_info("x", elem_type, list(shape))],
        [helper.make_tensor_value_info("y", elem_type, list(shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


# Models exported from PyTorch (the legacy TorchScript exporter needs no onnxscript).

def _export(module, example, dynamic_batch=True):
    torch = pytest.importorskip("torch")
    import io
    import warnings

    module.eval()
    buffer = io.BytesIO()
    axes = {"x": {0: "batch"}, "y": {0: "batch"}} if dynamic_batch else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (example,), buffer, input_names=["x"], output_names=["y"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    return buffer.getvalue()


def torch_models():
    """``{name: (onnx bytes, torch module, example input)}``: an MLP, a transformer block and
    a small CNN."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, d=32, heads=4):
            super().__init__()
            self.norm1 = nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.norm2 = nn.LayerNorm(d)
            self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            h = self.norm1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.ff(self.norm2(x))

    models = {
        "mlp": (nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 8)),
                torch.randn(4, 16)),
        "transformer_block": (Block(), torch.randn(2, 10, 32)),
        "cnn": (nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Conv2d(8, 16, 3), nn.ReLU(),
                              nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10)),
                torch.randn(2, 3, 16, 16)),
    }
    return {name: (_export(module, x), module, x) for name, (module, x) in models.items()}

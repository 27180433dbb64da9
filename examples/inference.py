"""examples/inference.py: an ONNX model exported from nothing but onnx.helper, run through
InferenceSession on every engine installed here, with the explain() that says what happened.

    python examples/inference.py
"""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import xpuruntime as xrt

# A two-layer MLP: y = relu(x @ W1 + b1) @ W2, with a symbolic batch dimension.
rng = np.random.default_rng(0)
W1, b1, W2 = (rng.standard_normal(s).astype(np.float32) for s in ((16, 32), (32,), (32, 4)))
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "W1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["a"]),
     helper.make_node("Relu", ["a"], ["r"]), helper.make_node("MatMul", ["r", "W2"], ["y"])],
    "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
    [numpy_helper.from_array(W1, "W1"), numpy_helper.from_array(b1, "b1"),
     numpy_helper.from_array(W2, "W2")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 9   # readable by every ONNX Runtime since 1.15

x = xrt.asarray(rng.standard_normal((8, 16)).astype(np.float32))
want = np.maximum(np.asarray(x) @ W1 + b1, 0) @ W2

sess = xrt.InferenceSession(model, device="cpu")          # engine="auto": ONNX Runtime here
y = sess.run({"x": x})["y"]                               # an xpuruntime Tensor
print(sess, sess.inputs[0], "->", sess.outputs[0])
print("max error vs NumPy:", float(np.abs(np.asarray(y) - want).max()))
info = sess.explain()
print("why:", info["why"])
print("inputs stayed where they were:", info["io"]["stayed_on_device"])

# The same model on every engine usable on this machine, under one execution policy.
policy = xrt.ExecutionPolicy(precision="fp32", threads=1)
for name, reason in xrt.EngineRegistry.status(xrt.inference.parse_target("cpu")).items():
    if reason is None:
        other = xrt.InferenceSession(model, engine=name, exec_policy=policy)
        err = float(np.abs(np.asarray(other.run({"x": x})["y"]) - want).max())
        print(f"{name:<12} max error {err:.2e}  not honoured: {other.explain()['unhonoured']}")
    else:
        print(f"{name:<12} not usable here: {reason}")

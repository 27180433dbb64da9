"""tests/native_engine_helpers.py: building small ONNX models and running them on the native
engine and on the ONNX reference implementation, for the test_native_engine_*.py files."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import xpuruntime as xrt
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xpuruntime.inference._engine import EngineRegistry, parse_target
from xpuruntime.inference._model import Model
from xpuruntime.policies import ExecutionPolicy

ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
        np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.int64): TensorProto.INT64,
        np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL,
        np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8}


def make_model(nodes, feeds, outputs, initializers=None, opset=18, extra_opsets=None):
    """A model of ``nodes`` whose inputs are the arrays in ``feeds`` and whose outputs are
    ``{name: element type}`` (shapes declared later by ``with_output_shapes``, as the checker
    wants) or ``{name: (element type, shape)}``; ``initializers`` maps names to arrays."""
    outputs = {n: t if isinstance(t, tuple) else (t, None) for n, t in outputs.items()}
    graph = helper.make_graph(
        nodes, "test",
        [helper.make_tensor_value_info(n, ELEM[a.dtype], a.shape) for n, a in feeds.items()],
        [helper.make_tensor_value_info(n, t, shape) for n, (t, shape) in outputs.items()],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in (initializers or {}).items()])
    opsets = [helper.make_opsetid("", opset)]
    opsets += [helper.make_opsetid(d, v) for d, v in (extra_opsets or {}).items()]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def native_engine(model, device="cpu", policy=None, kernel_policy=None, **kwargs):
    cls = EngineRegistry.get("native")
    return cls(Model(model), parse_target(device), kernel_policy,
               policy or ExecutionPolicy(), **kwargs)


def run_native(model, feeds, device="cpu", engine=None, **kwargs):
    engine = engine or native_engine(model, device, **kwargs)
    tensors = {n: xrt.asarray(a, device=xrt.Device(device)) for n, a in feeds.items()}
    names = [o.name for o in model.graph.output]
    return [np.asarray(t.to_device(xrt.Device("cpu"))) for t in engine.run(tensors, names)]


def with_output_shapes(model, values):
    """Declares the outputs' shapes (the checker wants them) from computed values."""
    for info, value in zip(model.graph.output, values):
        value = np.empty(value) if isinstance(value, tuple) else value
        shape = info.type.tensor_type.shape
        shape.Clear()
        for d in np.shape(value):
            shape.dim.add().dim_value = d
    return model


def run_reference(model, feeds):
    return ReferenceEvaluator(model).run(None, feeds)


def check(model, feeds, device="cpu", rtol=1e-5, atol=1e-6, **kwargs):
    """The native engine's outputs equal the reference implementation's."""
    expected = run_reference(model, feeds)
    with_output_shapes(model, expected)
    got = run_native(model, feeds, device, **kwargs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = np.asarray(e)
        assert g.shape == e.shape, (g.shape, e.shape)
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        if e.dtype.kind in "biu":
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return got


def one_node(op_type, feeds, out_type=TensorProto.FLOAT, initializers=None, opset=18,
             n_outputs=1, domain="", **attrs):
    """A model of a single node reading the feeds, then the initializers, in order."""
    names = list(feeds) + list(initializers or {})
    outputs = [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outputs, domain=domain, **attrs)
    types = out_type if isinstance(out_type, (list, tuple)) else [out_type] * n_outputs
    extra = {domain: 1} if domain else None
    return make_model([node], feeds, dict(zip(outputs, types)), initializers, opset, extra)


def rng(seed=0):
    return np.random.default_rng(seed)


def check_with_onnxruntime(model, feeds, device="cpu", rtol=1e-5, atol=1e-6):
    """The native engine's outputs equal ONNX Runtime's (where the reference implementation
    lacks the op or departs from the spec)."""
    ort = pytest.importorskip("onnxruntime")
    names = [o.name for o in model.graph.output]
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    expected = session.run(names, feeds)
    got = run_native(model, feeds, device)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return got

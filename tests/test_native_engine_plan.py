"""tests/test_native_engine_plan.py: the native engine as an engine: construction fails on an
unsupported op naming the node, explain lists node -> op -> kernel -> reason and obeys a
kernel policy, symbolic dimensions bind per run, constants fold, values die at their last
use, fusions fold what they say, and unhonoured policy settings are reported."""

import math

import numpy as np
import pytest
import xpuruntime as xrt
from native_engine_helpers import (
    TensorProto,
    helper,
    make_model,
    native_engine,
    one_node,
    run_native,
    run_reference,
    with_output_shapes,
)
from onnx import numpy_helper
from xpuruntime.inference._engine import EngineRegistry, parse_target
from xpuruntime.inference.engines.native import NativeEngine, supported_ops
from xpuruntime.inference.native import Plan
from xpuruntime.policies import ExecutionPolicy, KernelPolicy


def _linear(batch="n"):
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="project"),
             helper.make_node("Add", ["h", "b"], ["hb"], name="bias"),
             helper.make_node("Relu", ["hb"], ["y"], name="relu")]
    graph = helper.make_graph(
        nodes, "linear", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 3])],
        [onnx_tensor(w, "w"), onnx_tensor(np.ones(3, np.float32), "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def onnx_tensor(a, name):
    from onnx import numpy_helper
    return numpy_helper.from_array(a, name)


def test_registered_with_the_contract_attributes():
    assert EngineRegistry.get("native") is NativeEngine
    assert NativeEngine.kinds == ("cpu", "cuda") and NativeEngine.extra == ""
    assert NativeEngine.auto_rank == {"cpu": 2, "cuda": 2}
    assert NativeEngine.probe(parse_target("cpu")) is None


def test_supported_ops_lists_the_table():
    ops = supported_ops()
    for name in ("MatMul", "Conv", "Attention", "LayerNormalization", "Trilu", "Range"):
        assert name in ops["ai.onnx"]
    assert "MultiHeadAttention" in ops["com.microsoft"]


def test_unsupported_op_fails_at_construction_naming_the_node():
    x = np.ones((2, 2), np.float32)
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="fine"),
             helper.make_node("Hardmax", ["r"], ["y"], name="the_culprit")]
    model = make_model(nodes, {"x": x}, {"y": (TensorProto.FLOAT, [2, 2])}, opset=13)
    with pytest.raises(xrt.UnsupportedOperationError,
                       match=r"node 'the_culprit': ai.onnx::Hardmax \(opset 13\)"):
        native_engine(model)


def test_op_newer_than_the_models_opset_is_unsupported():
    x = np.ones((2, 2), np.float32)
    # RMSNormalization arrived in opset 23; a model importing opset 18 cannot use it.
    node = helper.make_node("RMSNormalization", ["x", "s"], ["y"], name="rms")
    model = make_model([node], {"x": x}, {"y": (TensorProto.FLOAT, [2, 2])}, {"s": x[0]},
                       opset=18)
    # The checker of Model refuses such a model before any engine; the plan says it too.
    with pytest.raises(xrt.UnsupportedOperationError, match="'rms'.*opset 18"):
        Plan(model, xrt.Device("cpu"))


def test_unsupported_attribute_value_fails_at_construction():
    x = np.ones((1, 1, 4, 4), np.float32)
    model = with_output_shapes(one_node("MaxPool", {"x": x}, n_outputs=2, out_type=[
        TensorProto.FLOAT, TensorProto.INT64], kernel_shape=[2, 2]), [(1, 1, 2, 2)] * 2)
    with pytest.raises(xrt.UnsupportedOperationError, match="Indices"):
        native_engine(model)


def test_explain_lists_node_op_kernel_and_reason():
    engine = native_engine(_linear(), fusions=())  # node by node, as written
    run_native(_linear(), {"x": np.ones((2, 4), np.float32)}, engine=engine)
    nodes = {n["node"]: n for n in engine.explain()["nodes"]}
    assert nodes["project"]["op"] == "MatMul"
    matmul = [k for k in nodes["project"]["kernels"] if k["op"] == "matmul"]
    assert matmul and matmul[0]["kernel"] and matmul[0]["reason"]
    assert [k["op"] for k in nodes["bias"]["kernels"]] == ["add"]


def test_kernel_policy_pins_apply_per_node():
    # The CPU has two matmul kernels; the default picks OpenBLAS, the pin the other one.
    names = [k["name"] for k in xrt.list_kernels("matmul") if k["device"] == "cpu"]
    assert "native" in names and "openblas" in names
    pin = "native"
    engine = native_engine(_linear(), kernel_policy=KernelPolicy(matmul=pin))
    got = run_native(_linear(), {"x": np.ones((2, 4), np.float32)}, engine=engine)[0]
    kernel = next(k for n in engine.explain()["nodes"] for k in n["kernels"]
                  if k["op"] == "matmul")
    assert kernel["kernel"] == pin and "pin" in kernel["reason"].lower()
    np.testing.assert_allclose(got, np.maximum(np.ones((2, 4)) @ (np.arange(12).reshape(4, 3)
                                                                   / 10) + 1, 0), rtol=1e-6)


def test_symbolic_dimensions_bind_per_run():
    x = np.ones((2, 3), np.float32)
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    engine = native_engine(model)
    run_native(model, {"a": x, "b": x}, engine=engine)
    assert engine.bound_dims == {"n": 2}
    with pytest.raises(ValueError, match="'n' is 2 in one input and 4"):
        run_native(model, {"a": x, "b": np.ones((4, 3), np.float32)}, engine=engine)
    with pytest.raises(ValueError, match="fixes it at 3"):
        run_native(model, {"a": np.ones((2, 5), np.float32), "b": x}, engine=engine)


def _shape_arithmetic_model():
    """y = reshape(x, [rows * 2, cols / 2]) * 1.5, the target computed from x's shape."""
    int64 = lambda name, v: helper.make_node(
        "Constant", [], [name], value=helper.make_tensor(name, TensorProto.INT64, [1], [v]))
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             int64("i0", 0), int64("i1", 1), int64("two", 2),
             helper.make_node("Gather", ["s", "i0"], ["rows"], name="rows"),
             helper.make_node("Gather", ["s", "i1"], ["cols"], name="cols"),
             helper.make_node("Mul", ["rows", "two"], ["r2"], name="r2"),
             helper.make_node("Div", ["cols", "two"], ["c2"], name="c2"),
             helper.make_node("Concat", ["r2", "c2"], ["target"], axis=0, name="target"),
             helper.make_node("Reshape", ["x", "target"], ["r"], name="reshape"),
             helper.make_node("Mul", ["r", "k"], ["y"], name="scale")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "m"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])],
        [numpy_helper.from_array(np.array(1.5, np.float32), "k")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_host_values_are_kept_while_the_shapes_repeat(device):
    # Note [Shape memo]: the shape arithmetic runs on the first run and on each change of
    # shape (runs of a new shape record, and record runs keep a memo too), not in between.
    model = _shape_arithmetic_model()
    engine = native_engine(model, device)
    plan = engine.plan
    kinds = {n.name: n.memo for n in plan.nodes}
    assert kinds["shape"] == "shape" and kinds["target"] == "derived"
    assert kinds["reshape"] is None and kinds["scale"] is None
    calls = []
    target = next(n for n in plan.nodes if n.name == "target")
    inner = target.fn
    target.fn = lambda *a: calls.append(1) or inner(*a)
    rng = np.random.default_rng(0)
    for shape in ((4, 6), (4, 6), (4, 6), (2, 8), (2, 8), (4, 6)):
        x = rng.standard_normal(shape).astype(np.float32)
        y = run_native(model, {"x": x}, device, engine=engine)[0]
        np.testing.assert_array_equal(y, x.reshape(shape[0] * 2, shape[1] // 2) * 1.5)
    assert len(calls) == 3


def test_a_plain_run_of_another_shape_goes_on_in_the_loop(device):
    # Note [Straight-line runs]: the generated run checks each Shape node against the memo;
    # where one differs it hands its values to the loop, which runs from that node on.
    model = _shape_arithmetic_model()
    engine = native_engine(model, device)
    plan = engine.plan
    target = next(n for n in plan.nodes if n.name == "target")
    calls, inner = [], target.fn
    target.fn = lambda *a: calls.append(1) or inner(*a)
    rng = np.random.default_rng(1)
    dev = xrt.Device(device)
    for shape in ((4, 6), (4, 6)):   # the first run records and keeps a memo
        run_native(model, {"x": rng.standard_normal(shape).astype(np.float32)}, device,
                   engine=engine)
    assert plan._straight is not None and "resume(" in plan.straight_source
    for shape, runs in (((2, 8), 2), ((2, 8), 2), ((4, 6), 3), ((6, 4), 4)):
        x = rng.standard_normal(shape).astype(np.float32)
        y = plan.run({"x": xrt.asarray(x, device=dev)})["y"]   # plain: no record
        np.testing.assert_array_equal(np.asarray(y.to_device(xrt.Device("cpu"))),
                                      x.reshape(shape[0] * 2, shape[1] // 2) * 1.5)
        assert len(calls) == runs


def test_a_plain_run_names_the_node_that_fails():
    # The generated run names a failing node as the loop does (from the line it failed on).
    nodes = [helper.make_node("Exp", ["x"], ["e"], name="exp"),
             helper.make_node("Reshape", ["e", "shape"], ["y"], name="the_reshape")]
    x = np.ones((2, 3), np.float32)
    model = make_model(nodes, {"x": x, "shape": np.array([3, 2], np.int64)},
                       {"y": (TensorProto.FLOAT, [3, 2])})
    engine = native_engine(model)
    for _ in range(2):
        run_native(model, {"x": x, "shape": np.array([3, 2], np.int64)}, engine=engine)
    assert engine.plan._straight is not None
    with pytest.raises(ValueError, match=r"node 'the_reshape' \(Reshape\)"):
        run_native(model, {"x": x, "shape": np.array([4, 2], np.int64)}, engine=engine)


def test_values_die_at_their_last_use_in_plain_runs_too():
    import weakref

    nodes = [helper.make_node("Exp", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["b"]),
             helper.make_node("Abs", ["b"], ["y"])]
    x = np.ones((4,), np.float32)
    engine = native_engine(make_model(nodes, {"x": x}, {"y": (TensorProto.FLOAT, [4])}))
    exp, _, abs_ = engine.plan.nodes
    made, alive = [], []
    exp_fn, abs_fn = exp.fn, abs_.fn

    def keep(*args):
        out = exp_fn(*args)
        made.append(weakref.ref(out[0]))
        return out

    def look(*args):
        alive.append(made[-1]() is not None)
        return abs_fn(*args)
    exp.fn, abs_.fn = keep, look
    for _ in range(3):   # a recorded run, then straight-line runs
        env = engine.plan.run({"x": xrt.asarray(x)})
        np.testing.assert_allclose(np.asarray(env["y"]), np.exp(x))
    assert engine.plan._straight is not None and alive == [False, False, False]


def test_threads_sharing_a_session_with_different_shapes_get_their_own_values():
    # Note [Shape memo]: a memo is published whole, so threads running one plan on
    # different shapes (switching threads every few microseconds) never mix shape values.
    import sys
    import threading

    model = _shape_arithmetic_model()
    sess = xrt.InferenceSession(model.SerializeToString(), engine="native")
    wrong = []

    def work(shape, seed):
        rng = np.random.default_rng(seed)
        for _ in range(500):
            x = rng.standard_normal(shape).astype(np.float32)
            y = np.asarray(sess.run({"x": xrt.asarray(x)})["y"])
            if not np.array_equal(y, x.reshape(shape[0] * 2, shape[1] // 2) * 1.5):
                wrong.append(shape)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(shape, i))
                   for i, shape in enumerate([(4, 6), (2, 8), (6, 4), (4, 6)])]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert wrong == []


def test_constants_fold_once():
    x = np.ones((2, 2), np.float32)
    nodes = [helper.make_node("Mul", ["c", "c"], ["c2"]),
             helper.make_node("Add", ["x", "c2"], ["y"])]
    model = make_model(nodes, {"x": x}, {"y": (TensorProto.FLOAT, [2, 2])},
                       {"c": np.full((2, 2), 3, np.float32)})
    engine = native_engine(model)
    assert engine.plan.folded == 1 and [n.op_type for n in engine.plan.nodes] == ["Add"]
    np.testing.assert_array_equal(run_native(model, {"x": x}, engine=engine)[0], x + 9)


def test_values_die_at_their_last_use():
    x = np.ones((4,), np.float32)
    nodes = [helper.make_node("Exp", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["b"]),
             helper.make_node("Abs", ["b"], ["y"])]
    engine = native_engine(make_model(nodes, {"x": x}, {"y": (TensorProto.FLOAT, [4])}))
    frees = {n.op_type: n.frees for n in engine.plan.nodes}
    assert frees == {"Exp": (), "Neg": ("a",), "Abs": ("b",)}
    env = engine.plan.run({"x": xrt.asarray(x)})
    assert "a" not in env and "b" not in env and "y" in env


def test_conv_batchnorm_fusion_folds_the_normalisation():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    init = {"w": rng.standard_normal((3, 2, 3, 3)).astype(np.float32),
            "cb": rng.standard_normal(3).astype(np.float32),
            "s": rng.standard_normal(3).astype(np.float32),
            "b": rng.standard_normal(3).astype(np.float32),
            "m": rng.standard_normal(3).astype(np.float32),
            "v": rng.random(3).astype(np.float32) + 0.5}
    nodes = [helper.make_node("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"],
                              name="bn")]
    model = make_model(nodes, {"x": x}, {"y": (TensorProto.FLOAT, [1, 3, 5, 5])}, init,
                       opset=15)
    fused = native_engine(model)
    plain = native_engine(model, fusions=())
    assert [n.op_type for n in fused.plan.nodes] == ["Conv"]
    assert fused.explain()["fusions"] == [{"fusion": "conv_batchnorm", "into": "conv",
                                           "nodes": ["conv", "bn"]}]
    np.testing.assert_allclose(run_native(model, {"x": x}, engine=fused)[0],
                               run_native(model, {"x": x}, engine=plain)[0], rtol=1e-5,
                               atol=1e-5)


def test_linear_fusion_makes_one_node_on_the_linear_op():
    engine = native_engine(_linear())
    assert [(n.domain, n.op_type) for n in engine.plan.nodes] == [("xpuruntime", "FusedLinear")]
    assert engine.explain()["fusions"] == [{"fusion": "linear", "into": "relu",
                                            "nodes": ["project", "bias", "relu"]}]
    x = np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4)
    got = run_native(_linear(), {"x": x}, engine=engine)[0]
    plain = run_native(_linear(), {"x": x}, fusions=())[0]
    np.testing.assert_allclose(got, plain, rtol=1e-6)
    kernels = [k["op"] for n in engine.explain()["nodes"] for k in n["kernels"]]
    # On a CPU with AVX-512 the constant weight is packed once (Note [Packed linear weights])
    assert ("linear_packed" if PACKS else "linear") in kernels


PACKS = any(k["name"] == "avx512" and k["device"] == "cpu"
            for k in xrt.list_kernels("linear_packed"))


@pytest.mark.skipif(not PACKS, reason="this CPU has no AVX-512 packed linear kernel")
def test_linear_fusion_packs_its_weight_once_and_obeys_pins():
    engine = native_engine(_linear())
    x = np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4)
    want = np.maximum(x @ (np.arange(12).reshape(4, 3) / 10) + 1, 0)
    for _ in range(3):
        np.testing.assert_allclose(run_native(_linear(), {"x": x}, engine=engine)[0], want,
                                   rtol=1e-6)
    packs = engine.plan.nodes[0].fn.__closure__
    packed = [c.cell_contents for c in packs if type(c.cell_contents).__name__ == "_PackedWeights"]
    first = packed[0]._last[1]
    assert isinstance(first, xrt.nn.PackedLinearWeight)
    run_native(_linear(), {"x": x}, engine=engine)
    assert packed[0]._last[1] is first  # packed once
    for pins in ({"linear": "composite"}, {"matmul": "native"}):
        pinned = native_engine(_linear(), kernel_policy=KernelPolicy(**pins))
        got = run_native(_linear(), {"x": x}, engine=pinned)[0]
        np.testing.assert_allclose(got, want, rtol=1e-6)
        ops = [k["op"] for n in pinned.explain()["nodes"] for k in n["kernels"]]
        assert "linear" in ops and "linear_packed" not in ops


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_linear_fusion_takes_gemm_and_gelu(device, approximate):
    r = np.random.default_rng(3)
    x = r.standard_normal((5, 6)).astype(np.float32)
    init = {"w": r.standard_normal((4, 6)).astype(np.float32),
            "b": r.standard_normal(4).astype(np.float32)}
    nodes = [helper.make_node("Gemm", ["x", "w"], ["h"], transB=1, name="gemm"),
             helper.make_node("Add", ["b", "h"], ["hb"], name="add"),  # bias first
             helper.make_node("Gelu", ["hb"], ["y"], approximate=approximate, name="gelu")]
    model = make_model(nodes, {"x": x}, {"y": (TensorProto.FLOAT, [5, 4])}, init, opset=20)
    engine = native_engine(model, device)
    assert [n.op_type for n in engine.plan.nodes] == ["FusedLinear"]
    got = run_native(model, {"x": x}, device, engine=engine)[0]
    np.testing.assert_allclose(got, run_reference(model, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_linear_fusion_takes_a_gemms_own_bias_and_an_aliased_one(device):
    # Gemm(x, W, C) with C a bias vector, then Relu; MatMul + Add of a bias shared through an
    # Identity (exporters deduplicate equal weights so); a Gemm whose C is a matrix stays.
    r = np.random.default_rng(13)
    x = r.standard_normal((5, 6)).astype(np.float32)
    init = {"w": r.standard_normal((4, 6)).astype(np.float32),
            "c": r.standard_normal(4).astype(np.float32),
            "w2": r.standard_normal((4, 4)).astype(np.float32),
            "cm": r.standard_normal((5, 4)).astype(np.float32)}
    nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["h"], transB=1, name="gemm"),
             helper.make_node("Relu", ["h"], ["hr"], name="relu"),
             helper.make_node("Identity", ["c"], ["c_alias"], name="alias"),
             helper.make_node("MatMul", ["hr", "w2"], ["p"], name="product"),
             helper.make_node("Add", ["p", "c_alias"], ["q"], name="bias"),
             helper.make_node("Gemm", ["q", "w2", "cm"], ["y"], name="matrix_c")]
    model = make_model(nodes, {"x": x}, {"y": (TensorProto.FLOAT, [5, 4])}, init)
    engine = native_engine(model, device)
    ops = [n.op_type for n in engine.plan.nodes]
    assert ops.count("FusedLinear") == 2 and ops[-1] == "Gemm", ops
    got = run_native(model, {"x": x}, device, engine=engine)[0]
    np.testing.assert_allclose(got, run_reference(model, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_linear_fusion_leaves_what_it_cannot_fuse():
    r = np.random.default_rng(4)
    x = r.standard_normal((2, 3)).astype(np.float32)
    w = r.standard_normal((3, 3)).astype(np.float32)
    # The product is also an output (two consumers), and the bias is a 2-D matrix.
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Add", ["h", "m"], ["y"]),
             helper.make_node("Relu", ["h"], ["z"])]
    model = make_model(nodes, {"x": x}, {"y": (TensorProto.FLOAT, [2, 3]),
                                         "z": (TensorProto.FLOAT, [2, 3])},
                       {"w": w, "m": np.ones((2, 3), np.float32)})
    engine = native_engine(model)
    assert [n.op_type for n in engine.plan.nodes] == ["MatMul", "Add", "Relu"]


def test_gelu_fusion_recognises_the_exported_pattern():
    x = np.linspace(-4, 4, 17, dtype=np.float32)
    nodes = [helper.make_node("Div", ["x", "sqrt2"], ["d"]),
             helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"]),
             helper.make_node("Mul", ["x", "a"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["y"])]
    init = {"sqrt2": np.array(np.sqrt(2), np.float32), "one": np.array(1, np.float32),
            "half": np.array(0.5, np.float32)}
    model = make_model(nodes, {"x": x}, {"y": (TensorProto.FLOAT, [17])}, init)
    engine = native_engine(model)
    assert [n.op_type for n in engine.plan.nodes] == ["Gelu"]
    from math import erf
    expected = [0.5 * v * (1 + erf(v / np.sqrt(2))) for v in x.astype(np.float64)]
    # erf is within 1.5e-7 absolutely (Note in ops/elementwise.py), so GELU within 1.5e-7 |x|.
    np.testing.assert_allclose(run_native(model, {"x": x}, engine=engine)[0], expected,
                               rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="unknown fusions"):
        native_engine(model, fusions=("gelu", "everything"))


def test_unhonoured_settings_are_reported():
    engine = native_engine(_linear(), policy=ExecutionPolicy(
        precision="int8", cuda_graphs=True, allocator="engine",
        performance_hint="throughput"))
    text = " ".join(engine.unhonoured)
    for word in ("int8", "cuda_graphs", "allocator", "throughput"):
        assert word in text
    got = run_native(_linear(), {"x": np.ones((1, 4), np.float32)}, engine=engine)[0]
    assert got.dtype == np.float32


def test_threads_apply_during_the_run_only():
    before = xrt.num_threads()
    engine = native_engine(_linear(), policy=ExecutionPolicy(threads=1))
    run_native(_linear(), {"x": np.ones((1, 4), np.float32)}, engine=engine)
    assert xrt.num_threads() == before and "threads=1" in " ".join(engine.notes)


def test_profile_times_every_node():
    engine = native_engine(_linear(), policy=ExecutionPolicy(profile=True))
    for _ in range(2):
        run_native(_linear(), {"x": np.ones((1, 4), np.float32)}, engine=engine)
    assert all(n["seconds"] > 0 for n in engine.explain()["nodes"])


@pytest.mark.parametrize("norm", ["LayerNormalization", "RMSNormalization"])
def test_add_norm_fusion_keeps_the_residual_stream(device, norm):
    # h = x + y is normalised and also goes on (z = h + 1): one AddNorm gives both.
    r = np.random.default_rng(6)
    x, y = (r.standard_normal((2, 3, 8)).astype(np.float32) for _ in range(2))
    init = {"s": r.standard_normal(8).astype(np.float32),
            "b": r.standard_normal(8).astype(np.float32), "one": np.ones((), np.float32)}
    inputs = ["h", "s", "b"] if norm == "LayerNormalization" else ["h", "s"]
    nodes = [helper.make_node("Add", ["x", "y"], ["h"], name="residual"),
             helper.make_node(norm, inputs, ["n"], axis=-1, epsilon=1e-5, name="norm"),
             helper.make_node("Add", ["h", "one"], ["z"], name="onwards")]
    model = make_model(nodes, {"x": x, "y": y}, {"n": (TensorProto.FLOAT, [2, 3, 8]),
                                                 "z": (TensorProto.FLOAT, [2, 3, 8])},
                       init, opset=17 if norm == "LayerNormalization" else 23)
    engine = native_engine(model, device)
    assert [n.op_type for n in engine.plan.nodes] == ["AddNorm", "Add"]
    assert engine.explain()["fusions"] == [{"fusion": "add_norm", "into": "residual",
                                            "nodes": ["residual", "norm"]}]
    got = run_native(model, {"x": x, "y": y}, device, engine=engine)
    plain = run_native(model, {"x": x, "y": y}, device, fusions=())
    for a, b in zip(got, plain):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    kernels = [k["op"] for n in engine.explain()["nodes"] for k in n["kernels"]]
    assert ("layer_norm" if norm == "LayerNormalization" else "rms_norm") in kernels


def test_add_norm_fusion_falls_back_on_a_broadcasting_add():
    r = np.random.default_rng(7)
    x, y = r.standard_normal((2, 3, 8)).astype(np.float32), r.standard_normal((3, 8)).astype(
        np.float32)
    nodes = [helper.make_node("Add", ["x", "y"], ["h"]),
             helper.make_node("LayerNormalization", ["h", "s"], ["n"], axis=-1)]
    model = make_model(nodes, {"x": x, "y": y}, {"n": (TensorProto.FLOAT, [2, 3, 8])},
                       {"s": np.ones(8, np.float32)}, opset=17)
    assert [n.op_type for n in native_engine(model).plan.nodes] == ["AddNorm"]
    got = run_native(model, {"x": x, "y": y})[0]
    np.testing.assert_allclose(got, run_reference(model, {"x": x, "y": y})[0], rtol=1e-5,
                               atol=1e-5)


@pytest.fixture
def attention_everywhere(monkeypatch):
    """The attention and elementwise fusions on every device (elementwise is CUDA's only:
    elsewhere it would run the same ops), so that their nodes run here too."""
    from xpuruntime.inference.native import fusion

    monkeypatch.setattr(fusion, "_DEVICES", {})


def _attention_model(mask_kind, q_shape=(2, 3, 5, 8), k_shape=(2, 3, 7, 8), scale_op="Div"):
    """MatMul(q, kᵀ), scale, an optional mask, Softmax, MatMul(v), as exporters write it."""
    r = np.random.default_rng(8)
    q = r.standard_normal(q_shape).astype(np.float32)
    k = r.standard_normal(k_shape).astype(np.float32)
    v = r.standard_normal(k_shape).astype(np.float32)
    feeds = {"q": q, "k": k, "v": v}
    init = {"perm_const": np.float32(math.sqrt(q_shape[-1]) if scale_op == "Div"
                                     else 1 / math.sqrt(q_shape[-1])),
            "ninf": np.float32(-np.inf)}
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"], name="qk"),
             helper.make_node(scale_op, ["s", "perm_const"], ["ss"], name="scale")]
    scores = "ss"
    sq, skv = q_shape[-2], k_shape[-2]
    if mask_kind == "causal":
        init["cond"] = ~np.tril(np.ones((sq, skv), dtype=bool))
        nodes.append(helper.make_node("Where", ["cond", "ninf", "ss"], ["m"], name="mask"))
        scores = "m"
    elif mask_kind == "keep":
        keep = r.random((sq, skv)) > 0.3
        keep[:, 0] = True
        feeds["keep"] = keep
        nodes.append(helper.make_node("Where", ["keep", "ss", "ninf"], ["m"], name="mask"))
        scores = "m"
    elif mask_kind == "add":
        feeds["bias"] = r.standard_normal((1, 1, sq, skv)).astype(np.float32)
        nodes.append(helper.make_node("Add", ["ss", "bias"], ["m"], name="mask"))
        scores = "m"
    nodes += [helper.make_node("Softmax", [scores], ["p"], axis=-1, name="softmax"),
              helper.make_node("MatMul", ["p", "v"], ["y"], name="pv")]
    model = make_model(nodes, feeds, {"y": (TensorProto.FLOAT, list(q_shape))}, init)
    return model, feeds


@pytest.mark.parametrize("mask_kind", ["none", "causal", "keep", "add"])
def test_attention_fusion_makes_one_node(attention_everywhere, device, mask_kind):
    model, feeds = _attention_model(mask_kind, scale_op="Mul" if mask_kind == "add" else "Div")
    engine = native_engine(model, device)
    fused = [n for n in engine.plan.nodes if n.op_type == "ScaledDotProductAttention"]
    assert len(fused) == 1
    assert fused[0].attrs["mask"] == {"none": "none", "causal": "causal", "keep": "keep",
                                      "add": "add"}[mask_kind]
    assert math.isclose(fused[0].attrs["scale"], 1 / math.sqrt(8), rel_tol=1e-6)
    record = engine.explain()["fusions"][0]
    assert record["fusion"] == "attention" and record["nodes"][0] == "qk"
    got = run_native(model, feeds, device, engine=engine)[0]
    np.testing.assert_allclose(got, run_reference(model, feeds)[0], rtol=1e-4, atol=1e-5)


def test_attention_fusion_in_float16_runs_the_attention_op(attention_everywhere, device):
    model, feeds = _attention_model("causal")
    engine = native_engine(model, device, ExecutionPolicy(precision="fp16"))
    got = run_native(model, feeds, device, engine=engine)[0]
    np.testing.assert_allclose(got, run_reference(model, feeds)[0], rtol=2e-2, atol=2e-2)
    kernels = [k["kernel"] for n in engine.explain()["nodes"] for k in n["kernels"]
               if k["op"] == "attention"]
    assert kernels == (["math"] if device == "cpu" else ["cudnn"])


def test_attention_fusion_falls_back_on_broadcasting_operands(attention_everywhere):
    model, feeds = _attention_model("none", q_shape=(2, 3, 5, 8), k_shape=(1, 1, 7, 8))
    engine = native_engine(model)
    assert "ScaledDotProductAttention" in [n.op_type for n in engine.plan.nodes]
    got = run_native(model, feeds, engine=engine)[0]
    np.testing.assert_allclose(got, run_reference(model, feeds)[0], rtol=1e-4, atol=1e-5)


def test_attention_fusion_leaves_what_it_cannot_fuse(attention_everywhere):
    # A scale after an added mask would scale the mask: not the pattern.
    r = np.random.default_rng(9)
    q = r.standard_normal((2, 4, 8)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Add", ["s", "bias"], ["m"]),
             helper.make_node("Mul", ["m", "c"], ["ms"]),
             helper.make_node("Softmax", ["ms"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "q"], ["y"])]
    feeds = {"q": q, "kt": np.swapaxes(q, 1, 2).copy(),
             "bias": r.standard_normal((4, 4)).astype(np.float32)}
    model = make_model(nodes, feeds, {"y": (TensorProto.FLOAT, [2, 4, 8])},
                       {"c": np.float32(0.5)})
    assert "ScaledDotProductAttention" not in [n.op_type for n in native_engine(model).plan.nodes]
    got = run_native(model, feeds)[0]
    np.testing.assert_allclose(got, run_reference(model, feeds)[0], rtol=1e-5, atol=1e-6)


def test_attention_fusion_runs_on_cpu_plans_too():
    model, feeds = _attention_model("causal")
    engine = native_engine(model)
    assert "ScaledDotProductAttention" in [n.op_type for n in engine.plan.nodes]
    want = run_reference(model, feeds)
    with_output_shapes(model, want)
    np.testing.assert_allclose(run_native(model, feeds, engine=engine)[0], want[0], rtol=1e-5,
                               atol=1e-6)


def _chain_model():
    """silu(g) * up + bias, then 0.5 * leaky_relu(...) + 1 and a tanh GELU: two chains, the
    first one's value also read by a Softmax (so it leaves its chain)."""
    r = np.random.default_rng(10)
    g, up = (r.standard_normal((2, 3, 16)).astype(np.float32) for _ in range(2))
    init = {"bias": r.standard_normal(16).astype(np.float32), "half": np.float32(0.5),
            "one": np.float32(1.0)}
    nodes = [helper.make_node("Sigmoid", ["g"], ["s"], name="sig"),
             helper.make_node("Mul", ["g", "s"], ["silu"], name="silu"),
             helper.make_node("Mul", ["silu", "up"], ["h"], name="gate"),
             helper.make_node("Add", ["h", "bias"], ["hb"], name="bias_add"),
             helper.make_node("Softmax", ["hb"], ["p"], axis=-1, name="softmax"),
             helper.make_node("LeakyRelu", ["hb"], ["l"], alpha=0.2, name="leaky"),
             helper.make_node("Mul", ["l", "half"], ["lh"], name="halve"),
             helper.make_node("Add", ["lh", "one"], ["z"], name="plus_one"),
             helper.make_node("Gelu", ["z"], ["y"], approximate="tanh", name="gelu")]
    model = make_model(nodes, {"g": g, "up": up}, {"y": (TensorProto.FLOAT, [2, 3, 16]),
                                                   "p": (TensorProto.FLOAT, [2, 3, 16])},
                       init, opset=20)
    return model, {"g": g, "up": up}


def test_elementwise_fusion_makes_one_node_per_chain(attention_everywhere, device):
    model, feeds = _chain_model()
    engine = native_engine(model, device)
    chains = [n for n in engine.plan.nodes if n.op_type == "ElementwiseChain"]
    records = [f for f in engine.explain()["fusions"] if f["fusion"] == "elementwise"]
    assert [r["nodes"] for r in records] == [["sig", "silu", "gate", "bias_add"],
                                             ["leaky", "halve", "plus_one", "gelu"]]
    assert len(chains) == 2 and len(chains[1].inputs) == 1  # 0.5 and 1 became literals
    got = run_native(model, feeds, device, engine=engine)
    plain = run_native(model, feeds, device, fusions=())
    for a, b in zip(got, plain):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_elementwise_fusion_keeps_graph_outputs_and_shared_values(attention_everywhere):
    r = np.random.default_rng(11)
    x = r.standard_normal((4, 8)).astype(np.float32)
    nodes = [helper.make_node("Exp", ["x"], ["e"], name="exp"),
             helper.make_node("Neg", ["e"], ["n"], name="neg"),     # e is also an output
             helper.make_node("Abs", ["n"], ["a"], name="abs"),
             helper.make_node("Sqrt", ["a"], ["q"], name="sqrt"),   # a is read twice
             helper.make_node("Tanh", ["a"], ["t"], name="tanh"),
             helper.make_node("Add", ["q", "t"], ["y"], name="add")]
    model = make_model(nodes, {"x": x}, {"y": (TensorProto.FLOAT, [4, 8]),
                                         "e": (TensorProto.FLOAT, [4, 8])})
    engine = native_engine(model)
    records = [f["nodes"] for f in engine.explain()["fusions"] if f["fusion"] == "elementwise"]
    assert records == [["neg", "abs"], ["sqrt", "tanh", "add"]]
    got = run_native(model, {"x": x}, engine=engine)
    for a, b in zip(got, run_reference(model, {"x": x})):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_elementwise_fusion_is_for_cuda_plans_only():
    model, _ = _chain_model()
    assert "ElementwiseChain" not in [n.op_type for n in native_engine(model).plan.nodes]


@pytest.mark.cuda
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_elementwise_chain_runs_one_generated_kernel(precision):
    model, feeds = _chain_model()
    engine = native_engine(model, "cuda:0", ExecutionPolicy(precision=precision))
    assert [n.op_type for n in engine.plan.nodes].count("ElementwiseChain") == 2
    got = run_native(model, feeds, "cuda:0", engine=engine)
    tolerance = 1e-5 if precision == "fp32" else 2e-2
    for a, b in zip(got, run_reference(model, feeds)):
        np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance)


def test_attention_fusion_takes_pytorchs_sdpa_export(attention_everywhere, device):
    # nn.MultiheadAttention exports SDPA with q and kᵀ each multiplied by sqrt(scale), the
    # scale computed from a shape; q, k and v come from one projection through Gather.
    torch = pytest.importorskip("torch")
    import io

    torch.manual_seed(0)
    attn = torch.nn.MultiheadAttention(32, 4, batch_first=True).eval()

    class Self(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = attn

        def forward(self, x):
            return self.attn(x, x, x, need_weights=False)[0]

    x = np.random.default_rng(12).standard_normal((2, 6, 32)).astype(np.float32)
    buffer = io.BytesIO()
    torch.onnx.export(Self(), (torch.from_numpy(x),), buffer, input_names=["x"],
                      output_names=["y"], opset_version=17, dynamo=False)
    onnx = pytest.importorskip("onnx")
    model = onnx.load_from_string(buffer.getvalue())
    engine = native_engine(model, device)
    fused = [n for n in engine.plan.nodes if n.op_type == "ScaledDotProductAttention"]
    assert len(fused) == 1 and fused[0].attrs["factors"] == ["q_scale", "k_scale"]
    got = run_native(model, {"x": x}, device, engine=engine)[0]
    with torch.no_grad():
        expected = Self()(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)

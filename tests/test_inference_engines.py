"""tests/test_inference_engines.py: every engine usable here against PyTorch and NumPy
references (models exported from PyTorch and built with onnx.helper), each engine's mapping
of the ExecutionPolicy, and the registry's rule."""

import sys

import numpy as np
import pytest

import xpuruntime as xrt
from onnx_models import mlp, torch_models
from xpuruntime.inference import EngineRegistry, parse_target

CPU = parse_target("cpu")
CPU_ENGINES = [name for name in ("onnxruntime", "openvino")
               if EngineRegistry.status(CPU).get(name) is None]

pytestmark = pytest.mark.skipif(not CPU_ENGINES, reason="no ONNX engine installed")


@pytest.fixture(scope="module")
def exported():
    return torch_models()


@pytest.mark.parametrize("engine", CPU_ENGINES)
@pytest.mark.parametrize("name", ["mlp", "transformer_block", "cnn"])
def test_exported_models_match_pytorch(exported, engine, name):
    torch = pytest.importorskip("torch")
    data, module, example = exported[name]
    sess = xrt.InferenceSession(data, engine=engine)
    with torch.no_grad():
        want = module(example).numpy()
    got = sess.run({"x": example})["y"]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    # A second batch size through the symbolic dimension.
    bigger = torch.cat([example, example + 1])
    with torch.no_grad():
        want = module(bigger).numpy()
    np.testing.assert_allclose(np.asarray(sess.run({"x": bigger})["y"]), want, rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("engine", CPU_ENGINES)
def test_engines_agree_with_numpy_on_helper_mlp(engine):
    proto, reference = mlp()
    sess = xrt.InferenceSession(proto, engine=engine)
    for batch in (1, 5, 5, 2):
        x = np.random.default_rng(batch).standard_normal((batch, 16)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(sess.run({"x": x})["y"]), reference(x),
                                   rtol=1e-4, atol=1e-4)


# The registry.

def _two_outputs():
    from onnx import TensorProto, helper
    one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["y"]), helper.make_node("Mul", ["x", "two"], ["z"])],
        "two_outputs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n", 3])], [one, two])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model.SerializeToString()


@pytest.mark.parametrize("engine", CPU_ENGINES)
def test_outputs_asked_in_turn_never_touch_earlier_results(engine):
    """Note [ORT IO binding]: outputs are bound to fresh Tensors by a plan per input shape
    and names asked; a run that asks fewer outputs must not write into the Tensors an
    earlier run returned for the others."""
    pytest.importorskip("onnx")
    sess = xrt.InferenceSession(_two_outputs(), engine=engine)
    kept = []
    asks = [None, None, ["y"], ["y"], ["z", "y"], ["y"], None, ["z"], ["z"], ["y"], None]
    for i, names in enumerate(asks * 2):
        n = 1 + (i // len(asks))                  # a second input shape halfway
        x = np.full((n, 3), float(i), np.float32)
        out = sess.run({"x": x}, output_names=names)
        assert list(out) == (names or ["y", "z"])
        kept.append((i, n, out))
    for i, n, out in kept:                        # every result is still its own run's
        for name, t in out.items():
            want = np.full((n, 3), i + 1.0 if name == "y" else 2.0 * i, np.float32)
            np.testing.assert_array_equal(np.asarray(t), want, err_msg=f"run {i}, {name}")


def test_registry_names_and_auto_rule():
    assert {"onnxruntime", "openvino", "tensorrt", "qnn"} <= set(EngineRegistry.names())
    cls, why = EngineRegistry.pick(CPU)
    assert cls.name == CPU_ENGINES[0]
    assert why.startswith(f"auto on cpu: {cls.name} is the first usable engine")


def test_auto_on_a_machine_without_the_engine_packages_says_why(monkeypatch):
    for package in ("onnxruntime", "openvino"):
        monkeypatch.setitem(sys.modules, package, None)   # import fails as if missing
    status = EngineRegistry.status(CPU)
    assert "pip install" in status["onnxruntime"] and "pip install" in status["openvino"]
    native = status.get("native")
    if native is None and "native" in status:
        assert EngineRegistry.pick(CPU)[0].name == "native"
    else:
        with pytest.raises(xrt.UnsupportedOperationError, match="no engine can run on cpu"):
            EngineRegistry.pick(CPU)


def test_missing_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "openvino", None)
    with pytest.raises(xrt.XpuRuntimeError, match=r"pip install xpuruntime\[openvino\]"):
        xrt.InferenceSession(mlp()[0], engine="openvino")


def test_untested_engines_say_so():
    assert EngineRegistry.get("tensorrt").tested_here is False
    assert EngineRegistry.get("qnn").tested_here is False
    assert EngineRegistry.get("onnxruntime").tested_here is True


def test_npu_without_an_npu_is_refused_with_reasons():
    npu = parse_target("npu")
    assert npu.device == xrt.Device("cpu")
    with pytest.raises(xrt.UnsupportedOperationError, match="no engine can run on npu"):
        xrt.InferenceSession(mlp()[0], device="npu")


# ONNX Runtime's mapping of the policy.

ort_only = pytest.mark.skipif("onnxruntime" not in CPU_ENGINES, reason="needs onnxruntime")


@ort_only
def test_ort_threads_and_graph_level_from_policy():
    policy = xrt.ExecutionPolicy(threads=1, graph_optimization="none")
    sess = xrt.InferenceSession(mlp()[0], engine="onnxruntime", exec_policy=policy)
    options = sess._engine._sess.get_session_options()
    assert options.intra_op_num_threads == 1
    assert "intra_op_num_threads=1" in sess.explain()["notes"]


@ort_only
def test_ort_fp16_on_cpu_is_reported_not_silently_dropped():
    sess = xrt.InferenceSession(mlp()[0], engine="onnxruntime",
                                exec_policy=xrt.ExecutionPolicy("fp16"))
    (sentence,) = sess.explain()["unhonoured"]
    assert sentence.startswith("precision='fp16'") and "fp32" in sentence
    assert sess.explain()["engine_details"]["precision"] == "fp32"


@ort_only
def test_ort_int8_quantizes_weights():
    proto, reference = mlp(d_in=64, d_hidden=128, d_out=16)
    sess = xrt.InferenceSession(proto, engine="onnxruntime",
                                exec_policy=xrt.ExecutionPolicy("int8"))
    x = np.random.default_rng(3).standard_normal((8, 64)).astype(np.float32)
    want = reference(x)
    got = np.asarray(sess.run({"x": x})["y"])
    assert np.abs(got - want).max() / np.abs(want).max() < 0.05
    assert not np.array_equal(got, want)        # really computed in int8
    assert sess.explain()["engine_details"]["precision"] == "int8"


@ort_only
def test_ort_static_input_shapes_fix_the_model():
    policy = xrt.ExecutionPolicy(static_shape=True, input_shapes={"x": [4, 16]})
    sess = xrt.InferenceSession(mlp()[0], engine="onnxruntime", exec_policy=policy)
    assert sess.inputs[0].shape == (4, 16)
    with pytest.raises(ValueError, match="size 4 on axis 0"):
        sess.run({"x": np.ones((2, 16), np.float32)})
    with pytest.raises(ValueError, match="contradicts the model's fixed dimension 16"):
        xrt.InferenceSession(mlp()[0], exec_policy=xrt.ExecutionPolicy(
            input_shapes={"x": [4, 15]}))
    with pytest.raises(ValueError, match="has rank 1, the model's input has rank 2"):
        xrt.InferenceSession(mlp()[0], engine="onnxruntime", exec_policy=xrt.ExecutionPolicy(
            input_shapes={"x": [4]}))


@ort_only
def test_ort_profile_is_merged_into_explain():
    sess = xrt.InferenceSession(mlp()[0], engine="onnxruntime",
                                exec_policy=xrt.ExecutionPolicy(profile=True))
    for _ in range(3):
        sess.run({"x": np.ones((2, 16), np.float32)})
    profile = sess.explain()["engine_details"]["profile"]
    assert profile["ms_by_op"], profile
    assert all(key.endswith("(CPUExecutionProvider)") for key in profile["ms_by_op"])


# OpenVINO's mapping of the policy.

ov_only = pytest.mark.skipif("openvino" not in CPU_ENGINES, reason="needs openvino")


@ov_only
@pytest.mark.parametrize("precision, plugin_type", [("fp32", "f32"), ("bf16", "bf16")])
def test_openvino_precision_hint_is_applied_and_reported(precision, plugin_type):
    sess = xrt.InferenceSession(mlp()[0], engine="openvino",
                                exec_policy=xrt.ExecutionPolicy(precision))
    used = sess.explain()["engine_details"]["precision"]
    if used == plugin_type:
        assert sess.explain()["unhonoured"] == []
    else:   # a CPU without bf16: the plugin says what it used, and so do we
        assert any(s.startswith(f"precision={precision!r}") for s in
                   sess.explain()["unhonoured"])


@ov_only
def test_openvino_inputs_share_our_memory():
    sess = xrt.InferenceSession(mlp()[0], engine="openvino")
    x = xrt.asarray(np.ones((2, 16), np.float32))
    sess.run({"x": x})
    seen = sess._engine._lane().request.get_input_tensor(0).data
    assert seen.ctypes.data == x._data_ptr()


@ov_only
def test_openvino_outputs_are_ours_once_shapes_are_known():
    proto, reference = mlp()
    sess = xrt.InferenceSession(proto, engine="openvino")
    x = np.ones((4096, 16), np.float32)   # a 128 KiB output: written into our Tensor
    first = sess.run({"x": x})["y"]       # shapes learned: copied once
    second = sess.run({"x": 2 * x})["y"]  # written by OpenVINO into our Tensor
    assert sess.explain()["engine_details"]["output_copies"] == 1
    small = sess.run({"x": x[:2]})["y"]   # small outputs are copied out (Note [OpenVINO IO])
    np.testing.assert_allclose(np.asarray(small), reference(x[:2]), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(first), reference(x), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(second), reference(2 * x), rtol=1e-4)


@ov_only
def test_openvino_static_shapes_and_threads():
    policy = xrt.ExecutionPolicy(input_shapes={"x": [2, 16]}, threads=1)
    sess = xrt.InferenceSession(mlp()[0], engine="openvino", exec_policy=policy)
    assert sess.explain()["engine_details"]["threads"] == 1
    np.asarray(sess.run({"x": np.ones((2, 16), np.float32)})["y"])
    with pytest.raises(ValueError, match="unknown inputs"):
        xrt.InferenceSession(mlp()[0], engine="openvino",
                             exec_policy=xrt.ExecutionPolicy(input_shapes={"z": [1]}))


@ov_only
def test_openvino_int8_is_reported():
    sess = xrt.InferenceSession(mlp()[0], engine="openvino",
                                exec_policy=xrt.ExecutionPolicy("int8"))
    assert any("int8" in s for s in sess.explain()["unhonoured"])


@pytest.mark.parametrize("engine", CPU_ENGINES)
def test_runs_from_many_threads_at_once(engine):
    from concurrent.futures import ThreadPoolExecutor

    proto, reference = mlp()
    sess = xrt.InferenceSession(proto, engine=engine)
    inputs = [np.random.default_rng(i).standard_normal((1 + i % 3, 16)).astype(np.float32)
              for i in range(64)]

    def work(x):
        return np.asarray(sess.run({"x": xrt.asarray(x)})["y"])

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, inputs))
    for x, y in zip(inputs, results):
        np.testing.assert_allclose(y, reference(x), rtol=1e-4, atol=1e-4)


@ov_only
def test_openvino_explains_its_layers_and_their_precision():
    sess = xrt.InferenceSession(mlp()[0], engine="openvino")
    (layers,) = sess.explain()["engine_details"]["node_placement"].values()
    assert any(layer.startswith("FullyConnected:") and "(f32)" in layer for layer in layers)


def test_tensorrt_progress_monitor_reports_phases(capsys, monkeypatch):
    """The build progress monitor is ours: it runs without TensorRT over any base class
    with TensorRT's IProgressMonitor protocol (phase_start, step_complete, phase_finish)."""
    import types

    from xpuruntime.inference.engines import tensorrt

    monkeypatch.setitem(sys.modules, "tqdm", None)     # the plain, line-per-phase form
    monitor = tensorrt._progress_monitor(types.SimpleNamespace(IProgressMonitor=object), "m")
    monitor.phase_start("Building", None, 3)
    assert all(monitor.step_complete("Building", step) for step in range(3))
    monitor.phase_finish("Building")
    assert "[tensorrt] m: Building done" in capsys.readouterr().err

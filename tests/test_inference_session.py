"""tests/test_inference_session.py: InferenceSession's contract, whatever the engine: model
sources, what it says about the model, input checks and conversions, bad input, explain.

The contract tests run on ONNX Runtime's CPU provider (the embedded default); the zero-copy
contract of the session itself is checked with a recording engine registered here, which
hands the session's feeds back as outputs, so the data pointers the engine saw can be read.
"""

import os

import numpy as np
import pytest

import xpuruntime as xrt
from onnx_models import mlp, nonzero_model, two_inputs, typed_identity

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def model():
    return mlp()


def test_model_sources_path_bytes_proto_pathlike(model, tmp_path):
    proto, reference = model
    path = tmp_path / "mlp.onnx"
    path.write_bytes(proto.SerializeToString())
    x = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)
    for source in (proto, proto.SerializeToString(), str(path), path):
        sess = xrt.InferenceSession(source)
        y = sess.run({"x": x})["y"]
        assert isinstance(y, xrt.Tensor)
        np.testing.assert_allclose(np.asarray(y), reference(x), rtol=1e-5, atol=1e-5)


def test_session_describes_model(model):
    sess = xrt.InferenceSession(model[0])
    assert sess.engine == "onnxruntime"
    assert sess.device == "cpu"
    (x,), (y,) = sess.inputs, sess.outputs
    assert (x.name, x.dtype, x.shape) == ("x", xrt.float32, ("batch", 16))
    assert (y.name, y.dtype, y.shape) == ("y", xrt.float32, ("batch", 8))
    assert "onnxruntime" in repr(sess)


def test_top_level_names():
    assert xrt.InferenceSession is xrt.inference.InferenceSession
    assert xrt.ExecutionPolicy is xrt.policies.ExecutionPolicy
    assert xrt.EngineRegistry is xrt.inference.EngineRegistry


@pytest.mark.parametrize("bad", [b"not an onnx model at all", b"\x08\x07\x12"])
def test_malformed_model_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="not a valid ONNX model"):
        xrt.InferenceSession(bad)


def test_truncated_file_is_a_clear_error(model, tmp_path):
    data = model[0].SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="not a valid ONNX model"):
        xrt.InferenceSession(str(path))


def test_model_source_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no ONNX model"):
        xrt.InferenceSession(str(tmp_path / "missing.onnx"))
    with pytest.raises(ValueError, match="empty"):
        xrt.InferenceSession(b"")
    with pytest.raises(TypeError, match="path, bytes or an onnx.ModelProto"):
        xrt.InferenceSession(42)


def test_device_and_engine_errors(model):
    with pytest.raises(ValueError, match="invalid device"):
        xrt.InferenceSession(model[0], device="tpu")
    with pytest.raises(TypeError, match="device must be"):
        xrt.InferenceSession(model[0], device=1.5)
    with pytest.raises(ValueError, match="unknown engine 'fastest'.*onnxruntime"):
        xrt.InferenceSession(model[0], engine="fastest")
    with pytest.raises(ValueError, match="runs on cpu, npu, not on cuda:0|not on cuda"):
        xrt.InferenceSession(model[0], device="cuda:0", engine="openvino")


def test_unknown_missing_and_extra_inputs(model):
    sess = xrt.InferenceSession(model[0])
    x = np.ones((2, 16), np.float32)
    with pytest.raises(ValueError, match=r"unknown input 'z'.*x: float32 \[batch, 16\]"):
        sess.run({"x": x, "z": x})
    with pytest.raises(ValueError, match="missing input: x"):
        sess.run({})
    with pytest.raises(TypeError, match="dict of input name"):
        sess.run([x])
    with pytest.raises(ValueError, match="unknown output 'w'"):
        sess.run({"x": x}, output_names=["w"])


def test_wrong_dtype_rank_and_shape(model):
    sess = xrt.InferenceSession(model[0])
    with pytest.raises(TypeError, match="must have dtype float32, got float64"):
        sess.run({"x": np.ones((2, 16))})
    with pytest.raises(ValueError, match=r"rank 2 .*got shape \(16,\)"):
        sess.run({"x": np.ones(16, np.float32)})
    with pytest.raises(ValueError, match=r"size 16 on axis 1 .*got shape \(2, 15\)"):
        sess.run({"x": np.ones((2, 15), np.float32)})
    with pytest.raises(TypeError, match="must be a Tensor, a NumPy array"):
        sess.run({"x": object()})


def test_shared_symbolic_dimension_must_agree():
    sess = xrt.InferenceSession(two_inputs())
    with pytest.raises(ValueError, match=r"dimension 'n' must be the same.*a\[0\]=2.*b\[0\]=3"):
        sess.run({"a": np.ones((2, 3), np.float32), "b": np.ones((3, 3), np.float32)})
    y = sess.run({"a": np.full((2, 3), 2, np.float32), "b": np.full((2, 3), 3, np.float32)})
    np.testing.assert_array_equal(np.asarray(y["y"]), np.full((2, 3), 8, np.float32))


def test_session_stays_usable_after_a_failed_run(model):
    proto, reference = model
    sess = xrt.InferenceSession(proto)
    x = np.ones((2, 16), np.float32)
    for bad in ({"x": np.ones((2, 15), np.float32)}, {"x": x.astype(np.float64)}, {}):
        with pytest.raises((ValueError, TypeError)):
            sess.run(bad)
    np.testing.assert_allclose(np.asarray(sess.run({"x": x})["y"]), reference(x), rtol=1e-5)


def test_inputs_from_numpy_tensor_sequence_and_dlpack(model):
    proto, reference = model
    sess = xrt.InferenceSession(proto)
    x = np.random.default_rng(1).standard_normal((2, 16)).astype(np.float32)
    want = reference(x)
    for value in (x, xrt.asarray(x), x.tolist(), _DLPackOnly(x)):
        np.testing.assert_allclose(np.asarray(sess.run({"x": value})["y"]), want, rtol=1e-5,
                                   atol=1e-5)


def test_torch_input_is_taken_without_copy(model):
    torch = pytest.importorskip("torch")
    proto, reference = model
    sess = xrt.InferenceSession(proto)
    x = torch.randn(3, 16)
    y = sess.run({"x": x})["y"]
    np.testing.assert_allclose(np.asarray(y), reference(x.numpy()), rtol=1e-5, atol=1e-5)
    assert sess.explain()["io"]["inputs_last_run"]["x"] == "zero-copy"
    # ONNX Runtime was given torch's own memory.
    assert sess._engine._lane().bound["x"][0] == x.data_ptr()


def test_non_contiguous_input_is_made_contiguous_and_counted(model):
    proto, reference = model
    sess = xrt.InferenceSession(proto)
    x = np.random.default_rng(2).standard_normal((16, 4)).astype(np.float32).T
    y = sess.run({"x": xrt.asarray(x)})["y"]
    np.testing.assert_allclose(np.asarray(y), reference(x), rtol=1e-5, atol=1e-5)
    io = sess.explain()["io"]
    assert io["input_copies"] == {"layout": 1}
    assert io["stayed_on_device"] is False


def test_outputs_are_fresh_tensors_each_run(model):
    sess = xrt.InferenceSession(model[0])
    x = np.ones((2, 16), np.float32)
    first = sess.run({"x": x})["y"]
    kept = np.asarray(first).copy()
    second = sess.run({"x": 2 * x})["y"]
    assert first._data_ptr() != second._data_ptr()
    np.testing.assert_array_equal(np.asarray(first), kept)


def test_data_dependent_output_shape():
    sess = xrt.InferenceSession(nonzero_model())
    for values, want in (([0, 1, 0, 2], [[1, 3]]), ([1, 1, 1, 0], [[0, 1, 2]]),
                         ([0, 0, 0, 5], [[3]]), ([1, 1, 1, 0], [[0, 1, 2]])):
        out = sess.run({"x": np.array(values, np.float32)})["idx"]
        np.testing.assert_array_equal(np.asarray(out), np.array(want))


@pytest.mark.parametrize("name", ["bool", "int8", "uint8", "int32", "int64", "float16",
                                  "float64"])
def test_element_types_round_trip(name):
    from onnx import helper

    elem = helper.np_dtype_to_tensor_dtype(np.dtype(name))
    sess = xrt.InferenceSession(typed_identity(elem))
    x = (np.arange(6).reshape(2, 3) % 2).astype(name)
    y = sess.run({"x": x})["y"]
    assert y.dtype == getattr(xrt, name)
    np.testing.assert_array_equal(np.asarray(y), x)


def test_output_names_select_and_order(model):
    sess = xrt.InferenceSession(model[0])
    out = sess.run({"x": np.ones((1, 16), np.float32)}, output_names=["y"])
    assert list(out) == ["y"]


def test_explain_says_engine_why_policy_and_io(model):
    sess = xrt.InferenceSession(model[0])
    sess.run({"x": xrt.ones((2, 16), dtype=xrt.float32)})
    info = sess.explain()
    assert info["engine"] == "onnxruntime"
    assert info["why"].startswith("auto on cpu: onnxruntime is the first usable engine")
    assert info["exec_policy"]["precision"] == "fp32"
    assert info["io"] == {"inputs_last_run": {"x": "zero-copy"}, "input_copies": {},
                          "stayed_on_device": True}
    details = info["engine_details"]
    assert details["providers"] == ["CPUExecutionProvider"]
    assert details["outputs_from"] == {"y": "xpuruntime allocator"}
    placed = [node for nodes in details.get("node_placement", {}).values() for node in nodes]
    assert placed, "ONNX Runtime reports which provider ran which node"


def test_closed_session_refuses_to_run(model):
    with xrt.InferenceSession(model[0]) as sess:
        pass
    with pytest.raises(xrt.XpuRuntimeError, match="closed"):
        sess.run({"x": np.ones((1, 16), np.float32)})


class _DLPackOnly:
    """A producer that offers nothing but the DLPack protocol."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_session_hands_engine_the_callers_memory(model):
    """The session passes Tensors, NumPy and torch memory to the engine as it is."""
    from xpuruntime.inference import _engine

    seen = {}

    @_engine.register_engine
    class Recording(_engine.Engine):
        name = "recording-test"
        kinds = ("cpu",)

        @classmethod
        def probe(cls, target):
            return None

        def __init__(self, model, target, kernel_policy, exec_policy):
            super().__init__(model, target, kernel_policy, exec_policy)
            self.inputs, self.outputs = model.io()

        def run(self, feeds, output_names):
            seen.update({k: v._data_ptr() for k, v in feeds.items()})
            return [feeds["x"] for _ in output_names]

    try:
        sess = xrt.InferenceSession(model[0], engine="recording-test")
        x = np.ones((2, 16), np.float32)
        sess.run({"x": x})
        assert seen["x"] == x.ctypes.data
        t = xrt.ones((2, 16), dtype=xrt.float32)
        sess.run({"x": t})
        assert seen["x"] == t._data_ptr()
    finally:
        _engine._ENGINES.pop("recording-test", None)


def test_model_file_with_external_weights_loads_by_path(tmp_path):
    onnx = pytest.importorskip("onnx")
    proto, reference = mlp(d_in=64, d_hidden=256)
    path = tmp_path / "big.onnx"
    onnx.save_model(proto, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=16)
    assert os.path.exists(tmp_path / "weights.bin")
    sess = xrt.InferenceSession(str(path))
    x = np.ones((1, 64), np.float32)
    np.testing.assert_allclose(np.asarray(sess.run({"x": x})["y"]), reference(x), rtol=1e-4)


def test_jax_input_is_taken_through_dlpack(model):
    jax = pytest.importorskip("jax")
    proto, reference = model
    sess = xrt.InferenceSession(proto)
    # On the host: where JAX has a GPU its arrays live there by default, and a CPU session
    # copies them (as it says).
    x = jax.device_put(jax.numpy.ones((2, 16), dtype=jax.numpy.float32), jax.devices("cpu")[0])
    y = sess.run({"x": x})["y"]
    np.testing.assert_allclose(np.asarray(y), reference(np.ones((2, 16), np.float32)),
                               rtol=1e-5, atol=1e-5)
    assert sess.explain()["io"]["inputs_last_run"]["x"] == "zero-copy"
    assert sess._engine._lane().bound["x"][0] == x.unsafe_buffer_pointer()

"""tests/test_inference_cuda.py: ONNX Runtime's CUDA provider under InferenceSession: IO bound
by pointer to our Tensors and to torch/CuPy memory, ordering against producers on other
streams, precision and CUDA graphs. Runs where onnxruntime-gpu and a GPU are present."""

import numpy as np
import pytest

import xpuruntime as xrt
from onnx_models import mlp, nonzero_model, torch_models
from xpuruntime.inference import EngineRegistry, parse_target

pytestmark = pytest.mark.cuda


def _ort_cuda():
    if not xrt.cuda.is_available():
        pytest.skip("no CUDA device")
    reason = EngineRegistry.status(parse_target("cuda:0")).get("onnxruntime")
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def model():
    return mlp(d_in=64, d_hidden=256, d_out=32)


def _host(t):
    return np.asarray(t.to_device("cpu"))


def test_mlp_runs_on_the_gpu_with_our_memory(model):
    _ort_cuda()
    proto, reference = model
    sess = xrt.InferenceSession(proto, device="cuda:0", engine="onnxruntime")
    x_host = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    x = xrt.asarray(x_host, device="cuda:0")
    out = sess.run({"x": x})["y"]
    assert out.device == xrt.Device("cuda:0")
    np.testing.assert_allclose(_host(out), reference(x_host), rtol=1e-4, atol=1e-4)
    assert sess._engine._lane().bound["x"][0] == x._data_ptr()            # input: zero-copy
    info = sess.explain()
    assert info["io"]["stayed_on_device"] is True
    assert info["engine_details"]["outputs_from"]["y"] == "xpuruntime allocator"
    assert info["engine_details"]["providers"][0] == "CUDAExecutionProvider"


def test_host_input_is_copied_once_and_counted(model):
    _ort_cuda()
    proto, reference = model
    sess = xrt.InferenceSession(proto, device="cuda:0", engine="onnxruntime")
    x = np.ones((2, 64), np.float32)
    np.testing.assert_allclose(_host(sess.run({"x": x})["y"]), reference(x), rtol=1e-4)
    assert sess.explain()["io"]["input_copies"] == {"to_device": 1}


def test_torch_and_cupy_inputs_without_copies(model):
    _ort_cuda()
    proto, reference = model
    sess = xrt.InferenceSession(proto, device="cuda:0", engine="onnxruntime")
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 64, device="cuda")
    out = sess.run({"x": x})["y"]
    assert sess._engine._lane().bound["x"][0] == x.data_ptr()
    np.testing.assert_allclose(_host(out), reference(x.cpu().numpy()), rtol=1e-4, atol=1e-4)
    cupy = pytest.importorskip("cupy")
    c = cupy.random.standard_normal((4, 64), dtype=cupy.float32)
    out = sess.run({"x": c})["y"]
    assert sess._engine._lane().bound["x"][0] == c.data.ptr
    np.testing.assert_allclose(_host(out), reference(cupy.asnumpy(c)), rtol=1e-4, atol=1e-4)


def test_ort_waits_for_a_producer_still_writing_on_another_stream(model):
    """ORT never waits for work queued before Run (its issue #26609): the session orders its
    stream after the caller's with an event, and DLPack orders torch's stream before ours."""
    _ort_cuda()
    torch = pytest.importorskip("torch")
    proto, reference = model
    sess = xrt.InferenceSession(proto, device="cuda:0", engine="onnxruntime")
    side = torch.cuda.Stream()
    x_host = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
    for _ in range(3):
        x = torch.zeros(8, 64, device="cuda")
        src = torch.from_numpy(x_host).cuda()
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            torch.cuda._sleep(100_000_000)          # ~50 ms of a busy producer
            x.copy_(src)                            # queued behind the sleep
            out = sess.run({"x": x})["y"]          # imported on side's schedule
        np.testing.assert_allclose(_host(out), reference(x_host), rtol=1e-4, atol=1e-4)


def test_ort_waits_for_a_producer_on_the_legacy_stream_without_events(model):
    """Note [ORT on our stream]: ORT's stream is a blocking one, so a caller on the legacy
    default stream (ours and torch's default) is ordered by CUDA itself: no event is
    recorded, and ORT still reads what the busy producer writes, and the caller's next
    work reads what ORT wrote."""
    _ort_cuda()
    torch = pytest.importorskip("torch")
    proto, reference = model
    sess = xrt.InferenceSession(proto, device="cuda:0", engine="onnxruntime")
    assert xrt.cuda.current_stream().ptr == 0 and torch.cuda.current_stream().cuda_stream == 0
    lane = sess._engine._lane()

    class Refuse:
        def record(self, stream):
            raise AssertionError("an event was recorded on the legacy stream's path")
    lane.ready = lane.done = Refuse()
    x_host = np.random.default_rng(3).standard_normal((8, 64)).astype(np.float32)
    for _ in range(3):
        x = torch.zeros(8, 64, device="cuda")
        src = torch.from_numpy(x_host).cuda()
        torch.cuda.synchronize()
        torch.cuda._sleep(100_000_000)              # ~50 ms of a busy producer
        x.copy_(src)                                # queued behind the sleep
        out = sess.run({"x": x})["y"]
        doubled = out * 2.0                         # the legacy stream reads ORT's output
        np.testing.assert_allclose(_host(doubled), 2 * reference(x_host), rtol=1e-4,
                                   atol=1e-4)


def test_ort_waits_for_our_own_stream(model):
    _ort_cuda()
    proto, reference = model
    sess = xrt.InferenceSession(proto, device="cuda:0", engine="onnxruntime")
    s = xrt.cuda.Stream()
    x_host = np.random.default_rng(2).standard_normal((8, 64)).astype(np.float32)
    big = xrt.ones((2048, 2048), dtype=xrt.float32, device="cuda:0")
    with xrt.cuda.stream(s):
        busy = big
        for _ in range(20):                         # keep s busy before x is written
            busy = busy @ big * (1.0 / 2048)
        x = xrt.asarray(x_host, device="cuda:0") + xrt.sum(busy) * 0.0
        out = sess.run({"x": x})["y"]
        got = _host(out)
    np.testing.assert_allclose(got, reference(x_host), rtol=1e-4, atol=1e-4)


def test_data_dependent_output_comes_through_dlpack():
    _ort_cuda()
    sess = xrt.InferenceSession(nonzero_model(), device="cuda:0", engine="onnxruntime")
    for values, want in (([0, 1, 0, 2], [[1, 3]]), ([1, 1, 1, 0], [[0, 1, 2]])):
        out = sess.run({"x": xrt.asarray(np.array(values, np.float32), device="cuda:0")})
        np.testing.assert_array_equal(_host(out["idx"]), np.array(want))


def test_fp16_rewrites_the_model_and_keeps_io_types(model):
    _ort_cuda()
    proto, reference = model
    sess = xrt.InferenceSession(proto, device="cuda:0", engine="onnxruntime",
                                exec_policy=xrt.ExecutionPolicy("fp16"))
    x_host = np.random.default_rng(3).standard_normal((8, 64)).astype(np.float32)
    out = sess.run({"x": xrt.asarray(x_host, device="cuda:0")})["y"]
    assert out.dtype == xrt.float32
    want = reference(x_host)
    err = np.abs(_host(out) - want).max() / np.abs(want).max()
    assert 0 < err < 2e-2
    assert sess.explain()["engine_details"]["precision"] == "fp16"
    assert sess.explain()["unhonoured"] == [a for a in sess.explain()["unhonoured"]
                                            if a.startswith("allocator")]


def test_cuda_graph_replays_with_new_inputs(model):
    _ort_cuda()
    proto, reference = model
    policy = xrt.ExecutionPolicy(static_shape=True, input_shapes={"x": [8, 64]},
                                 cuda_graphs=True)
    sess = xrt.InferenceSession(proto, device="cuda:0", engine="onnxruntime",
                                exec_policy=policy)
    assert not [s for s in sess.explain()["unhonoured"] if s.startswith("cuda_graphs")]
    outs = []
    for seed in range(4):
        x_host = np.random.default_rng(seed).standard_normal((8, 64)).astype(np.float32)
        out = sess.run({"x": xrt.asarray(x_host, device="cuda:0")})["y"]
        outs.append((out, reference(x_host)))
    for out, want in outs:                          # earlier outputs were not overwritten
        np.testing.assert_allclose(_host(out), want, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="must have size 8 on axis 0"):
        sess.run({"x": xrt.ones((4, 64), dtype=xrt.float32, device="cuda:0")})


def test_exported_transformer_block_on_cuda():
    _ort_cuda()
    torch = pytest.importorskip("torch")
    data, module, example = torch_models()["transformer_block"]
    sess = xrt.InferenceSession(data, device="cuda:0", engine="onnxruntime")
    with torch.no_grad():
        want = module(example).numpy()
    got = sess.run({"x": example.cuda()})["y"]
    np.testing.assert_allclose(_host(got), want, rtol=1e-3, atol=1e-3)


def test_auto_on_cuda_picks_and_explains():
    _ort_cuda()
    sess = xrt.InferenceSession(mlp()[0], device="cuda:0")
    assert sess.engine in ("tensorrt", "onnxruntime")
    assert sess.explain()["why"].startswith("auto on cuda:0")

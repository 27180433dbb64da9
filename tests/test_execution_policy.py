"""tests/test_execution_policy.py: ExecutionPolicy's fields, JSON and the one policy file that
holds it beside a KernelPolicy."""

import json

import pytest

import xpuruntime as xrt
from xpuruntime.policies import load_policy_file, save_policy_file


def test_defaults_and_repr():
    p = xrt.ExecutionPolicy()
    assert (p.precision, p.static_shape, p.cuda_graphs, p.threads, p.allocator) == (
        "fp32", False, False, None, "caching")
    assert repr(p) == "ExecutionPolicy()"
    assert repr(xrt.ExecutionPolicy("fp16", threads=2)) == \
        "ExecutionPolicy(precision='fp16', threads=2)"


def test_json_round_trip(tmp_path):
    p = xrt.ExecutionPolicy("bf16", static_shape=True, input_shapes={"x": [8, 512]},
                            cuda_graphs=True, threads=4, allocator="stream_ordered",
                            graph_optimization="basic", performance_hint="throughput",
                            profile=True)
    assert xrt.ExecutionPolicy.from_json(p.to_json()) == p
    path = tmp_path / "exec.json"
    p.save(path)
    assert json.loads(path.read_text())["schema"] == "xpuruntime.ExecutionPolicy/1"
    assert xrt.ExecutionPolicy.load(path) == p
    assert p.input_shapes == {"x": (8, 512)}


@pytest.mark.parametrize("kwargs, error, match", [
    ({"precision": "fp8"}, ValueError, "precision must be one of"),
    ({"allocator": "malloc"}, ValueError, "allocator must be one of"),
    ({"graph_optimization": "max"}, ValueError, "graph_optimization"),
    ({"performance_hint": "fast"}, ValueError, "performance_hint"),
    ({"static_shape": 1}, TypeError, "static_shape must be True or False"),
    ({"threads": 0}, ValueError, "threads must be None or an int"),
    ({"threads": True}, ValueError, "threads must be None or an int"),
    ({"input_shapes": [1, 2]}, TypeError, "input_shapes maps input names"),
    ({"input_shapes": {"x": [1, -2]}}, ValueError, "non-negative ints"),
])
def test_bad_fields_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        xrt.ExecutionPolicy(**kwargs)


def test_bad_json_is_refused():
    with pytest.raises(ValueError, match="unknown execution policy fields: \\['precison'\\]"):
        xrt.ExecutionPolicy.from_dict({"precison": "fp16"})
    with pytest.raises(ValueError, match="unknown execution policy schema"):
        xrt.ExecutionPolicy.from_dict({"schema": "other/1"})
    with pytest.raises(ValueError, match="JSON object"):
        xrt.ExecutionPolicy.from_dict([])


def test_replace_makes_a_changed_copy():
    p = xrt.ExecutionPolicy("fp16")
    q = p.replace(threads=3)
    assert (q.precision, q.threads, p.threads) == ("fp16", 3, None)


def test_one_policy_file_holds_both(tmp_path):
    kernel = xrt.KernelPolicy(matmul="openblas")
    execution = xrt.ExecutionPolicy("fp16", threads=2)
    path = tmp_path / "policy.json"
    save_policy_file(path, kernel, execution)
    assert json.loads(path.read_text())["schema"] == "xpuruntime.Policy/1"
    k, e = load_policy_file(path)
    assert k == kernel and e == execution
    # Each class reads its own section of the same file.
    assert xrt.KernelPolicy.load(path) == kernel
    assert xrt.ExecutionPolicy.load(path) == execution


def test_policy_file_with_one_section_and_single_schema_files(tmp_path):
    path = tmp_path / "only_exec.json"
    save_policy_file(path, exec_policy=xrt.ExecutionPolicy(threads=1))
    assert load_policy_file(path) == (None, xrt.ExecutionPolicy(threads=1))
    assert xrt.KernelPolicy.load(path) == xrt.KernelPolicy()
    kernel_only = tmp_path / "kernel.json"
    xrt.KernelPolicy(matmul="openblas").save(kernel_only)
    assert load_policy_file(kernel_only) == (xrt.KernelPolicy(matmul="openblas"), None)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "xpuruntime.Policy/1", "serving": {}}))
    with pytest.raises(ValueError, match="unknown policy file sections"):
        load_policy_file(bad)


def test_session_takes_policy_files(tmp_path):
    pytest.importorskip("onnxruntime")
    from onnx_models import mlp

    path = tmp_path / "policy.json"
    save_policy_file(path, xrt.KernelPolicy(), xrt.ExecutionPolicy(threads=1))
    sess = xrt.InferenceSession(mlp()[0], exec_policy=str(path))
    assert sess.exec_policy.threads == 1
    sess = xrt.InferenceSession(mlp()[0], kernel_policy=str(path))
    assert sess.exec_policy.threads == 1   # the file's execution section comes along
    with pytest.raises(TypeError, match="exec_policy must be an ExecutionPolicy"):
        xrt.InferenceSession(mlp()[0], exec_policy={"precision": "fp16"})

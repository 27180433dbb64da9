"""tests/test_inference_cli.py: ``python -m xpuruntime run`` and ``bench`` on a small model,
their outputs, files and errors."""

import subprocess
import sys

import numpy as np
import pytest

from onnx_models import mlp

pytest.importorskip("onnxruntime")


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "xpuruntime", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    import onnx

    path = tmp_path_factory.mktemp("cli") / "mlp.onnx"
    proto, reference = mlp()
    onnx.save(proto, str(path))
    return path, reference


def test_run_prints_outputs_and_saves_them(model_file, tmp_path):
    path, reference = model_file
    x = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    done = _cli("run", str(path), "--input", f"x={tmp_path / 'x.npy'}", "--save",
                str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "onnxruntime on cpu" in done.stdout
    assert "y: float32 [3, 8]" in done.stdout
    np.testing.assert_allclose(np.load(tmp_path / "out" / "y.npy"), reference(x), rtol=1e-5,
                               atol=1e-5)


def test_run_with_random_inputs_and_explain(model_file):
    done = _cli("run", str(model_file[0]), "--dim", "batch=5", "--explain")
    assert done.returncode == 0, done.stderr
    assert "y: float32 [5, 8]" in done.stdout
    assert '"engine": "onnxruntime"' in done.stdout


def test_run_errors_are_sentences(model_file, tmp_path):
    done = _cli("run", str(tmp_path / "missing.onnx"))
    assert done.returncode == 2 and "no ONNX model" in done.stderr
    done = _cli("run", str(model_file[0]), "--engine", "nope")
    assert done.returncode == 2 and "unknown engine 'nope'" in done.stderr
    np.save(tmp_path / "bad.npy", np.ones((2, 16)))
    done = _cli("run", str(model_file[0]), "--input", f"x={tmp_path / 'bad.npy'}")
    assert done.returncode == 2 and "must have dtype float32, got float64" in done.stderr
    assert "Traceback" not in done.stderr


def test_bench_compares_engines_and_writes_a_plot(model_file, tmp_path):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "engines.png"
    done = _cli("bench", str(model_file[0]), "--dim", "batch=4", "--runs", "5", "--plot",
                str(plot))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "onnxruntime" in done.stdout and "agree" in done.stdout
    assert plot.stat().st_size > 1000


def test_bench_compares_policy_files(model_file, tmp_path):
    import xpuruntime as xrt
    from xpuruntime.policies import save_policy_file

    one = tmp_path / "one_thread.json"
    save_policy_file(one, exec_policy=xrt.ExecutionPolicy(threads=1))
    basic = tmp_path / "basic.json"
    save_policy_file(basic, exec_policy=xrt.ExecutionPolicy(graph_optimization="basic"))
    done = _cli("bench", str(model_file[0]), "--engines", "onnxruntime", "--runs", "3",
                "--policies", f"{one},{basic}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "onnxruntime + one_thread.json" in done.stdout
    assert "onnxruntime + basic.json" in done.stdout

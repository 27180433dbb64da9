"""tests/test_pytorch_adapter.py: xpuruntime.pytorch without a GPU: the import guard, that
``import xpuruntime`` never imports torch, the policy plumbing (set/get/clear, the context
manager, which torch ops are rerouted), the registry's kernels, CPU tensors left to torch,
and that the NVRTC sources compile for sm_90."""

import json
import subprocess
import sys

import pytest

import xpuruntime as xrt

GUARD = ("xpuruntime.pytorch requires PyTorch. Install with: pip install xpuruntime[torch]")


def run_python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_import_xpuruntime_never_imports_torch():
    result = run_python("import sys, xpuruntime; print('torch' in sys.modules)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_import_guard_without_torch_names_the_extra():
    code = ("import sys; sys.modules['torch'] = None\n"
            "try:\n    import xpuruntime.pytorch\n"
            "except ImportError as e:\n    print(e)\n")
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == GUARD


torch = pytest.importorskip("torch")
xt = pytest.importorskip("xpuruntime.pytorch")
F = torch.nn.functional


@pytest.fixture(autouse=True)
def no_policy():
    xt.clear_kernel_policy()
    yield
    xt.clear_kernel_policy()


def test_both_names_are_one_module():
    import xpuruntime.adapters.pytorch as adapter

    assert xt is adapter


def test_kernels_are_registered_for_policies_to_pin():
    kernels = {(k["op"], k["name"]) for k in xrt.list_kernels() if k["device"] == "cuda"}
    for pair in [("attention", "flash_v2"), ("attention", "torch"), ("layer_norm", "fused"),
                 ("layer_norm", "torch"), ("rms_norm", "fused"), ("rms_norm", "torch")]:
        assert pair in kernels
    policy = xrt.KernelPolicy(attention="FlashAttention2", layer_norm="torch")
    assert policy.preferences == {"attention": "flash_v2", "layer_norm": "torch"}


def test_set_get_clear_kernel_policy():
    assert xt.get_kernel_policy() is None
    assert xt.rerouted_ops() == []
    policy = xt.set_kernel_policy(attention="flash_v2", matmul="cublaslt")
    assert isinstance(policy, xrt.KernelPolicy)
    assert xt.get_kernel_policy() == policy
    assert xrt.get_kernel_policy() == policy  # the same policy steers array code
    assert xt.rerouted_ops() == ["attention", "matmul"]
    xt.clear_kernel_policy()
    assert xt.get_kernel_policy() is None
    assert xt.rerouted_ops() == []
    assert xrt.get_kernel_policy().preferences == {}


def test_set_kernel_policy_takes_a_policy_object_and_rejects_bad_input():
    policy = xrt.KernelPolicy(layer_norm="fused")
    assert xt.set_kernel_policy(policy) is policy
    assert xt.rerouted_ops() == ["layer_norm"]
    with pytest.raises(TypeError):
        xt.set_kernel_policy("flash_v2")
    with pytest.raises(TypeError):
        xt.set_kernel_policy(policy, matmul="cublaslt")
    with pytest.raises(ValueError, match="did you mean"):
        xt.set_kernel_policy(attention="flash_v3")
    with pytest.raises(ValueError, match="no op"):
        xt.set_kernel_policy(atention="flash_v2")


def test_ops_a_policy_does_not_name_install_no_mode():
    xt.set_kernel_policy(add="native")  # steers array code; no torch op rerouted
    assert xt.rerouted_ops() == []
    assert not torch.overrides._is_torch_function_mode_enabled()
    xt.set_kernel_policy(rms_norm="fused")
    assert torch.overrides._is_torch_function_mode_enabled()
    xt.clear_kernel_policy()
    assert not torch.overrides._is_torch_function_mode_enabled()


def test_kernel_policy_context_restores_the_previous_state():
    xt.set_kernel_policy(matmul="cublaslt")
    with xt.kernel_policy(attention="torch") as inner:
        assert xrt.get_kernel_policy() == inner
        assert xt.rerouted_ops() == ["attention"]
    assert xt.rerouted_ops() == ["matmul"]
    assert xrt.get_kernel_policy().preferences == {"matmul": "cublaslt"}


def test_cpu_tensors_stay_on_torch_under_a_policy():
    xt.set_kernel_policy(matmul="cublaslt", attention="flash_v2", layer_norm="fused",
                         rms_norm="fused")
    a = torch.randn(8, 16, requires_grad=True)
    lin = torch.nn.Linear(16, 4)
    q = torch.randn(1, 2, 5, 8)
    with xrt.explain() as log:
        y = lin(F.layer_norm(a, (16,)) @ torch.eye(16)).sum()
        y.backward()
        out = F.scaled_dot_product_attention(q, q, q)
        r = F.rms_norm(a, (16,))
    assert log.records == []
    assert a.grad is not None and out.shape == q.shape and r.shape == a.shape
    assert torch.allclose(xt.fused_layernorm(a, 16), F.layer_norm(a, (16,)))
    assert torch.allclose(xt.fused_attention(q, q, q), F.scaled_dot_product_attention(q, q, q))


def test_autocast_rejects_other_dtypes():
    with pytest.raises(ValueError):
        xt.autocast(torch.float32)


def test_capture_graph_checks_its_step():
    with pytest.raises(TypeError):
        xt.capture_graph(step=42)


def test_nvrtc_sources_compile_for_sm90():
    from xpuruntime.adapters.pytorch import _kernels

    try:
        cubins = _kernels.compile_sources("sm_90")
    except xrt.CudaError as error:
        if "was not found" in str(error):
            pytest.skip(str(error))
        raise
    assert all(c[:4] == b"\x7fELF" for c in cubins)


def test_norm_plan_holds_a_row_in_registers_or_says_no():
    from xpuruntime.adapters.pytorch import _kernels

    assert _kernels.norm_plan(torch.bfloat16, 8192) == (8, 512, 2)
    assert _kernels.norm_plan(torch.float32, 1000)[0] == 4
    assert _kernels.norm_plan(torch.float16, 1001)[0] == 1
    assert _kernels.norm_plan(torch.float32, 1 << 20) is None
    assert all(_kernels.norm_plan(torch.bfloat16, n)[1] <= 512 for n in (64, 8192, 65536))
    assert _kernels.norm_plan(torch.int32, 64) is None


def test_profile_merges_xpuruntimes_profile_into_torchs_trace(tmp_path):
    from xpuruntime.profiler import _torch

    path = tmp_path / "trace.json"
    a = xrt.asarray([1.0, 2.0, 3.0])
    with xt.profile(export_chrome_trace=path,
                    activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        b = a * 2.0 + 1.0
        c = torch.ones(3) + torch.from_dlpack(b)
    assert c.tolist() == [4.0, 6.0, 8.0]
    assert {"multiply", "add"} <= {op.name for op in prof.xpuruntime.ops}
    trace = json.loads(path.read_text())
    def ours_(e):  # our processes' ids are offset; torch's may be strings
        return isinstance(e.get("pid"), int) and e["pid"] >= _torch.PID_OFFSET

    ours = [e for e in trace["traceEvents"] if ours_(e)]
    theirs = [e for e in trace["traceEvents"] if not ours_(e)]
    assert any(e.get("name") == "add" for e in ours) and theirs
    assert "xpuruntime_decisions" in trace
    with xt.profile(xpuruntime=False, activities=[torch.profiler.ProfilerActivity.CPU]) as p2:
        a + 1.0
    assert p2.xpuruntime is None


def test_flash_v2_takes_what_its_grid_holds():
    from xpuruntime.adapters.pytorch._attention_ops import flash_fits

    def qkv(b, h, d=64, dv=None):
        return (torch.empty(b, h, 1, d, device="meta"), torch.empty(b, h, 1, d, device="meta"),
                torch.empty(b, h, 1, dv or d, device="meta"))

    assert flash_fits(*qkv(1, 8)) and flash_fits(*qkv(65535, 1)) and flash_fits(*qkv(2, 2, 80))
    assert not flash_fits(*qkv(65536, 1))  # batch x heads is the grid's second dimension
    assert not flash_fits(*qkv(1, 8, 256)) and not flash_fits(*qkv(1, 8, 64, 32))

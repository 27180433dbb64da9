"""tests/test_pytorch_adapter_linear.py: xpuruntime.pytorch.fused_linear, a dense layer with
its bias and activation fused (one cuBLASLt call on CUDA): forward and gradients against
torch's F.linear + activation on CPU (float64) and CUDA (float32, bfloat16), the custom op's
registration (opcheck), torch.compile, the kernel policy, the torch fallback and errors."""

import pytest

torch = pytest.importorskip("torch")
xt = pytest.importorskip("xpuruntime.pytorch")
F = torch.nn.functional

import xpuruntime as xrt  # noqa: E402

ACTIVATIONS = [None, "relu", "gelu", "gelu_tanh"]


def reference(x, w, b, activation):
    y = F.linear(x, w, b)
    if activation == "relu":
        return F.relu(y)
    if activation == "gelu":
        return F.gelu(y)
    if activation == "gelu_tanh":
        return F.gelu(y, approximate="tanh")
    return y


def leaves(device, dtype, with_bias=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 5, 16, generator=g, dtype=torch.float64) / 4
    w = torch.randn(12, 16, generator=g, dtype=torch.float64) / 4
    b = torch.randn(12, generator=g, dtype=torch.float64) if with_bias else None
    return [t.to(device=device, dtype=dtype).requires_grad_() if t is not None else None
            for t in (x, w, b)]


def check(device, dtype, activation, with_bias, tol):
    ours = leaves(device, dtype, with_bias)
    theirs = leaves(device, dtype, with_bias)
    y = xt.fused_linear(*ours, activation=activation)
    expected = reference(*theirs, activation)
    torch.testing.assert_close(y, expected, rtol=tol, atol=tol)
    grad = torch.randn_like(expected)
    y.backward(grad)
    expected.backward(grad)
    for a, e in zip(ours, theirs):
        if a is not None:
            torch.testing.assert_close(a.grad, e.grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("with_bias", [True, False])
def test_cpu_forward_and_gradients_match_torch(activation, with_bias):
    check("cpu", torch.float64, activation, with_bias, 1e-10)


def test_cpu_runs_on_xpuruntime_and_explains():
    x, w, b = leaves("cpu", torch.float32)
    with xrt.explain() as log:
        xt.fused_linear(x.detach(), w.detach(), b.detach(), activation="relu")
    assert "linear[cpu" in str(log)


def test_opcheck():
    x, w, b = (t.detach() for t in leaves("cpu", torch.float32))
    for code in range(4):
        torch.library.opcheck(torch.ops.xpu.fused_linear.default, (x, w, b, code))
    torch.library.opcheck(torch.ops.xpu.fused_linear.default, (x, w, None, 2))


def test_torch_fallback_for_what_xpuruntime_does_not_take():
    x = torch.ones(2, 3, dtype=torch.float32)
    w = torch.ones(4, 3, dtype=torch.float64)  # mixed dtypes: torch's ops decide
    with pytest.raises(RuntimeError):  # as torch itself does
        F.linear(x, w)
    with pytest.raises(RuntimeError):
        xt.fused_linear(x, w)
    wrong = torch.ones(4, 2)
    with pytest.raises(RuntimeError):  # torch's own shape error
        xt.fused_linear(x, wrong)


def test_bad_activation():
    with pytest.raises(ValueError, match="activation must be one of"):
        xt.fused_linear(torch.ones(2, 3), torch.ones(4, 3), activation="swish")


@pytest.mark.cuda
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("dtype,tol", [(torch.float32, 2e-5), (torch.bfloat16, 5e-2)])
def test_cuda_forward_and_gradients_match_torch(activation, dtype, tol):
    check("cuda", dtype, activation, True, tol)


@pytest.mark.cuda
def test_cuda_uses_the_fused_kernel_and_obeys_a_pin():
    x, w, b = (t.detach() for t in leaves("cuda", torch.bfloat16))
    with xrt.explain() as log:
        fused = xt.fused_linear(x, w, b, activation="gelu_tanh")
    assert "-> cublaslt" in str(log)
    with xt.kernel_policy(linear="composite"):
        with xrt.explain() as log:
            composed = xt.fused_linear(x, w, b, activation="gelu_tanh")
    assert "-> composite" in str(log)
    torch.testing.assert_close(fused, composed, rtol=5e-2, atol=5e-2)


@pytest.mark.cuda
def test_cuda_autocast_and_compile():
    x, w, b = (t.detach() for t in leaves("cuda", torch.float32))
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y = xt.fused_linear(x, w, b, activation="gelu")
    assert y.dtype == torch.bfloat16
    compiled = torch.compile(lambda x, w, b: xt.fused_linear(x, w, b, activation="relu") * 2,
                             fullgraph=True)
    torch.testing.assert_close(compiled(x, w, b), 2 * F.relu(F.linear(x, w, b)),
                               rtol=2e-5, atol=2e-5)

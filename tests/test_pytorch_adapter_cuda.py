"""tests/test_pytorch_adapter_cuda.py: xpuruntime.pytorch on a GPU: every rerouted op and
fused kernel against torch's own result (forward and gradients, fp32 references with
fp16/bf16 tolerances), causal, masked and odd lengths; a policy toggled mid-training,
torch.compile over the custom ops, a captured training step, the allocator swap."""

import json
import math

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import xpuruntime as xrt  # noqa: E402
import xpuruntime.pytorch as xt  # noqa: E402

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(
    not torch.cuda.is_available(), reason="torch without CUDA")]

TOL = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 1e-5}


@pytest.fixture(autouse=True)
def no_policy():
    xt.clear_kernel_policy()
    yield
    xt.clear_kernel_policy()


def rel_err(x, ref):
    x, ref = x.double(), ref.double()
    return ((x - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def reference_attention(q, k, v, mask, is_causal, scale):
    """fp32 attention of the math, with torch (the reference)."""
    return F.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                          attn_mask=None if mask is None else mask.float(),
                                          is_causal=is_causal, scale=scale)


def check_against_fp32_reference(out, q, k, v, mask, causal):
    """out = attention(q, k, v) in 16 bits, and the gradients its backward gives q, k and v,
    against the same in float32 (scale 1/sqrt(head dim))."""
    dtype = q.dtype
    grad = torch.randn_like(out)
    out.backward(grad)
    got = (out, q.grad, k.grad, v.grad)
    q2, k2, v2 = (t.detach().float().requires_grad_() for t in (q, k, v))
    ref = reference_attention(q2, k2, v2, mask, causal, 1 / math.sqrt(q.shape[-1]))
    ref.backward(grad.float())
    for name, x, r in zip("o q k v".split(), got, (ref, q2.grad, k2.grad, v2.grad)):
        assert x.dtype == dtype and x.shape == r.shape
        assert torch.isfinite(x).all(), name
        assert rel_err(x, r) < TOL[dtype] * 2, (name, rel_err(x, r))


def leaves(*shape_list, dtype, grad=True):
    out = []
    for shape in shape_list:
        t = torch.randn(*shape, device="cuda", dtype=dtype)
        out.append(t.requires_grad_(grad))
    return out


ATTENTION_CASES = [
    # b, h, sq, sk, d, causal, masked
    (2, 3, 128, 128, 64, False, False),
    (2, 3, 128, 128, 128, True, False),
    (1, 2, 77, 77, 64, True, False),       # odd length, causal
    (1, 2, 100, 131, 128, False, True),    # odd lengths, additive mask, sq != sk
    (1, 2, 65, 200, 64, True, False),      # causal with sk > sq (top-left)
    (1, 1, 33, 33, 80, False, False),      # head dim padded to 128
    (2, 2, 256, 256, 32, False, True),     # head dim padded to 64, masked
    (2, 2, 640, 640, 64, True, False),     # 5 key tiles of 128: every stage refilled
    (1, 3, 333, 700, 128, False, True),    # many tiles, ragged ends, masked
]


@pytest.mark.parametrize("kernels", ["hopper", "mma4", "mma8"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", ATTENTION_CASES)
def test_flash_v2_matches_an_fp32_reference_forward_and_backward(dtype, case, kernels,
                                                                  monkeypatch):
    from xpuruntime.adapters.pytorch import _flash

    if kernels == "hopper":  # Note [flash_v2 on Hopper]
        if not _flash._is_hopper(torch.cuda.current_device()):
            pytest.skip("the wgmma kernels need compute capability 9.0")
        monkeypatch.setattr(_flash, "HOPPER_MIN_BLOCKS", 0)  # these grids are small
    else:
        monkeypatch.setattr(_flash, "HOPPER_KERNELS", False)
        monkeypatch.setattr(_flash, "FORWARD_WARPS", int(kernels[3:]))
    chosen, choose_hopper = [], _flash._use_hopper  # which kernels ran, forward and backward
    monkeypatch.setattr(_flash, "_use_hopper",
                        lambda *args: chosen.append(choose_hopper(*args)) or chosen[-1])
    b, h, sq, sk, d, causal, masked = case
    q, = leaves((b, h, sq, d), dtype=dtype)
    k, v = leaves((b, h, sk, d), (b, h, sk, d), dtype=dtype)
    mask = (torch.randn(b, 1, sq, sk, device="cuda", dtype=dtype) if masked else None)
    with xt.kernel_policy(attention="flash_v2"), xrt.explain() as log:
        out = xt.fused_attention(q, k, v, attn_mask=mask, is_causal=causal)
    assert log.kernels("attention") == ["flash_v2"]
    check_against_fp32_reference(out, q, k, v, mask, causal)
    assert len(chosen) == 2 and set(chosen) == {kernels == "hopper"}


def test_flash_v2_backward_without_queries_gives_zero_key_gradients():
    from xpuruntime.adapters.pytorch import _flash

    q = torch.empty(1, 2, 0, 64, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, 2, 8, 64, device="cuda", dtype=torch.bfloat16)
    for _ in range(2):  # fill the caching allocator's blocks of this size with non-zeros
        torch.full_like(k, 7.0)
    out, lse = _flash.flash_forward(torch, q, k, k, None, False, 0.125)
    dq, dk, dv = _flash.flash_backward(torch, out, q, k, k, None, out, lse, False, 0.125)
    assert dq.shape == q.shape
    assert torch.equal(dk, torch.zeros_like(k)) and torch.equal(dv, torch.zeros_like(k))


def test_flash_v2_takes_the_wgmma_kernels_for_grids_that_fill_the_chip():
    from xpuruntime.adapters.pytorch import _flash, _kernels

    device = torch.cuda.current_device()
    if not _flash._is_hopper(device):
        pytest.skip("the wgmma kernels need compute capability 9.0")
    sms = _kernels._multiprocessors(torch, device)
    assert not _flash._use_hopper(torch, device, sms - 1)
    assert _flash._use_hopper(torch, device, sms)


CUDNN_CASES = [
    # b, h, sq, sk, d, dv, causal, masked
    (2, 3, 128, 128, 64, 64, False, False),
    (2, 3, 128, 128, 128, 128, True, False),
    (1, 2, 77, 77, 64, 64, True, False),       # odd length, causal
    (1, 2, 100, 136, 128, 128, False, True),   # sq != sk, additive mask
    (1, 2, 65, 200, 64, 64, True, False),      # causal with sk > sq (top-left)
    (1, 1, 33, 33, 96, 96, False, False),      # head dim 96, no padding
    (2, 2, 64, 64, 64, 32, False, False),      # v's head dim differs
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", CUDNN_CASES)
def test_cudnn_matches_an_fp32_reference_forward_and_backward(dtype, case):
    b, h, sq, sk, d, dv, causal, masked = case
    q, = leaves((b, h, sq, d), dtype=dtype)
    k, v = leaves((b, h, sk, d), (b, h, sk, dv), dtype=dtype)
    mask = (torch.randn(b, 1, sq, sk, device="cuda", dtype=dtype) if masked else None)
    with xrt.explain() as log:  # the default where cuDNN loads
        out = xt.fused_attention(q, k, v, attn_mask=mask, is_causal=causal)
    assert log.kernels("attention") == ["cudnn"]
    check_against_fp32_reference(out, q, k, v, mask, causal)


def test_cudnn_boolean_mask_strided_inputs_and_the_flash_pin_agree():
    b, s, h, d = 2, 96, 4, 64
    qkv = torch.randn(b, s, 3, h, d, device="cuda", dtype=torch.bfloat16)
    q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))  # [b, h, s, d], strided
    keep = torch.rand(s, s, device="cuda") > 0.3
    keep.fill_diagonal_(True)
    with xt.kernel_policy(attention="cudnn"), xrt.explain() as log:
        out = xt.fused_attention(q, k, v, attn_mask=keep)
    assert log.kernels("attention") == ["cudnn"]
    with xt.kernel_policy(attention="flash_v2"):
        flash = xt.fused_attention(q, k, v, attn_mask=keep)
    assert rel_err(out, flash) < 2e-2


def test_dropout_and_gqa_stay_on_torch():
    q, k, v = leaves((1, 4, 64, 64), (1, 4, 64, 64), (1, 4, 64, 64), dtype=torch.float16)
    with xrt.explain() as log:
        xt.fused_attention(q, k, v, dropout_p=0.1)
        xt.fused_attention(q, k[:, :2], v[:, :2], enable_gqa=True)
    assert log.kernels("attention") == []


def test_flash_v2_boolean_mask_and_strided_inputs():
    b, s, h, d = 2, 96, 4, 64
    qkv = torch.randn(b, s, 3, h, d, device="cuda", dtype=torch.bfloat16)
    q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))  # [b, h, s, d], strided
    keep = torch.rand(s, s, device="cuda") > 0.3
    keep.fill_diagonal_(True)
    with xt.kernel_policy(attention="flash_v2"):
        out = xt.fused_attention(q, k, v, attn_mask=keep)
    ref = reference_attention(q, k, v, torch.zeros(s, s, device="cuda").masked_fill(
        ~keep, float("-inf")), False, None)
    assert rel_err(out, ref) < 2e-2


def test_torch_kernel_pin_runs_torchs_sdpa():
    q, k, v = leaves((1, 2, 64, 64), (1, 2, 64, 64), (1, 2, 64, 64), dtype=torch.float16)
    with xt.kernel_policy(attention="torch"), xrt.explain() as log:
        out = xt.fused_attention(q, k, v)
    assert log.kernels("attention") == ["torch"]
    assert torch.equal(out, F.scaled_dot_product_attention(q, k, v))


def test_attention_on_xpuruntime_tensors():
    q = xrt.from_dlpack(torch.randn(1, 2, 64, 64, device="cuda", dtype=torch.float16))
    out = xt.attention(q, q, q)
    ref = F.scaled_dot_product_attention(*(torch.from_dlpack(q),) * 3)
    assert rel_err(torch.from_dlpack(out), ref) < 4e-3


@pytest.mark.parametrize("kernel", ["flash_v2", "torch"])
@pytest.mark.parametrize("which", ["legacy", "created"])
def test_adapter_attention_kernels_keep_our_streams_order(kernel, which):
    """Note [The legacy stream in torch]: the adapter's kernels run torch work on our
    current stream, after what is queued there and before what follows, also on the legacy
    stream (torch.cuda.ExternalStream(0) would be a pool stream of torch's). The inputs are
    written behind a long sleep on our stream, into blocks that held NaN."""
    import numpy as np
    from cuda_helpers import busy

    rng = np.random.default_rng(7)
    shape = (2, 4, 6, 8)  # the native engine's small transformer: d = 8, padded to 64
    host = [rng.standard_normal(shape).astype(np.float16) for _ in range(3)]
    keep = xrt.asarray(np.tril(np.ones((6, 6), dtype=bool)), device="cuda")
    stream = xrt.cuda.Stream() if which == "created" else xrt.cuda.current_stream()
    with xrt.cuda.stream(stream):
        q, k, v = (xrt.asarray(a, device="cuda") for a in host)
        with xt.kernel_policy(attention="math"):
            want = np.asarray(xrt.nn.scaled_dot_product_attention(q, k, v, attn_mask=keep)
                              .to_device("cpu")).astype(np.float32)
        with xt.kernel_policy(attention=kernel):
            # Warm: the module loaded and torch's blocks cached on every stream it may use
            # (a load or a cudaMalloc would wait for the GPU and hide a missing order).
            for _ in range(40):
                xrt.nn.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        junk = [xrt.full(shape, float("nan"), dtype=xrt.float16, device="cuda")
                for _ in range(4)]
        del junk  # their blocks come back for the operands below
        busy(torch, stream)
        late = [xrt.multiply(t, 1.0) for t in (q, k, v)]  # written after the sleep
        with xt.kernel_policy(attention=kernel), xrt.explain() as log:
            out = xrt.nn.scaled_dot_product_attention(*late, attn_mask=keep)
        got = xrt.multiply(out, 1.0)  # read on our stream right after
        got = np.asarray(got.to_device("cpu")).astype(np.float32)
    assert log.kernels("attention") == [kernel]
    np.testing.assert_allclose(got, want, atol=2e-2, rtol=2e-2)


def test_torch_stream_of_maps_our_streams():
    from xpuruntime.adapters.pytorch._attention_ops import torch_stream_of

    legacy = torch_stream_of(xrt.cuda.default_stream())
    assert legacy.cuda_stream == 0 and legacy == torch.cuda.default_stream()
    ours = xrt.cuda.Stream()
    assert torch_stream_of(ours).cuda_stream == ours.ptr


@pytest.mark.parametrize("kernel", ["flash_v2", "torch"])
def test_adapter_attention_kernels_in_a_graph_of_ours(kernel):
    """Note [torch work on our Tensors]: captured into a graph of ours, the adapter's
    kernels get their torch memory from a pool the graph keeps. torch work on the capturing
    stream after the capture (another capture, say) gets other blocks: the replays do not
    write into them."""
    import numpy as np

    rng = np.random.default_rng(3)
    shape = (2, 4, 6, 8)  # padded to a head dim of 64 by flash_v2
    q, k, v = (xrt.asarray(rng.standard_normal(shape).astype(np.float16), device="cuda")
               for _ in range(3))
    with xt.kernel_policy(attention="math"):
        want = np.asarray(xrt.nn.scaled_dot_product_attention(q, k, v).to_device("cpu"))
    side = xrt.cuda.Stream()
    graph = xrt.cuda.CUDAGraph()
    with xt.kernel_policy(attention=kernel):
        xrt.nn.scaled_dot_product_attention(q, k, v)  # loaded before the capture
        with xrt.cuda.graph(graph, stream=side), xrt.explain() as log:
            out = xrt.nn.scaled_dot_product_attention(q, k, v)
    assert log.kernels("attention") == [kernel]
    assert graph.is_captured
    with torch.cuda.stream(torch.cuda.ExternalStream(side.ptr)):
        junk = [torch.full((n,), 7.0, dtype=torch.float16, device="cuda")
                for n in (2 * 4 * 6 * 64, 2 * 4 * 6 * 8, 2 * 4 * 6) for _ in range(16)]
    torch.cuda.synchronize()
    for _ in range(3):
        graph.replay()
    xrt.cuda.synchronize()
    assert all(bool((j == 7.0).all()) for j in junk)
    got = np.asarray(out.to_device("cpu")).astype(np.float32)
    np.testing.assert_allclose(got, want.astype(np.float32), atol=2e-2, rtol=2e-2)
    del out
    graph.reset()
    assert xrt._core._cuda._capture_kept(side, "torch_mempool", dict) is None


# (vectors a thread, backward blocks a multiprocessor, forward rows in flight: 1 in
# registers, more in a ring)
@pytest.mark.parametrize("plan", [(1, 16, 1), (2, 4, 2), (4, 1, 1), (4, 4, 3)])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("shape", [(64, 1024), (7, 33, 768), (5, 1000), (300, 8192),
                                   (2049, 256), (3, 40)])
def test_fused_layernorm_and_rmsnorm_match_torch(dtype, shape, plan, monkeypatch):
    from xpuruntime.adapters.pytorch import _kernels

    monkeypatch.setattr(_kernels, "NORM_ITERS_TARGET", plan[0])
    monkeypatch.setattr(_kernels, "NORM_FORWARD_ITERS_TARGET", plan[0])
    monkeypatch.setattr(_kernels, "NORM_BACKWARD_BLOCKS_PER_SM", plan[1])
    monkeypatch.setattr(_kernels, "NORM_STAGES", (plan[2], 2))
    n = shape[-1]
    x, = leaves(shape, dtype=dtype)
    w, b = leaves((n,), (n,), dtype=dtype)
    for rms in (False, True):
        for t in (x, w, b):
            t.grad = None
        with xt.kernel_policy(layer_norm="fused", rms_norm="fused"), xrt.explain() as log:
            y = xt.fused_rmsnorm(x, (n,), w, 1e-6) if rms else xt.fused_layernorm(
                x, (n,), w, b, 1e-5)
        assert log.kernels() == ["fused"]
        g = torch.randn_like(y)
        y.backward(g)
        got = [y, x.grad, w.grad] + ([] if rms else [b.grad])
        xs, ws, bs = (t.detach().float().requires_grad_() for t in (x, w, b))
        ref = F.rms_norm(xs, (n,), ws, 1e-6) if rms else F.layer_norm(xs, (n,), ws, bs, 1e-5)
        ref.backward(g.float())
        refs = [ref, xs.grad, ws.grad] + ([] if rms else [bs.grad])
        for i, (a, r) in enumerate(zip(got, refs)):
            assert a.dtype == dtype
            assert rel_err(a, r) < max(TOL[dtype] * 2, 2e-5), (rms, i, rel_err(a, r))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape", [(2049, 256), (33, 768), (9, 4096)])
def test_fused_norms_take_float32_weights_under_16_bit_rows(dtype, shape):
    """autocast's case: 16-bit rows, float32 parameters (Note [Rows of a norm block]): the
    weights are read as they are and their gradients come out in float32."""
    n = shape[-1]
    x, = leaves(shape, dtype=dtype)
    w, b = leaves((n,), (n,), dtype=torch.float32)
    for rms in (False, True):
        for t in (x, w, b):
            t.grad = None
        with xt.kernel_policy(layer_norm="fused", rms_norm="fused"), xrt.explain() as log:
            y = xt.fused_rmsnorm(x, (n,), w, 1e-6) if rms else xt.fused_layernorm(
                x, (n,), w, b, 1e-5)
        assert log.kernels() == ["fused"] and y.dtype == dtype
        g = torch.randn_like(y)
        y.backward(g)
        xs, ws, bs = (t.detach().double().requires_grad_() for t in (x, w, b))
        ref = F.rms_norm(xs, (n,), ws, 1e-6) if rms else F.layer_norm(xs, (n,), ws, bs, 1e-5)
        ref.backward(g.double())
        assert x.grad.dtype == dtype and w.grad.dtype == torch.float32
        assert rel_err(y, ref) < TOL[dtype] * 2
        assert rel_err(x.grad, xs.grad) < TOL[dtype] * 2
        assert rel_err(w.grad, ws.grad) < TOL[dtype] * 2
        if not rms:
            assert b.grad.dtype == torch.float32 and rel_err(b.grad, bs.grad) < TOL[dtype] * 2
        else:
            assert b.grad is None


@pytest.mark.parametrize("n", [256, 768, 8192])
def test_fused_layernorm_of_rows_far_from_zero_is_as_good_as_torchs(n):
    """Note [Row moments]: mean and variance from one merged reduction keep the deviations'
    precision on rows far from zero (1000 + 0.01 noise, float32), as torch's Welford does;
    E[x^2] - E[x]^2 would lose them all."""
    torch.manual_seed(0)
    x = 1000 + 0.01 * torch.randn(4099, n, device="cuda")
    ref = F.layer_norm(x.double(), (n,))
    with xt.kernel_policy(layer_norm="fused"), xrt.explain() as log:
        ours = xt.fused_layernorm(x, (n,))
    assert log.kernels() == ["fused"]
    theirs = F.layer_norm(x, (n,))
    assert rel_err(ours, ref) < max(2 * rel_err(theirs, ref), 1e-6), (
        rel_err(ours, ref), rel_err(theirs, ref))


def test_fused_norm_gradients_are_the_same_from_run_to_run():
    x, = leaves((4096, 512), dtype=torch.bfloat16)
    w, b = leaves((512,), (512,), dtype=torch.float32)
    g = torch.randn(4096, 512, device="cuda", dtype=torch.bfloat16)
    grads = []
    for _ in range(3):
        for t in (x, w, b):
            t.grad = None
        with xt.kernel_policy(layer_norm="fused"):
            xt.fused_layernorm(x, (512,), w, b).backward(g)
        grads.append([t.grad.clone() for t in (x, w, b)])
    for later in grads[1:]:
        assert all(torch.equal(a, c) for a, c in zip(grads[0], later))


@pytest.mark.parametrize("kernel", ["cudnn", "flash_v2", "flash_v2/hopper"])
def test_attention_outputs_and_gradients_keep_the_inputs_layout(kernel, monkeypatch):
    """q, k, v cut from one [B, S, 3, H, D] projection (a GPT block's): the output and the
    gradients are laid out as the inputs (Note [Attention outputs' layout]), and right."""
    from xpuruntime import _attention

    from xpuruntime.adapters.pytorch import _flash

    if kernel == "cudnn" and not _attention.cudnn_available():
        pytest.skip("cuDNN does not load here")
    if kernel == "flash_v2/hopper":
        if not _flash._is_hopper(torch.cuda.current_device()):
            pytest.skip("the wgmma kernels need compute capability 9.0")
        monkeypatch.setattr(_flash, "HOPPER_MIN_BLOCKS", 0)
        kernel = "flash_v2"
    else:
        monkeypatch.setattr(_flash, "HOPPER_KERNELS", False)
    torch.manual_seed(0)
    b, s, h, d = 2, 128, 4, 64
    qkv = torch.randn(b, s, 3, h, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    q, k, v = (t.transpose(1, 2) for t in qkv.unbind(2))
    seen = []  # the gradients of q, k and v as the kernel's backward gives them
    for t in (q, k, v):
        t.register_hook(seen.append)
    with xt.kernel_policy(attention=kernel), xrt.explain() as log:
        out = xt.fused_attention(q, k, v, is_causal=True)
    assert log.kernels("attention") == [kernel]
    def order(t):
        return sorted(range(t.dim()), key=lambda i: -t.stride(i))

    assert order(out) == order(q) == [0, 2, 1, 3]
    g = torch.randn_like(out)
    out.backward(g)
    ref_qkv = qkv.detach().float().requires_grad_()
    rq, rk, rv = (t.transpose(1, 2) for t in ref_qkv.unbind(2))
    ref = F.scaled_dot_product_attention(rq, rk, rv, is_causal=True)
    ref.backward(g.float())
    assert rel_err(out, ref) < TOL[torch.bfloat16] * 2
    assert rel_err(qkv.grad, ref_qkv.grad) < TOL[torch.bfloat16] * 2
    assert all(order(t) == [0, 2, 1, 3] for t in seen)


def test_rerouted_torch_ops_follow_the_policy_and_keep_gradients():
    torch.manual_seed(0)
    lin = torch.nn.Linear(256, 512, device="cuda")
    ln = torch.nn.LayerNorm(512, device="cuda")
    rms = torch.nn.RMSNorm(512, device="cuda")
    x = torch.randn(8, 16, 256, device="cuda", requires_grad=True)

    def run():
        for p in [x, *lin.parameters(), *ln.parameters(), *rms.parameters()]:
            p.grad = None
        h = rms(ln(lin(x)))
        q = h.view(8, 16, 8, 64).transpose(1, 2).to(torch.bfloat16)
        o = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        loss = o.float().square().mean() + (torch.mm(h[0], h[0].t())).mean()
        loss.backward()
        return [loss, x.grad, lin.weight.grad, lin.bias.grad, ln.weight.grad, rms.weight.grad]

    ref = run()
    xt.set_kernel_policy(matmul="cublaslt", attention="flash_v2", layer_norm="fused",
                         rms_norm="fused")
    assert xt.rerouted_ops() == ["attention", "layer_norm", "matmul", "rms_norm"]
    with xrt.explain() as log:
        got = run()
    kernels = {r.op: r.kernel for r in log.records}
    assert kernels == {"matmul": "cublaslt", "attention": "flash_v2", "layer_norm": "fused",
                       "rms_norm": "fused"}, kernels
    for a, r in zip(got, ref):
        assert rel_err(a, r) < 3e-2
    xt.clear_kernel_policy()
    with xrt.explain() as log:
        run()
    assert log.records == []


@pytest.mark.parametrize("autocast", [None, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("captured", [False, True])
def test_rerouted_linear_sums_the_bias_gradient_in_the_bias_dtype(autocast, captured):
    """Note [Bias gradients]: a rerouted nn.Linear with a bias, under autocast (bf16
    activations, float32 parameters: our matmul still takes it) or not; the bias gradient
    comes out float32 and right, eager and in a graph capture. (A capture gets leaves of its
    own: torch binds a leaf's gradient accumulation to the stream of its first backward,
    and an eager backward on the default stream would make the capture wait on it.)"""
    torch.manual_seed(0)
    lin = torch.nn.Linear(256, 768, device="cuda")
    x = torch.randn(4, 513, 256, device="cuda", requires_grad=True)
    g = torch.randn(4, 513, 768, device="cuda")

    def run():
        for t in (x, lin.weight, lin.bias):
            t.grad = None
        if autocast is None:
            y = lin(x)
        else:
            with xt.autocast(autocast):
                y = lin(x)
        y.backward(g.to(y.dtype))
        return [y, x.grad, lin.weight.grad, lin.bias.grad]

    ref_lin = torch.nn.Linear(256, 768, device="cuda", dtype=torch.float64)
    with torch.no_grad():
        ref_lin.weight.copy_(lin.weight)
        ref_lin.bias.copy_(lin.bias)
    xs = x.detach().double().requires_grad_()
    ref = ref_lin(xs)
    ref.backward(g.double())
    refs = [ref, xs.grad, ref_lin.weight.grad, ref_lin.bias.grad]
    tol = 2e-2 if autocast is not None else 1e-5
    xt.set_kernel_policy(matmul="cublaslt")
    if captured:
        graph = xt.capture_graph(run, warmup=2)
        for t in (x, lin.weight, lin.bias):
            t.grad.fill_(float("nan"))
        graph.replay()
        got = graph.outputs
    else:
        with xrt.explain() as log:
            got = run()
        assert {r.kernel for r in log.records if r.op == "matmul"} == {"cublaslt"}
    assert lin.bias.grad.dtype == torch.float32
    for a, r in zip(got, refs):
        assert rel_err(a, r) < tol, rel_err(a, r)


def test_policy_toggled_mid_training_keeps_the_loss_falling():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.LayerNorm(128),
                                torch.nn.GELU(), torch.nn.Linear(128, 1)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(256, 64, device="cuda")
    y = x[:, :1] * 2 - x[:, 1:2]
    losses = []
    for step in range(60):
        if step % 20 == 10:
            xt.set_kernel_policy(matmul="cublaslt", layer_norm="fused")
        elif step % 20 == 0:
            xt.clear_kernel_policy()
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.3 * losses[0]


def test_autocast_runs_our_kernels_in_the_autocast_dtype():
    ln = torch.nn.LayerNorm(256, device="cuda")
    lin = torch.nn.Linear(256, 256, device="cuda")
    x = torch.randn(32, 256, device="cuda")
    xt.set_kernel_policy(layer_norm="fused", matmul="cublaslt")
    with xt.autocast(torch.bfloat16), xrt.explain() as log:
        y = ln(lin(x))
    assert y.dtype == torch.bfloat16
    assert {r.op for r in log.records} == {"matmul", "layer_norm"}
    xt.clear_kernel_policy()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        ref = ln(lin(x))
    assert rel_err(y, ref) < 2e-2


def test_torch_compile_over_the_custom_ops():
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(128, device="cuda", dtype=torch.float16))

        def forward(self, x):
            h = xt.fused_rmsnorm(x, (128,), self.w, 1e-6)
            q = h.view(2, 64, 2, 64).transpose(1, 2)
            return xt.fused_attention(q, q, q, is_causal=True)

    block = Block()
    x = torch.randn(2, 64, 128, device="cuda", dtype=torch.float16, requires_grad=True)
    eager = block(x)
    eager.sum().backward()
    grad = x.grad.clone()
    x.grad = None
    compiled = torch.compile(block, fullgraph=True)
    out = compiled(x)
    out.sum().backward()
    assert rel_err(out, eager) < 1e-3
    assert rel_err(x.grad, grad) < 1e-2


def test_opcheck_of_the_custom_ops():
    q = torch.randn(1, 2, 64, 64, device="cuda", dtype=torch.float16, requires_grad=True)
    torch.library.opcheck(torch.ops.xpu.flash_attention.default, (q, q, q, None, True, 0.125),
                          test_utils=("test_schema", "test_faketensor",
                                      "test_autograd_registration"))
    torch.library.opcheck(torch.ops.xpu.cudnn_attention.default, (q, q, q, None, True, 0.125),
                          test_utils=("test_schema", "test_faketensor",
                                      "test_autograd_registration"))
    x = torch.randn(4, 256, device="cuda", requires_grad=True)
    w = torch.randn(256, device="cuda", requires_grad=True)
    torch.library.opcheck(torch.ops.xpu.fused_norm.default, (x, 256, w, None, 1e-5, False),
                          test_utils=("test_schema", "test_faketensor",
                                      "test_autograd_registration"))
    xh = x.detach().to(torch.bfloat16).requires_grad_()
    torch.library.opcheck(torch.ops.xpu.fused_norm.default, (xh, 256, w, w, 1e-5, False),
                          test_utils=("test_schema", "test_faketensor",
                                      "test_autograd_registration"))
    rows = torch.ones(4, device="cuda")
    torch.library.opcheck(torch.ops.xpu.fused_norm_backward.default,
                          (xh.detach(), xh.detach(), 256, w.detach(), w.detach(), rows, rows,
                           False, True, True),
                          test_utils=("test_schema", "test_faketensor"))


def test_graph_capture_of_a_training_step_with_our_kernels():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 128), torch.nn.LayerNorm(128)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(64, 128, device="cuda")
    target = torch.randn(64, 128, device="cuda")
    xt.set_kernel_policy(layer_norm="fused", matmul="cublaslt")

    def step():
        opt.zero_grad(set_to_none=False)
        loss = F.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        return loss

    g = xt.capture_graph(step, warmup=3)
    first = g.replay().item()
    for _ in range(20):
        g.replay()
    last = g.outputs.item()
    assert last < first


def test_allocator_swap_serves_torch_from_xpuruntime():
    before = xrt.cuda.memory_allocated()
    xt.set_allocator(True)
    try:
        t = torch.empty(1 << 20, device="cuda")
        t.fill_(1.0)
        assert t.sum().item() == float(1 << 20)
        blocks, nbytes = xt.allocator_stats()
        assert blocks >= 1 and nbytes >= 4 << 20
        assert xrt.cuda.memory_allocated() - before >= 4 << 20
    finally:
        xt.set_allocator(False)
    u = torch.empty(1 << 20, device="cuda")  # torch's own allocator again
    assert xt.allocator_stats() == (blocks, nbytes)
    assert t.sum().item() == float(1 << 20)  # still valid
    del u


def test_profile_carries_the_kernel_choices(tmp_path):
    from xpuruntime.profiler import _torch

    q = torch.randn(1, 2, 64, 64, device="cuda", dtype=torch.float16)
    a = torch.randn(64, 64, device="cuda")
    path = tmp_path / "trace.json"
    with xt.kernel_policy(attention="flash_v2", matmul="cublaslt"):
        with xt.profile(export_chrome_trace=path) as prof:
            xt.fused_attention(q, q, q)
            torch.mm(a, a)  # rerouted: one of xpuruntime's ops
    assert any("flash_v2" in d for d in prof.decisions)
    assert any(op.name == "matmul" and op.kernel == "cublaslt" for op in prof.xpuruntime.ops)
    trace = json.loads(path.read_text())
    assert any("flash_v2" in d for d in trace["xpuruntime_decisions"])
    assert any("flash_fwd" in e.get("name", "") for e in trace["traceEvents"])
    assert any(isinstance(e.get("pid"), int) and e["pid"] >= _torch.PID_OFFSET
               and e.get("name") == "matmul" for e in trace["traceEvents"])

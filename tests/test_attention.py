"""tests/test_attention.py: xrt.nn.scaled_dot_product_attention: the math kernel against a
NumPy reference on every device; the CPU's rows kernel against it (float32 and float64, odd
sizes, strided operands, masks, causal, empty and fully masked rows) and its errors; causal,
bool and additive masks, shapes of 2 to 5 dims; bad input; the policy's pins; on CUDA the
cudnn kernel against the math kernel (float16, bfloat16, odd lengths, strided inputs) and the
plan binding's checks."""

import math

import numpy as np
import pytest
import xpuruntime as xrt
from xpuruntime import _attention, _core

sdpa = xrt.nn.scaled_dot_product_attention


def reference(q, k, v, mask=None, causal=False, scale=None):
    """float64 attention with NumPy; mask bool (True: take part) or additive."""
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return p / p.sum(axis=-1, keepdims=True) @ v


def randn(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def on(device, *arrays):
    return [xrt.asarray(a, device=device) for a in arrays]


@pytest.mark.parametrize("shape", [((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4)),
                                   ((4, 6, 16), (4, 9, 16), (4, 9, 16)),
                                   ((6, 8), (5, 8), (5, 3)),
                                   ((2, 2, 2, 3, 8), (2, 2, 2, 4, 8), (2, 2, 2, 4, 8))])
@pytest.mark.parametrize("causal", [False, True])
def test_math_kernel_matches_numpy(device, shape, causal):
    rng = np.random.default_rng(0)
    q, k, v = (randn(rng, s) for s in shape)
    with xrt.kernel_policy(xrt.KernelPolicy(attention="math")), xrt.explain() as log:
        out = sdpa(*on(device, q, k, v), is_causal=causal)
    assert log.kernels("attention") == ["math"]
    assert out.shape == shape[0][:-1] + shape[2][-1:]
    np.testing.assert_allclose(np.asarray(xrt.asarray(out, device="cpu")),
                               reference(q, k, v, causal=causal), rtol=1e-4, atol=1e-5)


def test_masks_and_scale(device):
    rng = np.random.default_rng(1)
    q, k, v = randn(rng, (2, 3, 6, 8)), randn(rng, (2, 3, 10, 8)), randn(rng, (2, 3, 10, 8))
    keep = rng.random((6, 10)) > 0.4
    keep[:, 0] = True  # no row fully masked
    additive = randn(rng, (3, 1, 10))
    xq, xk, xv = on(device, q, k, v)
    for mask in (keep, additive):
        out = sdpa(xq, xk, xv, attn_mask=xrt.asarray(mask, device=device), scale=0.3)
        np.testing.assert_allclose(np.asarray(xrt.asarray(out, device="cpu")),
                                   reference(q, k, v, mask=mask, scale=0.3), rtol=1e-4,
                                   atol=1e-5)


def test_float64_and_a_fully_masked_row_gives_nan():
    rng = np.random.default_rng(2)
    q, k, v = randn(rng, (1, 3, 4), np.float64), randn(rng, (1, 5, 4), np.float64), \
        randn(rng, (1, 5, 4), np.float64)
    keep = np.ones((3, 5), dtype=bool)
    keep[1] = False
    out = np.asarray(sdpa(*on("cpu", q, k, v), attn_mask=xrt.asarray(keep)))
    assert out.dtype == np.float64
    assert np.isnan(out[0, 1]).all()
    np.testing.assert_allclose(out[0, [0, 2]], reference(q, k, v)[0, [0, 2]], rtol=1e-12)


def test_bad_input_gives_clear_errors():
    x = xrt.ones((2, 4, 8))
    with pytest.raises(TypeError, match="query must be an xpuruntime Tensor"):
        sdpa(np.ones((2, 4, 8)), x, x)
    with pytest.raises(TypeError, match="one real floating dtype"):
        sdpa(x, x, xrt.ones((2, 4, 8), dtype=xrt.float32))
    with pytest.raises(TypeError, match="one real floating dtype"):
        sdpa(*(xrt.ones((2, 4, 8), dtype=xrt.int32),) * 3)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        sdpa(xrt.ones((8,)), x, x)
    with pytest.raises(ValueError, match="same leading sizes"):
        sdpa(x, xrt.ones((3, 4, 8)), xrt.ones((3, 4, 8)))
    with pytest.raises(ValueError, match=r"must be \(\.\.\., Skv, 8\)"):
        sdpa(x, xrt.ones((2, 4, 6)), x)
    with pytest.raises(ValueError, match="not both"):
        sdpa(x, x, x, attn_mask=xrt.ones((4, 4), dtype=xrt.bool), is_causal=True)
    with pytest.raises(ValueError, match="does not broadcast"):
        sdpa(x, x, x, attn_mask=xrt.ones((3, 4), dtype=xrt.bool))
    with pytest.raises(TypeError, match="bool or floating"):
        sdpa(x, x, x, attn_mask=xrt.ones((4, 4), dtype=xrt.int32))
    with pytest.raises(TypeError, match="attn_mask must be a Tensor"):
        sdpa(x, x, x, attn_mask=np.ones((4, 4)))
    with pytest.raises(TypeError, match="scale must be a real number"):
        sdpa(x, x, x, scale="0.5")
    out = sdpa(x, x, x)  # the session goes on after the errors
    np.testing.assert_allclose(np.asarray(out), np.ones((2, 4, 8)), rtol=1e-6)


def test_kernels_are_registered_for_both_devices():
    kernels = {(r["name"], r["device"]) for r in xrt.list_kernels("attention")}
    assert {("math", "cpu"), ("rows", "cpu"), ("math", "cuda"), ("cudnn", "cuda")} <= kernels
    assert {r["name"] for r in xrt.list_kernels("attention_rows")} >= {"native"}


ROWS_CASES = [  # (B, H, Sq, Skv, D, Dv): tile edges on every axis
    (1, 4, 64, 64, 64, 64), (2, 3, 7, 13, 5, 9), (1, 1, 1, 1, 1, 1), (1, 2, 100, 33, 40, 70),
    (3, 1, 5, 70, 16, 8), (1, 2, 33, 1, 3, 2), (2, 5, 9, 40, 64, 64), (2, 3, 7, 5, 1, 6)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", ROWS_CASES)
@pytest.mark.parametrize("mode", ["plain", "causal", "additive", "keep"])
def test_rows_kernel_matches_numpy(dtype, case, mode):
    b, h, sq, skv, d, dv = case
    rng = np.random.default_rng(sum(case))
    q, k, v = randn(rng, (b, h, sq, d), dtype), randn(rng, (b, h, skv, d), dtype), \
        randn(rng, (b, h, skv, dv), dtype)
    mask = None
    if mode == "additive":
        mask = randn(rng, (h, 1, skv), dtype)
    elif mode == "keep":
        mask = rng.random((sq, skv)) > 0.3
        mask[:, 0] = True
    with xrt.explain() as log:
        out = sdpa(*on("cpu", q, k, v), is_causal=mode == "causal", scale=0.7,
                   attn_mask=None if mask is None else xrt.asarray(mask))
    assert log.kernels("attention") == ["rows"]
    assert out.dtype == xrt.asarray(q).dtype and out.shape == (b, h, sq, dv)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(out), reference(q, k, v, mask=mask, scale=0.7,
                                                          causal=mode == "causal"),
                               rtol=tol, atol=tol)


def test_rows_kernel_reads_strided_heads_and_agrees_with_math():
    # Heads split from a joint projection [B, S, 3 * H * D], as an exported model gives them.
    rng = np.random.default_rng(4)
    x = xrt.asarray(randn(rng, (2, 24, 3 * 4 * 16)))

    def heads(part):
        t = x[..., part * 64:(part + 1) * 64]
        return xrt.permute_dims(xrt.reshape(t, (2, 24, 4, 16)), (0, 2, 1, 3))

    q, k, v = heads(0), heads(1), heads(2)
    vt = xrt.matrix_transpose(xrt.asarray(np.ascontiguousarray(
        np.swapaxes(np.asarray(v), -1, -2))))  # value's last stride is not 1
    for causal in (False, True):
        with xrt.explain() as log:
            rows = sdpa(q, k, vt, is_causal=causal)
        with xrt.kernel_policy(attention="math"):
            composed = sdpa(q, k, vt, is_causal=causal)
        assert log.kernels("attention") == ["rows"]
        np.testing.assert_allclose(np.asarray(rows), np.asarray(composed), rtol=2e-5,
                                   atol=2e-6)
        np.testing.assert_allclose(np.asarray(rows), reference(
            np.asarray(q), np.asarray(k), np.asarray(v), causal=causal), rtol=2e-5, atol=2e-6)


def test_rows_output_takes_the_query_layout_so_merging_heads_is_a_view():
    rng = np.random.default_rng(6)
    x = xrt.asarray(randn(rng, (2, 10, 3 * 32)))
    q, k, v = (xrt.permute_dims(xrt.reshape(x[..., i * 32:(i + 1) * 32], (2, 10, 4, 8)),
                                (0, 2, 1, 3)) for i in range(3))
    out = sdpa(q, k, v)
    assert out.shape == (2, 4, 10, 8) and out.strides == (320, 8, 32, 1)
    merged = xrt.reshape(xrt.permute_dims(out, (0, 2, 1, 3)), (2, 10, 32))
    assert merged._data_ptr() == out._data_ptr()
    np.testing.assert_allclose(np.asarray(out), reference(np.asarray(q), np.asarray(k),
                                                          np.asarray(v)), rtol=2e-5, atol=2e-6)
    dense = sdpa(*on("cpu", *(np.ascontiguousarray(np.asarray(t)) for t in (q, k, v))))
    assert dense.strides == (320, 80, 8, 1)


def test_rows_kernel_edges_nan_rows_empty_and_half():
    rng = np.random.default_rng(5)
    q, k, v = randn(rng, (1, 2, 3, 4)), randn(rng, (1, 2, 5, 4)), randn(rng, (1, 2, 5, 6))
    keep = np.ones((3, 5), dtype=bool)
    keep[2] = False
    out = np.asarray(sdpa(*on("cpu", q, k, v), attn_mask=xrt.asarray(keep)))
    assert np.isnan(out[:, :, 2]).all() and not np.isnan(out[:, :, :2]).any()
    none = sdpa(*on("cpu", q[:, :, :0], k, v))  # no queries
    assert none.shape == (1, 2, 0, 6)
    nokeys = np.asarray(sdpa(*on("cpu", q, k[:, :, :0], v[:, :, :0])))
    assert nokeys.shape == (1, 2, 3, 6) and np.isnan(nokeys).all()
    with xrt.explain() as log:  # float16 is the math kernel's on the CPU
        half = sdpa(*on("cpu", *(t.astype(np.float16) for t in (q, k, v))))
    assert log.kernels("attention") == ["math"] and half.dtype == xrt.float16


def test_rows_kernel_long_keys_take_a_scratch_of_their_own():
    # Above 1 MB of scratch (here 1.9 MB: 5000 float64 keys) a call allocates its own.
    rng = np.random.default_rng(7)
    q, k, v = (randn(rng, s, np.float64) for s in ((1, 2, 40, 16), (1, 2, 5000, 16),
                                                   (1, 2, 5000, 8)))
    for causal in (False, True):
        out = sdpa(*on("cpu", q, k, v), is_causal=causal)
        np.testing.assert_allclose(np.asarray(out), reference(q, k, v, causal=causal),
                                   rtol=1e-12, atol=1e-12)


def test_rows_kernel_errors():
    q = xrt.ones((1, 2, 3, 4), dtype=xrt.float32)
    o = xrt.empty((1, 2, 3, 4), dtype=xrt.float32)
    with pytest.raises(ValueError, match="4-D"):
        _core._attention_rows(xrt.ones((2, 3, 4)), q, q, None, False, 1.0, o)
    with pytest.raises(TypeError, match="float64, the query float32"):
        _core._attention_rows(q, xrt.ones((1, 2, 3, 4), dtype=xrt.float64), q, None, False, 1.0,
                              o)
    with pytest.raises(TypeError, match="float32 or float64"):
        h = xrt.ones((1, 2, 3, 4), dtype=xrt.float16)
        _core._attention_rows(h, h, h, None, False, 1.0, xrt.empty_like(h))
    with pytest.raises(ValueError, match="do not fit"):
        _core._attention_rows(q, xrt.ones((1, 2, 5, 4), dtype=xrt.float32),
                              xrt.ones((1, 2, 6, 4), dtype=xrt.float32), None, False, 1.0, o)
    with pytest.raises(ValueError, match="mask must be"):
        _core._attention_rows(q, q, q, xrt.ones((1, 2, 3, 2), dtype=xrt.float32), False, 1.0,
                              o)
    bad_outs = [xrt.empty((1, 2, 3, 5), dtype=xrt.float32),  # shape
                xrt.empty((1, 2, 3, 4), dtype=xrt.float64),  # dtype
                xrt.matrix_transpose(xrt.empty((1, 2, 4, 3), dtype=xrt.float32)),  # last stride
                xrt.broadcast_to(xrt.empty((1, 1, 3, 4), dtype=xrt.float32), (1, 2, 3, 4))]
    for bad in bad_outs:
        with pytest.raises(ValueError, match="out must be"):
            _core._attention_rows(q, q, q, None, False, 1.0, bad)
    with pytest.raises(ValueError, match="must be 4-D"):
        _core._attention_output(xrt.ones((2, 3, 4)), 4)
    np.testing.assert_allclose(np.asarray(_core._attention_rows(q, q, q, None, False, 1.0, o)),
                               np.ones((1, 2, 3, 4)))  # the session goes on


def test_cudnn_plan_checks_its_spec_before_loading_cudnn():
    plan = _core._cuda.cudnn_attention_plan
    layout = [1, 2, 16, 64, 2048, 1024, 64, 1]
    with pytest.raises(ValueError, match="8 numbers per tensor"):
        plan(False, xrt.float16, 0, False, False, False, layout[:7])
    with pytest.raises(TypeError, match="float16 or bfloat16"):
        plan(False, xrt.float32, 0, False, False, False, layout * 4)
    with pytest.raises(ValueError, match="expected 4 tensor layouts"):
        plan(False, xrt.float16, 0, False, False, False, layout * 3)
    with pytest.raises(ValueError, match="v has sizes"):
        plan(False, xrt.float16, 0, False, False, False,
             layout * 2 + [1, 2, 8, 64, 1024, 512, 64, 1] + layout)
    with pytest.raises(ValueError, match="last dimension must be contiguous"):
        plan(False, xrt.float16, 0, False, False, False,
             layout * 3 + [1, 2, 16, 64, 2048, 1024, 1, 16])
    with pytest.raises(ValueError, match="no plan"):
        _core._cuda.cudnn_attention_run(10**6, [16] * 4, 0, 0, 1.0, 0)


@pytest.mark.skipif(_attention.cudnn_available(), reason="cuDNN is installed here")
def test_without_cudnn_the_kernel_declines_and_says_what_to_install():
    with pytest.raises(xrt.CudaError, match="pip install"):
        _core._cuda.cudnn_version()
    assert not _attention.cudnn_available()


# ---- CUDA ---------------------------------------------------------------------------------

needs_cudnn = pytest.mark.skipif(not _attention.cudnn_available(), reason="cuDNN not found")

CUDNN_CASES = [
    # lead, sq, skv, d, dv, causal, mask
    ((2, 3), 128, 128, 64, 64, False, None),
    ((2, 3), 128, 128, 128, 128, True, None),
    ((1, 2), 77, 77, 64, 64, True, None),          # odd length, causal
    ((1, 2), 100, 136, 128, 128, False, "float"),  # sq != skv, additive mask
    ((1, 2), 65, 200, 64, 64, True, None),         # causal with skv > sq (top-left)
    ((2,), 33, 40, 96, 32, False, "bool"),         # 3-D, head dims 96 and 32, bool mask
    ((1, 1), 256, 256, 256, 256, False, None),     # the largest head dim
    ((2, 4), 16, 16, 16, 16, True, None),          # small head dims
    ((2, 4), 24, 24, 8, 8, False, "bool"),
]


@pytest.mark.cuda
@needs_cudnn
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", CUDNN_CASES)
def test_cudnn_kernel_matches_a_float64_reference(dtype, case):
    lead, sq, skv, d, dv, causal, masked = case
    rng = np.random.default_rng(3)
    q, k, v = randn(rng, lead + (sq, d)), randn(rng, lead + (skv, d)), \
        randn(rng, lead + (skv, dv))
    mask = None
    if masked == "float":
        mask = randn(rng, (1, sq, skv))
    elif masked == "bool":
        mask = rng.random((sq, skv)) > 0.3
        mask[:, 0] = True
    cast = getattr(xrt, dtype)
    xq, xk, xv = (xrt.astype(t, cast) for t in on("cuda", q, k, v))
    xm = None if mask is None else xrt.asarray(mask, device="cuda")
    with xrt.explain() as log:
        out = sdpa(xq, xk, xv, attn_mask=xm, is_causal=causal)
    assert log.kernels("attention") == ["cudnn"]
    assert not _attention._cudnn_refused  # cuDNN built a plan: no math fallback ran
    assert out.dtype == cast and out.shape == lead + (sq, dv)
    ref = reference(*(np.asarray(xrt.asarray(xrt.astype(t, xrt.float32), device="cpu"))
                      for t in (xq, xk, xv)), mask=mask, causal=causal)
    got = np.asarray(xrt.asarray(xrt.astype(out, xrt.float32), device="cpu"))
    tol = 4e-3 if dtype == "float16" else 2.5e-2
    assert np.abs(got - ref).max() < tol * max(1.0, np.abs(ref).max())


@pytest.mark.cuda
@needs_cudnn
@pytest.mark.parametrize("failures", [2, 3])
def test_a_cudnn_plan_failure_that_may_pass_falls_back_for_that_call(failures, monkeypatch):
    """Note [cuDNN plan failures]: a CudaError from the planner (memory it could not
    allocate) runs the math kernel for that call only; cuDNN is tried again on the next,
    and declined for good once such failures reach _CUDNN_TRIES."""
    monkeypatch.setattr(_attention, "_cudnn_plans", {})
    monkeypatch.setattr(_attention, "_cudnn_refused", set())
    monkeypatch.setattr(_attention, "_cudnn_failures", {})
    real, left = _core._cuda.cudnn_attention_plan, [failures]

    def planner(*args):
        if left[0]:
            left[0] -= 1
            raise xrt.CudaError("cuDNN could not build a plan (a failure that may pass)")
        return real(*args)

    monkeypatch.setattr(_core._cuda, "cudnn_attention_plan", planner)
    rng = np.random.default_rng(9)
    arrays = [randn(rng, (1, 2, 40, 32)) for _ in range(3)]
    q, k, v = (xrt.astype(t, xrt.float16) for t in on("cuda", *arrays))
    want = reference(*(np.asarray(xrt.astype(t, xrt.float32).to_device("cpu"))
                       for t in (q, k, v)), causal=True)
    for call in range(failures + 1):
        with xrt.explain() as log:
            out = sdpa(q, k, v, is_causal=True)
        got = np.asarray(xrt.astype(out, xrt.float32).to_device("cpu"))
        np.testing.assert_allclose(got, want, atol=3e-3, rtol=3e-3)
        if call < failures:  # cuDNN was chosen; its planner failed and math ran
            assert log.kernels("attention") == ["cudnn"] and not _attention._cudnn_plans
    declined = failures >= _attention._CUDNN_TRIES
    assert bool(_attention._cudnn_refused) == declined
    # After two failures the third call built a plan; after three cuDNN declines the call.
    assert (log.kernels("attention") == ["cudnn"]) != declined
    assert bool(_attention._cudnn_plans) != declined
    assert bool(_attention._cudnn_failures) == declined  # a built plan clears the count


@pytest.mark.cuda
@needs_cudnn
def test_cudnn_strided_inputs_and_the_math_pin_agree():
    rng = np.random.default_rng(4)
    qkv = xrt.astype(xrt.asarray(randn(rng, (2, 96, 3, 4, 64)), device="cuda"), xrt.bfloat16)
    q, k, v = (xrt.permute_dims(qkv[:, :, i], (0, 2, 1, 3)) for i in range(3))  # strided
    with xrt.explain() as log:
        fast = sdpa(q, k, v, is_causal=True)
    with xrt.kernel_policy(xrt.KernelPolicy(attention="math")):
        slow = sdpa(q, k, v, is_causal=True)
    assert log.kernels("attention") == ["cudnn"]
    diff = xrt.max(xrt.abs(xrt.astype(fast, xrt.float32) - xrt.astype(slow, xrt.float32)))
    assert float(diff) < 3e-2
    # The output takes the query's layout ([batch, tokens, heads, dim] in memory), as
    # PyTorch's: merging the heads back is a view.
    assert fast.strides == (96 * 4 * 64, 64, 4 * 64, 1)
    assert xrt.reshape(xrt.permute_dims(fast, (0, 2, 1, 3)), (2, 96, 256))._data_ptr() == \
        fast._data_ptr()
    dense = sdpa(*(xrt.asarray(t, copy=True) for t in (q, k, v)), is_causal=True)
    assert dense._is_contiguous()
    assert float(xrt.max(xrt.abs(xrt.astype(dense, xrt.float32) -
                                 xrt.astype(fast, xrt.float32)))) < 3e-2


@pytest.mark.cuda
def test_float32_on_cuda_takes_the_math_kernel():
    x = xrt.ones((1, 2, 16, 64), device="cuda")
    with xrt.explain() as log:
        out = sdpa(x, x, x)
    assert log.kernels("attention") == ["math"]
    assert float(xrt.max(xrt.abs(out - 1))) < 1e-6


def test_a_profile_times_attention_as_an_op_with_its_kernel_and_inner_ops():
    q = xrt.asarray(np.random.default_rng(3).standard_normal((1, 2, 8, 4)).astype(np.float32))
    with xrt.kernel_policy(attention="math"), xrt.profiler.profile() as prof:
        xrt.nn.scaled_dot_product_attention(q, q, q, is_causal=True)
    ops = prof.ops
    assert [(o.name, o.kernel, o.depth) for o in ops[:1]] == [("attention", "math", 0)]
    assert ops[0].input_shapes[0] == (1, 2, 8, 4)
    inner = [o.name for o in ops[1:]]
    assert "softmax" in inner and inner.count("matmul") == 2
    assert all(o.depth == 1 for o in ops[1:])
    assert all(o.start_ns >= ops[0].start_ns and o.end_ns <= ops[0].end_ns for o in ops[1:])
    rows = {r.key: r for r in prof.summary()}
    assert rows["attention"].count == 1 and rows["softmax"].count == 1
    assert "100.0%" in str(prof.summary()).splitlines()[2]  # the outermost op is the total


@pytest.mark.cuda
@needs_cudnn
def test_cudnn_calls_of_a_seen_layout_reuse_its_plan_and_agree():
    rng = np.random.default_rng(6)
    qkv = xrt.astype(xrt.asarray(randn(rng, (2, 64, 3, 4, 64)), device="cuda"), xrt.float16)
    q, k, v = (xrt.permute_dims(qkv[:, :, i], (0, 2, 1, 3)) for i in range(3))
    _attention._cudnn_plans.clear()
    first = sdpa(q, k, v)
    assert len(_attention._cudnn_plans) == 1
    again = sdpa(q, k, v)
    assert len(_attention._cudnn_plans) == 1 and again.strides == first.strides
    assert float(xrt.max(xrt.abs(xrt.astype(again, xrt.float32) -
                                 xrt.astype(first, xrt.float32)))) == 0.0
    # A start off the 16-byte grid copies the operand and leaves the kept plans alone.
    flat = xrt.reshape(xrt.astype(xrt.asarray(randn(rng, (2 * 4 * 64 * 64 + 1,)),
                                              device="cuda"), xrt.float16), (-1,))
    odd = xrt.reshape(flat[1:], (2, 4, 64, 64))
    with xrt.kernel_policy(xrt.KernelPolicy(attention="math")):
        want = sdpa(odd, k, v)
    got = sdpa(odd, k, v)
    assert float(xrt.max(xrt.abs(xrt.astype(got, xrt.float32) -
                                 xrt.astype(want, xrt.float32)))) < 3e-2

"""tests/test_nn_rows.py: the row ops of xpuruntime.nn (softmax, log_softmax, layer_norm,
rms_norm) on CPU and CUDA against NumPy in float64: every floating dtype, each axis, long and
short rows, strided inputs, with and without weight and bias, NaN and infinities, empty and
0-d inputs, the fused kernels named in explain, and clear errors."""


import numpy as np
import pytest
import xpuruntime as xrt
from xpuruntime import nn

TOLERANCE = {"float64": 1e-12, "float32": 2e-6, "float16": 2e-3, "bfloat16": 2e-2}


def host(t):
    return np.asarray(xrt.astype(t.to_device("cpu"), xrt.float64))


def ref_softmax(x, axis, log=False):
    shifted = x - x.max(axis=axis, keepdims=True)
    total = np.exp(shifted).sum(axis=axis, keepdims=True)
    return shifted - np.log(total) if log else np.exp(shifted) / total


def ref_norm(x, ndim, w=None, b=None, eps=1e-5, rms=False):
    axes = tuple(range(x.ndim - ndim, x.ndim))
    if rms:
        y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    else:
        mean = x.mean(axis=axes, keepdims=True)
        y = (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def operand(shape, dtype, device, seed=0, scale=3.0):
    x = np.random.default_rng(seed).standard_normal(shape) * scale
    t = xrt.astype(xrt.asarray(x, device=device), getattr(xrt, dtype))
    return t, host(t)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape,axis", [((4, 7), -1), ((3, 5, 33), 1), ((2, 3, 4), 0),
                                        ((1000,), 0), ((5, 3000), -1), ((6, 1), -1)])
def test_softmax_matches_numpy(device, log, dtype, shape, axis):
    t, x = operand(shape, dtype, device)
    got = (nn.log_softmax if log else nn.softmax)(t, axis=axis)
    assert got.shape == t.shape and got.dtype == t.dtype and got.device == t.device
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(host(got), ref_softmax(x, axis, log), rtol=tol,
                               atol=tol * (8 if log else 1))


def test_softmax_of_strided_views_and_extremes(device):
    x = np.random.default_rng(1).standard_normal((8, 40))
    t = xrt.asarray(x, device=device)
    np.testing.assert_allclose(host(nn.softmax(t[::2, ::3])), ref_softmax(x[::2, ::3], -1),
                               rtol=1e-12)
    np.testing.assert_allclose(host(nn.softmax(t.mT, axis=0)), ref_softmax(x.T, 0), rtol=1e-12)
    big = np.array([[1000.0, 0.0, -1000.0], [-np.inf, 0.0, 1.0]])
    got = host(nn.softmax(xrt.asarray(big, device=device)))
    np.testing.assert_allclose(got, ref_softmax(big, -1), rtol=1e-12, atol=1e-300)
    special = np.array([[np.nan, 1.0, 2.0], [-np.inf, -np.inf, -np.inf]])
    assert np.isnan(host(nn.softmax(xrt.asarray(special, device=device)))).all()
    assert host(nn.softmax(xrt.asarray(2.5, device=device))) == 1.0
    assert host(nn.log_softmax(xrt.asarray(2.5, device=device))) == 0.0
    empty = nn.softmax(xrt.zeros((0, 4), device=device))
    assert empty.shape == (0, 4)


@pytest.mark.parametrize("rms,affine", [(False, "none"), (False, "weight"), (False, "both"),
                                         (True, "none"), (True, "weight")])
@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape,ndim", [((4, 16), 1), ((2, 3, 300), 1), ((2, 6, 5), 2),
                                        ((3, 4097), 1), ((7,), 1)])
def test_norms_match_numpy(device, rms, affine, dtype, shape, ndim):
    t, x = operand(shape, dtype, device, scale=2.0)
    rng = np.random.default_rng(2)
    trailing = shape[len(shape) - ndim:]
    w = b = None
    ws = bs = None
    if affine in ("weight", "both"):
        ws = xrt.astype(xrt.asarray(rng.standard_normal(trailing), device=device), t.dtype)
        w = host(ws)
    if affine == "both":
        bs = xrt.astype(xrt.asarray(rng.standard_normal(trailing), device=device), t.dtype)
        b = host(bs)
    if rms:
        got = nn.rms_norm(t, trailing, ws, eps=1e-5)
    else:
        got = nn.layer_norm(t, trailing, ws, bs, eps=1e-5)
    assert got.shape == t.shape and got.dtype == t.dtype and got.device == t.device
    tol = TOLERANCE[dtype] * 4
    np.testing.assert_allclose(host(got), ref_norm(x, ndim, w, b, 1e-5, rms), rtol=tol,
                               atol=tol)


def test_norms_of_views_promotion_and_defaults(device):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 10)) + 50.0  # a large mean: the variance is of deviations
    t = xrt.asarray(x, device=device)
    np.testing.assert_allclose(host(nn.layer_norm(t[:, ::2], 5)), ref_norm(x[:, ::2], 1),
                               rtol=1e-10, atol=1e-10)
    w32 = xrt.asarray(rng.standard_normal(10).astype(np.float32), device=device)
    got = nn.layer_norm(xrt.astype(t, xrt.float16), (10,), w32)
    assert got.dtype == xrt.float32  # promoted with the weight
    eps32 = float(np.finfo(np.float32).eps)
    got = nn.rms_norm(xrt.astype(t, xrt.float32), 10)
    np.testing.assert_allclose(host(got), ref_norm(x, 1, eps=eps32, rms=True), rtol=1e-5)
    assert nn.layer_norm(xrt.zeros((0, 3), device=device), 3).shape == (0, 3)


def test_explain_names_the_fused_kernel(device):
    t = xrt.ones((4, 8), device=device)
    for fn, op in ((lambda: nn.softmax(t), "softmax"), (lambda: nn.log_softmax(t), "log_softmax"),
                   (lambda: nn.layer_norm(t, 8), "layer_norm"),
                   (lambda: nn.rms_norm(t, 8), "rms_norm")):
        with xrt.explain() as log:
            fn()
        assert op in [r.op for r in log.records]


def test_bad_arguments_raise(device):
    t = xrt.ones((2, 3), device=device)
    with pytest.raises(IndexError, match="axis 2"):
        nn.softmax(t, axis=2)
    with pytest.raises(TypeError, match="axis must be an integer"):
        nn.softmax(t, axis=1.5)
    with pytest.raises(TypeError, match="real floating"):
        nn.softmax(xrt.ones((2, 3), dtype=xrt.int32, device=device))
    with pytest.raises(ValueError, match="trailing dimensions"):
        nn.layer_norm(t, (2,))
    with pytest.raises(ValueError, match="trailing dimensions"):
        nn.layer_norm(t, (1, 2, 3))
    with pytest.raises(ValueError, match="weight must have the normalised shape"):
        nn.layer_norm(t, 3, xrt.ones((4,), device=device))
    with pytest.raises(ValueError, match="bias must have the normalised shape"):
        nn.layer_norm(t, 3, None, xrt.ones((2,), device=device))
    with pytest.raises(TypeError, match="eps must be a real number"):
        nn.layer_norm(t, 3, eps="small")
    with pytest.raises(TypeError, match="normalized_shape"):
        nn.rms_norm(t, "3")
    with pytest.raises(TypeError, match="real floating"):
        nn.layer_norm(xrt.ones((2, 3), dtype=xrt.bool, device=device), 3)


@pytest.mark.cuda
def test_cuda_agrees_with_cpu_on_long_rows():
    x = np.random.default_rng(4).standard_normal((3, 20000)).astype(np.float32)
    cpu, gpu = xrt.asarray(x), xrt.asarray(x, device="cuda:0")
    for fn in (nn.softmax, nn.log_softmax, lambda v: nn.layer_norm(v, 20000),
               lambda v: nn.rms_norm(v, 20000)):
        np.testing.assert_allclose(host(fn(gpu)), host(fn(cpu)), rtol=2e-5, atol=2e-6)


@pytest.mark.cuda
def test_the_pytorch_adapters_kernels_leave_xpuruntimes_calls_alone():
    # The adapter registers kernels under the same op names (one policy steers both); they
    # must not take xrt.nn's calls, whose weight, bias and eps they would not honour.
    pytest.importorskip("torch")
    import xpuruntime.adapters.pytorch  # noqa: F401  (registers its kernels)
    rng = np.random.default_rng(5)
    x, w, b = rng.standard_normal((4, 64)), rng.standard_normal(64), rng.standard_normal(64)
    dev = "cuda:0"
    xs, ws, bs = (xrt.asarray(a.astype(np.float32), device=dev) for a in (x, w, b))
    with xrt.explain() as log:
        ln = nn.layer_norm(xs, 64, ws, bs, eps=1e-3)
        rms = nn.rms_norm(xs, 64, ws, eps=1e-3)
    assert [r.kernel for r in log.records if r.op in ("layer_norm", "rms_norm")] == ["nvrtc"] * 2
    np.testing.assert_allclose(host(ln), ref_norm(x, 1, w, b, 1e-3), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(host(rms), ref_norm(x, 1, w, None, 1e-3, rms=True), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("dtype", list(TOLERANCE))
def test_add_norm_is_the_add_then_the_norm(device, rms, dtype):
    t, x = operand((3, 5, 40), dtype, device, seed=8)
    u, _ = operand((3, 5, 40), dtype, device, seed=9)
    w = xrt.astype(xrt.asarray(np.linspace(0.5, 1.5, 40), device=device), t.dtype)
    b = xrt.astype(xrt.asarray(np.linspace(-1, 1, 40), device=device), t.dtype)
    if rms:
        y, total = nn.add_rms_norm(t, u, 40, w, eps=1e-5)
        expected = nn.rms_norm(xrt.add(t, u), 40, w, eps=1e-5)
    else:
        y, total = nn.add_layer_norm(t, u, 40, w, b, eps=1e-5)
        expected = nn.layer_norm(xrt.add(t, u), 40, w, b, eps=1e-5)
    # The sum rounds as the Add does, and the norm reads it: the two ops' results exactly.
    assert np.array_equal(host(total), host(xrt.add(t, u)))
    assert np.array_equal(host(y), host(expected))


def test_add_norm_errors(device):
    t = xrt.ones((2, 3), device=device)
    with pytest.raises(ValueError, match="residual must have x's shape"):
        nn.add_layer_norm(t, xrt.ones((3,), device=device), 3)
    with pytest.raises(ValueError, match="trailing dimensions"):
        nn.add_rms_norm(t, t, 2)


def test_softmax_far_below_the_max_and_masked(device):
    # Masked (-inf) and very small scores: exactly 0 where exp underflows, the subnormal
    # values where it does not, as exp(x - max) / sum gives them.
    x = np.array([[0.0, -90.0, -100.0, -110.0, -np.inf, 1.0]], np.float32)
    got = host(nn.softmax(xrt.asarray(x, device=device)))
    expected = ref_softmax(x.astype(np.float64), -1).astype(np.float32)
    assert got[0, 3] == 0 and got[0, 4] == 0
    assert got[0, 1] > 0 and got[0, 2] > 0
    np.testing.assert_allclose(got, expected, rtol=1e-2, atol=0)
    causal = np.random.default_rng(10).standard_normal((2, 16, 16)).astype(np.float32)
    causal[:, np.triu(np.ones((16, 16), bool), 1)] = -np.inf
    np.testing.assert_allclose(host(nn.softmax(xrt.asarray(causal, device=device))),
                               ref_softmax(causal.astype(np.float64), -1), rtol=2e-6,
                               atol=1e-7)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_rows_of_a_view_off_the_16_byte_grid(device, dtype):
    # Note in cpp/kernels/xrt/norm.cuh: rows on 16-byte boundaries move 16 bytes per access;
    # a contiguous view starting one element in takes the one-element path. Same values.
    flat = np.random.default_rng(7).standard_normal(1 + 6 * 64)
    t = xrt.astype(xrt.asarray(flat, device=device), getattr(xrt, dtype))
    view = xrt.reshape(t[1:], (6, 64))
    copy = xrt.asarray(view, copy=True)
    w = xrt.astype(xrt.asarray(np.linspace(0.5, 1.5, 64), device=device), t.dtype)
    tol = TOLERANCE[dtype]
    for f in (nn.softmax, nn.log_softmax, lambda v: nn.layer_norm(v, 64, w, w),
              lambda v: nn.rms_norm(v, 64, w)):
        np.testing.assert_allclose(host(f(view)), host(f(copy)), rtol=tol, atol=tol)

"""tests/test_nn_linear.py: xpuruntime.nn.linear on CPU and CUDA: x @ weight.T + bias with each
activation against NumPy in float64, every floating dtype, batch shapes and 1-D inputs,
strided operands, empty sums, promotion, the fused cuBLASLt kernel and its composed fallback
under a KernelPolicy, and clear errors."""

import math

import numpy as np
import pytest

import xpuruntime as xrt
from xpuruntime import nn

ERF = np.vectorize(math.erf)
ACTIVATIONS = {
    None: lambda v: v,
    "relu": lambda v: np.maximum(v, 0),
    "gelu": lambda v: 0.5 * v * (1 + ERF(v / math.sqrt(2))),
    "gelu_tanh": lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                                  (v + 0.044715 * v ** 3))),
}
TOLERANCE = {"float64": 1e-12, "float32": 2e-5, "float16": 2e-2, "bfloat16": 8e-2}


def host(t):
    return np.asarray(xrt.astype(t.to_device("cpu"), xrt.float64))


def operands(shape, k, n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape + (k,)) / math.sqrt(k), rng.standard_normal((n, k)),
            rng.standard_normal(n))


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("dtype", list(TOLERANCE))
def test_matches_numpy(device, activation, with_bias, dtype):
    x, w, b = operands((3, 5), 24, 7)
    dt = getattr(xrt, dtype)
    xs, ws, bs = (xrt.astype(xrt.asarray(a, device=device), dt) for a in (x, w, b))
    got = nn.linear(xs, ws, bs if with_bias else None, activation=activation)
    assert got.shape == (3, 5, 7) and got.dtype == dt and got.device == xs.device
    # The reference from the operands as rounded to dtype.
    pre = host(xs) @ host(ws).T + (host(bs) if with_bias else 0)
    expected = ACTIVATIONS[activation](pre)
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(host(got), expected, rtol=tol, atol=tol)


def test_one_dimensional_and_strided_inputs(device):
    x, w, b = operands((6,), 8, 5)
    xs = xrt.asarray(x, device=device)
    ws = xrt.asarray(w.T.copy(), device=device).mT  # a transposed (strided) weight
    bs = xrt.asarray(np.stack([b, b], axis=1), device=device)[:, 0]  # a strided bias
    got = nn.linear(xs[::2], ws, bs, activation="relu")  # x rows with a step
    np.testing.assert_allclose(host(got), np.maximum(x[::2] @ w.T + b, 0), rtol=1e-12)
    vector = nn.linear(xs[0], ws, bs)
    assert vector.shape == (5,)
    np.testing.assert_allclose(host(vector), x[0] @ w.T + b, rtol=1e-12)


def test_empty_sum_gives_the_activated_bias(device):
    x = xrt.ones((2, 0), device=device)
    w = xrt.ones((3, 0), device=device)
    b = xrt.asarray([-1.0, 0.5, 2.0], device=device)
    np.testing.assert_array_equal(host(nn.linear(x, w, b, activation="relu")),
                                  [[0, 0.5, 2], [0, 0.5, 2]])
    assert nn.linear(xrt.ones((0, 4), device=device), xrt.ones((3, 4), device=device)).shape \
        == (0, 3)


def test_dtypes_promote(device):
    x = xrt.ones((2, 3), dtype=xrt.float32, device=device)
    w = xrt.ones((4, 3), dtype=xrt.float64, device=device)
    assert nn.linear(x, w).dtype == xrt.float64


@pytest.mark.parametrize("call,error,message", [
    (lambda: nn.linear(xrt.ones((2, 3)), xrt.ones((4, 2))), ValueError, "3 features"),
    (lambda: nn.linear(xrt.ones((2, 3)), xrt.ones(3)), ValueError, "must be a matrix"),
    (lambda: nn.linear(xrt.ones((2, 3)), xrt.ones((4, 3)), xrt.ones(3)), ValueError,
     r"bias must have shape \(4,\)"),
    (lambda: nn.linear(xrt.asarray(1.0), xrt.ones((4, 3))), ValueError, "0-d"),
    (lambda: nn.linear(xrt.ones(3, dtype=xrt.int64), xrt.ones((2, 3), dtype=xrt.int64)),
     TypeError, "real floating-point"),
    (lambda: nn.linear(xrt.ones((2, 3)), xrt.ones((4, 3)), activation="tanh"), ValueError,
     "activation must be one of"),
    (lambda: nn.linear(np.ones((2, 3)), xrt.ones((4, 3))), TypeError, "linear: x"),
])
def test_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.cuda
def test_mixed_devices_raise():
    with pytest.raises(ValueError, match="different devices"):
        nn.linear(xrt.ones((2, 3), device="cuda:0"), xrt.ones((4, 3)))


@pytest.mark.cuda
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_cuda_fused_kernel_and_its_fallback_agree(activation, dtype):
    """The cublaslt kernel (explain says so) against the composed kernel pinned by a policy,
    on a layer-sized problem where cuBLASLt has fused algorithms."""
    x, w, b = operands((4, 128), 256, 512, seed=1)
    dt = getattr(xrt, dtype)
    xs, ws, bs = (xrt.astype(xrt.asarray(a, device="cuda:0"), dt) for a in (x, w, b))
    with xrt.explain() as log:
        fused = nn.linear(xs, ws, bs, activation=activation)
    assert "linear[cuda:0" in str(log) and "-> cublaslt" in str(log)
    with xrt.kernel_policy(linear="composite"):
        composed = nn.linear(xs, ws, bs, activation=activation)
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(host(fused), host(composed), rtol=tol, atol=tol)
    pre = host(xs) @ host(ws).T + host(bs)
    np.testing.assert_allclose(host(fused), ACTIVATIONS[activation](pre), rtol=tol, atol=tol)


def test_the_core_op_refuses_an_unknown_activation_code():
    from xpuruntime import _core
    with pytest.raises(ValueError, match="activation must be 0 .* got 7"):
        _core._linear(xrt.ones((2, 3)), xrt.ones((4, 3)), None, 7)


# ---- packed weights (Note [Packed linear weights]) ----------------------------------------

def ones(shape):
    return xrt.ones(shape, dtype=xrt.float32)


PACKED_KERNELS = [k["name"] for k in xrt.list_kernels("linear_packed") if k["device"] == "cpu"]


@pytest.mark.parametrize("kernel", PACKED_KERNELS)
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("m, k, n", [(64, 256, 96), (61, 100, 77), (1, 3, 1), (9, 600, 33),
                                     (17, 1030, 40)])
def test_packed_weights_match_numpy(kernel, activation, m, k, n):
    # Partial tiles of rows and columns, and depths over one pass of the AVX-512 kernel (512).
    x, w, b = operands((m,), k, n, seed=m + n)
    packed = nn.PackedLinearWeight(xrt.asarray(w, dtype=xrt.float32))
    assert packed.shape == (n, k) and packed.dtype == xrt.float32
    xs, bs = xrt.asarray(x, dtype=xrt.float32), xrt.asarray(b, dtype=xrt.float32)
    with xrt.kernel_policy(xrt.KernelPolicy(linear_packed=kernel)), xrt.explain() as log:
        got = nn.linear(xs, packed, bs, activation=activation)
        unbiased = nn.linear(xs, packed)
    assert kernel in log.kernels("linear_packed")
    want = ACTIVATIONS[activation](x @ w.T + b)
    np.testing.assert_allclose(host(got), want, rtol=1e-4, atol=1e-4 * math.sqrt(k))
    np.testing.assert_allclose(host(unbiased), x @ w.T, rtol=1e-4, atol=1e-4 * math.sqrt(k))


def _packed_product(kernel, activation):
    x, w, b = operands((37,), 700, 45, seed=3)   # partial tiles, two passes over the depth
    packed = nn.PackedLinearWeight(xrt.asarray(w, dtype=xrt.float32))
    xs, bs = xrt.asarray(x, dtype=xrt.float32), xrt.asarray(b, dtype=xrt.float32)
    with xrt.kernel_policy(xrt.KernelPolicy(linear_packed=kernel)):
        return nn.linear(xs, packed, bs, activation=activation), nn.linear(xs, packed, bs)


@pytest.mark.parametrize("kernel", PACKED_KERNELS)
@pytest.mark.parametrize("activation, op", [("gelu_tanh", lambda y: nn.gelu(y, approximate="tanh")),
                                            ("relu", nn.relu)])
def test_packed_activations_give_the_ops_bits(kernel, activation, op):
    # Note [GELU in the tile]: the tanh GELU and ReLU applied to each finished tile compute
    # what the elementwise op computes on the product: the same bits but where the op's
    # loop ends in libm's scalar function (an ulp apart at most).
    fused, product = _packed_product(kernel, activation)
    fused, after = (host(t).astype(np.float32) for t in (fused, op(product)))
    np.testing.assert_array_max_ulp(fused, after, maxulp=1)
    assert np.count_nonzero(fused != after) <= 16


@pytest.mark.parametrize("kernel", PACKED_KERNELS)
def test_packed_gelu_is_within_its_erf_bound(kernel):
    # Note [GELU in the tile]: the erf GELU of the AVX-512 kernel takes a rational erf
    # within 4e-7 of the exact one; against the exact GELU of the float product it keeps
    # that absolute bound (scaled by |x| / 2) and an ulp of the result.
    fused, product = _packed_product(kernel, "gelu")
    y = host(product).astype(np.float32).astype(np.float64)
    exact = 0.5 * y * (1 + ERF(y / math.sqrt(2)))
    bound = 4e-7 * np.abs(y) / 2 + np.spacing(np.abs(exact).astype(np.float32))
    assert np.all(np.abs(host(fused).astype(np.float32) - exact) <= bound)
    assert np.abs(y).max() > 4   # the product reaches past the erf's clamp


def test_packed_weights_take_batches_and_strided_weights():
    x, w, b = operands((2, 3), 40, 50)
    ws = xrt.asarray(w.T.copy(), dtype=xrt.float32).mT  # a transposed (strided) weight
    packed = nn.PackedLinearWeight(ws)
    got = nn.linear(xrt.asarray(x, dtype=xrt.float32), packed, xrt.asarray(b, dtype=xrt.float32))
    assert got.shape == (2, 3, 50)
    np.testing.assert_allclose(host(got), x @ w.T + b, rtol=1e-4, atol=1e-4)
    assert nn.linear(ones((0, 40)), packed).shape == (0, 50)
    empty = nn.PackedLinearWeight(ones((3, 0)))
    np.testing.assert_array_equal(host(nn.linear(ones((2, 0)), empty,
                                                 xrt.asarray([1.0, -2.0, 3.0], dtype=xrt.float32),
                                                 activation="relu")), [[1, 0, 3], [1, 0, 3]])


def test_packed_weights_are_a_copy():
    w = ones((4, 3))
    packed = nn.PackedLinearWeight(w)
    w[...] = 5.0
    np.testing.assert_array_equal(host(nn.linear(ones((1, 3)), packed)), [[3, 3, 3, 3]])


@pytest.mark.parametrize("call, error, message", [
    (lambda: nn.PackedLinearWeight(xrt.ones((4, 3), dtype=xrt.float64)), TypeError,
     "float32"),
    (lambda: nn.PackedLinearWeight(xrt.ones((4,))), ValueError, "matrix"),
    (lambda: nn.PackedLinearWeight(np.ones((4, 3), np.float32)), TypeError, "Tensor"),
    (lambda: nn.linear(ones((2, 5)), nn.PackedLinearWeight(ones((4, 3)))),
     ValueError, "3 features"),
    (lambda: nn.linear(xrt.ones((2, 3), dtype=xrt.float64),
                       nn.PackedLinearWeight(ones((4, 3)))), TypeError, "float32"),
    (lambda: nn.linear(ones((2, 3)), nn.PackedLinearWeight(ones((4, 3))), ones((5,))),
     ValueError, "bias"),
])
def test_packed_weight_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.cuda
def test_packed_weights_stay_on_the_cpu():
    with pytest.raises(ValueError, match="CPU"):
        nn.PackedLinearWeight(xrt.ones((4, 3), dtype=xrt.float32, device="cuda:0"))
    with pytest.raises(ValueError, match="device"):
        nn.linear(xrt.ones((2, 3), dtype=xrt.float32, device="cuda:0"),
                  nn.PackedLinearWeight(ones((4, 3))))

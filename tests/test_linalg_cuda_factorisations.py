"""tests/test_linalg_cuda_factorisations.py: cholesky, det/slogdet, inv, solve and qr on
every device (by shape) and on CUDA against NumPy and the CPU, and the native kernels'
registration and sources.

On CUDA, linalg runs xpuruntime's own kernels (cuSOLVER, cuBLAS's batched LU, NVRTC helpers)
and gives NumPy's results within a tolerance per dtype (linalg_helpers.TOL), and the CPU's
errors: single matrices, stacks (the batched routines below 32 x 32 and the per-matrix ones
above), 0 x 0 and 1 x 1 matrices, non-finite values. The device tests (parametrised by shape)
hold the CPU to the same tolerances. Non-finite matrices follow the CPU (solve/inv/cholesky
let NaN through).

Without a GPU, the kernels' sources are compiled for sm_90 here (and by test_cuda_jit.py's
compile-all test) when NVRTC is installed.
"""

import os

import numpy as np
import pytest
import xpuruntime as xrt
from cuda_helpers import core
from linalg_helpers import (linalg, FLOATS, cuda, SHAPES, random, well_conditioned,
                            positive_definite, on, on_cuda, host, close_to, mT, identity_like,
                            _cpu_error)


NATIVE = {
    "cholesky": "cusolver", "det": "cusolver", "slogdet": "cusolver", "inv": "cusolver",
    "solve": "cusolver", "qr": "cusolver", "eigh": "cusolver", "eig": "cusolver",
    "svd": "cusolver", "pinv": "cusolver", "matrix_rank": "cusolver", "cross": "nvrtc",
    "outer": "nvrtc",
}


# ---- registration, kernel samples (no GPU needed) ----------------------------------------

def test_native_kernels_are_registered_before_the_host_fallback():
    for op, name in NATIVE.items():
        kernels = [k for k in xrt.list_kernels(op) if k["device"] == "cuda"]
        names = [k["name"] for k in kernels]
        assert name in names and "host_fallback" in names, op
        ours = next(k for k in kernels if k["name"] == name)
        fallback = next(k for k in kernels if k["name"] == "host_fallback")
        assert ours["priority"] > fallback["priority"], op


def test_kernel_samples_compile_for_sm90():
    nvrtc = xrt.cuda.status()["nvrtc"]
    if not nvrtc["found"]:
        if os.environ.get("CI"):
            pytest.fail(f"NVRTC not found ({nvrtc['reason']})")
        pytest.skip("NVRTC not found; pip install nvidia-cuda-nvrtc")
    for family in ("linalg", "linalg_vector"):
        result = core._cuda._compile_all(arch="sm_90", family=family)
        assert result["compiled"] >= 30, family
        failures = [f"{name}\n{error}" for _, name, error in result["failures"]]
        assert not failures, "\n\n".join(failures[:3])


# ---- which kernel ran --------------------------------------------------------------------

@cuda
def test_explain_names_the_native_kernels():
    a = on_cuda(positive_definite("float64", (4, 4)))
    v = on_cuda(random("float64", (2, 3)))
    calls = {
        "cholesky": lambda: linalg.cholesky(a), "det": lambda: linalg.det(a),
        "slogdet": lambda: linalg.slogdet(a), "inv": lambda: linalg.inv(a),
        "solve": lambda: linalg.solve(a, a), "qr": lambda: linalg.qr(a),
        "eigh": lambda: linalg.eigh(a), "eig": lambda: linalg.eig(a),
        "svd": lambda: linalg.svd(a), "pinv": lambda: linalg.pinv(a),
        "matrix_rank": lambda: linalg.matrix_rank(a), "cross": lambda: linalg.cross(v, v),
        "outer": lambda: linalg.outer(v[0], v[1]),
    }
    for op, call in calls.items():
        with xrt.explain() as log:
            call()
        assert log.kernels(op) == [NATIVE[op]], (op, str(log))
    with xrt.explain() as log:  # the values-only functions share their decomposition's op
        linalg.eigvalsh(a), linalg.svdvals(a), linalg.eigvals(a)
    assert log.kernels("eigh") == log.kernels("svd") == log.kernels("eig") == ["cusolver"]


# ---- cholesky ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SHAPES + [(3, 130, 130)])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_for_each_shape_matches_numpy(device, name, shape, upper):
    a = positive_definite(name, shape)
    got = linalg.cholesky(on(device, a), upper=upper)
    assert got.dtype == getattr(xrt, name) and got.shape == shape
    lower = np.linalg.cholesky(a)
    expected = np.conj(mT(lower)) if upper else lower
    out = host(got, device)
    close_to(out, expected, name, scale=np.abs(expected).max())
    triangle = np.triu(out, 1) if not upper else np.tril(out, -1)
    assert not triangle.any()  # the other triangle is exact zeros


def test_cholesky_of_a_stack_longer_than_the_grid(device):
    """More than 65535 matrices: the transposes to and from cuSOLVER's layout walk the stack
    past one grid's z extent."""
    a = positive_definite("float32", (70000, 3, 3))
    for upper in (False, True):
        got = host(linalg.cholesky(on(device, a), upper=upper), device)
        lower = np.linalg.cholesky(a)
        close_to(got, np.conj(mT(lower)) if upper else lower, "float32", 10)


def test_cholesky_reads_one_triangle_only(device):
    a = positive_definite("float64", (5, 5))
    junk = a.copy()
    junk[np.triu_indices(5, 1)] = 1e300  # the upper triangle is never read
    close_to(host(linalg.cholesky(on(device, junk)), device), np.linalg.cholesky(a), "float64", 10)
    junk = a.copy()
    junk[np.tril_indices(5, -1)] = np.nan
    close_to(host(linalg.cholesky(on(device, junk), upper=True), device),
             np.conj(np.linalg.cholesky(a)).T, "float64", 10)


@pytest.mark.parametrize("batch", [(), (3,), (3, 140)])  # single, batched, per matrix
def test_cholesky_of_an_indefinite_matrix_raises(device, batch):
    shape = batch + (4, 4) if batch != (3, 140) else (3, 140, 140)
    a = positive_definite("float64", shape)
    if batch:
        a[1] = -a[1]
    else:
        a = -a
    with pytest.raises(linalg.LinAlgError, match="not positive definite") as info:
        linalg.cholesky(on(device, a))
    if batch:
        assert "(matrix (1,) of the stack)" in str(info.value)
    assert str(info.value) == str(_cpu_error(linalg.cholesky, a))


def test_cholesky_lets_nan_through_as_the_cpu_does(device):
    a = positive_definite("float64", (3, 4, 4))
    a[1, 0, 0] = np.nan
    out = host(linalg.cholesky(on(device, a)), device)
    assert np.isnan(out[1]).any()
    close_to(out[[0, 2]], np.linalg.cholesky(a[[0, 2]]), "float64", 10)


# ---- det, slogdet ------------------------------------------------------------------------

def determinant_operands(name, shape, limit=1e3):
    """Matrices (random + 0.5 I) / sqrt(n), whose |det| stays in range. A draw whose
    condition number is above limit (about 1 in 5 of order 100; above 1e4, 1 in 50) is drawn
    again: for a nearly singular matrix two correct float32 LUs, rounding in different
    orders, give log|det| 0.1 and more apart (a CUDA run met one: -58.30 against NumPy's
    -58.13, 3.6 standard deviations below the mean log|det| of these draws)."""
    n = shape[-1]
    a = np.empty(shape, dtype=name)
    for m in a.reshape(-1, n, n):
        while True:
            m[...] = ((random(name, (n, n)) + 0.5 * np.eye(n)) / np.sqrt(n)).astype(name)
            if np.linalg.cond(m.astype(np.complex128)) < limit:
                break
    return a


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_det_and_slogdet_for_each_shape_match_numpy(device, name, shape):
    a = determinant_operands(name, shape)
    det = linalg.det(on(device, a))
    sign, logabs = linalg.slogdet(on(device, a))
    assert det.dtype == getattr(xrt, name) and det.shape == shape[:-2]
    assert logabs.dtype == (xrt.float32 if name in ("float32", "complex64") else xrt.float64)
    expected_sign, expected_log = np.linalg.slogdet(a)
    close_to(host(sign, device), expected_sign, name)
    close_to(host(logabs, device), expected_log, name, scale=np.abs(expected_log).max())
    expected = np.linalg.det(a)
    rtol = 1e-3 if name in ("float32", "complex64") else 1e-9
    np.testing.assert_allclose(host(det, device), expected, rtol=rtol, atol=0)


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("n", [2, 40])
def test_singular_determinants_in_stacks(device, name, n):
    a = np.zeros((3, n, n), dtype=name)
    a[0] = np.eye(n)
    a[1] = 1  # rank one; a[2] is zero
    det = host(linalg.det(on(device, a)), device)
    sign, logabs = (host(t, device) for t in linalg.slogdet(on(device, a)))
    np.testing.assert_array_equal(det, [1, 0, 0])
    np.testing.assert_array_equal(sign, [1, 0, 0])
    np.testing.assert_array_equal(logabs, [0, -np.inf, -np.inf])


@pytest.mark.parametrize("name", FLOATS)
def test_determinant_of_empty_matrices_is_one_for_each_dtype(device, name):
    a = on(device, np.zeros((2, 0, 0), dtype=name))
    np.testing.assert_array_equal(host(linalg.det(a), device), np.ones(2))
    sign, logabs = linalg.slogdet(a)
    np.testing.assert_array_equal(host(sign, device), np.ones(2))
    np.testing.assert_array_equal(host(logabs, device), np.zeros(2))


def test_det_of_nan_is_nan(device):
    a = np.eye(3)[None].repeat(2, 0)
    a[1, 1, 1] = np.nan
    out = host(linalg.det(on(device, a)), device)
    assert out[0] == 1 and np.isnan(out[1])


# ---- inv, solve --------------------------------------------------------------------------

@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_inv_for_each_shape_matches_numpy(device, name, shape):
    a = well_conditioned(name, shape)
    got = linalg.inv(on(device, a))
    assert got.dtype == getattr(xrt, name) and got.shape == shape
    close_to(host(got, device), np.linalg.inv(a), name)


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [None, 1, 3])
def test_solve_for_each_shape_matches_numpy(device, name, shape, k):
    a = well_conditioned(name, shape)
    n = shape[-1]
    b = random(name, (n,) if k is None else shape[:-1] + (k,))
    got = linalg.solve(on(device, a), on(device, b))
    expected = np.linalg.solve(a, b) if k is not None or len(shape) == 2 else \
        np.linalg.solve(a, b[..., None])[..., 0]
    assert got.shape == expected.shape
    close_to(host(got, device), expected, name, scale=np.abs(expected).max())


@pytest.mark.parametrize("n", [4, 40])
def test_solve_broadcasts_the_stacks(device, n):
    a = well_conditioned("float64", (2, 1, n, n))
    b = random("float64", (3, n, 2))
    close_to(host(linalg.solve(on(device, a), on(device, b)), device), np.linalg.solve(a, b),
             "float64")


@pytest.mark.parametrize("n", [3, 40])
@pytest.mark.parametrize("fn", ["inv", "solve"])
def test_singular_matrices_raise_the_cpus_error(device, n, fn):
    a = well_conditioned("float64", (3, n, n))
    a[1] = 0
    a[1, 0, 0] = 1
    call = (lambda x: linalg.inv(x)) if fn == "inv" else \
        (lambda x: linalg.solve(x, xrt.ones((n, 2), device=x.device)))
    with pytest.raises(linalg.LinAlgError, match=r"singular \(matrix \(1,\) of the stack\)"):
        call(on(device, a))
    cpu = _cpu_error(lambda x: call(x), a)
    with pytest.raises(linalg.LinAlgError) as info:
        call(on(device, a))
    assert str(info.value) == str(cpu)


def test_matrix_power_with_a_negative_exponent_raises_for_singular_matrices(device):
    singular = on(device, np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]))
    with pytest.raises(linalg.LinAlgError, match="singular"):
        linalg.matrix_power(singular, -2)
    a = well_conditioned("float64", (3, 3))
    close_to(host(linalg.matrix_power(on(device, a), -3), device),
             np.linalg.matrix_power(a, -3), "float64")


def test_nan_in_solve_gives_nan_not_an_error(device):
    a = well_conditioned("float64", (2, 3, 3))
    a[0, 1, 1] = np.nan
    out = host(linalg.solve(on(device, a), on(device, np.ones((2, 3, 1)))), device)
    assert np.isnan(out[0]).any()
    close_to(out[1], np.linalg.solve(a[1], np.ones((3, 1))), "float64")


# ---- qr ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (3, 5), (4, 4), (2, 6, 4), (2, 3, 4, 7),
                                   (70, 40), (40, 70)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_factors_for_each_shape(device, name, shape, mode):
    a = random(name, shape)
    q, r = linalg.qr(on(device, a), mode=mode)
    eq, er = np.linalg.qr(a, mode=mode)
    assert q.shape == eq.shape and r.shape == er.shape
    q, r = host(q, device), host(r, device)
    close_to(q @ r, a, name, scale=10)
    close_to(np.conj(mT(q)) @ q, identity_like(q), name, scale=10)
    assert not np.tril(r, -1).any()
    # R is unique up to the signs of its rows
    close_to(np.abs(r), np.abs(er), name, scale=10)


def test_qr_of_empty_matrices(device):
    for shape, mode in [((0, 3, 3), "reduced"), ((2, 3, 0), "complete"), ((2, 0, 3), "complete"),
                        ((2, 3, 0), "reduced")]:
        q, r = linalg.qr(on(device, np.zeros(shape)), mode=mode)
        eq, er = np.linalg.qr(np.zeros(shape), mode=mode)
        np.testing.assert_array_equal(host(q, device), eq)
        assert r.shape == er.shape

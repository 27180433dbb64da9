"""tests/test_cuda_linalg.py: linalg on CUDA tensors runs xpuruntime's own kernels (cuSOLVER,
cuBLAS's batched LU, NVRTC helpers) and gives NumPy's results within a tolerance per dtype,
and the CPU's errors: every LAPACK-backed op and every linalg function that reaches them
(eigvalsh, svdvals, matrix_norm's 'nuc' and 2 orders, matrix_power with a negative exponent),
single matrices, stacks (the batched routines below 32 x 32 and the per-matrix ones above),
empty stacks, 0 x 0 and 1 x 1 matrices, non-contiguous and broadcast inputs, non-finite
values, a non-default stream. cross and outer are compared with the CPU bit for bit.

Non-finite matrices follow the CPU where the CPU is consistent (svd raises for NaN and
gives NaN singular values for infinity, eig raises, solve/inv/cholesky let NaN through);
eigh gives NaN eigenvalues for a matrix with NaN or infinity in its lower triangle, where
LAPACK's heevd sometimes returns NaN and sometimes reports no convergence.

Without a GPU, the kernels' sources are compiled for sm_90 here (and by test_cuda_jit.py's
compile-all test) when NVRTC is installed.
"""

import os

import numpy as np
import pytest

import xpuruntime as xrt
from xpuruntime import _core, linalg
from common import NUMERIC, numpy_dtype, tensor, to_numpy
from cuda_helpers import busy

cuda = pytest.mark.cuda

FLOATS = ("float32", "float64", "complex64", "complex128")
# Relative tolerances: cuSOLVER and LAPACK round differently (other blockings, other
# algorithms for the batched routines); the matrices below are well conditioned.
TOL = {"float32": 1e-4, "complex64": 1e-4, "float64": 1e-10, "complex128": 1e-10}
rng = np.random.default_rng(11)

# Orders that take the batched routines (<= 32) and the per-matrix ones.
SHAPES = [(1, 1), (3, 3), (4, 6, 6), (2, 3, 8, 8), (33, 33), (3, 40, 40), (100, 100)]


def random(name, shape):
    a = rng.standard_normal(shape)
    if name.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(name)


def well_conditioned(name, shape):
    n = shape[-1]
    return (random(name, shape) + n * np.eye(n)).astype(name)


def positive_definite(name, shape):
    b = random(name, shape)
    n = shape[-1]
    return (b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n)).astype(name)


def hermitian(name, shape):
    b = random(name, shape)
    return ((b + np.conj(np.swapaxes(b, -1, -2))) / 2).astype(name)


def on_cuda(a):
    return tensor(np.ascontiguousarray(a)).to_device("cuda:0")


def host(t):
    assert t.device.type == "cuda"
    return to_numpy(t.to_device("cpu"))


def close(got, expected, name, scale=1.0):
    expected = np.asarray(expected)
    tol = TOL[name] * max(1.0, float(scale))
    np.testing.assert_allclose(got, expected, rtol=TOL[name], atol=tol)


def mT(a):
    return np.swapaxes(a, -1, -2)


def identity_like(q):
    k = q.shape[-1]
    return np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k))


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
        result = _core._cuda._compile_all(arch="sm_90", family=family)
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

@cuda
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SHAPES + [(3, 130, 130)])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_matches_numpy(name, shape, upper):
    a = positive_definite(name, shape)
    got = linalg.cholesky(on_cuda(a), upper=upper)
    assert got.dtype == getattr(xrt, name) and got.shape == shape
    lower = np.linalg.cholesky(a)
    expected = np.conj(mT(lower)) if upper else lower
    out = host(got)
    close(out, expected, name, scale=np.abs(expected).max())
    triangle = np.triu(out, 1) if not upper else np.tril(out, -1)
    assert not triangle.any()  # the other triangle is exact zeros


@cuda
def test_cholesky_of_a_stack_longer_than_the_grid():
    """More than 65535 matrices: the transposes to and from cuSOLVER's layout walk the stack
    past one grid's z extent."""
    a = positive_definite("float32", (70000, 3, 3))
    for upper in (False, True):
        got = host(linalg.cholesky(on_cuda(a), upper=upper))
        lower = np.linalg.cholesky(a)
        close(got, np.conj(mT(lower)) if upper else lower, "float32", 10)


@cuda
def test_cholesky_reads_one_triangle_only():
    a = positive_definite("float64", (5, 5))
    junk = a.copy()
    junk[np.triu_indices(5, 1)] = 1e300  # the upper triangle is never read
    close(host(linalg.cholesky(on_cuda(junk))), np.linalg.cholesky(a), "float64", 10)
    junk = a.copy()
    junk[np.tril_indices(5, -1)] = np.nan
    close(host(linalg.cholesky(on_cuda(junk), upper=True)), np.conj(np.linalg.cholesky(a)).T,
          "float64", 10)


@cuda
@pytest.mark.parametrize("batch", [(), (3,), (3, 140)])  # single, batched, per matrix
def test_cholesky_of_an_indefinite_matrix_raises(batch):
    shape = batch + (4, 4) if batch != (3, 140) else (3, 140, 140)
    a = positive_definite("float64", shape)
    if batch:
        a[1] = -a[1]
    else:
        a = -a
    with pytest.raises(linalg.LinAlgError, match="not positive definite") as info:
        linalg.cholesky(on_cuda(a))
    if batch:
        assert "(matrix (1,) of the stack)" in str(info.value)
    assert str(info.value) == str(_cpu_error(linalg.cholesky, a))


def _cpu_error(fn, *arrays):
    with pytest.raises(linalg.LinAlgError) as info:
        fn(*(tensor(a) for a in arrays))
    return info.value


@cuda
def test_cholesky_lets_nan_through_as_the_cpu_does():
    a = positive_definite("float64", (3, 4, 4))
    a[1, 0, 0] = np.nan
    out = host(linalg.cholesky(on_cuda(a)))
    assert np.isnan(out[1]).any()
    close(out[[0, 2]], np.linalg.cholesky(a[[0, 2]]), "float64", 10)


# ---- det, slogdet ------------------------------------------------------------------------

@cuda
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_det_and_slogdet_match_numpy(name, shape):
    n = shape[-1]
    a = ((random(name, shape) + 0.5 * np.eye(n)) / np.sqrt(n)).astype(name)  # |det| in range
    det = linalg.det(on_cuda(a))
    sign, logabs = linalg.slogdet(on_cuda(a))
    assert det.dtype == getattr(xrt, name) and det.shape == shape[:-2]
    assert logabs.dtype == (xrt.float32 if name in ("float32", "complex64") else xrt.float64)
    expected_sign, expected_log = np.linalg.slogdet(a)
    close(host(sign), expected_sign, name)
    close(host(logabs), expected_log, name, scale=np.abs(expected_log).max())
    expected = np.linalg.det(a)
    rtol = 1e-3 if name in ("float32", "complex64") else 1e-9
    np.testing.assert_allclose(host(det), expected, rtol=rtol, atol=0)


@cuda
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("n", [2, 40])
def test_singular_determinants(name, n):
    a = np.zeros((3, n, n), dtype=name)
    a[0] = np.eye(n)
    a[1] = 1  # rank one; a[2] is zero
    det = host(linalg.det(on_cuda(a)))
    sign, logabs = (host(t) for t in linalg.slogdet(on_cuda(a)))
    np.testing.assert_array_equal(det, [1, 0, 0])
    np.testing.assert_array_equal(sign, [1, 0, 0])
    np.testing.assert_array_equal(logabs, [0, -np.inf, -np.inf])


@cuda
@pytest.mark.parametrize("name", FLOATS)
def test_determinant_of_empty_matrices_is_one(name):
    a = on_cuda(np.zeros((2, 0, 0), dtype=name))
    np.testing.assert_array_equal(host(linalg.det(a)), np.ones(2))
    sign, logabs = linalg.slogdet(a)
    np.testing.assert_array_equal(host(sign), np.ones(2))
    np.testing.assert_array_equal(host(logabs), np.zeros(2))


@cuda
def test_det_of_nan_is_nan():
    a = np.eye(3)[None].repeat(2, 0)
    a[1, 1, 1] = np.nan
    out = host(linalg.det(on_cuda(a)))
    assert out[0] == 1 and np.isnan(out[1])


# ---- inv, solve --------------------------------------------------------------------------

@cuda
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_inv_matches_numpy(name, shape):
    a = well_conditioned(name, shape)
    got = linalg.inv(on_cuda(a))
    assert got.dtype == getattr(xrt, name) and got.shape == shape
    close(host(got), np.linalg.inv(a), name)


@cuda
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("k", [None, 1, 3])
def test_solve_matches_numpy(name, shape, k):
    a = well_conditioned(name, shape)
    n = shape[-1]
    b = random(name, (n,) if k is None else shape[:-1] + (k,))
    got = linalg.solve(on_cuda(a), on_cuda(b))
    expected = np.linalg.solve(a, b) if k is not None or len(shape) == 2 else \
        np.linalg.solve(a, b[..., None])[..., 0]
    assert got.shape == expected.shape
    close(host(got), expected, name, scale=np.abs(expected).max())


@cuda
@pytest.mark.parametrize("n", [4, 40])
def test_solve_broadcasts_the_stacks(n):
    a = well_conditioned("float64", (2, 1, n, n))
    b = random("float64", (3, n, 2))
    close(host(linalg.solve(on_cuda(a), on_cuda(b))), np.linalg.solve(a, b), "float64")


@cuda
@pytest.mark.parametrize("n", [3, 40])
@pytest.mark.parametrize("fn", ["inv", "solve"])
def test_singular_matrices_raise_the_cpus_error(n, fn):
    a = well_conditioned("float64", (3, n, n))
    a[1] = 0
    a[1, 0, 0] = 1
    call = (lambda x: linalg.inv(x)) if fn == "inv" else \
        (lambda x: linalg.solve(x, xrt.ones((n, 2), device=x.device)))
    with pytest.raises(linalg.LinAlgError, match=r"singular \(matrix \(1,\) of the stack\)"):
        call(on_cuda(a))
    cpu = _cpu_error(lambda x: call(x), a)
    with pytest.raises(linalg.LinAlgError) as info:
        call(on_cuda(a))
    assert str(info.value) == str(cpu)


@cuda
def test_matrix_power_with_a_negative_exponent_raises_for_singular_matrices():
    singular = on_cuda(np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]))
    with pytest.raises(linalg.LinAlgError, match="singular"):
        linalg.matrix_power(singular, -2)
    a = well_conditioned("float64", (3, 3))
    close(host(linalg.matrix_power(on_cuda(a), -3)), np.linalg.matrix_power(a, -3), "float64")


@cuda
def test_nan_in_solve_gives_nan_not_an_error():
    a = well_conditioned("float64", (2, 3, 3))
    a[0, 1, 1] = np.nan
    out = host(linalg.solve(on_cuda(a), on_cuda(np.ones((2, 3, 1)))))
    assert np.isnan(out[0]).any()
    close(out[1], np.linalg.solve(a[1], np.ones((3, 1))), "float64")


# ---- qr ----------------------------------------------------------------------------------

@cuda
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (3, 5), (4, 4), (2, 6, 4), (2, 3, 4, 7),
                                   (70, 40), (40, 70)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_factors(name, shape, mode):
    a = random(name, shape)
    q, r = linalg.qr(on_cuda(a), mode=mode)
    eq, er = np.linalg.qr(a, mode=mode)
    assert q.shape == eq.shape and r.shape == er.shape
    q, r = host(q), host(r)
    close(q @ r, a, name, scale=10)
    close(np.conj(mT(q)) @ q, identity_like(q), name, scale=10)
    assert not np.tril(r, -1).any()
    # R is unique up to the signs of its rows
    close(np.abs(r), np.abs(er), name, scale=10)


@cuda
def test_qr_of_empty_matrices():
    for shape, mode in [((0, 3, 3), "reduced"), ((2, 3, 0), "complete"), ((2, 0, 3), "complete"),
                        ((2, 3, 0), "reduced")]:
        q, r = linalg.qr(on_cuda(np.zeros(shape)), mode=mode)
        eq, er = np.linalg.qr(np.zeros(shape), mode=mode)
        np.testing.assert_array_equal(host(q), eq)
        assert r.shape == er.shape


# ---- eigh, eig ---------------------------------------------------------------------------

@cuda
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_eigh_matches_numpy(name, shape):
    a = hermitian(name, shape)
    w, v = linalg.eigh(on_cuda(a))
    values = linalg.eigvalsh(on_cuda(a))
    expected = np.linalg.eigvalsh(a)
    scale = np.abs(expected).max()
    close(host(w), expected, name, scale)
    close(host(values), expected, name, scale)
    v = host(v)
    close(a @ v, v * host(w)[..., None, :], name, scale)
    close(np.conj(mT(v)) @ v, identity_like(v), name, 10)


@cuda
def test_eigh_reads_the_lower_triangle():
    a = hermitian("complex128", (3, 6, 6))
    junk = a.copy()
    junk[:, np.triu_indices(6, 1)[0], np.triu_indices(6, 1)[1]] = 7 + 7j
    close(host(linalg.eigvalsh(on_cuda(junk))), np.linalg.eigvalsh(a, UPLO="L"), "complex128",
          10)
    close(host(linalg.eigh(on_cuda(junk)).eigenvalues), np.linalg.eigvalsh(a), "complex128", 10)


@cuda
@pytest.mark.parametrize("n", [4, 40])
def test_eigh_of_non_finite_matrices_gives_nan_values(n):
    a = hermitian("float64", (3, n, n))
    a[1, n - 1, 0] = np.nan
    a[2, 0, 0] = np.inf
    w = host(linalg.eigvalsh(on_cuda(a)))
    assert np.isnan(w[1:]).all()
    close(w[0], np.linalg.eigvalsh(a[0]), "float64", 10)


def assert_same_values(got, expected, tol):
    """Each row of got (..., n) matches a distinct value of the row of expected within tol
    (eigenvalues come in each library's own order)."""
    got, expected = got.reshape(-1, got.shape[-1]), expected.reshape(-1, expected.shape[-1])
    for g, e in zip(got, expected):
        left = list(e)
        for value in g:
            distances = np.abs(np.array(left) - value)
            j = int(np.argmin(distances))
            assert distances[j] <= tol, (value, e)
            left.pop(j)


@cuda
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (4, 6, 6), (40, 40)])
def test_eig_matches_numpy(name, shape):
    a = random(name, shape)
    w, v = linalg.eig(on_cuda(a))
    complex_name = "complex64" if name in ("float32", "complex64") else "complex128"
    assert w.dtype == getattr(xrt, complex_name) and v.dtype == w.dtype
    w, v = host(w), host(v)
    values = host(linalg.eigvals(on_cuda(a)))
    expected = np.linalg.eigvals(a)
    scale = np.abs(expected).max()
    for got in (w, values):
        assert_same_values(got, expected, TOL[complex_name] * scale * 10)
    close(a @ v, v * w[..., None, :], complex_name, scale * 10)


@cuda
def test_eig_of_a_rotation_gives_a_conjugate_pair():
    a = np.array([[0.0, -1.0], [1.0, 0.0]])
    w, v = linalg.eig(on_cuda(a))
    w, v = host(w), host(v)
    np.testing.assert_allclose(np.sort_complex(w), [-1j, 1j], atol=1e-12)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-12)


@cuda
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_eig_of_non_finite_matrices_raises(value):
    a = np.eye(3)[None].repeat(3, 0)
    a[2, 0, 1] = value
    with pytest.raises(linalg.LinAlgError,
                       match=r"NaN or infinity \(matrix \(2,\) of the stack\)"):
        linalg.eig(on_cuda(a))


# ---- svd and what is built on it ---------------------------------------------------------

SVD_SHAPES = [(1, 1), (3, 3), (5, 3), (3, 5), (4, 6, 6), (4, 7, 3), (2, 3, 5, 9), (70, 40),
              (40, 70), (2, 40, 33), (90, 20), (20, 90)]
# The SVD kernels (Note [SVD drivers on CUDA]): the default chooses per shape, the others
# run Xgesvd or gesvdj for every shape when a policy pins them.
SVD_KERNELS = ["cusolver", "cusolver_gesvd", "cusolver_gesvdj"]


def check_svd(a, name, full, got=None):
    """got (or the SVD of a on CUDA) against NumPy's: the values, the reconstruction, and
    orthonormal U and Vh; svdvals too."""
    u, s, vh = got or linalg.svd(on_cuda(a), full_matrices=full)
    eu, es, evh = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (eu.shape, es.shape, evh.shape)
    u, s, vh = host(u), host(s), host(vh)
    scale = es.max()
    close(s, es, name, scale)
    assert (np.diff(s, axis=-1) <= 0).all()  # descending
    close(host(linalg.svdvals(on_cuda(a))), es, name, scale)
    k = s.shape[-1]
    close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, name, scale * 10)
    close(np.conj(mT(u)) @ u, identity_like(u), name, 10)
    close(vh @ np.conj(mT(vh)), identity_like(np.conj(mT(vh))), name, 10)


@cuda
@pytest.mark.parametrize("kernel", SVD_KERNELS)
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SVD_SHAPES)
@pytest.mark.parametrize("full", [False, True])
def test_svd_matches_numpy(kernel, name, shape, full):
    a = random(name, shape)
    with xrt.kernel_policy(svd=kernel), xrt.explain() as log:
        check_svd(a, name, full)
    assert set(log.kernels("svd")) == {kernel}


@cuda
@pytest.mark.parametrize("kernel", SVD_KERNELS)
@pytest.mark.parametrize("name", ["float32", "complex128"])
@pytest.mark.parametrize("shape", [(50, 40), (40, 50), (3, 8, 8)])
def test_svd_of_rank_deficient_matrices(kernel, name, shape):
    """Rank 3: U and Vh stay orthonormal (Jacobi builds U from A V / s, which the zero
    singular values leave to be completed) and the zero values come out zero."""
    a = random(name, shape[:-1] + (3,)) @ random(name, shape[:-2] + (3, shape[-1]))
    for full in (False, True):
        with xrt.kernel_policy(svd=kernel):
            check_svd(a.astype(name), name, full)


@pytest.fixture
def one_jacobi_sweep():
    """Jacobi stops after one sweep, which leaves matrices past 32 x 32 unconverged: the
    SVD must do them again with Xgesvd. (Smaller ones cannot test it: on an H200 with CUDA
    13, gesvdj and gesvdjBatched stopped by the limit on 12 x 12 matrices reported success.)"""
    previous = _core._cuda._svd_jacobi_max_sweeps(1)
    yield
    _core._cuda._svd_jacobi_max_sweeps(previous)


@cuda
@pytest.mark.parametrize("kernel", ["cusolver", "cusolver_gesvdj"])
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", [(40, 40), (3, 40, 40), (70, 40), (40, 70)])
def test_svd_falls_back_to_qr_where_jacobi_does_not_converge(one_jacobi_sweep, kernel, name,
                                                             shape):
    a = random(name, shape)
    with xrt.kernel_policy(svd=kernel):
        for full in (False, True):
            check_svd(a, name, full)
        close(host(linalg.pinv(on_cuda(a))), np.linalg.pinv(a), name,
              scale=np.abs(np.linalg.pinv(a)).max() * 10)


def test_jacobi_sweep_limit_is_validated():
    with pytest.raises(ValueError, match="sweep limit"):
        _core._cuda._svd_jacobi_max_sweeps(-1)
    assert _core._cuda._svd_jacobi_max_sweeps(0) == 0


@cuda
def test_svd_of_empty_matrices_gives_identities():
    for shape in [(2, 0, 3), (3, 0), (0, 4, 4)]:
        a = np.zeros(shape)
        for full in (True, False):
            got = linalg.svd(on_cuda(a), full_matrices=full)
            for t, e in zip(got, np.linalg.svd(a, full_matrices=full)):
                np.testing.assert_array_equal(host(t), e)


@cuda
@pytest.mark.parametrize("kernel", SVD_KERNELS)
@pytest.mark.parametrize("shape", [(3, 4, 4), (3, 40, 40), (3, 50, 30), (3, 30, 50)])
@pytest.mark.parametrize("fn", ["svd", "svdvals", "pinv", "matrix_rank"])
def test_svd_of_nan_raises_as_the_cpu(kernel, shape, fn):
    a = random("float64", shape)
    a[1, 0, 0] = np.nan
    with xrt.kernel_policy(svd=kernel), pytest.raises(linalg.LinAlgError,
                                                      match="did not converge") as info:
        getattr(linalg, fn)(on_cuda(a))
    assert str(info.value) == str(_cpu_error(getattr(linalg, fn), a))


@cuda
@pytest.mark.parametrize("kernel", SVD_KERNELS)
@pytest.mark.parametrize("shape", [(2, 4, 4), (2, 40, 40), (2, 50, 30)])
def test_svd_of_infinity_gives_nan_singular_values(kernel, shape):
    a = random("float64", shape)
    a[1, 0, 0] = np.inf
    with xrt.kernel_policy(svd=kernel):
        s = host(linalg.svdvals(on_cuda(a)))
        assert np.isnan(host(linalg.svd(on_cuda(a))[1])[1]).all()
    assert np.isnan(s[1]).all()
    close(s[0], np.linalg.svd(a[0], compute_uv=False), "float64", 10)
    assert host(linalg.matrix_rank(on_cuda(a)))[1] == 0


@cuda
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 3), (3, 5), (4, 6, 6), (2, 7, 3),
                                   (40, 70), (70, 40)])
def test_pinv_matches_numpy(name, shape):
    a = random(name, shape)
    got = linalg.pinv(on_cuda(a))
    expected = np.linalg.pinv(a)
    assert got.shape == expected.shape
    close(host(got), expected, name, scale=np.abs(expected).max() * 10)


@cuda
@pytest.mark.parametrize("n", [6, 40])
def test_pinv_and_matrix_rank_drop_small_singular_values(n):
    u, _ = np.linalg.qr(random("float64", (n, n)))
    s = np.logspace(0, -12, n)
    a = np.stack([(u * s) @ u.T, (u * np.where(s > 1e-5, s, 0)) @ u.T])
    for rtol in (None, 1e-6, np.array([1e-3, 1e-9])):
        kwargs = {} if rtol is None else {"rtol": rtol if np.isscalar(rtol) else on_cuda(rtol)}
        np_rtol = None if rtol is None else rtol
        expected_rank = [np.linalg.matrix_rank(a[i], rtol=None if np_rtol is None else
                                               (np_rtol if np.isscalar(np_rtol) else np_rtol[i]))
                         for i in range(2)]
        np.testing.assert_array_equal(host(linalg.matrix_rank(on_cuda(a), **kwargs)),
                                      expected_rank)
        expected_pinv = np.stack([np.linalg.pinv(a[i], rtol=1e-6) for i in range(2)])
        if isinstance(rtol, float) and rtol == 1e-6:
            close(host(linalg.pinv(on_cuda(a), **kwargs)), expected_pinv, "float64",
                  scale=np.abs(expected_pinv).max())


@cuda
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("ord", ["nuc", 2, -2])
@pytest.mark.parametrize("shape", [(3, 5), (4, 6, 6), (40, 33)])
def test_matrix_norm_through_the_svd(name, ord, shape):
    a = random(name, shape)
    got = host(linalg.matrix_norm(on_cuda(a), ord=ord))
    expected = np.linalg.norm(a, ord=ord, axis=(-2, -1))
    close(got, expected, name, scale=np.abs(expected).max())


# ---- shapes, layouts, dtypes --------------------------------------------------------------

FUNCTIONS = ["cholesky", "det", "slogdet", "inv", "qr", "eigh", "eigvalsh", "eig", "eigvals",
             "svd", "svdvals", "pinv", "matrix_rank"]


@cuda
@pytest.mark.parametrize("fn", FUNCTIONS + ["solve"])
def test_empty_stacks(fn):
    x = xrt.zeros((0, 3, 3), device="cuda:0")
    out = linalg.solve(x, x) if fn == "solve" else getattr(linalg, fn)(x)
    for t in out if isinstance(out, tuple) else (out,):
        assert t.shape[0] == 0 and t.device == x.device


@cuda
@pytest.mark.parametrize("fn", FUNCTIONS + ["solve"])
def test_non_contiguous_inputs(fn):
    base = positive_definite("float64", (3, 12, 12))
    cases = [  # (CUDA view, the same view on the CPU)
        (on_cuda(base)[::2, ::2, ::2], tensor(base)[::2, ::2, ::2]),  # strided everywhere
        (on_cuda(mT(base).copy()).mT, tensor(base)),  # column-major strides
    ]
    for x, cpu in cases:
        assert x.shape == cpu.shape
        call = (lambda t: linalg.solve(t, t)) if fn == "solve" else getattr(linalg, fn)
        got, expected = call(x), call(cpu)
        got = [host(t) for t in (got if isinstance(got, tuple) else (got,))]
        expected = [to_numpy(t) for t in (expected if isinstance(expected, tuple) else (expected,))]
        if fn in ("eig", "eigvals"):  # each library orders the eigenvalues its own way
            got, expected = [np.sort(np.abs(got[0]))], [np.sort(np.abs(expected[0]))]
        elif fn in ("qr", "eigh", "svd"):  # the factors are unique up to signs
            got, expected = [np.abs(g) for g in got], [np.abs(e) for e in expected]
        for g, e in zip(got, expected):
            close(g, e, "float64", scale=np.abs(e).max() * 10 if e.size else 1)


@cuda
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_half_precision_computes_in_float32(name):
    a = positive_definite("float32", (4, 4)).astype(numpy_dtype(name))
    x = on_cuda(a)
    for fn in ("cholesky", "inv", "det", "eigvalsh", "svdvals", "pinv"):
        got = getattr(linalg, fn)(x)
        assert got.dtype == getattr(xrt, name), fn
        expected = getattr(linalg, fn)(tensor(a))
        np.testing.assert_allclose(host(got).astype(np.float32),
                                   to_numpy(expected).astype(np.float32), rtol=2e-2, atol=2e-2)


@cuda
def test_one_by_one_matrices():
    a = np.array([[[4.0]], [[-2.0]]])
    x = on_cuda(a)
    np.testing.assert_allclose(host(linalg.det(x)), [4, -2])
    np.testing.assert_allclose(host(linalg.inv(x)), 1 / a)
    np.testing.assert_allclose(host(linalg.svdvals(x)), [[4], [2]])
    np.testing.assert_allclose(host(linalg.eigvalsh(x)), [[4], [-2]])
    np.testing.assert_array_equal(host(linalg.matrix_rank(x)), [1, 1])
    np.testing.assert_allclose(host(linalg.cholesky(x[:1])), [[[2.0]]])


@cuda
def test_a_non_default_stream_orders_the_work(request):
    """The inputs are written late on our (non-blocking) stream, behind a GPU sleep when
    PyTorch is here: the kernels must run on that stream, after it, to see them."""
    a = positive_definite("float64", (3, 50, 50))
    small = positive_definite("float64", (64, 8, 8))
    x0, y0 = on_cuda(a), on_cuda(small)
    xrt.cuda.synchronize()
    stream = xrt.cuda.Stream()
    with stream:
        try:
            busy(request.getfixturevalue("torch"), stream)
        except pytest.skip.Exception:
            pass
        x, y = x0 * 1.0, y0 * 1.0  # written on the stream, after the sleep
        results = [linalg.cholesky(x), linalg.inv(y), linalg.det(x), linalg.eigvalsh(x),
                   linalg.svdvals(y), linalg.solve(x, x[..., :2]), linalg.qr(y)[1],
                   linalg.pinv(y)]
        hosts = [host(t) for t in results]
    close(hosts[0], np.linalg.cholesky(a), "float64", 10)
    close(hosts[1], np.linalg.inv(small), "float64")
    np.testing.assert_allclose(hosts[2], np.linalg.det(a), rtol=1e-9)
    close(hosts[3], np.linalg.eigvalsh(a), "float64", 100)
    close(hosts[4], np.linalg.svd(small, compute_uv=False), "float64", 100)
    close(hosts[5], np.linalg.solve(a, a[..., :2]), "float64")
    close(np.abs(hosts[6]), np.abs(np.linalg.qr(small)[1]), "float64", 100)
    close(hosts[7], np.linalg.pinv(small), "float64", 10)


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA here")
    return torch


# ---- cross, outer: the CPU's results bit for bit -------------------------------------------

def _values(name, shape):
    dtype = numpy_dtype(name)
    if name.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    a = random("complex128" if name.startswith("complex") else "float64", shape) * 100
    return a.astype(dtype)


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[
        a.itemsize])


def assert_same(got, expected):
    """Bit for bit, except that a NaN is any NaN (the GPU's NaNs carry no payload)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, expected)
        return
    wide = np.complex128 if got.dtype.kind == "c" else np.float64  # exact for every float
    g = np.ascontiguousarray(got.astype(wide)).view(np.float64)
    e = np.ascontiguousarray(expected.astype(wide)).view(np.float64)
    nan = np.isnan(e)
    np.testing.assert_array_equal(np.isnan(g), nan)
    np.testing.assert_array_equal(_bits(g[~nan]), _bits(e[~nan]))


@cuda
@pytest.mark.parametrize("name", NUMERIC)
def test_cross_is_the_cpus_bit_for_bit(name):
    a, b = _values(name, (4, 3, 5)), _values(name, (1, 3, 5))
    for axis in (-2,):
        got = linalg.cross(on_cuda(a), on_cuda(b), axis=axis)
        expected = linalg.cross(tensor(a), tensor(b), axis=axis)
        assert_same(host(got), to_numpy(expected))
    # last axis, a transposed view
    c, d = _values(name, (3, 6)), _values(name, (6, 3))
    got = linalg.cross(on_cuda(c).mT, on_cuda(d))
    expected = linalg.cross(tensor(c).mT, tensor(d))
    assert_same(host(got), to_numpy(expected))


@cuda
@pytest.mark.parametrize("name", NUMERIC)
def test_outer_is_the_cpus_bit_for_bit(name):
    a, b = _values(name, (7,)), _values(name, (9,))
    got = linalg.outer(on_cuda(a), on_cuda(b))
    expected = linalg.outer(tensor(a), tensor(b))
    assert_same(host(got), to_numpy(expected))
    got = linalg.outer(on_cuda(a)[::-2], on_cuda(b)[1::3])  # strided views
    expected = linalg.outer(tensor(a)[::-2], tensor(b)[1::3])
    assert_same(host(got), to_numpy(expected))


@cuda
def test_cross_and_outer_keep_special_values():
    a = np.array([[np.inf, 0.0, -0.0], [np.nan, 1.0, 2.0]])
    b = np.array([[1.0, -0.0, 0.0], [3.0, np.inf, -1.0]])
    for fn, args in ((linalg.cross, (a, b)), (linalg.outer, (a[0], b[1]))):
        got = host(fn(*(on_cuda(x) for x in args)))
        expected = to_numpy(fn(*(tensor(x) for x in args)))
        assert_same(got, expected)
    z = np.array([complex(np.inf, 0), complex(0, -0.0), complex(np.nan, 1)])
    got = host(linalg.outer(on_cuda(z), on_cuda(z[::-1])))
    expected = to_numpy(linalg.outer(tensor(z), tensor(z[::-1])))
    assert_same(got, expected)

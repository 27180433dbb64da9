"""tests/test_linalg_decompositions.py: the linalg factorisations and spectral
decompositions against numpy.linalg: cholesky, det/slogdet, inv, solve, qr, eigh, eig, svd,
pinv and matrix_rank, on stacks of matrices of the four LAPACK dtypes.

The same functions by shape on every device and on CUDA: test_linalg_cuda_*.py.
"""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
import xpuruntime as xrt
from common import arrays, assert_tensor_equal, tensor, to_numpy
from hypothesis import assume, given
from hypothesis import strategies as st
from linalg_helpers import (linalg, FLOATS, REAL, stacks, sizes, tolerance, elements, matrices,
                            invertible, hermitian, adjoint, close, scale_of)


# ------------------------------------------------------------------- factorisations


@pytest.mark.parametrize("name", FLOATS)
@given(data=st.data())
def test_cholesky_matches_numpy(name, data):
    n = data.draw(sizes)
    b = matrices(data, name, n, n)
    a = hermitian((b @ adjoint(b) + (n + 1) * np.eye(n)).astype(b.dtype))  # positive definite
    upper = data.draw(st.booleans())
    t = linalg.cholesky(tensor(a), upper=upper)
    assert t.dtype == getattr(xrt, name) and t.shape == a.shape
    expected = np.linalg.cholesky(a, upper=upper)
    close(t, expected, name, scale_of(expected))
    # The other triangle is exactly zero.
    other = np.tril(to_numpy(t), -1) if upper else np.triu(to_numpy(t), 1)
    assert not other.any()


@pytest.mark.parametrize("name", FLOATS)
@given(data=st.data())
def test_det_and_slogdet_match_numpy(name, data):
    n = data.draw(sizes)
    a = invertible(matrices(data, name, n, n))
    d = linalg.det(tensor(a))
    assert d.dtype == getattr(xrt, name) and d.shape == a.shape[:-2]
    expected = np.linalg.det(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
    np.testing.assert_allclose(to_numpy(d), expected, rtol=10 * tolerance(name), atol=0)
    sign, logabsdet = linalg.slogdet(tensor(a))
    assert sign.dtype == getattr(xrt, name)
    assert logabsdet.dtype == getattr(
        xrt, "float32" if name in ("float32", "complex64") else "float64"
    )
    expected_sign, expected_log = np.linalg.slogdet(a)
    close(sign, expected_sign, name)
    close(logabsdet, expected_log, name, scale_of(expected_log))


@pytest.mark.parametrize("name", FLOATS)
def test_singular_determinants(name):
    a = np.array([[[1, 2], [2, 4]], [[0, 0], [0, 0]]], dtype=name)
    assert_tensor_equal(linalg.det(tensor(a)), np.zeros(2, dtype=name))
    sign, logabsdet = linalg.slogdet(tensor(a))
    assert_tensor_equal(sign, np.zeros(2, dtype=name))
    assert np.all(to_numpy(logabsdet) == -np.inf)


@pytest.mark.parametrize("name", FLOATS)
def test_determinant_of_empty_matrices_is_one(name):
    a = np.zeros((2, 0, 0), dtype=name)
    assert_tensor_equal(linalg.det(tensor(a)), np.ones(2, dtype=name))
    sign, logabsdet = linalg.slogdet(tensor(a))
    assert_tensor_equal(sign, np.ones(2, dtype=name))
    assert np.all(to_numpy(logabsdet) == 0)


@pytest.mark.parametrize("name", FLOATS)
@given(data=st.data())
def test_inv_matches_numpy(name, data):
    n = data.draw(sizes)
    a = invertible(matrices(data, name, n, n))
    t = linalg.inv(tensor(a))
    assert t.dtype == getattr(xrt, name) and t.shape == a.shape
    close(t, np.linalg.inv(a), name)
    if n:
        close(xrt.matmul(tensor(a), t), np.broadcast_to(np.eye(n), a.shape), name, n)


@pytest.mark.parametrize("name", FLOATS)
@given(data=st.data())
def test_solve_matches_numpy(name, data):
    n = data.draw(sizes)
    stack1, stack2 = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3)
    ).input_shapes
    a = invertible(matrices(data, name, n, n, stack1))
    if data.draw(st.booleans()):
        b = data.draw(arrays(name, (n,), **elements(name)))
    else:
        b = matrices(data, name, n, None, stack2)
    t = linalg.solve(tensor(a), tensor(b))
    expected = np.linalg.solve(a, b)
    assert t.shape == expected.shape and t.dtype == getattr(xrt, name)
    close(t, expected, name, scale_of(expected))


def test_solve_promotes_dtypes():
    a = np.eye(2, dtype=np.float32) * 2
    b = np.ones((2, 1), dtype=np.complex128)
    t = linalg.solve(tensor(a), tensor(b))
    assert t.dtype == xrt.complex128
    np.testing.assert_array_equal(to_numpy(t), np.full((2, 1), 0.5))


@pytest.mark.parametrize("name", FLOATS)
@given(data=st.data())
def test_qr_factors(name, data):
    a = matrices(data, name)
    m, n = a.shape[-2:]
    k = min(m, n)
    mode = data.draw(st.sampled_from(["reduced", "complete"]))
    q, r = linalg.qr(tensor(a), mode=mode)
    cols = m if mode == "complete" else k
    assert q.shape == a.shape[:-2] + (m, cols) and r.shape == a.shape[:-2] + (cols, n)
    assert q.dtype == r.dtype == getattr(xrt, name)
    qn, rn = to_numpy(q), to_numpy(r)
    close(xrt.matmul(q, r), a, name, scale_of(a) * max(m, 1))
    close(adjoint(qn) @ qn, np.broadcast_to(np.eye(cols), qn.shape[:-2] + (cols, cols)), name, 10)
    assert not np.tril(rn, -1).any()
    # R has a real diagonal (zgeqrf's reflectors); with independent leading columns it
    # is unique up to the phase of each row, so it matches NumPy's in absolute value.
    diagonal = np.diagonal(rn, axis1=-2, axis2=-1)
    assert np.all(np.abs(diagonal.imag) <= tolerance(name) * scale_of(a) * 10)
    if k and a.size and np.all(np.linalg.cond(a[..., :, :k].astype(np.complex128)) < 100):
        expected = np.linalg.qr(a, mode=mode)[1]
        close(np.abs(rn), np.abs(expected), name, scale_of(a) * max(m, 1))


# ------------------------------------------------------------ spectral decompositions


@pytest.mark.parametrize("name", FLOATS)
@given(data=st.data())
def test_eigh_matches_numpy(name, data):
    n = data.draw(sizes)
    a = hermitian(matrices(data, name, n, n))
    w, v = linalg.eigh(tensor(a))
    real = "float32" if name in ("float32", "complex64") else "float64"
    assert w.dtype == getattr(xrt, real) and w.shape == a.shape[:-1]
    assert v.dtype == getattr(xrt, name) and v.shape == a.shape
    scale = scale_of(a) * max(n, 1)
    close(w, np.linalg.eigvalsh(a), real, scale)
    vn, wn = to_numpy(v), to_numpy(w)
    close(xrt.matmul(tensor(a), v), vn * wn[..., None, :], name, scale)
    close(adjoint(vn) @ vn, np.broadcast_to(np.eye(n), a.shape), name, 10)
    close(linalg.eigvalsh(tensor(a)), np.linalg.eigvalsh(a), real, scale)


def nearest_distance(values, reference):
    """For each value, the distance to the nearest reference value."""
    if values.size == 0:
        return np.zeros(0)
    return np.min(np.abs(values[..., :, None] - reference[..., None, :]), axis=-1)


@pytest.mark.parametrize("name", FLOATS)
@given(data=st.data())
def test_eig_matches_numpy(name, data):
    n = data.draw(sizes)
    # Note: rounded entries. geev balances the matrix first; with entries 1e100 times
    # apart the balanced eigenvectors lose all accuracy (NumPy's do too).
    a = np.round(matrices(data, name, n, n), 2)
    w, v = linalg.eig(tensor(a))
    complex_name = "complex64" if name in ("float32", "complex64") else "complex128"
    assert w.dtype == v.dtype == getattr(xrt, complex_name)
    assert w.shape == a.shape[:-1] and v.shape == a.shape
    wn, vn = to_numpy(w), to_numpy(v)
    scale = scale_of(a) * max(n, 1)
    # A v = lambda v, with unit vectors.
    close(a @ vn, vn * wn[..., None, :], complex_name, scale)
    if n:
        close(np.linalg.norm(vn, axis=-2), np.ones(a.shape[:-1]), complex_name, 10)
    # Each eigenvalue is one of NumPy's (up to the conditioning of the problem).
    wide = a.astype(np.complex128)
    distance = nearest_distance(wn, np.linalg.eigvals(wide))
    assert np.all(distance <= np.sqrt(tolerance(name)) * scale)
    close(wn.sum(axis=-1), np.trace(wide, axis1=-2, axis2=-1), complex_name, scale)
    eigenvalues_only = to_numpy(linalg.eigvals(tensor(a)))
    assert np.all(nearest_distance(eigenvalues_only, wn) <= np.sqrt(tolerance(name)) * scale)


@pytest.mark.parametrize("name", REAL)
def test_eig_of_a_rotation_gives_a_conjugate_pair(name):
    a = np.array([[0, -1], [1, 0]], dtype=name)
    w, v = linalg.eig(tensor(a))
    wn, vn = to_numpy(w), to_numpy(v)
    np.testing.assert_allclose(np.sort_complex(wn), [-1j, 1j], atol=1e-6)
    np.testing.assert_allclose(a @ vn, vn * wn, atol=1e-6)
    np.testing.assert_allclose(vn[:, 1], np.conj(vn[:, 0]), atol=1e-6)


@pytest.mark.parametrize("name", FLOATS)
@given(data=st.data())
def test_svd_matches_numpy(name, data):
    a = matrices(data, name)
    m, n = a.shape[-2:]
    k = min(m, n)
    full = data.draw(st.booleans())
    u, s, vh = linalg.svd(tensor(a), full_matrices=full)
    real = "float32" if name in ("float32", "complex64") else "float64"
    assert u.shape == a.shape[:-2] + ((m, m) if full else (m, k))
    assert vh.shape == a.shape[:-2] + ((n, n) if full else (k, n))
    assert s.shape == a.shape[:-2] + (k,) and s.dtype == getattr(xrt, real)
    assert u.dtype == vh.dtype == getattr(xrt, name)
    scale = scale_of(a) * max(m, n, 1)
    sn = to_numpy(s)
    close(s, np.linalg.svd(a, compute_uv=False), real, scale)
    assert np.all(sn[..., :-1] >= sn[..., 1:])
    un, vhn = to_numpy(u), to_numpy(vh)
    close((un[..., :, :k] * sn[..., None, :]) @ vhn[..., :k, :], a, name, scale)
    close(
        adjoint(un) @ un,
        np.broadcast_to(np.eye(un.shape[-1]), un.shape[:-2] + (un.shape[-1],) * 2),
        name,
        10,
    )
    close(linalg.svdvals(tensor(a)), np.linalg.svd(a, compute_uv=False), real, scale)


def test_svd_of_empty_matrices_gives_identities():
    u, s, vh = linalg.svd(xrt.zeros((0, 3)))
    assert u.shape == (0, 0) and s.shape == (0,)
    assert_tensor_equal(vh, np.eye(3))
    u, s, vh = linalg.svd(xrt.zeros((2, 0)), full_matrices=False)
    assert u.shape == (2, 0) and s.shape == (0,) and vh.shape == (0, 0)


@pytest.mark.parametrize("name", FLOATS)
@given(data=st.data())
def test_pinv_matches_numpy(name, data):
    a = matrices(data, name, stack=())
    m, n = a.shape
    if m and n:
        assume(np.linalg.cond(a.astype(np.complex128)) < 1e3)
    t = linalg.pinv(tensor(a))
    assert t.shape == (n, m) and t.dtype == getattr(xrt, name)
    expected = np.linalg.pinv(a.astype(np.complex128 if name.startswith("c") else np.float64))
    close(t, expected, name, 10 * scale_of(expected))


@pytest.mark.parametrize("name", FLOATS)
def test_pinv_drops_small_singular_values(name):
    u = np.linalg.qr(np.arange(1, 10).reshape(3, 3) + np.eye(3))[0]
    a = (u * np.array([4.0, 1.0, 1e-3])) @ u.T
    keep_two = (u[:, :2] / np.array([4.0, 1.0])) @ u[:, :2].T
    close(linalg.pinv(tensor(a.astype(name)), rtol=0.01), keep_two, name, 10)
    close(linalg.pinv(tensor(a.astype(name)), rtol=xrt.asarray(0.01)), keep_two, name, 10)
    close(linalg.pinv(tensor(a.astype(name)), rtol=0), np.linalg.inv(a), name, 1e4)


@pytest.mark.parametrize("name", FLOATS)
@given(data=st.data())
def test_matrix_rank_matches_numpy(name, data):
    rank = data.draw(st.integers(0, 3))
    stack = data.draw(stacks)
    m, n = data.draw(sizes), data.draw(sizes)
    b = data.draw(hnp.arrays(np.int8, stack + (m, rank), elements=st.integers(-3, 3)))
    c = data.draw(hnp.arrays(np.int8, stack + (rank, n), elements=st.integers(-3, 3)))
    a = (b.astype(np.int64) @ c).astype(name)
    t = linalg.matrix_rank(tensor(a))
    assert t.dtype == xrt.int64 and t.shape == stack
    expected = np.linalg.matrix_rank(a) if m and n else np.zeros(stack, np.int64)
    assert_tensor_equal(t, np.asarray(expected, dtype=np.int64))


def test_matrix_rank_rtol():
    a = np.diag([1.0, 0.1, 0.001])
    assert int(linalg.matrix_rank(tensor(a))) == 3
    assert int(linalg.matrix_rank(tensor(a), rtol=0.01)) == 2
    assert int(linalg.matrix_rank(tensor(a), rtol=0.5)) == 1
    stacked = np.stack([a, a])
    ranks = linalg.matrix_rank(tensor(stacked), rtol=xrt.asarray([0.01, 0.5]))
    assert_tensor_equal(ranks, np.array([2, 1]))
    with pytest.raises(ValueError, match="rtol"):
        linalg.matrix_rank(tensor(stacked), rtol=xrt.asarray([0.1, 0.2, 0.3]))
    with pytest.raises(TypeError, match="rtol"):
        linalg.matrix_rank(tensor(a), rtol=xrt.asarray([1]))

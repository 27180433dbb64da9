"""tests/test_linalg.py: the linalg extension and tensordot/vecdot/matrix_transpose
against numpy.linalg: stacks of matrices, the four LAPACK dtypes (float16/bfloat16 where
they apply), special inputs and the errors; on every device where the test takes the
`device` fixture, and on CUDA against the CPU.

On CUDA, linalg runs xpuruntime's own kernels (cuSOLVER, cuBLAS's batched LU, NVRTC helpers)
and gives NumPy's results within a tolerance per dtype, and the CPU's errors: every
LAPACK-backed op and every linalg function that reaches them (eigvalsh, svdvals,
matrix_norm's 'nuc' and 2 orders, matrix_power with a negative exponent), single matrices,
stacks (the batched routines below 32 x 32 and the per-matrix ones above), empty stacks,
0 x 0 and 1 x 1 matrices, non-contiguous and broadcast inputs, non-finite values, a
non-default stream. cross and outer are compared with the CPU bit for bit. The device tests
(parametrised by shape) hold the CPU to the same tolerances.

Non-finite matrices follow the CPU where the CPU is consistent (svd raises for NaN and
gives NaN singular values for infinity, eig raises, solve/inv/cholesky let NaN through);
eigh gives NaN eigenvalues for a matrix with NaN or infinity in its lower triangle, where
LAPACK's heevd sometimes returns NaN and sometimes reports no convergence.

Without a GPU, the kernels' sources are compiled for sm_90 here (and by test_cuda_jit.py's
compile-all test) when NVRTC is installed.
"""

import os

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
import xpuruntime as xrt
from common import (CUDA_DEVICE, INTEGER, NUMERIC, arrays, assert_tensor_equal, numpy_dtype,
                    tensor, to_numpy)
from cuda_helpers import busy, core
from hypothesis import assume, given, settings
from hypothesis import strategies as st


linalg = xrt.linalg
FLOATS = ("float32", "float64", "complex64", "complex128")
REAL = ("float32", "float64")

stacks = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)
sizes = st.integers(0, 5)


def tolerance(name):
    return 1e-4 if name in ("float32", "complex64") else 1e-10


def elements(name, bound=10):
    """Finite values up to bound, without subnormals (LAPACK's results on those are as
    far from the exact ones as NumPy's)."""
    finite = {"allow_nan": False, "allow_infinity": False, "allow_subnormal": False}
    if name in ("complex64", "complex128"):
        return {"max_magnitude": bound, **finite}
    return {"min_value": -bound, "max_value": bound, **finite}


def matrices(data, name, rows=None, cols=None, stack=None, bound=10):
    """A stack of rows x cols matrices of dtype `name` (drawn where not given)."""
    rows = data.draw(sizes) if rows is None else rows
    cols = data.draw(sizes) if cols is None else cols
    stack = data.draw(stacks) if stack is None else stack
    return data.draw(arrays(name, tuple(stack) + (rows, cols), **elements(name, bound)))


def invertible(a):
    """a made strictly diagonally dominant: nonsingular and well conditioned."""
    n = a.shape[-1]
    weight = np.abs(a).sum(axis=-1, keepdims=True) + 1
    return (a + np.eye(n, dtype=a.dtype) * weight).astype(a.dtype)


def hermitian(a):
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(a.dtype)


def adjoint(a):
    return np.conj(np.swapaxes(a, -1, -2))


def close(t, expected, name, scale=1.0):
    """t matches expected within the dtype's tolerance (atol relative to scale)."""
    tol = tolerance(name)
    np.testing.assert_allclose(to_numpy(t), expected, rtol=tol, atol=tol * scale)


def scale_of(a):
    return max(1.0, float(np.max(np.abs(a), initial=0)))


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


# --------------------------------------------------------------------- norms


VECTOR_ORDS = [2, 1, 0, -1, -2, np.inf, -np.inf, 3, 0.5, -0.5, 2.5]


@pytest.mark.parametrize("name", FLOATS)
@settings(max_examples=100)
@given(data=st.data())
def test_vector_norm_matches_numpy(name, data):
    ord = data.draw(st.sampled_from(VECTOR_ORDS) | st.integers(-5, 5))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
    a = data.draw(arrays(name, shape, **elements(name, 100)))
    axis = data.draw(
        st.none()
        | hnp.valid_tuple_axes(a.ndim)
        | (st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none())
    )
    keepdims = data.draw(st.booleans())
    t = linalg.vector_norm(tensor(a), axis=axis, keepdims=keepdims, ord=ord)
    # The reference in long double, whose range holds the squares of every float64.
    wide = a.astype(np.clongdouble if name.startswith("c") else np.longdouble)
    with np.errstate(divide="ignore", over="ignore"):
        expected = np.linalg.vector_norm(wide, axis=axis, keepdims=keepdims, ord=ord)
    expected = np.asarray(expected).astype(np.float64)
    real = "float32" if name in ("float32", "complex64") else "float64"
    assert t.dtype == getattr(xrt, real) and t.shape == np.shape(expected)
    close(t, expected, real, 0)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_vector_norm_of_small_floats_keeps_the_dtype(name):
    a = np.array([3, 4], dtype=numpy_dtype(name))
    assert_tensor_equal(linalg.vector_norm(tensor(a)), np.asarray(5, dtype=a.dtype))


def test_vector_norm_avoids_overflow_and_underflow():
    for value in (1e200, 1e-200, 1e-310):
        for ord in (2, 3, -2, 0.5):
            t = linalg.vector_norm(xrt.asarray([value, value]), ord=ord)
            np.testing.assert_allclose(float(t), value * 2 ** (1 / ord), rtol=1e-12)
    # float32 squares of these overflow float32, not the double accumulator.
    t = linalg.vector_norm(xrt.asarray([3e30, 4e30], dtype=xrt.float32))
    assert t.dtype == xrt.float32
    np.testing.assert_allclose(float(t), 5e30, rtol=1e-6)


def test_vector_norm_special_values():
    inf, nan = np.inf, np.nan
    norm = linalg.vector_norm
    assert float(norm(xrt.asarray([1.0, inf]))) == inf
    assert float(norm(xrt.asarray([1.0, inf]), ord=-inf)) == 1.0
    assert np.isnan(float(norm(xrt.asarray([nan, inf]))))
    assert np.isnan(float(norm(xrt.asarray([nan, 1.0]), ord=inf)))
    assert float(norm(xrt.asarray([0.0, 2.0]), ord=-1)) == 0.0
    assert float(norm(xrt.asarray([0.0, 2.0, -3.0]), ord=0)) == 2.0
    assert float(norm(xrt.asarray([3 + 4j]))) == 5.0
    # Empty reductions: the norms of no values.
    empty = xrt.zeros((0,))
    assert float(norm(empty)) == 0.0 and float(norm(empty, ord=inf)) == 0.0
    assert float(norm(empty, ord=-inf)) == inf


MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("name", FLOATS)
@settings(max_examples=60)
@given(data=st.data())
def test_matrix_norm_matches_numpy(name, data):
    ord = data.draw(st.sampled_from(MATRIX_ORDS))
    a = matrices(data, name, data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    keepdims = data.draw(st.booleans())
    t = linalg.matrix_norm(tensor(a), keepdims=keepdims, ord=ord)
    expected = np.linalg.matrix_norm(a, keepdims=keepdims, ord=ord)
    real = "float32" if name in ("float32", "complex64") else "float64"
    assert t.dtype == getattr(xrt, real) and t.shape == expected.shape
    close(t, expected, real, scale_of(a) * 10)


# -------------------------------------------------------------- matrix_power


@pytest.mark.parametrize("name", FLOATS)
@given(data=st.data())
def test_matrix_power_matches_numpy(name, data):
    n = data.draw(sizes)
    power = data.draw(st.integers(-3, 6))
    a = matrices(data, name, n, n, bound=2)
    if power < 0:
        a = invertible(a)
    t = linalg.matrix_power(tensor(a), power)
    wide = a.astype(np.complex128 if name.startswith("c") else np.float64)
    expected = np.linalg.matrix_power(wide, power) if a.size else np.zeros(a.shape)
    assert t.dtype == getattr(xrt, name) and t.shape == a.shape
    close(t, expected, name, scale_of(expected))


def test_matrix_power_zero_and_one():
    a = np.arange(8.0).reshape(2, 2, 2)
    assert_tensor_equal(linalg.matrix_power(tensor(a), 0), np.broadcast_to(np.eye(2), a.shape))
    t = tensor(a)
    once = linalg.matrix_power(t, 1)
    assert_tensor_equal(once, a)
    assert once._data_ptr() != t._data_ptr()  # a new array, not the input


# ------------------------------------------------------------ views and products


@pytest.mark.parametrize("name", ["bool", "int16", "float32", "complex128"])
@given(data=st.data())
def test_matrix_transpose_and_diagonal(name, data):
    a = data.draw(arrays(name, data.draw(stacks) + (data.draw(sizes), data.draw(sizes))))
    assert_tensor_equal(xrt.matrix_transpose(tensor(a)), np.swapaxes(a, -1, -2))
    assert_tensor_equal(linalg.matrix_transpose(tensor(a)), np.swapaxes(a, -1, -2))
    offset = data.draw(st.integers(-7, 7))
    assert_tensor_equal(
        linalg.diagonal(tensor(a), offset=offset), np.diagonal(a, offset, axis1=-2, axis2=-1)
    )


def test_diagonal_is_a_view_and_takes_any_offset():
    t = xrt.asarray(np.arange(12.0).reshape(3, 4))
    d = linalg.diagonal(t, offset=1)
    assert d._data_ptr() == t._data_ptr() + 8
    for offset in (2**62, -(2**62), -(2**63)):
        assert linalg.diagonal(t, offset=offset).shape == (0,)


@pytest.mark.parametrize("name", NUMERIC)
@given(data=st.data())
def test_trace_matches_numpy(name, data):
    a = data.draw(
        arrays(
            name,
            data.draw(stacks) + (data.draw(sizes), data.draw(sizes)),
            **({} if name in INTEGER else elements(name)),
        )
    )
    offset = data.draw(st.integers(-4, 4))
    t = linalg.trace(tensor(a), offset=offset)
    signed = name.startswith("int")
    wide = "int64" if signed else "uint64" if name in INTEGER else None
    if name in ("float16", "bfloat16"):
        expected = np.trace(a.astype(np.float32), offset, axis1=-2, axis2=-1).astype(a.dtype)
        assert t.dtype == getattr(xrt, name) and t.shape == expected.shape
        np.testing.assert_allclose(
            to_numpy(t).astype(np.float32), expected.astype(np.float32), rtol=1e-2, atol=0.1
        )
        return
    expected = np.trace(a, offset, axis1=-2, axis2=-1, dtype=wide)
    if name in INTEGER:
        assert_tensor_equal(t, np.asarray(expected))
    else:
        assert t.dtype == getattr(xrt, name)
        close(t, expected, name, scale_of(a) * 5)


def test_trace_dtype_argument():
    a = np.array([[100, 1], [2, 100]], dtype=np.int8)
    assert_tensor_equal(linalg.trace(tensor(a), dtype=xrt.int8), np.int8(-56))
    assert_tensor_equal(linalg.trace(tensor(a), dtype=xrt.float64), np.float64(200))


@pytest.mark.parametrize("name", NUMERIC)
@given(data=st.data())
def test_outer_is_the_elementwise_product(name, data):
    # Note: complex infinities multiply by C99's rules here (the standard leaves them to
    # the implementation), NumPy's by the textbook formula; only finite values compare.
    # Magnitudes stay where no product overflows (there, fused and unfused differ wildly).
    opts = {}
    if name.startswith("complex"):
        opts = {"allow_nan": False, "allow_infinity": False, "max_magnitude": 1e15}
    x = data.draw(arrays(name, (data.draw(sizes),), **opts))
    y = data.draw(arrays(name, (data.draw(sizes),), **opts))
    with np.errstate(all="ignore"):
        expected = np.multiply.outer(x, y)
    t = linalg.outer(tensor(x), tensor(y))
    if name.startswith("complex"):  # NumPy may fuse ac - bd into one rounding
        assert t.dtype == getattr(xrt, name)
        np.testing.assert_allclose(to_numpy(t), expected, rtol=4 * np.finfo(x.dtype).eps)
    else:
        assert_tensor_equal(t, expected)


def test_outer_keeps_signed_zeros():
    t = linalg.outer(xrt.asarray([-0.0, 1.0]), xrt.asarray([1.0, -0.0]))
    assert np.array_equal(np.signbit(to_numpy(t)), [[True, False], [False, True]])


@pytest.mark.parametrize(
    "name", ["int8", "uint16", "int64", "float32", "float64", "complex64", "complex128"]
)
@given(data=st.data())
def test_cross_matches_numpy(name, data):
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=3)
    )
    axis = data.draw(st.integers(-min(len(s) for s in shapes.input_shapes), -1))
    s1, s2 = (list(s) for s in shapes.input_shapes)
    s1[axis] = s2[axis] = 3
    x = data.draw(arrays(name, tuple(s1), **({} if name in INTEGER else elements(name))))
    y = data.draw(arrays(name, tuple(s2), **({} if name in INTEGER else elements(name))))
    t = linalg.cross(tensor(x), tensor(y), axis=axis)
    with np.errstate(all="ignore"):
        expected = np.cross(x, y, axis=axis)
    if name in INTEGER:
        assert_tensor_equal(t, expected)
    else:
        assert t.dtype == getattr(xrt, name)
        close(t, expected, name, 200)


@pytest.mark.parametrize(
    "name", ["int16", "uint8", "float32", "float64", "complex64", "complex128"]
)
@given(data=st.data())
def test_tensordot_matches_numpy(name, data):
    ndim1, ndim2 = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    shape1 = data.draw(hnp.array_shapes(min_dims=ndim1, max_dims=ndim1, min_side=0, max_side=3))
    shape2 = list(
        data.draw(hnp.array_shapes(min_dims=ndim2, max_dims=ndim2, min_side=0, max_side=3))
    )
    if data.draw(st.booleans()):
        n = data.draw(st.integers(0, min(ndim1, ndim2)))
        axes = n
        pairs = list(zip(range(ndim1 - n, ndim1), range(n)))
    else:
        count = data.draw(st.integers(0, min(ndim1, ndim2)))
        first = data.draw(st.permutations(range(ndim1)))[:count]
        second = data.draw(st.permutations(range(ndim2)))[:count]
        first = [a - ndim1 if data.draw(st.booleans()) else a for a in first]
        axes = (tuple(first), tuple(second))
        pairs = list(zip(first, second))
    for i, j in pairs:
        shape2[j] = shape1[i]
    opts = {} if name in INTEGER else elements(name)
    x = data.draw(arrays(name, shape1, **opts))
    y = data.draw(arrays(name, tuple(shape2), **opts))
    t = xrt.tensordot(tensor(x), tensor(y), axes=axes)
    with np.errstate(all="ignore"):
        expected = np.tensordot(
            x, y, axes=axes if isinstance(axes, int) else (list(axes[0]), list(axes[1]))
        )
    if name in INTEGER:
        assert_tensor_equal(t, np.asarray(expected, dtype=name))
    else:
        assert t.dtype == getattr(xrt, name) and t.shape == expected.shape
        close(t, expected, name, 100 * max(1, x.size))
    assert linalg.tensordot is xrt.tensordot


@pytest.mark.parametrize(
    "name", ["int8", "uint32", "float32", "float64", "complex64", "complex128"]
)
@given(data=st.data())
def test_vecdot_matches_numpy(name, data):
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=4)
    )
    s1, s2 = (list(s) for s in shapes.input_shapes)
    axis = data.draw(st.integers(-min(len(s1), len(s2)), -1))
    s2[axis] = s1[axis]
    opts = {} if name in INTEGER else elements(name)
    x = data.draw(arrays(name, tuple(s1), **opts))
    y = data.draw(arrays(name, tuple(s2), **opts))
    t = xrt.vecdot(tensor(x), tensor(y), axis=axis)
    with np.errstate(all="ignore"):
        expected = np.asarray(np.sum(np.conj(x) * y, axis=axis, dtype=x.dtype))
    if name in INTEGER:
        assert_tensor_equal(t, expected)
    else:
        assert t.dtype == getattr(xrt, name) and t.shape == expected.shape
        close(t, expected, name, 100 * max(1, x.shape[axis]))
    assert linalg.vecdot is xrt.vecdot


def test_vecdot_conjugates_the_first_argument():
    t = xrt.vecdot(xrt.asarray([1j, 2j, 3j]), xrt.asarray([1, 2j, 3]))
    assert complex(t) == 4 - 10j


# -------------------------------------------------------------- layouts and dtypes


def test_strided_and_reversed_inputs():
    base = np.arange(1.0, 37.0).reshape(6, 6) + 10 * np.eye(6)
    view = base[::-2, 1::2]  # negative row stride, non-unit column stride
    for fn, ref in (
        (linalg.det, np.linalg.det),
        (linalg.inv, np.linalg.inv),
        (linalg.svdvals, lambda a: np.linalg.svd(a, compute_uv=False)),
        (linalg.eigvalsh, lambda a: np.linalg.eigvalsh(a)),
    ):
        np.testing.assert_allclose(to_numpy(fn(xrt.asarray(view))), ref(view), rtol=1e-10)
        np.testing.assert_allclose(to_numpy(fn(xrt.asarray(view).mT)), ref(view.T), rtol=1e-10)
    b = base[:3, ::-2]
    np.testing.assert_allclose(
        to_numpy(linalg.solve(xrt.asarray(view), xrt.asarray(b))),
        np.linalg.solve(view, b),
        rtol=1e-10,
    )
    broadcast = xrt.asarray(np.broadcast_to(view, (2, 3, 3)))
    np.testing.assert_allclose(to_numpy(linalg.det(broadcast)), np.linalg.det(view) * np.ones(2))


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_small_floats_compute_in_float32(name):
    dtype = numpy_dtype(name)
    a = np.array([[4, 1], [2, 3]], dtype=dtype)
    ref = a.astype(np.float32)
    for fn, expected in (
        (linalg.det, np.linalg.det(ref)),
        (linalg.inv, np.linalg.inv(ref)),
        (linalg.svdvals, np.linalg.svd(ref, compute_uv=False)),
        (linalg.pinv, np.linalg.pinv(ref)),
    ):
        t = fn(tensor(a))
        assert t.dtype == getattr(xrt, name)
        np.testing.assert_allclose(to_numpy(t).astype(np.float32), expected, rtol=1e-2)
    assert linalg.eigh(tensor(a)).eigenvalues.dtype == getattr(xrt, name)
    assert linalg.slogdet(tensor(a)).logabsdet.dtype == getattr(xrt, name)
    with pytest.raises(TypeError, match="complex"):
        linalg.eig(tensor(a))


@pytest.mark.parametrize(
    "fn",
    [
        "cholesky",
        "det",
        "eigh",
        "eigvalsh",
        "eig",
        "eigvals",
        "inv",
        "qr",
        "slogdet",
        "svd",
        "svdvals",
        "pinv",
        "matrix_rank",
        "matrix_norm",
        "vector_norm",
    ],
)
@pytest.mark.parametrize("name", ["bool", "int32", "uint8"])
def test_non_floating_inputs_are_refused(fn, name):
    with pytest.raises(TypeError, match="floating-point"):
        getattr(linalg, fn)(xrt.asarray(np.eye(2, dtype=name)))


def test_matrix_power_of_integers_is_refused():
    with pytest.raises(TypeError, match="floating-point"):
        linalg.matrix_power(xrt.asarray(np.eye(2, dtype=np.int64)), 2)


@pytest.mark.parametrize(
    "fn",
    [
        "cholesky",
        "det",
        "eigh",
        "eigvalsh",
        "eig",
        "eigvals",
        "inv",
        "qr",
        "slogdet",
        "svd",
        "svdvals",
        "pinv",
        "matrix_rank",
        "matrix_norm",
        "matrix_power",
        "trace",
        "diagonal",
        "matrix_transpose",
    ],
)
def test_empty_stacks(fn):
    x = xrt.zeros((0, 3, 3))
    args = (2,) if fn == "matrix_power" else ()
    out = getattr(linalg, fn)(x, *args)
    for t in out if isinstance(out, tuple) else (out,):
        assert t.shape[0] == 0


def test_named_tuples():
    a = xrt.asarray(np.eye(2))
    for fn, fields in (
        ("eigh", ("eigenvalues", "eigenvectors")),
        ("eig", ("eigenvalues", "eigenvectors")),
        ("qr", ("Q", "R")),
        ("slogdet", ("sign", "logabsdet")),
        ("svd", ("U", "S", "Vh")),
    ):
        result = getattr(linalg, fn)(a)
        assert type(result) is not tuple and isinstance(result, tuple)
        assert result._fields == fields
        assert all(result[i] is getattr(result, f) for i, f in enumerate(fields))
        assert type(result).__module__ == "xpuruntime.linalg"


def test_identity_inputs():
    eye = xrt.asarray(np.eye(3))
    assert_tensor_equal(linalg.inv(eye), np.eye(3))
    assert_tensor_equal(linalg.cholesky(eye), np.eye(3))
    assert float(linalg.det(eye)) == 1.0
    assert_tensor_equal(linalg.svdvals(eye), np.ones(3))
    assert_tensor_equal(linalg.eigvalsh(eye), np.ones(3))
    assert int(linalg.matrix_rank(eye)) == 3
    assert int(linalg.matrix_rank(xrt.zeros((3, 3)))) == 0
    assert_tensor_equal(linalg.pinv(xrt.zeros((2, 3))), np.zeros((3, 2)))


# ------------------------------------------------------------------- errors


def test_linalg_error_is_a_value_error():
    assert issubclass(linalg.LinAlgError, ValueError)
    assert linalg.LinAlgError.__module__ == "xpuruntime.linalg"


def test_singular_and_indefinite_matrices_raise():
    singular = xrt.asarray([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]])
    with pytest.raises(linalg.LinAlgError, match=r"singular \(matrix \(1,\) of the stack\)"):
        linalg.inv(singular)
    with pytest.raises(linalg.LinAlgError, match="singular"):
        linalg.solve(singular, xrt.ones((2,)))
    with pytest.raises(linalg.LinAlgError, match="positive definite"):
        linalg.cholesky(xrt.asarray([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(linalg.LinAlgError, match="NaN"):
        linalg.eig(xrt.asarray([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(linalg.LinAlgError):
        linalg.svd(xrt.asarray([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(linalg.LinAlgError, match="singular"):
        linalg.matrix_power(singular, -2)


@pytest.mark.parametrize(
    "fn",
    ["cholesky", "det", "eigh", "eigvalsh", "eig", "eigvals", "inv", "slogdet", "matrix_power"],
)
def test_square_matrices_are_required(fn):
    args = (2,) if fn == "matrix_power" else ()
    with pytest.raises(ValueError, match="square"):
        getattr(linalg, fn)(xrt.zeros((2, 3)), *args)


@pytest.mark.parametrize(
    "fn",
    [
        "cholesky",
        "det",
        "eigh",
        "inv",
        "qr",
        "svd",
        "svdvals",
        "pinv",
        "matrix_rank",
        "matrix_norm",
        "diagonal",
        "trace",
        "matrix_transpose",
    ],
)
def test_matrices_need_two_dimensions(fn):
    with pytest.raises(ValueError, match="2 dimensions"):
        getattr(linalg, fn)(xrt.zeros((3,)))


def test_argument_errors():
    m = xrt.zeros((3, 3))
    v = xrt.zeros((3,))
    with pytest.raises(ValueError, match="does not fit"):
        linalg.solve(m, xrt.zeros((2,)))
    with pytest.raises(ValueError, match="does not fit"):
        linalg.solve(m, xrt.zeros((2, 2)))
    with pytest.raises(ValueError, match="mode"):
        linalg.qr(m, mode="r")
    with pytest.raises(ValueError, match="ord"):
        linalg.matrix_norm(m, ord=3)
    with pytest.raises(ValueError, match="ord"):
        linalg.matrix_norm(m, ord="max")
    with pytest.raises(TypeError, match="ord"):
        linalg.vector_norm(v, ord="fro")
    with pytest.raises(ValueError, match="repeated"):
        linalg.vector_norm(m, axis=(0, -2))
    with pytest.raises(IndexError):
        linalg.vector_norm(m, axis=2)
    with pytest.raises(ValueError, match="length 3"):
        linalg.cross(xrt.zeros((2,)), xrt.zeros((2,)))
    with pytest.raises(ValueError, match="negative"):
        linalg.cross(v, v, axis=0)
    with pytest.raises(ValueError, match="one-dimensional"):
        linalg.outer(m, v)
    with pytest.raises(ValueError, match="differ"):
        xrt.vecdot(v, xrt.zeros((4,)))
    with pytest.raises(ValueError, match="negative"):
        xrt.vecdot(v, v, axis=0)
    with pytest.raises(ValueError, match="differ in size"):
        xrt.tensordot(m, xrt.zeros((1, 3)), axes=([0], [0]))
    with pytest.raises(ValueError, match="same length"):
        xrt.tensordot(m, m, axes=([0], [0, 1]))
    with pytest.raises(ValueError, match="repeated"):
        xrt.tensordot(m, m, axes=([0, 0], [0, 1]))
    with pytest.raises(ValueError, match="axes"):
        xrt.tensordot(m, m, axes=3)
    with pytest.raises(ValueError, match="axes"):
        xrt.tensordot(m, m, axes=-1)
    with pytest.raises(IndexError):
        xrt.tensordot(m, m, axes=([2], [0]))
    with pytest.raises(TypeError, match="numeric"):
        linalg.outer(xrt.asarray([True]), xrt.asarray([True]))
    with pytest.raises(TypeError, match="numeric"):
        linalg.trace(xrt.asarray(np.eye(2, dtype=bool)))
    with pytest.raises(TypeError, match="Tensor"):
        linalg.inv([[1.0]])
    with pytest.raises(TypeError, match="int"):
        linalg.matrix_power(m, 1.0)


def test_integer_arguments_take_index_objects_but_not_bools():
    a = xrt.asarray(np.arange(9.0).reshape(3, 3))
    assert_tensor_equal(linalg.diagonal(a, offset=np.int64(1)), np.array([1.0, 5.0]))
    assert_tensor_equal(linalg.matrix_power(a, np.int8(1)), np.arange(9.0).reshape(3, 3))
    assert linalg.vector_norm(a, axis=np.int32(0), ord=np.int64(1)).shape == (3,)
    with pytest.raises(TypeError, match="offset"):
        linalg.diagonal(a, offset=True)
    with pytest.raises(TypeError, match="ord"):
        linalg.vector_norm(a, ord=1j)
    with pytest.raises(OverflowError):
        linalg.matrix_power(a, 2**70)


# ==== on every device (by shape) and on CUDA ======================================================

cuda = pytest.mark.cuda

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


def random_hermitian(name, shape):
    b = random(name, shape)
    return ((b + np.conj(np.swapaxes(b, -1, -2))) / 2).astype(name)


def on(device, a):
    return tensor(np.ascontiguousarray(a), device)


def on_cuda(a):
    return on(CUDA_DEVICE, a)


def host(t, device=CUDA_DEVICE):
    """A result as a NumPy array, after checking that it is on `device`."""
    assert t.device == xrt.Device(device)
    return to_numpy(t)


def close_to(got, expected, name, scale=1.0):
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


def _cpu_error(fn, *arrays):
    with pytest.raises(linalg.LinAlgError) as info:
        fn(*(tensor(a) for a in arrays))
    return info.value


def test_cholesky_lets_nan_through_as_the_cpu_does(device):
    a = positive_definite("float64", (3, 4, 4))
    a[1, 0, 0] = np.nan
    out = host(linalg.cholesky(on(device, a)), device)
    assert np.isnan(out[1]).any()
    close_to(out[[0, 2]], np.linalg.cholesky(a[[0, 2]]), "float64", 10)


# ---- det, slogdet ------------------------------------------------------------------------

@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_det_and_slogdet_for_each_shape_match_numpy(device, name, shape):
    n = shape[-1]
    a = ((random(name, shape) + 0.5 * np.eye(n)) / np.sqrt(n)).astype(name)  # |det| in range
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


# ---- eigh, eig ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_eigh_for_each_shape_matches_numpy(device, name, shape):
    a = random_hermitian(name, shape)
    w, v = linalg.eigh(on(device, a))
    values = linalg.eigvalsh(on(device, a))
    expected = np.linalg.eigvalsh(a)
    scale = np.abs(expected).max()
    close_to(host(w, device), expected, name, scale)
    close_to(host(values, device), expected, name, scale)
    v = host(v, device)
    close_to(a @ v, v * host(w, device)[..., None, :], name, scale)
    close_to(np.conj(mT(v)) @ v, identity_like(v), name, 10)


def test_eigh_reads_the_lower_triangle(device):
    a = random_hermitian("complex128", (3, 6, 6))
    junk = a.copy()
    junk[:, np.triu_indices(6, 1)[0], np.triu_indices(6, 1)[1]] = 7 + 7j
    close_to(host(linalg.eigvalsh(on(device, junk)), device), np.linalg.eigvalsh(a, UPLO="L"),
             "complex128", 10)
    close_to(host(linalg.eigh(on(device, junk)).eigenvalues, device), np.linalg.eigvalsh(a),
             "complex128", 10)


@pytest.mark.cuda
@pytest.mark.parametrize("n", [4, 40])
def test_eigh_of_non_finite_matrices_gives_nan_values(n):
    a = random_hermitian("float64", (3, n, n))
    a[1, n - 1, 0] = np.nan
    a[2, 0, 0] = np.inf
    w = host(linalg.eigvalsh(on_cuda(a)))
    assert np.isnan(w[1:]).all()
    close_to(w[0], np.linalg.eigvalsh(a[0]), "float64", 10)


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


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (4, 6, 6), (40, 40)])
def test_eig_for_each_shape_matches_numpy(device, name, shape):
    a = random(name, shape)
    w, v = linalg.eig(on(device, a))
    complex_name = "complex64" if name in ("float32", "complex64") else "complex128"
    assert w.dtype == getattr(xrt, complex_name) and v.dtype == w.dtype
    w, v = host(w, device), host(v, device)
    values = host(linalg.eigvals(on(device, a)), device)
    expected = np.linalg.eigvals(a)
    scale = np.abs(expected).max()
    for got in (w, values):
        assert_same_values(got, expected, TOL[complex_name] * scale * 10)
    close_to(a @ v, v * w[..., None, :], complex_name, scale * 10)


def test_eig_of_a_rotation_gives_conjugate_values_and_vectors(device):
    a = np.array([[0.0, -1.0], [1.0, 0.0]])
    w, v = linalg.eig(on(device, a))
    w, v = host(w, device), host(v, device)
    np.testing.assert_allclose(np.sort_complex(w), [-1j, 1j], atol=1e-12)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-12)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_eig_of_non_finite_matrices_raises(device, value):
    a = np.eye(3)[None].repeat(3, 0)
    a[2, 0, 1] = value
    with pytest.raises(linalg.LinAlgError,
                       match=r"NaN or infinity \(matrix \(2,\) of the stack\)"):
        linalg.eig(on(device, a))


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
    close_to(s, es, name, scale)
    assert (np.diff(s, axis=-1) <= 0).all()  # descending
    close_to(host(linalg.svdvals(on_cuda(a))), es, name, scale)
    k = s.shape[-1]
    close_to((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, name, scale * 10)
    close_to(np.conj(mT(u)) @ u, identity_like(u), name, 10)
    close_to(vh @ np.conj(mT(vh)), identity_like(np.conj(mT(vh))), name, 10)


@cuda
@pytest.mark.parametrize("kernel", SVD_KERNELS)
@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", SVD_SHAPES)
@pytest.mark.parametrize("full", [False, True])
def test_svd_with_each_kernel_matches_numpy(kernel, name, shape, full):
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
    previous = core._cuda._svd_jacobi_max_sweeps(1)
    yield
    core._cuda._svd_jacobi_max_sweeps(previous)


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
        close_to(host(linalg.pinv(on_cuda(a))), np.linalg.pinv(a), name,
                 scale=np.abs(np.linalg.pinv(a)).max() * 10)


def test_jacobi_sweep_limit_is_validated():
    with pytest.raises(ValueError, match="sweep limit"):
        core._cuda._svd_jacobi_max_sweeps(-1)
    assert core._cuda._svd_jacobi_max_sweeps(0) == 0


def test_svd_of_empty_stacks_gives_identities(device):
    for shape in [(2, 0, 3), (3, 0), (0, 4, 4)]:
        a = np.zeros(shape)
        for full in (True, False):
            got = linalg.svd(on(device, a), full_matrices=full)
            for t, e in zip(got, np.linalg.svd(a, full_matrices=full)):
                np.testing.assert_array_equal(host(t, device), e)


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
    close_to(s[0], np.linalg.svd(a[0], compute_uv=False), "float64", 10)
    assert host(linalg.matrix_rank(on_cuda(a)))[1] == 0


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 3), (3, 5), (4, 6, 6), (2, 7, 3),
                                   (40, 70), (70, 40)])
def test_pinv_for_each_shape_matches_numpy(device, name, shape):
    a = random(name, shape)
    got = linalg.pinv(on(device, a))
    expected = np.linalg.pinv(a)
    assert got.shape == expected.shape
    close_to(host(got, device), expected, name, scale=np.abs(expected).max() * 10)


@pytest.mark.parametrize("n", [6, 40])
def test_pinv_and_matrix_rank_drop_small_singular_values(device, n):
    u, _ = np.linalg.qr(random("float64", (n, n)))
    s = np.logspace(0, -12, n)
    a = np.stack([(u * s) @ u.T, (u * np.where(s > 1e-5, s, 0)) @ u.T])
    for rtol in (None, 1e-6, np.array([1e-3, 1e-9])):
        kwargs = {} if rtol is None else {"rtol": rtol if np.isscalar(rtol) else on(device, rtol)}
        np_rtol = None if rtol is None else rtol
        expected_rank = [np.linalg.matrix_rank(a[i], rtol=None if np_rtol is None else
                                               (np_rtol if np.isscalar(np_rtol) else np_rtol[i]))
                         for i in range(2)]
        np.testing.assert_array_equal(host(linalg.matrix_rank(on(device, a), **kwargs), device),
                                      expected_rank)
        expected_pinv = np.stack([np.linalg.pinv(a[i], rtol=1e-6) for i in range(2)])
        if isinstance(rtol, float) and rtol == 1e-6:
            close_to(host(linalg.pinv(on(device, a), **kwargs), device), expected_pinv, "float64",
                     scale=np.abs(expected_pinv).max())


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("ord", ["nuc", 2, -2])
@pytest.mark.parametrize("shape", [(3, 5), (4, 6, 6), (40, 33)])
def test_matrix_norm_through_the_svd(device, name, ord, shape):
    a = random(name, shape)
    got = host(linalg.matrix_norm(on(device, a), ord=ord), device)
    expected = np.linalg.norm(a, ord=ord, axis=(-2, -1))
    close_to(got, expected, name, scale=np.abs(expected).max())


# ---- shapes, layouts, dtypes --------------------------------------------------------------

FUNCTIONS = ["cholesky", "det", "slogdet", "inv", "qr", "eigh", "eigvalsh", "eig", "eigvals",
             "svd", "svdvals", "pinv", "matrix_rank"]


@pytest.mark.parametrize("fn", FUNCTIONS + ["solve"])
def test_empty_stacks_stay_on_their_device(device, fn):
    x = xrt.zeros((0, 3, 3), device=device)
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
            close_to(g, e, "float64", scale=np.abs(e).max() * 10 if e.size else 1)


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


def test_one_by_one_matrices(device):
    a = np.array([[[4.0]], [[-2.0]]])
    x = on(device, a)
    np.testing.assert_allclose(host(linalg.det(x), device), [4, -2])
    np.testing.assert_allclose(host(linalg.inv(x), device), 1 / a)
    np.testing.assert_allclose(host(linalg.svdvals(x), device), [[4], [2]])
    np.testing.assert_allclose(host(linalg.eigvalsh(x), device), [[4], [-2]])
    np.testing.assert_array_equal(host(linalg.matrix_rank(x), device), [1, 1])
    np.testing.assert_allclose(host(linalg.cholesky(x[:1]), device), [[[2.0]]])


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
    close_to(hosts[0], np.linalg.cholesky(a), "float64", 10)
    close_to(hosts[1], np.linalg.inv(small), "float64")
    np.testing.assert_allclose(hosts[2], np.linalg.det(a), rtol=1e-9)
    close_to(hosts[3], np.linalg.eigvalsh(a), "float64", 100)
    close_to(hosts[4], np.linalg.svd(small, compute_uv=False), "float64", 100)
    close_to(hosts[5], np.linalg.solve(a, a[..., :2]), "float64")
    close_to(np.abs(hosts[6]), np.abs(np.linalg.qr(small)[1]), "float64", 100)
    close_to(hosts[7], np.linalg.pinv(small), "float64", 10)


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

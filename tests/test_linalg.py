"""tests/test_linalg.py: the linalg extension and tensordot/vecdot/matrix_transpose
against numpy.linalg: stacks of matrices, the four LAPACK dtypes (float16/bfloat16 where
they apply), special inputs and the errors."""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import xpuruntime as xrt
from common import (INTEGER, NUMERIC, REAL_FLOATING, arrays, assert_tensor_equal,
                    numpy_dtype, tensor, to_numpy)

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
    finite = dict(allow_nan=False, allow_infinity=False, allow_subnormal=False)
    if name in ("complex64", "complex128"):
        return dict(max_magnitude=bound, **finite)
    return dict(min_value=-bound, max_value=bound, **finite)


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
    assert logabsdet.dtype == getattr(xrt, "float32" if name in ("float32", "complex64") else "float64")
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
    stack1, stack2 = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, max_dims=2, max_side=3)).input_shapes
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
    close(adjoint(un) @ un, np.broadcast_to(np.eye(un.shape[-1]), un.shape[:-2] + (un.shape[-1],) * 2), name, 10)
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
    expected = (np.linalg.matrix_rank(a) if m and n else np.zeros(stack, np.int64))
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
    axis = data.draw(st.none() | hnp.valid_tuple_axes(a.ndim) |
                     (st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none()))
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
    assert_tensor_equal(linalg.diagonal(tensor(a), offset=offset),
                        np.diagonal(a, offset, axis1=-2, axis2=-1))


def test_diagonal_is_a_view_and_takes_any_offset():
    t = xrt.asarray(np.arange(12.0).reshape(3, 4))
    d = linalg.diagonal(t, offset=1)
    assert d._data_ptr() == t._data_ptr() + 8
    for offset in (2**62, -(2**62), -(2**63)):
        assert linalg.diagonal(t, offset=offset).shape == (0,)


@pytest.mark.parametrize("name", NUMERIC)
@given(data=st.data())
def test_trace_matches_numpy(name, data):
    a = data.draw(arrays(name, data.draw(stacks) + (data.draw(sizes), data.draw(sizes)),
                         **({} if name in INTEGER else elements(name))))
    offset = data.draw(st.integers(-4, 4))
    t = linalg.trace(tensor(a), offset=offset)
    signed = name.startswith("int")
    wide = "int64" if signed else "uint64" if name in INTEGER else None
    if name in ("float16", "bfloat16"):
        expected = np.trace(a.astype(np.float32), offset, axis1=-2, axis2=-1).astype(a.dtype)
        assert t.dtype == getattr(xrt, name) and t.shape == expected.shape
        np.testing.assert_allclose(to_numpy(t).astype(np.float32), expected.astype(np.float32),
                                   rtol=1e-2, atol=0.1)
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
    opts = (dict(allow_nan=False, allow_infinity=False, max_magnitude=1e15)
            if name.startswith("complex") else {})
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


@pytest.mark.parametrize("name", ["int8", "uint16", "int64", "float32", "float64",
                                  "complex64", "complex128"])
@given(data=st.data())
def test_cross_matches_numpy(name, data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3,
                                                         max_side=3))
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


@pytest.mark.parametrize("name", ["int16", "uint8", "float32", "float64", "complex64",
                                  "complex128"])
@given(data=st.data())
def test_tensordot_matches_numpy(name, data):
    ndim1, ndim2 = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    shape1 = data.draw(hnp.array_shapes(min_dims=ndim1, max_dims=ndim1, min_side=0, max_side=3))
    shape2 = list(data.draw(hnp.array_shapes(min_dims=ndim2, max_dims=ndim2, min_side=0,
                                             max_side=3)))
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
        expected = np.tensordot(x, y, axes=axes if isinstance(axes, int) else
                                (list(axes[0]), list(axes[1])))
    if name in INTEGER:
        assert_tensor_equal(t, np.asarray(expected, dtype=name))
    else:
        assert t.dtype == getattr(xrt, name) and t.shape == expected.shape
        close(t, expected, name, 100 * max(1, x.size))
    assert linalg.tensordot is xrt.tensordot


@pytest.mark.parametrize("name", ["int8", "uint32", "float32", "float64", "complex64",
                                  "complex128"])
@given(data=st.data())
def test_vecdot_matches_numpy(name, data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3,
                                                         max_side=4))
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
    for fn, ref in ((linalg.det, np.linalg.det), (linalg.inv, np.linalg.inv),
                    (linalg.svdvals, lambda a: np.linalg.svd(a, compute_uv=False)),
                    (linalg.eigvalsh, lambda a: np.linalg.eigvalsh(a))):
        np.testing.assert_allclose(to_numpy(fn(xrt.asarray(view))), ref(view), rtol=1e-10)
        np.testing.assert_allclose(to_numpy(fn(xrt.asarray(view).mT)), ref(view.T),
                                   rtol=1e-10)
    b = base[:3, ::-2]
    np.testing.assert_allclose(to_numpy(linalg.solve(xrt.asarray(view), xrt.asarray(b))),
                               np.linalg.solve(view, b), rtol=1e-10)
    broadcast = xrt.asarray(np.broadcast_to(view, (2, 3, 3)))
    np.testing.assert_allclose(to_numpy(linalg.det(broadcast)), np.linalg.det(view) * np.ones(2))


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_small_floats_compute_in_float32(name):
    dtype = numpy_dtype(name)
    a = np.array([[4, 1], [2, 3]], dtype=dtype)
    ref = a.astype(np.float32)
    for fn, expected in ((linalg.det, np.linalg.det(ref)), (linalg.inv, np.linalg.inv(ref)),
                         (linalg.svdvals, np.linalg.svd(ref, compute_uv=False)),
                         (linalg.pinv, np.linalg.pinv(ref))):
        t = fn(tensor(a))
        assert t.dtype == getattr(xrt, name)
        np.testing.assert_allclose(to_numpy(t).astype(np.float32), expected, rtol=1e-2)
    assert linalg.eigh(tensor(a)).eigenvalues.dtype == getattr(xrt, name)
    assert linalg.slogdet(tensor(a)).logabsdet.dtype == getattr(xrt, name)
    with pytest.raises(TypeError, match="complex"):
        linalg.eig(tensor(a))


@pytest.mark.parametrize("fn", ["cholesky", "det", "eigh", "eigvalsh", "eig", "eigvals", "inv",
                                "qr", "slogdet", "svd", "svdvals", "pinv", "matrix_rank",
                                "matrix_norm", "vector_norm"])
@pytest.mark.parametrize("name", ["bool", "int32", "uint8"])
def test_non_floating_inputs_are_refused(fn, name):
    with pytest.raises(TypeError, match="floating-point"):
        getattr(linalg, fn)(xrt.asarray(np.eye(2, dtype=name)))


def test_matrix_power_of_integers_is_refused():
    with pytest.raises(TypeError, match="floating-point"):
        linalg.matrix_power(xrt.asarray(np.eye(2, dtype=np.int64)), 2)


@pytest.mark.parametrize("fn", ["cholesky", "det", "eigh", "eigvalsh", "eig", "eigvals", "inv",
                                "qr", "slogdet", "svd", "svdvals", "pinv", "matrix_rank",
                                "matrix_norm", "matrix_power", "trace", "diagonal",
                                "matrix_transpose"])
def test_empty_stacks(fn):
    x = xrt.zeros((0, 3, 3))
    args = (2,) if fn == "matrix_power" else ()
    out = getattr(linalg, fn)(x, *args)
    for t in (out if isinstance(out, tuple) else (out,)):
        assert t.shape[0] == 0


def test_named_tuples():
    a = xrt.asarray(np.eye(2))
    for fn, fields in (("eigh", ("eigenvalues", "eigenvectors")),
                       ("eig", ("eigenvalues", "eigenvectors")), ("qr", ("Q", "R")),
                       ("slogdet", ("sign", "logabsdet")), ("svd", ("U", "S", "Vh"))):
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


@pytest.mark.parametrize("fn", ["cholesky", "det", "eigh", "eigvalsh", "eig", "eigvals", "inv",
                                "slogdet", "matrix_power"])
def test_square_matrices_are_required(fn):
    args = (2,) if fn == "matrix_power" else ()
    with pytest.raises(ValueError, match="square"):
        getattr(linalg, fn)(xrt.zeros((2, 3)), *args)


@pytest.mark.parametrize("fn", ["cholesky", "det", "eigh", "inv", "qr", "svd", "svdvals",
                                "pinv", "matrix_rank", "matrix_norm", "diagonal", "trace",
                                "matrix_transpose"])
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

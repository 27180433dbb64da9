"""tests/test_linalg_dtypes_and_errors.py: linalg on strided and reversed inputs,
float16/bfloat16 (computed in float32), non-floating inputs, empty stacks, the named tuples,
and the errors: LinAlgError, singular and indefinite matrices, shapes and arguments.
"""

import numpy as np
import pytest
import xpuruntime as xrt
from common import assert_tensor_equal, numpy_dtype, tensor, to_numpy
from linalg_helpers import linalg


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

"""tests/test_dtypes.py: the 15 dtype singletons, NumPy mapping, promotion."""

import itertools

import numpy as np
import pytest

import xpuruntime as xrt
from common import ALL, DTYPES, NUMPY_NATIVE, SIGNED


# ---------------------------------------------------------------- objects


def test_dtypes_are_singletons_of_DType(dtype_name):
    dtype = getattr(xrt, dtype_name)
    assert isinstance(dtype, xrt.DType)
    assert getattr(xrt, dtype_name) is dtype
    assert xrt.dtype(dtype_name) is dtype


def test_equality_and_hash_follow_identity():
    dtypes = [getattr(xrt, n) for n in ALL]
    for a, b in itertools.product(dtypes, repeat=2):
        assert (a == b) == (a is b)
        assert (a != b) == (a is not b)
    assert len(set(dtypes)) == 15
    assert hash(xrt.float32) == hash(xrt.dtype("float32"))
    assert {xrt.int8: "i8"}[xrt.dtype("int8")] == "i8"


def test_comparing_with_other_objects_is_false_not_an_error():
    assert (xrt.float32 == object()) is False
    assert (xrt.float32 != None) is True  # noqa: E711


def test_str_and_repr(dtype_name):
    dtype = getattr(xrt, dtype_name)
    assert str(dtype) == dtype_name
    assert repr(dtype) == f"xpuruntime.{dtype_name}"


def test_name_itemsize_kind(dtype_name):
    dtype = getattr(xrt, dtype_name)
    itemsize, kind = DTYPES[dtype_name]
    assert dtype.name == dtype_name
    assert dtype.itemsize == itemsize
    assert dtype.kind == kind


# ------------------------------------------------------------------ NumPy


@pytest.mark.parametrize("name", NUMPY_NATIVE)
def test_numpy_round_trip(name):
    dtype = getattr(xrt, name)
    assert np.dtype(xrt.dtype_to_numpy(dtype)) == np.dtype(name)
    assert xrt.dtype_from_numpy(np.dtype(name)) is dtype
    assert xrt.dtype(np.dtype(name)) is dtype


def test_bfloat16_maps_to_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    assert np.dtype(xrt.dtype_to_numpy(xrt.bfloat16)) == bf16
    assert xrt.dtype_from_numpy(bf16) is xrt.bfloat16


def test_bfloat16_without_ml_dtypes_says_so():
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("ml_dtypes is installed")
    with pytest.raises(TypeError, match="ml_dtypes"):
        xrt.dtype_to_numpy(xrt.bfloat16)


@pytest.mark.parametrize("bad", [np.dtype("M8[s]"), np.dtype("U3"),
                                 np.dtype([("a", "i4")]), np.dtype(object)])
def test_numpy_dtypes_without_counterpart_raise_TypeError(bad):
    with pytest.raises(TypeError):
        xrt.dtype_from_numpy(bad)


@pytest.mark.parametrize("bad", ["float128", "complex256", "floaty", 42, object()])
def test_dtype_rejects_unknown_names_and_objects(bad):
    with pytest.raises(TypeError):
        xrt.dtype(bad)


@pytest.mark.parametrize("py_type,name", [(bool, "bool"), (int, "int64"), (float, "float64"),
                                          (complex, "complex128")])
def test_python_types_name_the_default_dtypes(py_type, name):
    """Note [Python types as dtypes]: as in NumPy, PyTorch, CuPy and JAX (SciPy passes
    xp.zeros(shape, dtype=bool)); strings and NumPy's dtypes stay errors."""
    want = getattr(xrt, name)
    assert xrt.zeros(2, dtype=py_type).dtype == want
    assert xrt.asarray([1, 0], dtype=py_type).dtype == want
    assert xrt.astype(xrt.ones(2), py_type).dtype == want
    assert xrt.full(2, 1, dtype=py_type).dtype == want
    assert xrt.isdtype(py_type, want)
    if name in ("float64", "complex128"):
        assert xrt.finfo(py_type).bits == 64
    if name == "int64":
        assert xrt.iinfo(py_type).max == 2**63 - 1
    assert xrt.can_cast(want, py_type) and xrt.can_cast(py_type, want)
    for bad in (name, np.dtype(name), object):
        with pytest.raises(TypeError):
            xrt.zeros(2, dtype=bad)


# -------------------------------------------------------------- promotion

# Spot checks of the standard's promotion table, with float16/bfloat16
# promoting like small floats.
PROMOTIONS = [
    ("bool", "bool", "bool"),
    ("int8", "int8", "int8"),
    ("int8", "int64", "int64"),
    ("uint8", "uint32", "uint32"),
    ("int8", "uint8", "int16"),
    ("int16", "uint8", "int16"),
    ("int8", "uint16", "int32"),
    ("int32", "uint16", "int32"),
    ("int8", "uint32", "int64"),
    ("int64", "uint32", "int64"),
    ("float32", "float64", "float64"),
    ("float32", "complex64", "complex64"),
    ("float64", "complex64", "complex128"),
    ("float32", "complex128", "complex128"),
    ("complex64", "complex128", "complex128"),
    ("float16", "float16", "float16"),
    ("bfloat16", "bfloat16", "bfloat16"),
    ("float16", "bfloat16", "float32"),
    ("float16", "float32", "float32"),
    ("bfloat16", "float64", "float64"),
    ("float16", "complex64", "complex64"),
    ("bfloat16", "complex128", "complex128"),
]


@pytest.mark.parametrize("a, b, expected", PROMOTIONS)
def test_result_type_table(a, b, expected):
    a, b, expected = (getattr(xrt, n) for n in (a, b, expected))
    assert xrt.result_type(a, b) is expected
    assert xrt.result_type(b, a) is expected


def _undefined(a, b):
    kind_a, kind_b = DTYPES[a][1], DTYPES[b][1]
    integers = {"signed integer", "unsigned integer"}
    floats = {"real floating", "complex floating"}
    if (kind_a == "bool") != (kind_b == "bool"):
        return True
    if (kind_a in integers and kind_b in floats) or (
            kind_b in integers and kind_a in floats):
        return True
    # Note: the standard leaves uint64 with *any* signed integer undefined,
    # not only int64 (there is no wider signed type to promote to).
    return "uint64" in (a, b) and (a in SIGNED or b in SIGNED)


UNDEFINED = [(a, b) for a, b in itertools.combinations_with_replacement(ALL, 2)
             if _undefined(a, b)]


@pytest.mark.parametrize("a, b", UNDEFINED)
def test_result_type_undefined_combinations_raise_TypeError(a, b):
    with pytest.raises(TypeError):
        xrt.result_type(getattr(xrt, a), getattr(xrt, b))
    with pytest.raises(TypeError):
        xrt.result_type(getattr(xrt, b), getattr(xrt, a))


NUMPY_AGREES = [(a, b) for a, b in itertools.product(NUMPY_NATIVE, repeat=2)
                if not _undefined(a, b)]


@pytest.mark.parametrize("a, b", NUMPY_AGREES)
def test_result_type_agrees_with_numpy_where_defined(a, b):
    # Within the standard's table NumPy's promotion is the same.
    expected = np.result_type(np.dtype(a), np.dtype(b)).name
    assert xrt.result_type(getattr(xrt, a), getattr(xrt, b)).name == expected


def test_result_type_of_one_dtype_is_itself(dtype_name):
    dtype = getattr(xrt, dtype_name)
    assert xrt.result_type(dtype) is dtype


def test_result_type_folds_many_arguments():
    assert xrt.result_type(xrt.int8, xrt.uint8, xrt.int16) is xrt.int16
    assert xrt.result_type(xrt.uint8, xrt.int8, xrt.uint16) is xrt.int32
    assert xrt.result_type(xrt.float16, xrt.bfloat16, xrt.complex64) is (
        xrt.complex64)
    with pytest.raises(TypeError):
        xrt.result_type(xrt.int8, xrt.uint8, xrt.uint64)


@pytest.mark.parametrize("a, b", [("int8", "uint8"), ("uint16", "int32"),
                                  ("float32", "complex64"),
                                  ("float16", "bfloat16")])
def test_result_type_accepts_tensors(a, b):
    a, b = getattr(xrt, a), getattr(xrt, b)
    expected = xrt.result_type(a, b)
    x = xrt.zeros((2,), dtype=a)
    assert xrt.result_type(x, b) is expected
    assert xrt.result_type(x, xrt.zeros((), dtype=b)) is expected


def test_result_type_needs_an_argument():
    # NumPy and array-api-strict both reject an empty call.
    with pytest.raises((TypeError, ValueError)):
        xrt.result_type()


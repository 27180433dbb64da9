"""tests/test_conventions.py: what a NumPy, CuPy or PyTorch user expects of a tensor: repr,
str and format that never raise (bfloat16 without ml_dtypes), pickle and copy with the device
kept, len, iteration, tolist, item, and NumPy scalars as operands in both orders."""

import copy
import pickle

import numpy as np
import pytest

import xpuruntime as xrt
from common import run_in_child, tensor, to_numpy


def test_bfloat16_prints_without_ml_dtypes():
    code = """
import sys
sys.modules["ml_dtypes"] = None  # an import of ml_dtypes now fails
x = xrt.asarray([1.5, -2.0, 3.0], dtype=xrt.bfloat16)
print(repr(x)); print(str(x)); print(format(x, ".2f")); print(x.tolist())
"""
    rc, out, err = run_in_child(code)
    assert rc == 0, err
    lines = out.strip().splitlines()
    assert lines[0] == "Tensor([ 1.5, -2. ,  3. ], dtype=bfloat16)"
    assert lines[1] == "[ 1.5 -2.   3. ]"
    assert lines[2] == "[1.50 -2.00 3.00]"
    assert lines[3] == "[1.5, -2.0, 3.0]"


@pytest.mark.parametrize("spec, want", [(".3f", "2.500"), ("", "2.5"), ("e", "2.500000e+00")])
def test_format_of_a_0d_tensor_is_the_scalars(spec, want):
    assert format(xrt.asarray(2.5), spec) == want
    assert f"{xrt.asarray(2.5):{spec}}" == want


def test_format_of_an_array_formats_each_element():
    assert format(xrt.asarray([[1.0, 2.5]]), ".1f") == "[[1.0 2.5]]"
    assert format(xrt.asarray([1, 2]), "03d") == "[001 002]"


def test_format_with_a_bad_spec_is_a_value_error():
    with pytest.raises(ValueError):
        format(xrt.asarray([1.0, 2.0]), "?!")


def test_repr_of_a_broadcast_view_and_an_empty_tensor():
    assert repr(xrt.broadcast_to(xrt.asarray([1, 2]), (2, 2))).startswith("Tensor([[1, 2],")
    assert repr(xrt.empty((0, 3))).endswith("dtype=float64)")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8", "bool", "complex128",
                                   "uint64"])
def test_pickle_round_trips_values_dtype_and_shape(device, dtype):
    x = xrt.astype(tensor(np.arange(6).reshape(2, 3) % 3, device), getattr(xrt, dtype))
    y = pickle.loads(pickle.dumps(x))
    assert y.dtype == x.dtype and y.shape == x.shape and y.device == x.device
    assert y.tolist() == x.tolist()


def test_pickle_of_a_strided_view_stores_its_values(device):
    x = tensor(np.arange(12.0).reshape(3, 4), device)
    view = x[::2, ::-1]
    y = pickle.loads(pickle.dumps(view))
    np.testing.assert_array_equal(to_numpy(y), to_numpy(x)[::2, ::-1])


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy])
def test_copies_are_new_memory_on_the_same_device(device, how):
    x = tensor(np.arange(4.0), device)
    y = how(x)
    assert y.device == x.device and y.dtype == x.dtype
    y[0] = 9.0
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_deepcopy_of_a_container_keeps_tensors(device):
    box = {"w": tensor(np.ones(2), device)}
    assert copy.deepcopy(box)["w"].tolist() == [1.0, 1.0]


def test_len_is_the_first_extent_and_a_0d_tensor_has_none():
    assert len(xrt.zeros((4, 2))) == 4
    assert len(xrt.zeros((0,))) == 0
    with pytest.raises(TypeError, match="0-d"):
        len(xrt.asarray(1.0))


def test_iteration_yields_rows_and_a_0d_tensor_is_not_iterable(device):
    x = tensor(np.arange(6).reshape(3, 2), device)
    rows = list(x)
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(TypeError, match="0-d"):
        iter(xrt.asarray(1.0, device=device)).__next__()
    with pytest.raises(TypeError):
        list(xrt.asarray(1.0, device=device))


def test_tolist_and_item_give_python_scalars(device):
    assert tensor(np.array([[1, 2]], dtype=np.int32), device).tolist() == [[1, 2]]
    assert type(tensor(np.array([1], dtype=np.int32), device).tolist()[0]) is int
    assert xrt.asarray(True, device=device).tolist() is True
    assert xrt.asarray(2.5, device=device).item() == 2.5
    assert type(xrt.asarray([7], device=device).item()) is int
    assert xrt.asarray(1 + 2j, device=device).item() == 1 + 2j
    with pytest.raises(ValueError, match="exactly one element"):
        xrt.ones(2, device=device).item()


# ---- NumPy scalars as operands ------------------------------------------------------------
# The rule (docs/api.md): a NumPy scalar counts as the Python scalar of its kind, so the
# tensor's dtype wins, as with Python scalars (np.float64 already is a Python float).

SCALARS = [np.int64(3), np.int8(3), np.uint16(3), np.float32(3), np.float16(3),
           np.float64(3)]


@pytest.mark.parametrize("scalar", SCALARS, ids=lambda s: type(s).__name__)
def test_numpy_scalars_work_in_both_operand_orders(scalar):
    x = xrt.asarray([1.0, 2.0], dtype=xrt.float32)
    for got in (x + scalar, scalar + x, x * scalar, scalar * x, x - scalar, scalar - x):
        assert got.dtype == xrt.float32
    assert (x * scalar).tolist() == [3.0, 6.0]
    assert (scalar - x).tolist() == [2.0, 1.0]
    assert (x < scalar).tolist() == [True, True]


def test_a_numpy_integer_next_to_an_integer_tensor_keeps_the_tensors_dtype():
    x = xrt.asarray([1, 2], dtype=xrt.int8)
    assert (x + np.int64(1)).dtype == xrt.int8
    assert (np.int64(1) + x).tolist() == [2, 3]
    assert xrt.add(x, np.int32(2)).tolist() == [3, 4]


def test_a_numpy_float_next_to_an_integer_tensor_follows_the_python_rule():
    with pytest.raises(TypeError):
        xrt.asarray([1, 2]) + np.float32(1.5)


def test_a_0d_numpy_array_is_not_taken_for_a_scalar():
    with pytest.raises(TypeError):
        xrt.asarray([1.0]) + np.asarray(1.0)


# ---- discoverability ----------------------------------------------------------------------

def test_all_lists_the_public_names_and_nothing_private():
    import pathlib

    listed = pathlib.Path(__file__).with_name("public_names.txt").read_text().splitlines()
    top = {line.split(".", 1)[1] for line in listed
           if line.startswith("xpuruntime.") and line.count(".") == 1
           and not line.split(".", 1)[1].startswith("_")}
    assert top <= set(xrt.__all__), sorted(top - set(xrt.__all__))
    assert all(not name.startswith("_") for name in xrt.__all__)
    assert {"linalg", "fft", "asarray", "float32", "Tensor", "pi"} <= set(xrt.__all__)
    assert all(hasattr(xrt, name) for name in xrt.__all__)
    namespace = {}
    exec("from xpuruntime import *", namespace)
    assert "asarray" in namespace and "_core" not in namespace


@pytest.mark.parametrize("function, phrase", [
    ("exp", "exponential"), ("add", "sum of x1 and x2"), ("asarray", "Converts"),
    ("linalg.solve", "A @ X = B"), ("fft.rfft", "real input"), ("sort", "sorted"),
])
def test_help_shows_a_description_under_the_signature(function, phrase):
    import pydoc

    obj = xrt
    for part in function.split("."):
        obj = getattr(obj, part)
    assert phrase in obj.__doc__
    assert obj.__doc__.splitlines()[0].startswith(function.split(".")[-1] + "(")
    assert phrase in pydoc.render_doc(obj)


@pytest.mark.skipif("libasan" in __import__("os").environ.get("LD_PRELOAD", ""),
                    reason="a sanitizer build cannot be imported by the build's stubgen")
def test_the_package_is_typed_and_core_has_generated_stubs():
    import pathlib

    package = pathlib.Path(xrt.__file__).parent
    assert (package / "py.typed").exists()
    core_dir = pathlib.Path(xrt._core.__file__).parent
    stub = core_dir / "_core" / "__init__.pyi"
    assert stub.exists(), f"no generated stubs beside {xrt._core.__file__}"
    text = stub.read_text()
    assert "class Tensor" in text and "def asarray(" in text


# ------------------------------------------------- what NumPy code passes

@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_ops_read_numbers_as_truth_values(device, name):
    """Note [Logical ops read truth values]: as NumPy, CuPy and PyTorch read them, whatever
    the two dtypes (they need no common one)."""
    a = np.array([0.0, 1.5, np.nan, -0.0, 2.0])
    b = np.array([0, 0, 2, 3, -1], dtype=np.int32)
    got = getattr(xrt, name)(tensor(a, device), tensor(b, device))
    assert got.dtype == xrt.bool
    np.testing.assert_array_equal(to_numpy(got), getattr(np, name)(a, b))
    c = np.array([1 + 0j, 0j, 1j, 0j, 0j])
    got = getattr(xrt, name)(tensor(c, device), tensor(b, device))
    np.testing.assert_array_equal(to_numpy(got), getattr(np, name)(c, b))
    np.testing.assert_array_equal(to_numpy(getattr(xrt, name)(tensor(a, device), 0)),
                                  getattr(np, name)(a, 0))


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("scalar", [True, False, 0, 3, 0.0, float("nan"), 2.5, 1j, 0j])
def test_logical_ops_read_python_scalars_as_truth_values(device, name, scalar):
    """A Python scalar beside any array is read as its truth value too, on either side."""
    fn = getattr(xrt, name)
    for a in (np.array([0.0, 1.5, np.nan]), np.array([1 + 0j, 0j, 1j]),
              np.array([0, 7, -1], dtype=np.int16), np.array([True, False, True])):
        for got, expected in ((fn(tensor(a, device), scalar), getattr(np, name)(a, scalar)),
                              (fn(scalar, tensor(a, device)), getattr(np, name)(scalar, a))):
            assert got.dtype == xrt.bool and got.device == tensor(a, device).device
            np.testing.assert_array_equal(to_numpy(got), expected)
    # The scalar's own truth value, not the one it has in the array's dtype, as NumPy reads
    # it: 1e-120 is true though it is 0 in float16, and 300 does not overflow int8.
    for a, value in ((np.array([1.0, 0.0], dtype=np.float16), 1e-120),
                     (np.array([1, 0], dtype=np.int8), 300)):
        assert to_numpy(fn(tensor(a, device), value)).tolist() == \
            getattr(np, name)(a, value).tolist()
    # Arithmetic keeps the standard's scalar rules.
    with pytest.raises(TypeError, match="does not define mixing"):
        xrt.add(tensor(np.array([1.0]), device), True)


def test_python_scalars_of_one_call_keep_their_values(device):
    """Note [Reused scalar tensors]: a thread reuses a scalar's tensor only once nothing
    holds it; two scalars of one call, and scalars of results still alive, keep theirs."""
    a = np.linspace(0.0, 4.0, 9)
    x = tensor(a, device)
    np.testing.assert_array_equal(to_numpy(xrt.clip(x, 1.0, 3.0)), np.clip(a, 1.0, 3.0))
    results = [x + float(k) for k in range(5)]
    for k, r in enumerate(results):
        np.testing.assert_array_equal(to_numpy(r), a + k)
    held = xrt.asarray(2.5)  # a 0-d array the user holds is never overwritten
    x * 7.0
    assert float(held) == 2.5


def test_logical_not_reads_numbers_as_truth_values(device):
    a = np.array([[0.0, 3.0], [np.nan, -0.0]])
    got = xrt.logical_not(tensor(a, device))
    assert got.dtype == xrt.bool
    np.testing.assert_array_equal(to_numpy(got), np.logical_not(a))
    np.testing.assert_array_equal(to_numpy(xrt.logical_not(tensor(np.arange(3), device))),
                                  [True, False, False])


def test_where_with_the_condition_alone_is_nonzero(device):
    a = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    got = xrt.where(tensor(a, device))
    assert isinstance(got, tuple) and len(got) == 2
    for g, e in zip(got, np.where(a)):
        np.testing.assert_array_equal(to_numpy(g), e)
    with pytest.raises(TypeError, match="together"):
        xrt.where(tensor(a, device) > 0, tensor(a, device))
    with pytest.raises(TypeError, match="together"):
        xrt.where(tensor(a, device) > 0, None, tensor(a, device))

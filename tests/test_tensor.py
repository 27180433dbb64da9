"""tests/test_tensor.py: Tensor attributes, repr, conversions, NumPy views,
read-only tensors."""

import operator
import re

import numpy as np
import pytest

import xpuruntime as xrt
from common import COMPLEX, NUMERIC, REAL_FLOATING, assert_tensor_equal, to_numpy

# ------------------------------------------------------------- attributes


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 4), (2, 3, 4)])
def test_shape_ndim_size(shape):
    t = xrt.zeros(shape)
    assert t.shape == shape
    assert type(t.shape) is tuple
    assert t.ndim == len(shape)
    assert t.size == int(np.prod(shape))
    assert t.dtype == xrt.float64
    assert t.device == xrt.Device("cpu")


def test_T_transposes_a_matrix():
    a = np.arange(6.0).reshape(2, 3)
    t = xrt.asarray(a)
    assert_tensor_equal(t.T, a.T)
    # Note: like NumPy, T is a view (design.md: views share storage).
    assert np.shares_memory(np.asarray(t.T), a)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3, 4)])
def test_T_needs_exactly_two_dimensions(shape):
    with pytest.raises(ValueError):
        xrt.zeros(shape).T


@pytest.mark.parametrize("shape", [(2, 3), (4, 2, 3), (2, 1, 3, 5)])
def test_mT_swaps_the_last_two_axes(shape):
    a = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    assert_tensor_equal(xrt.asarray(a).mT, np.swapaxes(a, -1, -2))


@pytest.mark.parametrize("shape", [(), (3,)])
def test_mT_needs_two_dimensions(shape):
    with pytest.raises(ValueError):
        xrt.zeros(shape).mT


def test_to_device_cpu_keeps_the_values():
    a = np.arange(5, dtype=np.int16)
    t = xrt.asarray(a)
    for device in ("cpu", xrt.Device("cpu")):
        moved = t.to_device(device)
        assert moved.device == xrt.Device("cpu")
        assert_tensor_equal(moved, a)


# ------------------------------------------------------------------- repr


def test_repr_of_the_spec_example():
    t = xrt.asarray([1.0, 2.0], dtype=xrt.float32)
    assert repr(t) == "Tensor([1., 2.], dtype=float32)"


@pytest.mark.parametrize("values, dtype, text", [
    ([1, 2, 3], xrt.int8, "[1, 2, 3]"),
    ([[1, 2], [3, 4]], xrt.uint16, "[3, 4]"),
    ([0.5, -1.25], xrt.float32, "[ 0.5 , -1.25]"),
    ([1 + 2j], xrt.complex64, "[1.+2.j]"),
])
def test_repr_shows_values_and_dtype_like_numpy(values, dtype, text):
    r = repr(xrt.asarray(values, dtype=dtype))
    assert r.startswith("Tensor(")
    assert text in r
    assert f"dtype={dtype.name}" in r


def test_repr_of_a_scalar():
    assert repr(xrt.asarray(7, dtype=xrt.int32)) == "Tensor(7, dtype=int32)"


def test_repr_abbreviates_big_tensors():
    t = xrt.arange(10_000, dtype=xrt.int32)
    r = repr(t)
    assert "..." in r
    assert re.search(r"0,\s+1,\s+2,\s+\.\.\.,\s+9997,\s+9998,\s+9999", r)
    assert len(r) < 1000


@pytest.mark.parametrize("values, text", [([1.5, 2.0], "[1.5, 2. ]"),
                                          ([True, False], "[ True, False]")])
def test_repr_of_default_dtypes_shows_the_values(values, text):
    # Note: NumPy leaves out "dtype=float64" and "dtype=bool"; either is fine.
    r = repr(xrt.asarray(values))
    assert r.startswith("Tensor(") and text in r


# ------------------------------------------------------------ conversions


def test_python_scalar_conversions():
    assert bool(xrt.asarray(0)) is False
    assert bool(xrt.asarray([[2.5]])) is True
    assert int(xrt.asarray(3.75)) == 3
    assert int(xrt.asarray(-3.75)) == -3
    assert float(xrt.asarray(2, dtype=xrt.int8)) == 2.0
    assert complex(xrt.asarray(1 + 2j)) == 1 + 2j
    assert operator.index(xrt.asarray(5, dtype=xrt.uint8)) == 5


def test_conversions_return_python_types():
    assert type(int(xrt.asarray(1, dtype=xrt.int16))) is int
    assert type(float(xrt.asarray(1, dtype=xrt.float16))) is float
    assert type(complex(xrt.asarray(1, dtype=xrt.complex64))) is complex
    assert type(operator.index(xrt.asarray(1))) is int


def test_conversions_keep_full_range_integers():
    assert int(xrt.asarray(2**64 - 1, dtype=xrt.uint64)) == 2**64 - 1
    assert int(xrt.asarray(-(2**63), dtype=xrt.int64)) == -(2**63)
    assert operator.index(xrt.asarray(2**63 + 5, dtype=xrt.uint64)) == 2**63 + 5


@pytest.mark.parametrize("name", NUMERIC)
def test_numeric_conversions_for_every_dtype(name):
    one = xrt.ones((), dtype=getattr(xrt, name))
    assert bool(one) is True
    assert complex(one) == 1
    if name not in COMPLEX:
        assert int(one) == 1
        assert float(one) == 1.0


@pytest.mark.parametrize("name", REAL_FLOATING + COMPLEX)
def test_index_rejects_non_integers(name):
    with pytest.raises(TypeError):
        operator.index(xrt.ones((), dtype=getattr(xrt, name)))


@pytest.mark.parametrize("convert", [bool, int, float, complex, operator.index])
@pytest.mark.parametrize("shape", [(2,), (0,), (2, 2)])
def test_conversions_need_exactly_one_element(convert, shape):
    with pytest.raises((TypeError, ValueError)):
        convert(xrt.zeros(shape, dtype=xrt.int32))


# ------------------------------------------------------- NumPy interaction


def test_numpy_view_is_zero_copy_and_sees_writes():
    t = xrt.zeros((3,), dtype=xrt.float32)
    view = np.asarray(t)
    assert np.shares_memory(view, np.asarray(t))
    t += 1
    np.testing.assert_array_equal(view, np.ones(3, dtype=np.float32))


def test_np_array_copies():
    t = xrt.zeros((3,), dtype=xrt.int32)
    copied = np.array(t)
    assert not np.shares_memory(copied, np.asarray(t))
    t += 1
    np.testing.assert_array_equal(copied, np.zeros(3, dtype=np.int32))


def test_numpy_view_of_every_dtype(dtype_pair):
    dtype, np_dtype = dtype_pair
    view = to_numpy(xrt.ones((2, 3), dtype=dtype))
    assert view.dtype == np_dtype
    np.testing.assert_array_equal(view, np.ones((2, 3), dtype=np_dtype))


# ---------------------------------------------------------------- read-only


def _read_only_tensor():
    a = np.arange(4.0)
    a.flags.writeable = False
    return a, xrt.from_dlpack(a)


def test_in_place_write_to_a_read_only_tensor_raises_ValueError():
    a, t = _read_only_tensor()
    with pytest.raises(ValueError):
        t += 1
    np.testing.assert_array_equal(a, np.arange(4.0))
    assert_tensor_equal(t, np.arange(4.0))


def test_read_only_tensors_still_compute():
    _, t = _read_only_tensor()
    result = t + 1
    assert_tensor_equal(result, np.arange(4.0) + 1)
    result += 1  # a fresh result is writable
    assert_tensor_equal(result, np.arange(4.0) + 2)


def test_read_only_tensor_gives_a_read_only_numpy_view():
    # Note: a writable NumPy view would be a back door around the flag.
    _, t = _read_only_tensor()
    assert not np.asarray(t).flags.writeable


def test_a_copy_of_a_read_only_tensor_is_writable():
    _, t = _read_only_tensor()
    copy = xrt.asarray(t, copy=True)
    copy += 1
    assert_tensor_equal(copy, np.arange(4.0) + 1)


def test_tensor_objects_are_reused_only_once_dead():
    """Note [Pooled Tensor objects]: a dead result's Python object may come back as a new
    result; weak references to it die with the first, and values never mix."""
    import gc
    import weakref

    a = xrt.asarray([1.0, 2.0, 3.0])
    first = a + a
    ref = weakref.ref(first)
    del first
    gc.collect()
    assert ref() is None
    results = [a + float(i) for i in range(300)]  # more than the pool keeps
    assert ref() is None
    assert len({id(r) for r in results}) == 300
    del results[::2]  # half of them back to the pool
    refilled = [a * float(i) for i in range(300)]
    for i, r in enumerate(results):
        assert np.asarray(r).tolist() == [1.0 + 2 * i + 1, 2.0 + 2 * i + 1, 3.0 + 2 * i + 1]
    for i, r in enumerate(refilled):
        assert np.asarray(r).tolist() == [1.0 * i, 2.0 * i, 3.0 * i]
    assert not {id(r) for r in results} & {id(r) for r in refilled}


def test_tensors_made_and_freed_on_other_threads_keep_their_values():
    """A tensor's storage header comes from its thread's short list of freed ones and goes
    back to the list of the thread that frees it (Note [Pooled storage headers]): tensors
    made on threads, freed on others, on ended threads' behalf and after those threads
    ended, keep their values and free cleanly."""
    import threading

    made = [[] for _ in range(6)]

    def make(k):
        for i in range(300):
            made[k].append(xrt.full((3,), float(k * 1000 + i)))
        del made[k][::3]  # some die on the thread that made them

    def check_and_free(k):
        for t in made[k]:
            assert float(t[0]) == float(t[2])
        made[k].clear()

    threads = [threading.Thread(target=make, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Freed by other threads than their makers, and by this one, after the makers ended.
    freers = [threading.Thread(target=check_and_free, args=(k,)) for k in range(3)]
    for t in freers:
        t.start()
    for t in freers:
        t.join()
    for k in range(3, 6):
        assert [float(t[1]) for t in made[k]] == [
            float(k * 1000 + i) for i in range(300) if i % 3]
        check_and_free(k)
    # The lists of ended threads went back to the heap; this thread's still serves.
    assert float(xrt.sum(xrt.ones(4))) == 4.0

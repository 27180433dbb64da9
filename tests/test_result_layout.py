"""tests/test_result_layout.py: an elementwise result is laid out as its inputs are (Note
[Result layout] in cpp/src/core/ops.cpp), as NumPy's order='K' lays out its results, and the
kernels walk such operands in memory order. Values are checked against NumPy on the CPU and
on CUDA (the `device` fixture); layouts against NumPy's where NumPy's rule and ours agree.
"""

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xpuruntime as xrt
from common import assert_tensor_equal, tensor, to_numpy


def element_strides(a):
    """NumPy's strides in elements (ours are in elements)."""
    return tuple(s // a.itemsize for s in a.strides)


def is_dense(t):
    """t's elements fill one block of memory without gaps or repeats."""
    dims = sorted((abs(s), n) for n, s in zip(t.shape, t.strides) if n > 1)
    expected = 1
    for stride, n in dims:
        if stride != expected:
            return False
        expected *= n
    return True


def test_a_transposed_operand_gives_a_transposed_result(device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = tensor(a, device)
    for result, expected in [
        (x.T + 1.0, a.T + np.float32(1.0)),
        (xrt.exp(x.T), to_numpy(xrt.exp(x)).T),  # our exp, bit for bit
        (x.T * x.T, a.T * a.T),
        (-x.T, -a.T),
        (x.T > 5.0, a.T > 5.0),
    ]:
        assert_tensor_equal(result, expected)
        assert result.strides == element_strides(expected) == (1, 4)


def test_the_first_input_decides_when_the_layouts_differ(device):
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    x = tensor(a, device)
    r = x + x.T
    assert_tensor_equal(r, a + a.T)
    assert r.strides == (4, 1)
    r = x.T + x
    assert_tensor_equal(r, a.T + a)
    assert r.strides == (1, 4)


def test_broadcast_and_scalar_inputs_leave_the_choice_to_the_others(device):
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    x = tensor(a, device)
    row = np.arange(4, dtype=np.float32)
    r = 2.0 * x.T
    assert_tensor_equal(r, np.float32(2.0) * a.T)
    assert r.strides == (1, 5)
    r = tensor(row, device) + x.T  # the row has stride 0 across the rows: no say
    assert_tensor_equal(r, row + a.T)
    assert r.strides == (1, 5)


def test_where_and_clip_follow_their_inputs(device):
    a = np.linspace(-1, 1, 30, dtype=np.float64).reshape(5, 6)
    b = np.linspace(2, 3, 30, dtype=np.float64).reshape(5, 6)
    x, y = tensor(a, device), tensor(b, device)
    r = xrt.where(x.T > 0, x.T, y.T)
    assert_tensor_equal(r, np.where(a.T > 0, a.T, b.T))
    assert r.strides == (1, 6)
    r = xrt.clip(x.T, -0.5, 0.5)
    assert_tensor_equal(r, np.clip(a.T, -0.5, 0.5))
    assert r.strides == (1, 6)


def test_a_permutation_of_three_axes_matches_numpy_s_layout(device):
    a = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
    x = tensor(a, device)
    for axes in [(0, 2, 1), (1, 0, 2), (2, 0, 1), (2, 1, 0), (1, 2, 0)]:
        view = a.transpose(axes)
        result = xrt.permute_dims(x, axes) * 3
        assert_tensor_equal(result, view * 3)
        assert result.strides == element_strides(view * 3)


def test_reversed_inputs_give_positive_strides(device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = tensor(a, device)
    r = x[::-1, ::-1].T + 1.0
    assert_tensor_equal(r, a[::-1, ::-1].T + np.float32(1.0))
    assert r.strides == (1, 4)


def test_a_cast_operand_keeps_its_layout(device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = np.arange(3, dtype=np.float64)
    x = tensor(a, device)
    r = x.T + tensor(v, device)
    assert r.dtype == xrt.float64
    assert_tensor_equal(r, a.T.astype(np.float64) + v)
    assert r.strides == (1, 4)


def test_views_of_a_result_in_another_layout_read_in_row_major_order(device):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    r = tensor(a, device).T + 0.5
    expected = a.T + np.float32(0.5)
    assert_tensor_equal(xrt.reshape(r, (-1,)), expected.reshape(-1))
    assert_tensor_equal(xrt.reshape(r, (3, 8)), expected.reshape(3, 8))
    assert_tensor_equal(r[1:4, ::2], expected[1:4, ::2])
    assert_tensor_equal(xrt.sum(r, axis=1), expected.sum(axis=1))
    assert_tensor_equal(xrt.cumulative_sum(r, axis=1), np.cumsum(expected, axis=1))
    assert_tensor_equal(xrt.matmul(r, tensor(a, device)), expected @ a)
    assert_tensor_equal(xrt.nonzero(r > 10.0)[0], np.nonzero(expected > 10.0)[0])


def test_writing_through_a_transposed_view(device):
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    z = xrt.zeros((4, 5), dtype=xrt.float32, device=device)
    zt = z.T
    zt[...] = tensor(a.T.copy(), device)  # a copy into a transposed view
    assert_tensor_equal(z, a)
    zt += tensor(np.ones(4, dtype=np.float32), device)  # in place, broadcast row
    assert_tensor_equal(z, a + 1)
    zt[...] = 7.0  # a fill
    assert_tensor_equal(z, np.full((4, 5), 7, dtype=np.float32))


def test_strided_views_that_are_not_dense_still_compute_right(device):
    a = np.arange(48, dtype=np.float32).reshape(6, 8)
    x = tensor(a, device)
    r = x[::2, 1::3].T + x[1::2, ::3].T
    assert_tensor_equal(r, a[::2, 1::3].T + a[1::2, ::3].T)
    assert is_dense(r)


@st.composite
def permuted_views(draw):
    shape = draw(hnp.array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=5))
    axes = draw(st.permutations(range(len(shape))))
    flips = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    dtype = draw(st.sampled_from([np.float32, np.int64, np.float16, np.complex64]))
    return shape, tuple(axes), flips, dtype


@settings(max_examples=60, deadline=None)
@given(case=permuted_views(), scalar=st.booleans())
def test_any_permuted_or_flipped_operand(device, case, scalar):
    shape, axes, flips, dtype = case
    a = (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)
    b = (np.arange(int(np.prod(shape))) % 5).astype(dtype).reshape(shape)
    index = tuple(slice(None, None, -1) if f else slice(None) for f in flips)
    va, vb = a[index].transpose(axes), b[index].transpose(axes)
    x = xrt.permute_dims(tensor(a, device)[index], axes)
    y = xrt.permute_dims(tensor(b, device)[index], axes)
    result = x + 2 if scalar else x * y
    expected = va + dtype(2) if scalar else va * vb
    assert_tensor_equal(result, expected)
    assert is_dense(result)
    assert all(s >= 0 for s in result.strides)
    assert np.array_equal(to_numpy(xrt.reshape(result, (-1,))), expected.reshape(-1))


@pytest.mark.parametrize("n", [1, 7, 64])
def test_row_major_inputs_still_give_row_major_results(device, n):
    a = np.ones((n, 3), dtype=np.float32)
    x = tensor(a, device)
    for r in (x + 1.0, xrt.exp(x), x + x, xrt.where(x > 0, x, x)):
        assert r.strides == (3, 1) or n == 1


def test_astype_keeps_the_layout(device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = tensor(a, device)
    for result, expected in [
        (xrt.astype(x.T, xrt.float64), a.T.astype(np.float64)),
        (xrt.astype(x.T, xrt.float32), a.T.copy(order="K")),
        (xrt.astype(x[::-1].T, xrt.int64), a[::-1].T.astype(np.int64)),
    ]:
        assert_tensor_equal(result, expected)
        assert result.strides == (1, 4)
    assert xrt.astype(x.T, xrt.float32, copy=False).strides == (1, 4)  # x.T itself
    copied = xrt.astype(x.T, xrt.float32)
    copied[0, 0] = 100.0  # a copy: x is untouched
    assert to_numpy(x)[0, 0] == 0.0


def test_like_functions_keep_the_layout(device):
    """empty_like, zeros_like, ones_like and full_like lay their results out as x is, as
    NumPy's order='K' does, so that `out = zeros_like(m.T); out += m.T` is dense."""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = tensor(a, device)
    views = [(x.T, a.T), (x[::-1, ::2].T, a[::-1, ::2].T), (x, a),
             (xrt.broadcast_to(x[0], (4, 6)), np.broadcast_to(a[0], (4, 6)))]
    for view, like in views:
        # A broadcast axis tells nothing (PyTorch's rule): C order, where NumPy puts it inside.
        want = (6, 1) if 0 in view.strides else element_strides(np.empty_like(like))
        for result, value in [(xrt.zeros_like(view), 0), (xrt.ones_like(view, dtype=xrt.int8), 1),
                              (xrt.full_like(view, 2.5), 2.5), (xrt.empty_like(view), None)]:
            assert result.shape == view.shape
            assert result.strides == want
            if value is not None:
                assert_tensor_equal(result, np.full(like.shape, value, np.dtype(result.dtype.name)))
    out = xrt.zeros_like(x.T)
    out += x.T
    assert_tensor_equal(out, a.T)
    assert out.strides == (1, 6)
    with pytest.raises((ValueError, OverflowError)):
        xrt.full_like(xrt.astype(x.T, xrt.int8), 300)


def test_a_copying_asarray_is_row_major(device):
    # asarray(copy=True) is what callers use for a contiguous copy (the sessions' inputs)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = tensor(a, device)
    for result in (xrt.asarray(x.T, copy=True), xrt.asarray(x.T, dtype=xrt.int16)):
        assert_tensor_equal(result, a.T.astype(np.dtype(result.dtype.name)))
        assert result.strides == (3, 1)


def test_in_place_on_a_flipped_transposed_view(device):
    a = np.arange(30, dtype=np.float64).reshape(5, 6)
    z = tensor(a.copy(), device)
    view = z[::-1, ::2].T  # negative and non-unit strides, written in place
    view *= 2.0
    view += tensor(np.arange(5, dtype=np.float64), device)
    expected = a.copy()
    expected[::-1, ::2].T[...] = expected[::-1, ::2].T * 2.0 + np.arange(5)
    assert_tensor_equal(z, expected)

"""tests/test_numpy_positionals.py: Note [NumPy's positional arguments]. Where NumPy takes a
parameter by position that the standard makes keyword-only (`sum(x, 0)`, `concat(xs, 0)`,
`zeros(shape, dtype)`), xpuruntime takes it too, with NumPy's meaning; the parameters after
it stay keyword-only, since NumPy's next positional is often one the standard has not."""

import numpy as np
import pytest

import xpuruntime as xp
from common import to_numpy

A = np.arange(12.0).reshape(3, 4) - 5.0
X = xp.asarray(A)
I = np.array([[0, 2], [1, 0], [2, 1]])

SAME_AS_NUMPY = {
    "sum(x, 0, float32)": (lambda m, a: m.sum(a, 0, m.float32)),
    "prod(x, 1)": (lambda m, a: m.prod(a, 1)),
    "max(x, 0)": (lambda m, a: m.max(a, 0)),
    "min(x, 1)": (lambda m, a: m.min(a, 1)),
    "mean(x, 0)": (lambda m, a: m.mean(a, 0)),
    "std(x, 1)": (lambda m, a: m.std(a, 1)),
    "var(x, 0)": (lambda m, a: m.var(a, 0)),
    "any(x, 1)": (lambda m, a: m.any(a > 0, 1)),
    "all(x, 0)": (lambda m, a: m.all(a > -6, 0)),
    "count_nonzero(x, 0)": (lambda m, a: m.count_nonzero(a, 0)),
    "argmax(x, 0)": (lambda m, a: m.argmax(a, 0)),
    "argmin(x, 1)": (lambda m, a: m.argmin(a, 1)),
    "sort(x, 0)": (lambda m, a: m.sort(-a, 0)),
    "argsort(x, 0)": (lambda m, a: m.argsort(-a, 0)),
    "cumulative_sum(x, 1)": (lambda m, a: (m.cumulative_sum if m is xp else m.cumsum)(a, 1)),
    "concat([x, x], 1)": (lambda m, a: (m.concat if m is xp else m.concatenate)([a, a], 1)),
    "stack([x, x], 1)": (lambda m, a: m.stack([a, a], 1)),
    "flip(x, 0)": (lambda m, a: m.flip(a, 0)),
    "roll(x, 1, 0)": (lambda m, a: m.roll(a, 1, 0)),
    "repeat(x, 2, 1)": (lambda m, a: m.repeat(a, 2, 1)),
    "diff(x, 2, 1)": (lambda m, a: m.diff(a, 2, 1)),
    "take(x, idx, 1)": (lambda m, a: m.take(a, m.asarray([0, 3]), 1)),
    "take_along_axis(x, idx, 1)": (lambda m, a: m.take_along_axis(a, m.asarray(I), 1)),
    "searchsorted(x, v, 'right')": (lambda m, a: m.searchsorted(m.asarray([0.0, 1.0, 1.0, 2.0]),
                                                                m.asarray([1.0]), "right")),
    "tensordot(x, x.T, 1)": (lambda m, a: m.tensordot(a, m.asarray(A.T), 1)),
    "tril(x, -1)": (lambda m, a: m.tril(a, -1)),
    "zeros((2, 3), int32)": (lambda m, a: m.zeros((2, 3), m.int32)),
    "ones((2,), float32)": (lambda m, a: m.ones((2,), m.float32)),
    "full((2,), 7, int8)": (lambda m, a: m.full((2,), 7, m.int8)),
    "zeros_like(x, int16)": (lambda m, a: m.zeros_like(a, m.int16)),
    "full_like(x, 2, uint8)": (lambda m, a: m.full_like(a, 2, m.uint8)),
    "asarray([1, 2], float32)": (lambda m, a: m.asarray([1, 2], m.float32)),
    "arange(0, 5, 2, int16)": (lambda m, a: m.arange(0, 5, 2, m.int16)),
    "eye(3, 4, 1, int32)": (lambda m, a: m.eye(3, 4, 1, m.int32)),
}


@pytest.mark.parametrize("call", sorted(SAME_AS_NUMPY))
def test_numpys_positional_arguments(call):
    f = SAME_AS_NUMPY[call]
    got, expected = f(xp, X), f(np, A)
    assert str(got.dtype) == str(expected.dtype)
    np.testing.assert_allclose(to_numpy(got), expected)


def test_linalg_takes_numpys_positionals():
    q, r = xp.linalg.qr(X, "complete")
    assert q.shape == (3, 3) and r.shape == (3, 4)
    u, s, vh = xp.linalg.svd(X, False)
    assert u.shape == (3, 3) and vh.shape == (3, 4)


@pytest.mark.parametrize("call", [
    lambda: xp.sum(X, 0, None, True),           # keepdims: NumPy's 4th is `out`
    lambda: xp.max(X, 0, True),                 # keepdims: NumPy's 3rd is `out`
    lambda: xp.sort(X, 0, True),                # descending
    lambda: xp.reshape(X, (4, 3), True),        # copy: NumPy's 3rd is `order`
    lambda: xp.zeros((2,), xp.float32, "cpu"),  # device: NumPy's 3rd is `order`
    lambda: xp.linalg.vector_norm(X, 2),        # NumPy's linalg.norm takes ord, torch dim
    lambda: xp.isin(X, X, True),                # NumPy's 3rd is assume_unique
    lambda: xp.linspace(0, 1, 5, True),         # NumPy's 4th is endpoint, the standard's dtype
])
def test_the_rest_stay_keyword_only(call):
    with pytest.raises(TypeError):
        call()

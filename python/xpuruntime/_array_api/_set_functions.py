"""python/xpuruntime/_array_api/_set_functions.py: the standard's unique_* functions and their
named tuples, on the C++ unique op (values ascending; every NaN is its own value)."""

from typing import NamedTuple

from .. import _core
from .._core import Tensor


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def unique_all(x, /):
    """Unique values of flattened x, the index of each one's first occurrence, the indices
    that rebuild x from them (x's shape) and their counts."""
    values, indices, inverse_indices, counts = _core._unique(x, True, True, True)
    return UniqueAllResult(values, indices, inverse_indices, counts)


def unique_counts(x, /):
    """Unique values of flattened x and how often each occurs."""
    values, _, _, counts = _core._unique(x, False, False, True)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /):
    """Unique values of flattened x and the indices that rebuild x from them."""
    values, _, inverse_indices, _ = _core._unique(x, False, True, False)
    return UniqueInverseResult(values, inverse_indices)


def unique_values(x, /):
    """Unique values of flattened x, as a 1-D array."""
    return _core._unique(x, False, False, False)[0]

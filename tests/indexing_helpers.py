"""tests/indexing_helpers.py: what the indexing tests share: keys as xpuruntime takes them,
NumPy's result for a key, memory sharing, and the hypothesis strategies of shapes and
advanced keys.
"""

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st

from common import tensor


def xrt_key(key, device=None):
    """The key with every NumPy array replaced by a tensor (on `device`)."""
    convert = lambda k: tensor(k, device) if isinstance(k, np.ndarray) else k  # noqa: E731
    return tuple(map(convert, key)) if isinstance(key, tuple) else convert(key)


def numpy_getitem(a, key):
    """a[key] as an array (NumPy returns scalars for single elements)."""
    return np.asarray(a[key])


def shares_memory(t, a):
    return np.shares_memory(np.asarray(t), a)


# ------------------------------------------------------------ strategies

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)


@st.composite
def advanced_keys(draw, shape):
    """Index tuples mixing integers, slices, None, an ellipsis, integer arrays
    (broadcastable or not), boolean arrays and boolean scalars; sometimes
    invalid (out of range, too many indices), so errors are compared too."""
    items, d = [], 0
    broadcast = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    while d < len(shape) and draw(st.integers(0, 4)) > 0:
        n = shape[d]
        kind = draw(st.sampled_from(["int", "slice", "int_array", "bool_array", "none", "bool"]))
        if kind == "int":
            items.append(draw(st.integers(-n - 1, n)))
        elif kind == "slice":
            bound = st.none() | st.integers(-n - 2, n + 2)
            step = st.none() | st.integers(-3, 3).filter(bool)
            items.append(slice(draw(bound), draw(bound), draw(step)))
        elif kind == "int_array":
            dims = draw(st.integers(0, len(broadcast)))
            sub = tuple(s if draw(st.booleans()) else 1 for s in broadcast[len(broadcast) - dims:])
            low, high = (-n, n - 1) if n else (-1, 0)
            if draw(st.integers(0, 9)) == 0:
                low, high = low - 1, high + 1
            items.append(draw(hnp.arrays(np.int64, sub, elements=st.integers(low, high))))
        elif kind == "bool_array":
            m = draw(st.integers(1, len(shape) - d))
            sub = tuple(s if draw(st.integers(0, 5)) else 0 for s in shape[d:d + m])
            items.append(draw(hnp.arrays(np.bool_, sub)))
            d += m - 1
        else:
            items.append(None if kind == "none" else draw(st.booleans()))
            continue
        d += 1
    if draw(st.integers(0, 9)) == 0:
        items.append(0)  # one index too many, unless the key stopped early
    if items and draw(st.booleans()):  # an ellipsis replaces a window of items
        i = draw(st.integers(0, len(items)))
        j = draw(st.integers(i, len(items)))
        items = items[:i] + [Ellipsis] + items[j:]
    return tuple(items)

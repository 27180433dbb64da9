"""tests/fuzz/targets_asarray.py: asarray of nested, ragged, mutating and hostile sequences.
Every outcome is a tensor that equals NumPy's conversion or a standard error; never a crash."""

import math

import hypothesis.strategies as st
import numpy as np
from hypothesis import given

import xpuruntime as xrt
from fuzz_settings import fuzz_settings

CLEAN_ERRORS = (TypeError, ValueError, OverflowError, RuntimeError, IndexError)

scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.integers(-300, 300),
    st.floats(allow_nan=True, allow_infinity=True),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
)
nested = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner)), max_leaves=24)
dtypes = st.sampled_from([None, "bool", "int8", "int64", "uint8", "uint64", "float16",
                          "float32", "float64", "complex64", "complex128"])


def same(a, b):
    if isinstance(a, complex) or isinstance(b, complex):
        return same(complex(a).real, complex(b).real) and same(complex(a).imag, complex(b).imag)
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def flat(values):
    if isinstance(values, list):
        return [v for item in values for v in flat(item)]
    return [values]


@fuzz_settings()
@given(nested, dtypes)
def nested_sequences_match_numpy(obj, dtype):
    try:
        t = xrt.asarray(obj, dtype=None if dtype is None else getattr(xrt, dtype))
    except CLEAN_ERRORS:
        return
    values = t.tolist()  # readable, whatever the dtype
    if dtype is None:  # a conversion by the default rule is exact, and NumPy's
        want = np.asarray(obj, dtype=str(t.dtype))
        assert t.shape == want.shape, (obj, t.shape, want.shape)
        assert all(same(a, b) for a, b in zip(flat(values), flat(want.tolist()))), obj


class Hostile:
    """A leaf whose conversion hooks misbehave as drawn: raise, return junk, or mutate the
    lists being converted."""

    def __init__(self, plan, rows):
        self.plan, self.rows = plan, rows

    def _act(self):
        action = self.plan
        if action == "clear":
            for row in self.rows:
                if isinstance(row, list):
                    row.clear()
            self.rows.clear()
        elif action == "shrink" and self.rows and isinstance(self.rows[-1], list):
            del self.rows[-1][1:]
        elif action == "grow":
            self.rows.append([1.0] * 3)
        elif action == "raise":
            raise ArithmeticError("hostile")
        elif action == "junk":
            return "junk"
        return None

    def __index__(self):
        junk = self._act()
        return junk if junk is not None else 7

    def __float__(self):
        junk = self._act()
        return junk if junk is not None else 7.0

    def __getattr__(self, name):
        if name.startswith("__") and name in ("__float__", "__complex__", "__index__"):
            self._act()
        raise AttributeError(name)


plans = st.sampled_from(["clear", "shrink", "grow", "raise", "junk", "none"])


@fuzz_settings()
@given(st.integers(1, 4), st.integers(1, 4), st.lists(st.tuples(st.integers(0, 15), plans),
                                                       max_size=4), dtypes)
def hostile_leaves_never_crash(rows, cols, hostiles, dtype):
    table = [[float(r * cols + c) for c in range(cols)] for r in range(rows)]
    for position, plan in hostiles:
        r, c = divmod(position % (rows * cols), cols)
        table[r][c] = Hostile(plan, table)
    try:
        t = xrt.asarray(table, dtype=None if dtype is None else getattr(xrt, dtype))
    except (*CLEAN_ERRORS, ArithmeticError):
        return
    assert t.ndim in (1, 2)
    t.tolist()  # the values are readable

"""tests/fuzz/targets_shapes.py: creation, views and broadcasting with extents at the int64
limits. A shape whose bytes pass int64 must be refused before anything is allocated or
written; small shapes must work and count their size exactly."""

import math

import hypothesis.strategies as st
from hypothesis import given

import xpuruntime as xrt
from fuzz_settings import fuzz_settings

REFUSALS = (ValueError, OverflowError, MemoryError, TypeError)
# Each huge extent alone passes any host's memory (so an allocation that got through would
# fail rather than fill the machine) or int64 itself.
HUGE = [2**40, 2**41 + 1, 2**62, 2**63 - 1, 2**63, 2**64]
small = st.integers(0, 5)
extent = st.one_of(small, st.sampled_from(HUGE), st.integers(-3, -1))
shapes = st.lists(extent, max_size=4).map(tuple)


def verdict(shape, itemsize=8):
    """'small', 'huge' (bytes past int64 or no machine can hold), or 'invalid'."""
    if any(d < 0 or d >= 2**63 for d in shape):
        return "invalid"
    n = math.prod(shape)
    return "small" if n * itemsize <= 2**24 else "huge"


def check(make, shape, itemsize=8):
    kind = verdict(shape, itemsize)
    try:
        t = make()
    except REFUSALS:
        assert kind != "small", f"refused a small shape {shape}"
        return None
    assert kind != "invalid", f"accepted {shape}"
    assert kind == "small" or t.size == 0 or (t.strides and 0 in t.strides), \
        f"allocated a huge shape {shape}"
    assert t.size == math.prod(t.shape)
    return t


@fuzz_settings()
@given(shapes, st.sampled_from(["empty", "zeros", "ones", "full"]),
       st.sampled_from(["int8", "float64", "complex128"]))
def creation_refuses_sizes_past_int64(shape, function, dtype):
    dt = getattr(xrt, dtype)
    args = (shape, 1) if function == "full" else (shape,)
    check(lambda: getattr(xrt, function)(*args, dtype=dt), shape, dt.itemsize)


@fuzz_settings()
@given(shapes, shapes)
def views_and_broadcasts_count_exactly(target, reps):
    base = xrt.ones(1, dtype=xrt.int8)
    try:
        b = xrt.broadcast_to(base, target)
    except REFUSALS:
        b = None
    if b is not None:
        assert b.shape == target and b.size == math.prod(target)
    try:
        xrt.broadcast_shapes(target, reps)
    except REFUSALS:
        pass
    small = xrt.ones((2, 3), dtype=xrt.int8)
    try:
        t = xrt.tile(small, reps)
        assert t.size == math.prod(t.shape) <= 2**24
    except REFUSALS:
        pass
    try:
        xrt.reshape(small, target)
    except REFUSALS:
        pass


@fuzz_settings()
@given(st.sampled_from(HUGE + [0, 1, 5, -1]), st.sampled_from(HUGE + [0, 1, 5, -1]))
def ranges_refuse_lengths_past_int64(n, m):
    for make in (lambda: xrt.arange(n), lambda: xrt.linspace(0, 1, n),
                 lambda: xrt.eye(n, m), lambda: xrt.arange(-n, n, 1)):
        try:
            t = make()
        except REFUSALS:
            continue
        assert t.size <= 2**24

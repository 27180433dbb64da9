"""tests/fuzz/targets_public_api.py: every public function (the namespace, linalg, fft) and
every Tensor method called with odd arguments: None, huge and negative integers, NaN,
strings, ragged lists, foreign objects, tensors of every kind, NumPy arrays. Each call must
return or raise one of the errors a user can act on, never crash, hang or raise anything
else (an AttributeError or a SystemError would be a bug of ours)."""

import hypothesis.strategies as st
import numpy as np
from hypothesis import given

import xpuruntime as xrt
from fuzz_settings import fuzz_settings

CLEAR = (TypeError, ValueError, IndexError, xrt.XpuRuntimeError, NotImplementedError,
         OverflowError, BufferError, ZeroDivisionError, MemoryError, xrt.linalg.LinAlgError)

# Functions that change the process's state, or wait on the user.
SKIP = {"set_num_threads", "set_default_device", "set_current_device", "set_kernel_policy",
        "register_kernel", "unregister_kernel", "synchronize", "profile", "explain"}


def public_functions():
    found = []
    for module, prefix in ((xrt, ""), (xrt.linalg, "linalg."), (xrt.fft, "fft.")):
        for name in sorted(dir(module)):
            obj = getattr(module, name)
            if (not name.startswith("_") and name not in SKIP and name[0].islower()
                    and callable(obj) and not isinstance(obj, type)):
                found.append((prefix + name, obj))
    return found


def odd_values():
    t = xrt.asarray
    return [None, 0, -1, 3, 2**62, -(2**63), 1.5, float("nan"), float("inf"), True, "abc",
            b"x", [], [[1, 2], [3]], (), (1, -1), (2, 3), object(), 1j, slice(None), Ellipsis,
            t(np.float32(2.5)), t(np.arange(5, dtype=np.int8)), t(np.ones((3, 4))),
            t(np.zeros((0, 3), np.float32)), t(np.array([[True, False], [False, True]])),
            t(np.array([1 + 2j, 3j], np.complex64)), t(np.ones((3, 4)))[:, ::2].T,
            t(np.array([2**64 - 1], np.uint64)), np.ones((2, 2)), xrt.float32, "float32", "cpu"]


FUNCTIONS = public_functions()
VALUES = odd_values()
KEYWORDS = [{}, {"axis": -5}, {"axis": (0, 0)}, {"dtype": "nope"}, {"dtype": xrt.bool},
            {"device": "cuda:7"}, {"device": "tpu"}, {"copy": False}, {"keepdims": "yes"},
            {"n": -3}, {"norm": "bad"}, {"k": 2**40}, {"correction": -1}, {"bogus": 1}]


def call(fn, args, kwargs):
    try:
        fn(*args, **kwargs)
    except CLEAR:
        pass


def every_function_takes_each_odd_value():
    """A sweep: each function with no argument, then each odd value alone."""
    assert len(FUNCTIONS) > 150, "the public namespace was not found"
    for _, fn in FUNCTIONS:
        call(fn, (), {})
        for v in VALUES:
            call(fn, (v,), {})


@fuzz_settings(50)
@given(st.sampled_from(FUNCTIONS), st.lists(st.sampled_from(VALUES), min_size=1, max_size=3),
       st.sampled_from(KEYWORDS))
def functions_refuse_odd_combinations(function, args, kwargs):
    call(function[1], tuple(args), kwargs)


METHODS = sorted(m for m in dir(xrt.Tensor)
                 if not m.startswith("_") or m in ("__getitem__", "__setitem__", "__add__",
                                                   "__iadd__", "__pow__", "__matmul__",
                                                   "__lshift__", "__floordiv__", "__and__",
                                                   "__float__", "__int__", "__index__",
                                                   "__bool__", "__len__", "__dlpack__",
                                                   "__array__", "__lt__", "__eq__"))
KEYS = [0, -1, 5, -6, 2**63, slice(None, None, -1), slice(0, 10, 0), (Ellipsis, Ellipsis),
        (None, 0, None), (slice(None),) * 5, [0, 1], [[0]], [True, False], "a", 1.0, (),
        (0, [0, 1]), ([0], [0, 1, 2]), np.array([0, 1])]


@fuzz_settings(50)
@given(st.sampled_from([v for v in VALUES if isinstance(v, xrt.Tensor)]),
       st.sampled_from(METHODS), st.lists(st.sampled_from(VALUES + KEYS), max_size=2))
def tensor_methods_refuse_odd_arguments(tensor, method, args):
    try:
        bound = getattr(tensor, method)
    except CLEAR:  # a property that needs another shape (T of a 1-d tensor)
        return
    if callable(bound):
        call(bound, tuple(args), {})

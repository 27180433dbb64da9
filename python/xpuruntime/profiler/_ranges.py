"""python/xpuruntime/profiler/_ranges.py: user ranges: ``range(name)`` as a context manager
and a decorator, ``push_range``/``pop_range``, ``mark``. They are recorded when a profile
records and emit NVTX ranges when NVTX is on; otherwise they cost a call into C++."""

import functools

from .. import _core

_p = _core._profiler


def _check_name(name, what):
    if not isinstance(name, str):
        raise TypeError(f"{what}: the name must be a str, got {type(name).__name__}")


def push_range(name):
    """Opens a range on this thread (closed by pop_range)."""
    _check_name(name, "push_range")
    _p.push_range(name)


def pop_range():
    """Closes the innermost range of this thread; ValueError when none is open."""
    _p.pop_range()


def mark(name):
    """An instant event."""
    _check_name(name, "mark")
    _p.mark(name)


class range:  # noqa: A001 - the name the design documents give it
    """``with profiler.range("step"):`` or ``@profiler.range("step")`` (or ``@profiler.range``,
    named after the function): a named region in the profile and in NVTX."""

    def __init__(self, name):
        self._wrapped = None
        if callable(name) and not isinstance(name, str):
            fn = name
            self.name = fn.__qualname__
            self._wrapped = self(fn)
            functools.update_wrapper(self, fn)
            return
        _check_name(name, "range")
        self.name = name

    def __enter__(self):
        _p.push_range(self.name)
        return self

    def __exit__(self, *exc):
        _p.pop_range()
        return False

    def __call__(self, *args, **kwargs):
        if self._wrapped is not None:  # used bare as a decorator: this is the function
            return self._wrapped(*args, **kwargs)
        if len(args) != 1 or kwargs or not callable(args[0]):
            raise TypeError("profiler.range(name) decorates one function")
        fn, name = args[0], self.name

        @functools.wraps(fn)
        def ranged(*a, **k):
            _p.push_range(name)
            try:
                return fn(*a, **k)
            finally:
                _p.pop_range()
        return ranged

"""tests/test_signature_texts.py: each signature text of Note [Signatures] against the binding
it describes. The texts restate the bindings' parameters by hand; a text whose names, order,
kinds or defaults drifted from its binding would show users a signature the call does not
keep (inspect.signature, help(), IDEs)."""

import inspect

import pytest
import xpuruntime as xrt
import xpuruntime.fft
import xpuruntime.linalg
from xpuruntime._array_api import _signatures

P = inspect.Parameter
TABLES = {"xpuruntime": (_signatures.NAMESPACE, xrt),
          "xpuruntime.linalg": (_signatures.LINALG, xpuruntime.linalg),
          "xpuruntime.fft": (_signatures.FFT, xpuruntime.fft)}
# Entries whose target nanobind cannot describe: from_dlpack's fast entry is a plain C
# function without a text signature (Note [from_dlpack's call]), checked by calling it below.
# The elementwise functions are plain C functions too (Note [Elementwise function entries]),
# which carry their own text signature (__text_signature__).
OPAQUE = {"xpuruntime.from_dlpack"}

CASES = [(module, name) for module, (table, _) in TABLES.items() for name in sorted(table)]


def _binding(module, name):
    table, namespace = TABLES[module]
    target = getattr(getattr(namespace, name), "_target", None)
    return table[name], target


def _takes_positionally(p):
    return p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD, P.VAR_POSITIONAL)


def _takes_by_keyword(p):
    return p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY, P.VAR_KEYWORD)


@pytest.mark.parametrize("module, name", CASES)
def test_text_matches_its_binding(module, name):
    text, target = _binding(module, name)
    if target is None:  # written in Python: inspect reads its own signature
        assert str(inspect.signature(getattr(TABLES[module][1], name))) == text
        return
    if f"{module}.{name}" in OPAQUE:
        pytest.skip("a plain C entry, checked by test_from_dlpack_keeps_its_text")
    described = getattr(target, "__text_signature__", None) or _signatures.text_from_nanobind(
        target)
    assert described != "(*args, **kwargs)", f"nanobind does not describe {module}.{name}"
    ours = _signatures.parse(text).parameters
    theirs = _signatures.parse(described).parameters
    assert list(ours) == list(theirs), (text, described)
    for pname, p in ours.items():
        t = theirs[pname]
        # The forwarder narrows what the binding takes (positional-only, keyword-only) but
        # cannot widen it.
        assert not _takes_positionally(p) or _takes_positionally(t), (pname, text, described)
        assert not _takes_by_keyword(p) or _takes_by_keyword(t), (pname, text, described)
        assert (p.default is P.empty) == (t.default is P.empty), (pname, text, described)
        if p.default is not P.empty:
            assert p.default == t.default, (pname, text, described)


def test_from_dlpack_keeps_its_text():
    import numpy as np

    assert str(inspect.signature(xrt.from_dlpack)) == "(x, /, *, device=None, copy=None)"
    a = np.arange(3.0)
    assert xrt.from_dlpack(a, device=xrt.Device("cpu"), copy=True).shape == (3,)
    with pytest.raises(TypeError):
        xrt.from_dlpack(x=a)
    with pytest.raises(TypeError):
        xrt.from_dlpack(a, None)


def test_elementwise_entries_read_their_arguments():
    """The elementwise functions are plain C entries (Note [Elementwise function entries]):
    positional and keyword calls of the entry itself, the Array API function over it (the
    positional-only check), and Python's TypeErrors for wrong calls."""
    import numpy as np
    from xpuruntime import _core

    a, b = xrt.asarray([1.0, 2.0]), xrt.asarray([3.0, 5.0])
    assert np.asarray(xrt.add(a, b)).tolist() == [4.0, 7.0]
    assert np.asarray(xrt.add(a, 1)).tolist() == [2.0, 3.0]
    assert np.asarray(_core.add(x1=a, x2=b)).tolist() == [4.0, 7.0]
    assert np.asarray(_core.subtract(a, x2=b)).tolist() == [-2.0, -3.0]
    assert np.asarray(_core.negative(x=a)).tolist() == [-1.0, -2.0]
    assert str(inspect.signature(_core.add)) == "(x1, x2)"
    assert str(inspect.signature(xrt.add)) == "(x1, x2, /)"
    for call, message in [
            (lambda: _core.add(a), "missing required argument 'x2'"),
            (lambda: _core.add(a, b, b), "takes 2 positional arguments but 3 were given"),
            (lambda: _core.add(a, x1=b), "multiple values for argument 'x1'"),
            (lambda: _core.add(a, y=b), "unexpected keyword argument 'y'"),
            (lambda: _core.exp(), "missing required argument 'x'"),
            (lambda: _core.exp(a, a), "takes 1 positional argument but 2 were given"),
            (lambda: xrt.add(x1=a, x2=b), "positional-only"),
            (lambda: xrt.exp([1.0]), "x must be an array"),
            (lambda: xrt.add("s", a), "expected arrays")]:
        with pytest.raises(TypeError, match=message):
            call()

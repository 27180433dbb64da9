"""tests/test_public_names.py: every public name of xpuruntime, xpuruntime.cuda, .linalg and
.fft stays reachable when the package is laid out anew (the list: tests/public_names.txt)."""

import importlib
import pathlib

import xpuruntime  # noqa: F401

LIST = pathlib.Path(__file__).with_name("public_names.txt")


def public_names():
    lines = LIST.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def test_every_public_name_is_reachable():
    missing = []
    for dotted in public_names():
        module_name, _, attribute = dotted.rpartition(".")
        module = importlib.import_module(module_name)
        if not hasattr(module, attribute):
            missing.append(dotted)
    assert not missing, missing


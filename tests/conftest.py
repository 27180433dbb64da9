"""tests/conftest.py: markers, hypothesis settings, the device fixture and dtype fixtures."""

import hypothesis
import pytest

import xpuruntime as xrt
from common import ALL, DEVICES, numpy_dtype

# Modest example counts: the whole suite must stay fast on a 2-core machine.
hypothesis.settings.register_profile("xrt", max_examples=30, deadline=None)
hypothesis.settings.load_profile("xrt")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cuda: needs a CUDA device; skipped when none is available")


def pytest_collection_modifyitems(config, items):
    if xrt.cuda.is_available():
        return
    skip = pytest.mark.skip(
        reason=f"CUDA unavailable: {xrt.cuda.why_unavailable()}")
    for item in items:
        if item.get_closest_marker("cuda") is not None:
            item.add_marker(skip)


# Session scope keeps these usable from hypothesis tests (no function-scoped fixture health
# check). A device test's CUDA parameter carries the cuda mark, so the hook above skips it
# without a GPU and `pytest -m cuda` selects it.
@pytest.fixture(scope="session", params=DEVICES)
def device(request):
    """Each device a test body runs on: "cpu", then "cuda:0"."""
    return request.param


# Session scope keeps these usable from hypothesis tests (no function-scoped
# fixture health check); the bfloat16 case skips without ml_dtypes.
@pytest.fixture(scope="session", params=ALL)
def dtype_name(request):
    """Each of the 15 dtype names."""
    return request.param


@pytest.fixture(scope="session")
def dtype_pair(dtype_name):
    """(xrt dtype, NumPy dtype) for each of the 15 dtypes."""
    return getattr(xrt, dtype_name), numpy_dtype(dtype_name)

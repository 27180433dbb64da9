"""tests/fuzz/fuzz_settings.py: the budget of the fuzz tests. CI runs a short one; by hand,
`XRT_FUZZ=long pytest tests/fuzz` runs a long one (XRT_FUZZ_EXAMPLES sets any count)."""

import os

from hypothesis import HealthCheck, settings

_COUNTS = {"ci": 40, "long": 5000}


def examples():
    if "XRT_FUZZ_EXAMPLES" in os.environ:
        return int(os.environ["XRT_FUZZ_EXAMPLES"])
    return _COUNTS[os.environ.get("XRT_FUZZ", "ci")]


def fuzz_settings(scale=1.0):
    """Settings for one fuzz test; scale shrinks the budget of expensive ones."""
    return settings(max_examples=max(1, int(examples() * scale)), deadline=None,
                    suppress_health_check=list(HealthCheck), derandomize=False)

"""python/xpuruntime/pytorch.py: ``import xpuruntime.pytorch as xrt_torch``; the module is
``xpuruntime.adapters.pytorch`` (one module object under two names)."""

import sys

from .adapters import pytorch as _adapter

sys.modules[__name__] = _adapter

"""python/xpuruntime/profiler/__init__.py: the profiler. ``with xrt.profile() as prof:``
records ops, kernels and why, host and device time, memory, copies, host waits with their
source lines, inference runs and user ranges; see docs/profiler.md.

The recording is C++ (cpp/src/core/runtime/profiler.cpp): the dispatcher, storage, copies
and waits write fixed-size records into a preallocated buffer; nothing Python runs per op.
Off, each op pays one predictable branch.
"""

import os

from .. import _core
from ._profile import engine_run, profile
from ._ranges import mark, pop_range, push_range, range
from ._records import (MemoryRecord, OpRecord, RangeRecord, SourceLine, SyncRecord,
                       TransferRecord)
from ._summary import Summary, SummaryRow
from ._torch import merge_torch_trace

__all__ = ["profile", "range", "push_range", "pop_range", "mark", "merge_torch_trace",
           "set_nvtx", "nvtx_enabled", "OpRecord", "RangeRecord", "MemoryRecord",
           "SyncRecord", "TransferRecord", "SourceLine", "Summary", "SummaryRow"]


def set_nvtx(on):
    """Every op and range emits an NVTX range (domain "xpuruntime") from now on, with or
    without a profile; a tool (Nsight Systems) must be attached to see them."""
    if not isinstance(on, bool):
        raise TypeError(f"set_nvtx: on must be True or False, got {on!r}")
    _core._profiler.set_nvtx(on)


def nvtx_enabled():
    return _core._profiler.nvtx_on()


if os.environ.get("XPURUNTIME_NVTX", "") not in ("", "0"):
    set_nvtx(True)

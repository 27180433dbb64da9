"""python/xpuruntime/policies/__init__.py: the policies that steer execution (``xrt.policies``).

- ``_kernel_policy.py``: ``KernelPolicy`` (which kernel each op uses, JSON in and out), the
  current policy and ``explain()``; also at the top level of ``xpuruntime``.
- ``_execution_policy.py``: ``ExecutionPolicy`` (precision, static shapes, CUDA graphs,
  threads, allocator) and the policy file holding both (Note [One policy file]).
"""

from ._kernel_policy import (  # noqa: F401
    Decision,
    ExplainLog,
    KernelPolicy,
    decisions,
    explain,
    get_kernel_policy,
    kernel_policy,
    set_kernel_policy,
)
from ._execution_policy import (  # noqa: F401
    ExecutionPolicy,
    load_policy_file,
    save_policy_file,
)

__all__ = [
    "Decision",
    "ExecutionPolicy",
    "ExplainLog",
    "KernelPolicy",
    "decisions",
    "explain",
    "get_kernel_policy",
    "kernel_policy",
    "load_policy_file",
    "save_policy_file",
    "set_kernel_policy",
]

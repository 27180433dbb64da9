"""python/xpuruntime/inference/native/__init__.py: the native engine's executor: ONNX graphs
planned once (``plan.py``) and run on xpuruntime's own kernels through the dispatcher, one op
family per module in ``ops/``, with the fusion passes in ``fusion.py``. The engine class that
sessions use is ``inference/engines/native.py``."""

from .fusion import FUSIONS  # noqa: F401
from .ops import supported_ops  # noqa: F401
from .plan import Plan  # noqa: F401

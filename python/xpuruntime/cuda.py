"""python/xpuruntime/cuda.py: ``xrt.cuda``, CUDA under PyTorch's names (``torch.cuda``), so code
and habits carry over. A facade: everything lives in ``runtime/``.

- ``runtime/_cuda.py``: is CUDA usable and why not, library versions, the JIT and cuFFT caches.
- ``runtime/_streams.py``: devices, streams, events, graphs.
- ``runtime/_memory.py``: the caching allocator's statistics and limits, pinned memory.
"""

from .runtime._cuda import *  # noqa: F401,F403
from .runtime._memory import *  # noqa: F401,F403
from .runtime._streams import *  # noqa: F401,F403

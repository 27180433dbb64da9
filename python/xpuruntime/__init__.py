"""xpuruntime: an execution runtime for accelerators with an Array API tensor.

    import xpuruntime as xrt
    x = xrt.asarray([[1.0, 2.0], [3.0, 4.0]], dtype=xrt.float32)
    y = x @ x.T + 1
"""

from . import _loader

_loader.preload_openblas()

from . import _core  # noqa: E402
from ._core import (  # noqa: E402,F401
    CudaError,
    Device,
    DType,
    OutOfMemoryError,
    Tensor,
    UnsupportedOperationError,
    XpuRuntimeError,
    add,
    arange,
    asarray,
    astype,
    bfloat16,
    bool,
    complex64,
    complex128,
    empty,
    float16,
    float32,
    float64,
    from_dlpack,
    full,
    int8,
    int16,
    int32,
    int64,
    list_kernels,
    matmul,
    matrix_transpose,
    register_kernel,
    sum,
    tensordot,
    uint8,
    uint16,
    uint32,
    uint64,
    unregister_kernel,
    vecdot,
    zeros,
    ones,
    num_threads,
    set_num_threads,
)
from . import cuda  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from ._dtypes import dtype, dtype_from_numpy, dtype_to_numpy, result_type  # noqa: E402,F401
from ._policy import (  # noqa: E402,F401
    Decision,
    ExplainLog,
    KernelPolicy,
    decisions,
    explain,
    get_kernel_policy,
    kernel_policy,
    set_kernel_policy,
)
from ._tensor import _install  # noqa: E402

_install()
_core.set_cuda_search_paths(_loader.cuda_search_paths())

__version__ = _core.__version__
__array_api_version__ = "2025.12"

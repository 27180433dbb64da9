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
    argsort,
    asarray,
    astype,
    bfloat16,
    bool,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    complex64,
    complex128,
    concat,
    empty,
    empty_like,
    expand_dims,
    eye,
    flip,
    float16,
    float32,
    float64,
    from_dlpack,
    full,
    full_like,
    get_default_device,
    int8,
    int16,
    int32,
    int64,
    isin,
    list_kernels,
    matmul,
    nonzero,
    register_kernel,
    searchsorted,
    set_default_device,
    sort,
    sum,
    take,
    take_along_axis,
    linspace,
    list_kernels,
    matmul,
    meshgrid,
    moveaxis,
    ones_like,
    permute_dims,
    register_kernel,
    repeat,
    reshape,
    roll,
    squeeze,
    stack,
    sum,
    tile,
    tril,
    triu,
    uint8,
    uint16,
    uint32,
    uint64,
    unregister_kernel,
    unstack,
    zeros,
    zeros_like,
    ones,
    num_threads,
    set_num_threads,
)
from . import cuda  # noqa: E402,F401
from . import fft  # noqa: E402,F401
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
from . import _signatures  # noqa: E402
from ._set_functions import (  # noqa: E402,F401
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from ._tensor import _install  # noqa: E402

# The elementwise functions (and any other function of the standard implemented natively)
# come from _core under their standard names.
for _name in _signatures.NAMESPACE:
    if _name not in globals() and hasattr(_core, _name):
        globals()[_name] = getattr(_core, _name)
del _name

_install()
_core._install_subscript_slots()  # after _install(), which may rebind __getitem__
_core._cuda.set_search_paths(_loader.cuda_search_paths())

__version__ = _core.__version__
__array_api_version__ = "2025.12"

from ._constants import e, inf, nan, newaxis, pi  # noqa: E402,F401
from ._data_type_functions import can_cast, finfo, iinfo, isdtype  # noqa: E402,F401
from ._info import __array_namespace_info__  # noqa: E402,F401

_signatures.install_namespace(globals(), _signatures.NAMESPACE, __name__)

from . import linalg  # noqa: E402,F401

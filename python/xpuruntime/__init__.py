"""xpuruntime: an execution runtime for accelerators with an Array API tensor.

    import xpuruntime as xrt
    x = xrt.asarray([[1.0, 2.0], [3.0, 4.0]], dtype=xrt.float32)
    y = x @ x.T + 1

The package: ``_array_api/`` (with ``linalg`` and ``fft``) is the Array API namespace,
``runtime/`` devices, streams, events and memory (``cuda`` shows them with PyTorch's names),
``policies/`` the kernel and execution policies, ``inference/`` sessions over ONNX engines;
``_core`` is the native extension, ``_loader`` finds what it
loads.
"""

from . import _loader

_loader.preload_openblas()

from . import _core  # noqa: E402
from ._core import (  # noqa: E402,F401
    CudaError,
    DType,
    Device,
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
    complex128,
    complex64,
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
    int16,
    int32,
    int64,
    int8,
    isin,
    linspace,
    list_kernels,
    matmul,
    meshgrid,
    moveaxis,
    nonzero,
    max_threads,
    num_threads,
    ones,
    ones_like,
    permute_dims,
    register_kernel,
    repeat,
    reshape,
    roll,
    searchsorted,
    set_default_device,
    set_num_threads,
    sort,
    squeeze,
    stack,
    sum,
    take,
    take_along_axis,
    tile,
    tril,
    triu,
    uint16,
    uint32,
    uint64,
    uint8,
    unregister_kernel,
    unstack,
    zeros,
    zeros_like,
)
from . import cuda  # noqa: E402,F401
from . import fft  # noqa: E402,F401
from . import policies, runtime  # noqa: E402,F401
from ._array_api._dtypes import (  # noqa: E402,F401
    dtype,
    dtype_from_numpy,
    dtype_to_numpy,
    result_type,
)
from .policies import (  # noqa: E402,F401
    Decision,
    ExecutionPolicy,
    ExplainLog,
    KernelPolicy,
    decisions,
    explain,
    get_kernel_policy,
    kernel_policy,
    set_kernel_policy,
)
from .runtime import (  # noqa: E402,F401
    DeviceManager,
    MemoryManager,
    get_all_devices,
    get_current_device,
    get_device_count,
    set_current_device,
    synchronize,
)
from ._array_api import _signatures  # noqa: E402
from ._array_api._set_functions import (  # noqa: E402,F401
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from ._array_api._tensor import _install  # noqa: E402

# The elementwise functions (and any other function of the standard implemented natively)
# come from _core under their standard names.
for _name in _signatures.NAMESPACE:
    if _name not in globals() and hasattr(_core, _name):
        globals()[_name] = getattr(_core, _name)
del _name

_install()
_core._install_subscript_slots()  # after _install(), which may rebind __getitem__
from .runtime import _threadpoolctl  # noqa: E402

_threadpoolctl.install()  # threadpoolctl sees and limits our thread pool
_core._cuda.set_library_finder(_loader.find_cuda_library)  # asked on first use

__version__ = _core.__version__
__array_api_version__ = "2025.12"

from ._array_api._constants import e, inf, nan, newaxis, pi  # noqa: E402,F401
from ._array_api._data_type_functions import can_cast, finfo, iinfo, isdtype  # noqa: E402,F401
from ._array_api._info import __array_namespace_info__  # noqa: E402,F401

_signatures.install_namespace(globals(), _signatures.NAMESPACE, __name__)

from . import linalg  # noqa: E402,F401
from . import special  # noqa: E402,F401
from . import nn  # noqa: E402,F401
from . import profiler  # noqa: E402,F401
from .profiler import profile  # noqa: E402,F401
from . import inference  # noqa: E402,F401
from .inference import EngineRegistry, InferenceSession  # noqa: E402,F401
from . import kernels  # noqa: E402,F401
from .kernels import ElementwiseKernel, RawKernel, RawModule, ReductionKernel  # noqa: E402,F401
from .adapters import _cuda_array_interface  # noqa: E402

_cuda_array_interface.install()

# Everything public: functions, types, dtypes, constants and the public subpackages (not the
# helper modules the imports above bring in, nor anything with a leading underscore).
__all__ = sorted(
    _name for _name, _value in globals().items()
    if not _name.startswith("_")
    and (type(_value).__name__ != "module"
         or _name in ("cuda", "fft", "linalg", "policies", "runtime", "inference",
                       "kernels", "distributed", "profiler"))
)

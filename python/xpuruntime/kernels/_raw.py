"""python/xpuruntime/kernels/_raw.py: RawKernel and RawModule, CuPy's kernels of a user's
CUDA C++ source, compiled by xpuruntime's NVRTC JIT.

- Compiled on first launch for the exact architecture of the device, through the same
  memory and disk caches as the built-in kernels (a second process finds the cubin on disk).
- Arguments follow CuPy's rules: a Tensor passes its data pointer (strides are the kernel's
  business, as in CuPy), any DLPack array on the device is imported without a copy, ``bool``
  is a C++ bool, ``int`` a long long, ``float`` a double, ``complex`` a complex<double>, and
  NumPy scalars (or one-element arrays) pass their own bytes (np.float32 -> float).
- The launch goes to ``stream`` or, by default, the current stream of the arguments' device.
- Note: CuPy compiles with NVRTC's defaults, which contract a * b + c into FMAs; so do these
  kernels (``--fmad=true`` unless the options say otherwise), so that the same source gives
  CuPy's bits. xpuruntime's own kernels compile with ``--fmad=false``.
"""

import inspect

from .. import _core
from .._core import _cuda
from .._core import UnsupportedOperationError
from ..runtime._streams import ExternalStream, Stream

# cuFuncGetAttribute's CU_FUNC_ATTRIBUTE_* numbers, under CuPy's attribute names.
_ATTRIBUTES = {
    "max_threads_per_block": 0,
    "shared_size_bytes": 1,
    "const_size_bytes": 2,
    "local_size_bytes": 3,
    "num_regs": 4,
    "ptx_version": 5,
    "binary_version": 6,
    "cache_mode_ca": 7,
    "max_dynamic_shared_size_bytes": 8,
    "preferred_shared_memory_carveout": 9,
}


class CallSignature:
    """``inspect.signature(kernel)``: the parameters of the kernel's call, which is C++ and
    which inspect cannot read; None on the class, whose signature is its constructor's."""

    def __init__(self, parameters):
        self.signature = inspect.signature(parameters)

    def __get__(self, obj, owner=None):
        return None if obj is None else self.signature


def check_backend(backend, jitify, translate_cucomplex=False, enable_cooperative_groups=False):
    if backend != "nvrtc":
        raise UnsupportedOperationError(
            f"backend={backend!r} is not supported: xpuruntime compiles with NVRTC only "
            f"(backend='nvrtc'); it never needs the CUDA toolkit's nvcc")
    if jitify:
        raise UnsupportedOperationError(
            "jitify=True is not supported: xpuruntime compiles with NVRTC directly; include "
            "only headers NVRTC ships (cuda_fp16.h, cuda_bf16.h, ...) or inline what you need")
    if translate_cucomplex:
        raise UnsupportedOperationError("translate_cucomplex=True is not supported")
    if enable_cooperative_groups:
        raise UnsupportedOperationError(
            "enable_cooperative_groups=True is not supported (no cooperative launch yet)")


def nvrtc_options(options):
    """The user's options as a list of str, with CuPy's FMA default."""
    if isinstance(options, str):
        options = (options,)
    options = list(options)
    for o in options:
        if not isinstance(o, str):
            raise TypeError(f"options must be strings, got {type(o).__name__}")
    if not any(o.lstrip("-").startswith("fmad") for o in options):
        options.append("--fmad=true")
    return options


def as_stream(stream):
    """stream as an xpuruntime Stream: ours, or anything with __cuda_stream__ (torch, CuPy),
    a CuPy stream (.ptr) or a torch stream (.cuda_stream)."""
    if stream is None or isinstance(stream, Stream):
        return stream
    if hasattr(stream, "__cuda_stream__"):
        return ExternalStream(stream)
    for attribute in ("cuda_stream", "ptr"):
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int):
            return ExternalStream(handle)
    raise TypeError(f"stream must be an xpuruntime Stream, an object with __cuda_stream__, "
                    f"or None; got {type(stream).__name__}")


class RawKernel(_cuda._UserKernel):
    """``RawKernel(code, name, options=(), backend='nvrtc', jitify=False)``: the kernel
    ``name`` (extern "C") of CUDA C++ ``code``, launched as ``kernel(grid, block, args,
    shared_mem=0, stream=None)``.

    The call is the compiled base class's ``__call__`` (C++): a launch runs no Python frame
    of ours. ``stream`` may be an xpuruntime Stream or any other library's stream
    (``as_stream``)."""

    __signature__ = CallSignature(lambda grid, block, args, shared_mem=0, stream=None: None)

    def __init__(self, code, name, options=(), backend="nvrtc", *, translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False, _name_expressions=()):
        if not isinstance(code, str):
            raise TypeError(f"code must be a str of CUDA C++, got {type(code).__name__}")
        if not isinstance(name, str) or not name:
            raise TypeError("name must be the kernel's name (a non-empty str)")
        check_backend(backend, jitify, translate_cucomplex, enable_cooperative_groups)
        super().__init__(code, name, nvrtc_options(options), list(_name_expressions))
        self.code = code
        self.options = tuple(options) if not isinstance(options, str) else (options,)
        self.backend = backend

    def _kernel_options(self):
        return nvrtc_options(self.options)

    def compile(self, device=None):
        """Compiles for ``device`` (an index; the current device by default) now; a launch
        compiles on demand. CudaError with NVRTC's log when the source does not compile."""
        super().compile(_cuda.current_device() if device is None else int(device))

    @property
    def attributes(self):
        """The function's attributes on the current device (CuPy's names)."""
        device = _cuda.current_device()
        return {k: self.attribute(device, v) for k, v in _ATTRIBUTES.items()}

    def __getattr__(self, name):
        if name in _ATTRIBUTES:
            return self.attribute(_cuda.current_device(), _ATTRIBUTES[name])
        raise AttributeError(name)

    def __repr__(self):
        return f"<xpuruntime.RawKernel {self.name}>"


def _arch():
    """The architecture name lowering uses: the current device's, or sm_90 on a machine
    without one (mangled names do not depend on the architecture)."""
    from ..runtime._cuda import is_available

    if is_available():
        p = _cuda.get_device_properties(_cuda.current_device())
        return f"sm_{p.major}{p.minor}"
    return "sm_90"


class RawModule:
    """``RawModule(code=..., options=(), name_expressions=None)``: a CUDA C++ source with
    several kernels; ``get_function(name)`` gives a RawKernel. Template kernels are reached
    through ``name_expressions`` (``['scale<float>']``) and found again by the same
    expression."""

    def __init__(self, code=None, *, path=None, options=(), backend="nvrtc",
                 translate_cucomplex=False, enable_cooperative_groups=False,
                 name_expressions=None, jitify=False):
        if path is not None:
            raise UnsupportedOperationError(
                "RawModule(path=...) (loading a prebuilt cubin or PTX) is not supported; "
                "pass the CUDA C++ source as code=")
        if not isinstance(code, str):
            raise TypeError(f"code must be a str of CUDA C++, got {type(code).__name__}")
        check_backend(backend, jitify, translate_cucomplex, enable_cooperative_groups)
        self.code = code
        self.options = tuple(options) if not isinstance(options, str) else (options,)
        self.backend = backend
        self.name_expressions = tuple(name_expressions or ())
        for e in self.name_expressions:
            if not isinstance(e, str):
                raise TypeError("name_expressions must be strings")
        self._lowered = None
        self._functions = {}

    def _lowered_name(self, name):
        if name not in self.name_expressions:
            return name
        if self._lowered is None:
            names = _cuda._lowered_names(self.code, nvrtc_options(self.options),
                                         list(self.name_expressions), _arch())
            self._lowered = dict(zip(self.name_expressions, names))
        return self._lowered[name]

    def get_function(self, name):
        """The kernel ``name`` (extern "C"), or a kernel of ``name_expressions``."""
        kernel = self._functions.get(name)
        if kernel is None:
            kernel = RawKernel(self.code, self._lowered_name(name), self.options, self.backend,
                               _name_expressions=self.name_expressions)
            self._functions[name] = kernel
        return kernel

    def get_global(self, name, dtype=None, shape=None):
        """The global variable ``name`` (``__device__`` or ``__constant__``, or one of
        ``name_expressions``) on the current device, as a Tensor over its memory: the memory
        this module's kernels read. Its bytes (uint8) by default, or ``dtype`` elements in
        ``shape`` (default: as many as it holds). CuPy returns a MemoryPointer to the same
        memory. CudaError when the module defines no such variable."""
        device = _cuda.current_device()
        address, nbytes = _cuda._module_global(self.code, nvrtc_options(self.options),
                                               list(self.name_expressions),
                                               self._lowered_name(name), device)
        dtype = _core.uint8 if dtype is None else dtype
        if not isinstance(dtype, _core.DType):
            raise TypeError(f"dtype must be an xpuruntime dtype, got {dtype!r}")
        if shape is None:
            if nbytes % dtype.itemsize:
                raise ValueError(f"the global '{name}' holds {nbytes} bytes, not a whole "
                                 f"number of {dtype} elements")
            shape = (nbytes // dtype.itemsize,)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        count = 1
        for n in shape:
            if not isinstance(n, int) or n < 0:
                raise ValueError(f"shape must hold non-negative ints, got {shape!r}")
            count *= n
        if count * dtype.itemsize > nbytes:
            raise ValueError(f"the global '{name}' holds {nbytes} bytes; {shape} {dtype} "
                             f"elements need {count * dtype.itemsize}")
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= n
        return _core._from_pointer(address, shape, tuple(reversed(strides)), dtype,
                                   f"cuda:{device}", self)

    def compile(self, log_stream=None):
        """Compiles now for the current device (CuPy compiles on first use too)."""
        for e in self.name_expressions:
            self.get_function(e).compile()

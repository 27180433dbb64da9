"""python/xpuruntime/kernels/_layout.py: what the generated kernels share: argument
conversion, broadcasting, dimension merging, and the device-side helpers (CuPy's CArray and
CIndexer names) that the operations of user kernels may use.

Note: a generated kernel is specialised per dtype, ndim (after merging) and contiguity, so
the index arithmetic of a contiguous call is ``x[i]``, and that of a strided one unrolls over
a fixed number of dimensions with 32-bit arithmetic whenever the sizes allow it.
"""

import struct

import numpy as np

from .. import _core
from .._core import Tensor

# Device-side helpers in CuPy's names. Raw arrays arrive as CArray<T, N, C> (C: contiguous)
# with strides in bytes, as CuPy's do; _ind.size() is the number of loop iterations.
PRELUDE = r"""
#include "xrt/common.cuh"
#include "xrt/complex.cuh"
// CuPy's complex<T>: built from reals (complex<float>(0) is an identity), real() and imag();
// the arithmetic is that of xpuruntime's kernels (found through the base class).
template <class R> struct complex : xrt::ew::Complex<R> {
  complex() = default;
  __device__ complex(R re, R im = R(0)) : xrt::ew::Complex<R>{re, im} {}
  __device__ complex(const xrt::ew::Complex<R>& c) : xrt::ew::Complex<R>(c) {}
  __device__ R real() const { return this->re; }
  __device__ R imag() const { return this->im; }
};
template <class T, int N, bool C> struct CArray {
  T* data_;
  long long size_;
  long long shape_[N > 0 ? N : 1];
  long long strides_[N > 0 ? N : 1];
  __device__ long long size() const { return size_; }
  __device__ const long long* shape() const { return shape_; }
  __device__ const long long* strides() const { return strides_; }
  __device__ T* data() const { return data_; }
  __device__ T& operator[](long long index) const {
    if (C || N == 0) return data_[N == 0 ? 0 : index];
    long long offset = 0;
#pragma unroll
    for (int d = N - 1; d >= 0; --d) {
      long long s = shape_[d > 0 ? d : 0];
      offset += (index % s) * strides_[d > 0 ? d : 0];
      index /= s;
    }
    return *reinterpret_cast<T*>(reinterpret_cast<char*>(data_) + offset);
  }
  __device__ T& operator[](const long long (&index)[N > 0 ? N : 1]) const {
    long long offset = 0;
#pragma unroll
    for (int d = 0; d < N; ++d) offset += index[d] * strides_[d];
    return *reinterpret_cast<T*>(reinterpret_cast<char*>(data_) + offset);
  }
};
struct CIndexer {
  long long size_;
  __device__ long long size() const { return size_; }
};
template <int N, int K> struct _xrt_layout {
  long long shape[N > 0 ? N : 1];
  long long strides[K > 0 ? K : 1][N > 0 ? N : 1];  // elements
};
"""


def to_array_or_scalar(a):
    """A Tensor for array arguments (any DLPack or CUDA array interface object is imported
    without a copy), the object itself for scalars; TypeError for host arrays."""
    if isinstance(a, Tensor):
        return a
    if isinstance(a, (bool, int, float, complex, np.generic)):
        return a
    if isinstance(a, np.ndarray):
        raise TypeError("NumPy arrays live on the host: pass a device array (an xpuruntime "
                        "Tensor, or a CuPy/torch/JAX array) to a kernel")
    if hasattr(a, "__dlpack__"):
        from .._core import from_dlpack

        return from_dlpack(a)
    if hasattr(a, "__cuda_array_interface__"):
        from ..adapters._cuda_array_interface import from_cuda_array_interface

        return from_cuda_array_interface(a)
    raise TypeError(f"a kernel argument must be an array or a scalar, got {type(a).__name__}")


def broadcast_shapes(shapes):
    """NumPy's broadcasting of shapes; ValueError when they do not broadcast."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for k, n in enumerate(s, ndim - len(s)):
            if n != 1:
                if out[k] not in (1, n):
                    raise ValueError(f"shapes {tuple(shapes)} cannot be broadcast together")
                out[k] = n
    return tuple(out)


def broadcast_strides(t, shape):
    """t's strides (elements) broadcast to shape: 0 where t repeats."""
    pad = len(shape) - t.ndim
    return tuple(0 if k < pad or t.shape[k - pad] == 1 and shape[k] != 1 else t.strides[k - pad]
                 for k in range(len(shape)))


def merge_dims(shape, strides_list):
    """(shape, strides per operand) with size-1 dimensions dropped and neighbours merged
    wherever every operand steps through them as through one dimension (CuPy's
    reduce_dims)."""
    dims = [(n, [s[k] for s in strides_list]) for k, n in enumerate(shape) if n != 1]
    merged = []
    for n, strides in dims:
        if merged:
            m, outer = merged[-1]
            if all(o == s * n for o, s in zip(outer, strides)):
                merged[-1] = (m * n, strides)
                continue
        merged.append((n, strides))
    return (tuple(n for n, _ in merged),
            [tuple(st[j] for _, st in merged) for j in range(len(strides_list))])


def is_c_contiguous(shape, strides):
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def pack_layout(shape, strides_list):
    """The bytes of _xrt_layout<ndim, operands>."""
    nd, k = max(len(shape), 1), max(len(strides_list), 1)
    values = list(shape) + [0] * (nd - len(shape))
    for strides in strides_list:
        values += list(strides) + [0] * (nd - len(strides))
    values += [0] * (nd * k - nd * len(strides_list))
    return struct.pack(f"<{len(values)}q", *values)


def carray_type(ctype, t):
    return f"CArray<{ctype}, {t.ndim}, {'true' if t._is_contiguous() else 'false'}>"


def pack_carray(t):
    """The bytes of CArray<T, ndim, C> for tensor t (strides in bytes, as CuPy's)."""
    nd = max(t.ndim, 1)
    item = t.dtype.itemsize
    shape = list(t.shape) + [1] * (nd - t.ndim)
    strides = [s * item for s in t.strides] + [0] * (nd - t.ndim)
    return struct.pack(f"<Qq{nd}q{nd}q", t._data_ptr(), t.size, *shape, *strides)


def scalar_value(value, dtype_name):
    """value as a NumPy scalar of dtype_name, passed by value with the parameter's C type."""
    if dtype_name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16(value)
    if isinstance(value, complex) and not dtype_name.startswith("complex"):
        raise TypeError(f"a complex scalar cannot be passed as {dtype_name}")
    return np.dtype(dtype_name).type(value)


# The parameter types whose Python scalars a replay converts in C++ (Note [Scalars of a
# replayed call] in the bindings); float16 and bfloat16 keep the Python conversion.
_CONVERTED_IN_CPP = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                     "uint64", "float32", "float64", "complex64", "complex128")


def scalar_convert(dtype_name):
    """A replay's conversion of a scalar argument to dtype_name: (the dtype, scalar_value)
    where C++ converts Python scalars itself and falls back on scalar_value, else
    scalar_value alone."""
    def fallback(v):
        return scalar_value(v, dtype_name)

    if dtype_name in _CONVERTED_IN_CPP:
        return getattr(_core, dtype_name), fallback
    return fallback


_SCALARS = (bool, int, float, complex)


def replayable(args):
    """Whether a call with these arguments may be recorded for replay (Note [Replaying a
    user kernel call]): Tensors, Python scalars and NumPy scalars only, the kinds whose
    layout signature pins down how they convert."""
    return all(type(a) is Tensor or type(a) in _SCALARS or isinstance(a, np.generic)
               for a in args)


# Note [Bounded replay tables]: a kernel keeps the replays of at most this many layouts, in
# Python (_recipes) and in C++ (RecordedKernel's table, the same bound): the layout holds the
# shapes, so a kernel called over ever new shapes (a server's batch and sequence sizes) would
# otherwise grow without end. A full table starts over; a layout seen again records itself
# again on its next call, from the kernel's compiled plans (no compile).
MAX_REPLAYS = _core._cuda.max_replays


def keep_replay(recipes, key, replay):
    """Files replay under key in a kernel's table (Note [Bounded replay tables])."""
    if len(recipes) >= MAX_REPLAYS and key not in recipes:
        recipes.clear()
    recipes[key] = replay
    return replay


def dtype_name(t):
    return t.dtype.name

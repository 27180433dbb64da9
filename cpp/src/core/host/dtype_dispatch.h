// cpp/src/core/host/dtype_dispatch.h: from a runtime DType to the C++ element type, once
// (host code of every backend: the CPU kernels, the CUDA kernels' launch code).
#pragma once
#include <complex>
#include <cstdint>

#include "xpuruntime/dtype.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/half.h"

namespace xrt::host {

template <class T> struct Tag { using type = T; };

/// Calls f(Tag<T>{}) with T the element type of dtype.
template <class F> decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Bool: return f(Tag<bool>{});
    case DType::Int8: return f(Tag<int8_t>{});
    case DType::Int16: return f(Tag<int16_t>{});
    case DType::Int32: return f(Tag<int32_t>{});
    case DType::Int64: return f(Tag<int64_t>{});
    case DType::UInt8: return f(Tag<uint8_t>{});
    case DType::UInt16: return f(Tag<uint16_t>{});
    case DType::UInt32: return f(Tag<uint32_t>{});
    case DType::UInt64: return f(Tag<uint64_t>{});
    case DType::Float16: return f(Tag<Float16>{});
    case DType::BFloat16: return f(Tag<BFloat16>{});
    case DType::Float32: return f(Tag<float>{});
    case DType::Float64: return f(Tag<double>{});
    case DType::Complex64: return f(Tag<std::complex<float>>{});
    case DType::Complex128: return f(Tag<std::complex<double>>{});
  }
  throw ValueError("unknown dtype");
}

}  // namespace xrt::host

// cpp/src/core/copy_ops.cpp: the copies every op definition uses: copy_into with dtype
// conversion (the dispatched copy op), astype, contiguous, to_device between devices, and
// item (one element to the host).
#include <complex>
#include <cstring>

#include "xpuruntime/runtime/backend.h"
#include "xpuruntime/dispatcher.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"
#include "xpuruntime/profiler.h"

namespace xrt {

void copy_into(Tensor& dst, const Tensor& src) {
  check_writable(dst);
  check_same_device(dst, src, "copy");
  Tensor source = src.broadcast_to(dst.shape());
  const Tensor* inputs[] = {&source};
  KernelCall call{inputs, 1, &dst, 1, nullptr};
  dispatch(BuiltinOps::get().copy, call);
}

Tensor astype(const Tensor& x, DType dtype, bool copy) {
  if (!copy && dtype == x.dtype()) return x;
  Tensor out = empty(x.shape(), dtype, x.device());
  copy_into(out, x);
  return out;
}

Tensor astype_keeping_layout(const Tensor& x, DType dtype, bool copy) {
  if (!copy && dtype == x.dtype()) return x;
  Tensor out = empty_following(x.shape(), dtype, x.device(), {&x});
  copy_into(out, x);
  return out;
}

Tensor contiguous(const Tensor& x) { return x.is_contiguous() ? x : astype(x, x.dtype(), true); }

// Note [Copies between devices]: the backend moves contiguous bytes. A view that is not
// contiguous is made contiguous on its own device first: by the device's copy kernel, or,
// where it has none, by the host fallback's copy of the byte span the view covers (so a
// sparse view of a large buffer moves only its own elements when the device can copy).
Tensor to_device(const Tensor& x, Device device) {
  if (device == x.device()) return x;
  profiler::CauseScope cause(profiler::Cause::ToDevice);
  const Backend& b = backend(device.is_cpu() ? x.device().type : device.type);
  Tensor src = contiguous(x);
  Tensor out = empty(x.shape(), x.dtype(), device);
  b.copy_bytes(out.data(), device, src.data(), src.device(), src.numel() * src.itemsize());
  return out;
}

namespace {
// The element of a one-element host tensor.
Scalar host_item(const Tensor& x) {
  const char* p = x.data();
  auto get = [p](auto tag) { decltype(tag) v; std::memcpy(&v, p, sizeof v); return v; };
  switch (x.dtype()) {
    case DType::Bool: return Scalar::from_bool(get(uint8_t{}) != 0);
    case DType::Int8: return Scalar::from_int(get(int8_t{}));
    case DType::Int16: return Scalar::from_int(get(int16_t{}));
    case DType::Int32: return Scalar::from_int(get(int32_t{}));
    case DType::Int64: return Scalar::from_int(get(int64_t{}));
    case DType::UInt8: return Scalar::from_int(get(uint8_t{}));
    case DType::UInt16: return Scalar::from_int(get(uint16_t{}));
    case DType::UInt32: return Scalar::from_int(get(uint32_t{}));
    case DType::UInt64: return Scalar::from_uint(get(uint64_t{}));
    case DType::Float16: return Scalar::from_float(float(get(Float16{})));
    case DType::BFloat16: return Scalar::from_float(float(get(BFloat16{})));
    case DType::Float32: return Scalar::from_float(get(float{}));
    case DType::Float64: return Scalar::from_float(get(double{}));
    case DType::Complex64: return Scalar::from_complex(get(std::complex<float>{}));
    case DType::Complex128: return Scalar::from_complex(get(std::complex<double>{}));
  }
  throw ValueError("unknown dtype");
}
}  // namespace

Scalar item(const Tensor& x) {
  if (x.numel() != 1)
    throw TypeError("only tensors of one element can be converted to Python scalars (shape " +
                    shape_str(x.shape()) + ")");
  profiler::CauseScope cause(profiler::Cause::Item);
  if (!x.device().is_cpu()) return host_item(to_device(x, kCPU));  // the copy is the wait
  if (profiler::mode()) profiler::note_host_read(x.device());
  return host_item(x);
}

}  // namespace xrt

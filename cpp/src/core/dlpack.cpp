// cpp/src/core/dlpack.cpp: DLPack export (the view travels with a reference to its
// storage) and import (the producer's managed tensor becomes the storage's deleter context).
#include "xpuruntime/dlpack.h"

#include <string>

#include "xpuruntime/errors.h"

namespace xrt::dlpack {
namespace {

// One allocation per export: the view keeps the storage alive, shape and strides live here.
template <class Managed> struct ExportContext {
  Tensor tensor;
  Dims shape, strides;
  Managed managed;
};

template <class Managed> Managed* export_common(const Tensor& t) {
  auto* ctx = new ExportContext<Managed>{t, t.shape(), t.strides(), {}};
  Managed& m = ctx->managed;
  m.manager_ctx = ctx;
  m.deleter = [](Managed* self) { delete static_cast<ExportContext<Managed>*>(self->manager_ctx); };
  DLTensor& dl = m.dl_tensor;
  const DTypeInfo& info = dtype_info(t.dtype());
  dl.data = t.data();  // points at the first element; byte_offset stays 0 (as NumPy does)
  dl.device = {t.device().dlpack_type(), t.device().index};
  dl.ndim = t.ndim();
  dl.dtype = {info.dlpack_code, info.dlpack_bits, 1};
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
  return &m;
}

template <class Managed>
Tensor import_common(Managed* managed, bool readonly, void (*release)(void*, void*)) {
  if (!managed) throw BufferError("DLPack capsule holds a null pointer");
  const DLTensor& dl = managed->dl_tensor;
  Device device = device_from_dlpack(dl.device.device_type, dl.device.device_id);
  auto dtype = dtype_from_dlpack(dl.dtype.code, dl.dtype.bits, dl.dtype.lanes);
  if (!dtype)
    throw BufferError("unsupported DLPack dtype (code " + std::to_string(dl.dtype.code) +
                      ", bits " + std::to_string(dl.dtype.bits) + ", lanes " +
                      std::to_string(dl.dtype.lanes) + "): xpuruntime has no such dtype");
  if (dl.ndim < 0 || dl.ndim > 64)
    throw BufferError("DLPack tensor has " + std::to_string(dl.ndim) +
                      " dimensions; at most 64 are supported");
  if (dl.ndim > 0 && !dl.shape) throw BufferError("DLPack tensor has no shape");
  Dims shape(dl.shape, dl.shape + dl.ndim);
  for (int64_t d : shape)
    if (d < 0) throw BufferError("DLPack tensor has a negative dimension");
  Dims strides = dl.strides ? Dims(dl.strides, dl.strides + dl.ndim) : contiguous_strides(shape);
  // The storage's size is the span the view reaches; it is informational.
  int64_t span = 1;
  for (int i = 0; i < shape.size(); ++i)
    span += (shape[i] > 0 ? shape[i] - 1 : 0) * (strides[i] < 0 ? -strides[i] : strides[i]);
  size_t nbytes = static_cast<size_t>(span) * itemsize(*dtype);
  auto storage = Storage::wrap(dl.data, nbytes, device, release, managed, readonly);
  return Tensor(std::move(storage), std::move(shape), std::move(strides),
                static_cast<int64_t>(dl.byte_offset), *dtype);
}

}  // namespace

Device device_from_dlpack(int32_t type, int32_t id) {
  switch (type) {
    case kDLCPU:
    case kDLCUDAHost:  // pinned host memory is host memory
      return kCPU;
    case kDLCUDA:
    case kDLCUDAManaged:
      return Device{DeviceType::CUDA, static_cast<int16_t>(id)};
    default:
      throw BufferError("DLPack device type " + std::to_string(type) +
                        " is not supported (xpuruntime addresses CPU and CUDA memory)");
  }
}

DLManagedTensorVersioned* export_versioned(const Tensor& t, bool copied) {
  auto* m = export_common<DLManagedTensorVersioned>(t);
  m->version = kVersion;
  m->flags = (t.readonly() ? kFlagReadOnly : 0) | (copied ? kFlagIsCopied : 0);
  return m;
}

DLManagedTensor* export_legacy(const Tensor& t) { return export_common<DLManagedTensor>(t); }

Tensor import_versioned(DLManagedTensorVersioned* managed) {
  if (managed && managed->version.major != kVersion.major)
    throw BufferError("DLPack major version " + std::to_string(managed->version.major) +
                      " is not supported (xpuruntime reads version 1)");
  bool readonly = managed && (managed->flags & kFlagReadOnly);
  return import_common(managed, readonly, [](void*, void* ctx) {
    auto* m = static_cast<DLManagedTensorVersioned*>(ctx);
    if (m->deleter) m->deleter(m);
  });
}

Tensor import_legacy(DLManagedTensor* managed) {
  return import_common(managed, false, [](void*, void* ctx) {
    auto* m = static_cast<DLManagedTensor*>(ctx);
    if (m->deleter) m->deleter(m);
  });
}

}  // namespace xrt::dlpack

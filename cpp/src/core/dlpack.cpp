// cpp/src/core/dlpack.cpp: DLPack export (the view travels with a reference to its
// storage) and import (the producer's managed tensor becomes the storage's deleter context).
#include "xpuruntime/dlpack.h"

#include <cstdint>
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

// Note [Wrapped strides]: CuPy (14.x) divides a negative byte stride by the item size as an
// unsigned number and exports 2^64 / itemsize - k instead of -k. Such a stride times the item
// size lies past the address space, so it can only mean the negative stride it wraps to.
int64_t repaired_stride(int64_t stride, int64_t item) {
  if (item <= 1 || stride <= INT64_MAX / item) return stride;
  auto bytes = static_cast<int64_t>(static_cast<uint64_t>(stride) * static_cast<uint64_t>(item));
  return bytes < 0 && bytes % item == 0 ? bytes / item : stride;
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
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) throw BufferError("DLPack tensor has a negative dimension");
    empty |= d == 0;
  }
  try {
    shape_nbytes(shape, *dtype);  // the element count and the bytes fit in int64
  } catch (const ValueError& e) {
    throw BufferError(std::string("DLPack tensor: ") + e.what());
  }
  if (!dl.data && !empty)
    throw BufferError("DLPack tensor of shape " + shape_str(shape) +
                      " has a null data pointer");
  Dims strides = dl.strides ? Dims(dl.strides, dl.strides + dl.ndim) : contiguous_strides(shape);
  int64_t item = static_cast<int64_t>(itemsize(*dtype));
  for (int64_t& stride : strides) stride = repaired_stride(stride, item);
  // The storage's size is the span the view reaches; it is informational, but a span past
  // the address space means the header is broken.
  int64_t span = 1, bytes = 0;
  for (int i = 0; i < shape.size() && !empty; ++i) {
    if (shape[i] <= 1) continue;
    int64_t step = strides[i] < 0 ? -strides[i] : strides[i], reach = 0;
    if (__builtin_mul_overflow(shape[i] - 1, step, &reach) ||
        __builtin_add_overflow(span, reach, &span))
      throw BufferError("DLPack tensor's strides reach past the address space");
  }
  // The byte offset is unsigned in DLPack; past int64 (with the span) it addresses nothing.
  int64_t end = 0;
  if (__builtin_mul_overflow(span, item, &bytes) || dl.byte_offset > uint64_t{INT64_MAX} ||
      __builtin_add_overflow(static_cast<int64_t>(dl.byte_offset), bytes, &end))
    throw BufferError("DLPack tensor's byte_offset (" + std::to_string(dl.byte_offset) +
                      ") and strides reach past the address space");
  size_t nbytes = static_cast<size_t>(bytes);
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
      return Device::cuda(id);
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

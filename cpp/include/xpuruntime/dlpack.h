// cpp/include/xpuruntime/dlpack.h: DLPack export and import, without Python.
//
// The structs below are the DLPack ABI (v1.x) as the specification defines it; they are
// declared here rather than taken from dlpack.h so the core has no outside header.
#pragma once
#include <cstdint>

#include "xpuruntime/tensor.h"

namespace xrt::dlpack {

struct Version { uint32_t major, minor; };
struct DLDevice { int32_t device_type, device_id; };
struct DLDataType { uint8_t code, bits; uint16_t lanes; };
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {  // the legacy, unversioned form ("dltensor" capsules)
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
struct DLManagedTensorVersioned {  // "dltensor_versioned" capsules
  Version version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

// DLPack 1.3's C exchange API: a per-type table of C functions (the Python type's
// __dlpack_c_exchange_api__, a "dlpack_exchange_api" capsule), so C code exchanges tensors
// without calling __dlpack__ through the interpreter. Objects are PyObject* as void*.
struct ExchangeAPIHeader {
  Version version;
  ExchangeAPIHeader* prev_api;  ///< an older table, or null
};
struct ExchangeAPI {
  ExchangeAPIHeader header;
  int (*managed_tensor_allocator)(DLTensor* prototype, DLManagedTensorVersioned** out,
                                  void* error_ctx,
                                  void (*set_error)(void* error_ctx, const char* kind,
                                                    const char* message));
  int (*managed_tensor_from_py_object_no_sync)(void* py_object, DLManagedTensorVersioned** out);
  int (*managed_tensor_to_py_object_no_sync)(DLManagedTensorVersioned* tensor,
                                             void** out_py_object);
  int (*dltensor_from_py_object_no_sync)(void* py_object, DLTensor* out);  ///< may be null
  int (*current_work_stream)(int32_t device_type, int32_t device_id, void** out_stream);
};
inline constexpr Version kExchangeVersion{1, 3};

inline constexpr uint64_t kFlagReadOnly = 1ull << 0;
inline constexpr uint64_t kFlagIsCopied = 1ull << 1;
inline constexpr Version kVersion{1, 1};
inline constexpr int32_t kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

/// Exports a view; the managed tensor keeps the storage alive until its deleter runs.
DLManagedTensorVersioned* export_versioned(const Tensor& t, bool copied);
DLManagedTensor* export_legacy(const Tensor& t);

/// Imports a managed tensor, taking ownership (its deleter runs when the last view dies).
/// On error nothing is taken: the caller still owns it. BufferError/TypeError on
/// unsupported dtypes or devices.
Tensor import_versioned(DLManagedTensorVersioned* managed);
Tensor import_legacy(DLManagedTensor* managed);

/// The xpuruntime device of a DLPack device; BufferError for devices it cannot address.
Device device_from_dlpack(int32_t type, int32_t id);

}  // namespace xrt::dlpack

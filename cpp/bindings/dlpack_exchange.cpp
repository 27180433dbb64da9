// cpp/bindings/dlpack_exchange.cpp: DLPack's C exchange API (DLPack 1.3,
// __dlpack_c_exchange_api__): the table the Tensor type exports, and the import of an object
// whose type exports one, which is xrt.from_dlpack(torch_tensor)'s fast path (Note
// [from_dlpack's call] in bind_dlpack.cpp).
#include "dlpack_exchange.h"

#include <chrono>
#include <utility>
#include <vector>

#include "bind_args.h"
#include "xpuruntime/dlpack.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/runtime/stream.h"

namespace xrt::py {
namespace {

namespace dl = xrt::dlpack;

// Note: these functions are called from C with the GIL held; they must not throw, so each
// turns an exception into a Python error and returns -1.

int fail() {
  try {
    throw;
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_BufferError, "unknown C++ exception in xpuruntime's DLPack API");
  }
  return -1;
}

const Tensor& exported_tensor(void* py_object) {
  const Tensor* t = tensor_of(nb::handle(static_cast<PyObject*>(py_object)));
  if (!t) throw TypeError("not an xpuruntime Tensor");
  return *t;
}

int exchange_managed_from_py(void* py_object, dl::DLManagedTensorVersioned** out) noexcept {
  try {
    *out = dl::export_versioned(exported_tensor(py_object), false);
    return 0;
  } catch (...) {
    return fail();
  }
}

int exchange_dltensor_from_py(void* py_object, dl::DLTensor* out) noexcept {
  try {
    const Tensor& t = exported_tensor(py_object);  // alive until control returns: views into it
    const DTypeInfo& info = dtype_info(t.dtype());
    out->data = t.data();
    out->device = {t.device().dlpack_type(), t.device().index};
    out->ndim = t.ndim();
    out->dtype = {info.dlpack_code, info.dlpack_bits, 1};
    out->shape = const_cast<int64_t*>(t.shape().data());
    out->strides = const_cast<int64_t*>(t.strides().data());
    out->byte_offset = 0;
    return 0;
  } catch (...) {
    return fail();
  }
}

int exchange_managed_to_py(dl::DLManagedTensorVersioned* tensor, void** out) noexcept {
  try {
    *out = nb::cast(dl::import_versioned(tensor)).release().ptr();
    return 0;
  } catch (...) {
    return fail();
  }
}

int exchange_allocator(dl::DLTensor* prototype, dl::DLManagedTensorVersioned** out,
                       void* error_ctx,
                       void (*set_error)(void*, const char*, const char*)) noexcept {
  try {
    Device device = dl::device_from_dlpack(prototype->device.device_type,
                                           prototype->device.device_id);
    auto dtype = dtype_from_dlpack(prototype->dtype.code, prototype->dtype.bits,
                                   prototype->dtype.lanes);
    if (!dtype) throw BufferError("unsupported DLPack dtype");
    if (prototype->ndim < 0 || (prototype->ndim > 0 && !prototype->shape))
      throw BufferError("the prototype has no shape");
    Dims shape(prototype->shape, prototype->shape + prototype->ndim);
    *out = dl::export_versioned(empty(shape, *dtype, device), false);
    return 0;
  } catch (const std::exception& e) {
    if (set_error) set_error(error_ctx, "BufferError", e.what());
    return -1;
  } catch (...) {
    if (set_error) set_error(error_ctx, "BufferError", "unknown error");
    return -1;
  }
}

int exchange_current_stream(int32_t device_type, int32_t device_id, void** out) noexcept {
  try {
    *out = nullptr;  // the host has no stream
    if (device_type == dl::kDLCUDA || device_type == dl::kDLCUDAManaged)
      *out = current_stream(dl::device_from_dlpack(device_type, device_id)).handle();
    return 0;
  } catch (...) {
    return fail();
  }
}

const dlpack::ExchangeAPI exchange_table = {
    {dl::kExchangeVersion, nullptr},
    exchange_allocator,
    exchange_managed_from_py,
    exchange_managed_to_py,
    exchange_dltensor_from_py,
    exchange_current_stream,
};

}  // namespace

const dlpack::ExchangeAPI& tensor_exchange_api() { return exchange_table; }

/// The exchange API of obj's type (null when it has none or an incompatible major version),
/// looked up once per type. The types found are kept alive, so their addresses stay theirs.
const dlpack::ExchangeAPI* exchange_api_of(nb::handle obj) {
  static std::vector<std::pair<PyTypeObject*, const dlpack::ExchangeAPI*>>* known =
      new std::vector<std::pair<PyTypeObject*, const dlpack::ExchangeAPI*>>();
  PyTypeObject* type = Py_TYPE(obj.ptr());
  for (const auto& [t, api] : *known)
    if (t == type) return api;
  const dlpack::ExchangeAPI* api = nullptr;
  PyObject* capsule = PyObject_GetAttrString(reinterpret_cast<PyObject*>(type),
                                             "__dlpack_c_exchange_api__");
  if (!capsule) {
    PyErr_Clear();
  } else {
    if (PyCapsule_IsValid(capsule, "dlpack_exchange_api")) {
      api = static_cast<const dlpack::ExchangeAPI*>(
          PyCapsule_GetPointer(capsule, "dlpack_exchange_api"));
      // A table of another major version may lay its fields out otherwise: walk back to
      // one of ours, or use the Python protocol.
      const dlpack::ExchangeAPIHeader* h = api ? &api->header : nullptr;
      while (h && h->version.major != dl::kExchangeVersion.major) h = h->prev_api;
      api = reinterpret_cast<const dlpack::ExchangeAPI*>(h);
      if (api && !api->managed_tensor_from_py_object_no_sync) api = nullptr;
    }
    Py_DECREF(capsule);
  }
  Py_INCREF(type);
  known->emplace_back(type, api);
  return api;
}

/// obj imported through its type's C table: no interpreter call. Our current stream waits
/// for the producer's (the "no sync" export leaves that to the consumer).
Tensor import_through_exchange(const dlpack::ExchangeAPI& api, nb::handle obj) {
  dl::DLManagedTensorVersioned* managed = nullptr;
  if (api.managed_tensor_from_py_object_no_sync(obj.ptr(), &managed) != 0)
    throw nb::python_error();
  Tensor t = [managed] {
    try {
      return dl::import_versioned(managed);
    } catch (...) {
      if (managed && managed->deleter) managed->deleter(managed);
      throw;
    }
  }();
  if (t.device().type == DeviceType::CUDA && api.current_work_stream) {
    void* producer = nullptr;
    if (api.current_work_stream(dl::kDLCUDA, t.device().index, &producer) != 0)
      throw nb::python_error();
    if (producer != current_stream_handle(t.device()))
      current_stream(t.device()).wait(Stream(t.device(), producer));
  }
  return t;
}

/// Nanoseconds per call of each piece of import_through_exchange(obj), timed in C++ over
/// count calls (benchmarks: where xrt.from_dlpack(torch_tensor)'s time goes).
nb::dict time_exchange_import(nb::handle obj, int count) {
  if (count <= 0) throw ValueError("count must be positive");
  const dlpack::ExchangeAPI* api = exchange_api_of(obj);
  if (!api) throw TypeError("_time_exchange_import: the object's type has no exchange API");
  using clock = std::chrono::steady_clock;
  auto per_call = [count](auto&& body) {
    body();
    auto start = clock::now();
    for (int i = 0; i < count; ++i) body();
    return std::chrono::duration<double, std::nano>(clock::now() - start).count() / count;
  };
  nb::dict out;
  out["whole"] = per_call([&] { (void)import_through_exchange(*api, obj); });
  out["producer_export_and_delete"] = per_call([&] {
    dl::DLManagedTensorVersioned* m = nullptr;
    if (api->managed_tensor_from_py_object_no_sync(obj.ptr(), &m) != 0) throw nb::python_error();
    if (m && m->deleter) m->deleter(m);
  });
  out["import_and_free"] = per_call([&] {
    dl::DLManagedTensorVersioned* m = nullptr;
    if (api->managed_tensor_from_py_object_no_sync(obj.ptr(), &m) != 0) throw nb::python_error();
    (void)dl::import_versioned(m);
  });
  Device device = import_through_exchange(*api, obj).device();
  if (device.type == DeviceType::CUDA) {
    out["producer_stream"] = per_call([&] {
      void* s = nullptr;
      if (api->current_work_stream(dl::kDLCUDA, device.index, &s) != 0) throw nb::python_error();
    });
    out["our_stream"] = per_call([&] { (void)current_stream_handle(device); });
  }
  return out;
}

}  // namespace xrt::py

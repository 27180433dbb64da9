// cpp/bindings/bind_cuda_memory.cpp: the CUDA allocators' controls and statistics, and the
// pinned pool. (The caching allocator on a fake device is in the test module,
// tests/native.)
#include <nanobind/stl/string.h>

#include <algorithm>
#include <chrono>

#include "bind_args.h"
#include "bindings.h"
#include "memory_dicts.h"
#include "xpuruntime/cuda/runtime.h"
#include "xpuruntime/cuda_memory.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/runtime/backend.h"

namespace xrt::py {
namespace {

// Copies the bytes of src into dst (both contiguous, the same size, any devices).
void copy_into(const Tensor& dst, const Tensor& src) {
  size_t nbytes = size_t(src.numel()) * src.itemsize();
  if (!dst.is_contiguous() || !src.is_contiguous() ||
      size_t(dst.numel()) * dst.itemsize() != nbytes)
    throw ValueError("copy_into needs two contiguous tensors of the same size in bytes");
  Device device = dst.device().is_cpu() ? src.device() : dst.device();
  if (device.is_cpu()) throw ValueError("copy_into copies to or from a CUDA tensor");
  nb::gil_scoped_release release;
  backend(device.type).copy_bytes(dst.data(), dst.device(), src.data(), src.device(), nbytes);
}

// A CUstream handle from Python (0: the legacy default stream) as a Stream of device
// (-1: the current one).
// Seconds per allocation+free of a CUDA Storage through the backend (no Python).
double time_cuda_allocate_free(int device, size_t nbytes, int repeat) {
  Device d{DeviceType::CUDA, static_cast<int16_t>(device)};
  const Backend& b = backend(DeviceType::CUDA);
  b.allocate(nbytes, d);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeat; ++i) b.allocate(nbytes, d);
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / repeat;
}

}  // namespace

void bind_cuda_memory(nb::module_& m) {  // m: the _cuda submodule
  m.def("memory_stats", [](int device) { return stats_dict(cuda::memory_stats(device)); });
  m.def("memory_summary", &cuda::memory_summary);
  m.def("memory_snapshot",
        [](int device) { return snapshot_list(cuda::memory_snapshot(device)); });
  m.def("empty_cache", [] {
    nb::gil_scoped_release release;
    cuda::empty_cache();
  });
  m.def("reset_peak_memory_stats", &cuda::reset_peak_memory_stats);
  m.def("reset_accumulated_memory_stats", &cuda::reset_accumulated_memory_stats);
  m.def("set_memory_limit", &cuda::set_memory_limit);
  m.def("set_memory_fraction", &cuda::set_memory_fraction);
  m.def("set_allocator", [](const std::string& name) {
    cuda::set_allocator(cuda::parse_allocator_kind(name));
  });
  m.def("allocator", [] { return cuda::allocator_name(cuda::allocator_kind()); });
  m.def("record_stream", [](nb::handle tensor, const Stream& stream) {
    const Tensor& t = tensor_arg(tensor, "tensor");
    if (t.device() != stream.device())
      throw ValueError("record_stream: the tensor lives on " + t.device().str() +
                       ", the stream belongs to " + stream.device().str());
    cuda::record_stream(*t.storage(), stream);
  }, nb::arg("tensor"), nb::arg("stream"));
  // Graph-private pools (Note [Graph-private pools]); CUDAGraph brackets its captures with
  // them in C++, tests call them directly.
  m.def("begin_private_pool", [](int device, PoolId id, const Stream& stream) {
    cuda::begin_private_pool(device, id, stream);
  }, nb::arg("device"), nb::arg("pool"), nb::arg("stream"));
  m.def("end_private_pool", &cuda::end_private_pool, nb::arg("device"), nb::arg("pool"));
  m.def("release_private_pool", &cuda::release_private_pool, nb::arg("device"), nb::arg("pool"));
  m.def("empty_pinned", [](nb::handle shape, nb::handle dtype, int device) {
    return cuda::empty_pinned(int_tuple_arg(shape, "shape"), dtype_arg(dtype), device);
  });
  m.def("pinned_memory_stats",
        [](int device) { return stats_dict(cuda::pinned_memory_stats(device)); });
  m.def("set_staging_threshold", &cuda::set_staging_threshold);
  m.def("set_staging_streaming_stores", &cuda::set_staging_streaming_stores);
  m.def("copy_into", [](nb::handle dst, nb::handle src) {
    copy_into(tensor_arg(dst, "dst"), tensor_arg(src, "src"));
  });
  m.def("_time_malloc_free", &time_cuda_allocate_free, nb::arg("device"),
        nb::arg("nbytes"), nb::arg("repeat") = 100000,
        "Seconds per CUDA allocation+free through the backend, timed in C++ (benchmarks).");
}

}  // namespace xrt::py

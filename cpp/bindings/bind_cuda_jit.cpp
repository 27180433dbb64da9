// cpp/bindings/bind_cuda_jit.cpp: `_core._cuda`'s JIT: the caches' counters, the compile-all
// check CI runs, and raw compile/launch entry points for tests.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <variant>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/cuda/jit.h"
#include "xpuruntime/cuda/libraries.h"
#include "xpuruntime/cuda/runtime.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/runtime/stream.h"

namespace xrt::py {
namespace {

cuda::Dim3 dim3_arg(const std::vector<unsigned>& v, const char* what) {
  if (v.empty() || v.size() > 3)
    throw ValueError(std::string(what) + " must have 1 to 3 entries");
  cuda::Dim3 d;
  d.x = v[0];
  if (v.size() > 1) d.y = v[1];
  if (v.size() > 2) d.z = v[2];
  return d;
}

// Kernel arguments from Python: a Tensor passes its device address, an int a long long,
// a float a double (what the kernel's signature must declare).
void launch(const std::string& source, const std::string& name, const std::vector<unsigned>& grid,
            const std::vector<unsigned>& block, const nb::list& args,
            const std::vector<std::string>& options, size_t shared_bytes) {
  std::vector<std::variant<void*, long long, double>> values;
  int device = -1;
  for (nb::handle a : args) {
    if (nb::isinstance<Tensor>(a)) {
      const Tensor& t = nb::cast<const Tensor&>(a);
      if (t.device().is_cpu()) throw ValueError("kernel arguments must be CUDA tensors");
      if (device >= 0 && t.device().index != device)
        throw ValueError("kernel arguments must be on one device");
      device = t.device().index;
      values.emplace_back(static_cast<void*>(t.data()));
    } else if (PyBool_Check(a.ptr()) || PyLong_Check(a.ptr())) {
      values.emplace_back(nb::cast<long long>(a));
    } else if (PyFloat_Check(a.ptr())) {
      values.emplace_back(nb::cast<double>(a));
    } else {
      throw TypeError("kernel arguments must be Tensors, ints or floats, got " + type_name_of(a));
    }
  }
  if (device < 0) device = cuda::current_device();
  Device where{DeviceType::CUDA, static_cast<int16_t>(device)};
  cuda::Dim3 g = dim3_arg(grid, "grid"), b = dim3_arg(block, "block");
  nb::gil_scoped_release release;
  cuda::Function fn = cuda::compile_function(where, {source, options}, name);
  std::vector<void*> pointers;
  for (auto& v : values) std::visit([&](auto& x) { pointers.push_back(&x); }, v);
  cuda::launch(fn, g, b, shared_bytes, current_stream(where), pointers.data());
}

// With a Python burst, the GIL stays held: the burst runs between the launches.
nb::dict host_costs(int count, nb::handle burst, int burst_ops) {
  cuda::HostCosts costs;
  if (burst.is_none()) {
    nb::gil_scoped_release release;
    costs = cuda::measure_host_costs(count);
  } else {
    if (!PyCallable_Check(burst.ptr())) throw TypeError("_host_costs: burst must be callable");
    costs = cuda::measure_host_costs(count, [&] {
      PyObject* r = PyObject_CallNoArgs(burst.ptr());
      if (!r) throw nb::python_error();
      Py_DECREF(r);
    }, burst_ops);
  }
  nb::dict d;
  d["launch_ns"] = costs.launch_ns;
  d["launch_args96_ns"] = costs.launch_args96_ns;
  d["launch_extra_ns"] = costs.launch_extra_ns;
  d["launch_ex_ns"] = costs.launch_ex_ns;
  d["launch_add96_ns"] = costs.launch_add96_ns;
  d["launch_loop_ns"] = costs.launch_loop_ns;
  d["activate_ns"] = costs.activate_ns;
  d["current_stream_ns"] = costs.current_stream_ns;
  d["allocate_free_ns"] = costs.allocate_free_ns;
  d["empty_ns"] = costs.empty_ns;
  d["add_inplace_ns"] = costs.add_inplace_ns;
  d["add_ns"] = costs.add_ns;
  if (costs.burst_op_ns >= 0) d["burst_op_ns"] = costs.burst_op_ns;
  return d;
}

}  // namespace

void bind_cuda_jit(nb::module_& m) {
  m.def("_host_costs", &host_costs, nb::arg("count") = 100000, nb::arg("burst") = nb::none(),
        nb::arg("burst_ops") = 200,
        "Host ns per call of the pieces every CUDA op pays, and of 16-float32 adds, in C++ on "
        "the current device and stream (HostCosts in xpuruntime/cuda/libraries.h); launching "
        "pieces are timed in bursts while a spin kernel holds the GPU. `burst`, a Python "
        "callable that runs `burst_ops` ops, is timed in the same rounds as the bare launches "
        "(burst_op_ns: per op).");
  m.def("jit_cache_info", [] {
    cuda::JitCacheInfo info = cuda::jit_cache_info();
    nb::dict d;
    d["compiles"] = info.compiles;
    d["memory_hits"] = info.memory_hits;
    d["disk_hits"] = info.disk_hits;
    d["disk_writes"] = info.disk_writes;
    d["disk_rejects"] = info.disk_rejects;
    d["cache_dir"] = cuda::kernel_cache_dir();
    return d;
  }, "Counters of the NVRTC kernel caches, and the disk cache's folder ('' when off).");
  m.def("jit_clear_memory_cache", &cuda::clear_jit_memory_cache,
        "Forgets the compiled kernels held in memory (the disk cache stays).");
  m.def("nvrtc_version", &cuda::nvrtc_version);
  m.def("_compile", [](const std::string& source, const std::string& name,
                            const std::string& arch, const std::vector<std::string>& options,
                            bool cached) {
    std::string cubin;
    {
      nb::gil_scoped_release release;
      cubin = cached ? cuda::cached_cubin({source, options}, arch, name)
                     : cuda::compile_cubin({source, options}, arch, name);
    }
    return nb::bytes(cubin.data(), cubin.size());
  }, nb::arg("source"), nb::arg("name") = "", nb::arg("arch") = "sm_90",
     nb::arg("options") = std::vector<std::string>(), nb::arg("cached") = false,
     "Compiles CUDA C++ to a cubin with NVRTC (no GPU needed); cached=True goes through the "
     "memory and disk caches.");
  m.def("_compile_all", [](const std::string& arch, const std::string& family) {
    cuda::KernelCheckResult r;
    {
      nb::gil_scoped_release release;
      r = cuda::compile_kernel_samples(arch, family);
    }
    nb::list failures;
    for (const auto& f : r.failures) failures.append(nb::make_tuple(f.family, f.name, f.error));
    nb::dict d;
    d["compiled"] = r.compiled;
    d["failures"] = failures;
    return d;
  }, nb::arg("arch") = "sm_90", nb::arg("family") = "",
     "Compiles every kernel family's sample sources for arch; returns the count and the "
     "failures as (family, kernel, error).");
  m.def("_launch", &launch, nb::arg("source"), nb::arg("name"), nb::arg("grid"),
        nb::arg("block"), nb::arg("args"), nb::arg("options") = std::vector<std::string>(),
        nb::arg("shared_bytes") = 0,
        "Compiles (through the caches) and launches a kernel on the current stream.");
}

}  // namespace xrt::py

// cpp/bindings/bind_cuda_elementwise.cpp: the elementwise family's compile-all check (CI
// compiles every generated source with NVRTC, no GPU needed).
// Note: until the jit family's kernel_check (register_kernel_samples) is merged; then the
// family registers its samples there and this file goes.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "bindings.h"
#include "cuda/jit.h"
#include "cuda/kernels.h"

namespace xrt::py {

void bind_cuda_elementwise(nb::module_& m) {
  m.def("_cuda_elementwise_sources", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& s : cuda::elementwise_kernel_samples()) out.emplace_back(s.name, s.source.source);
    return out;
  }, "(name, source) of every sample of the CUDA elementwise family.");
  m.def("_cuda_elementwise_warm",
        [](int device, unsigned threads) {
          nb::gil_scoped_release release;
          cuda::warm_elementwise_kernels(device, threads);
        },
        nb::arg("device") = 0, nb::arg("threads") = 8,
        "Compiles the dense kernel of every elementwise (op, dtype) on a CUDA device.");
  m.def("_cuda_elementwise_compile_check",
        [](const std::string& arch, unsigned threads) {
          std::vector<cuda::ElementwiseSample> samples = cuda::elementwise_kernel_samples();
          std::vector<std::pair<std::string, std::string>> failures;
          std::mutex failures_mutex;
          std::atomic<size_t> next{0};
          nb::gil_scoped_release release;
          auto work = [&] {
            for (size_t i; (i = next.fetch_add(1)) < samples.size();) {
              try {
                cuda::compile_cubin(samples[i].source, arch);
              } catch (const std::exception& e) {
                std::lock_guard lock(failures_mutex);
                failures.emplace_back(samples[i].name, e.what());
              }
            }
          };
          std::vector<std::thread> pool;
          for (unsigned t = 1; t < std::max(threads, 1u); ++t) pool.emplace_back(work);
          work();
          for (std::thread& t : pool) t.join();
          return std::make_pair(samples.size(), failures);
        },
        nb::arg("arch"), nb::arg("threads") = 2,
        "Compiles every elementwise sample for arch; (count, [(name, error)]).");
}

}  // namespace xrt::py

// cpp/bindings/bind_cuda_elementwise.cpp: compiling the elementwise family's kernels ahead of
// their first calls (tests and benchmarks pay NVRTC's time once, on every core).
#include "bindings.h"
#include "xpuruntime/cuda/libraries.h"

namespace xrt::py {

void bind_cuda_elementwise(nb::module_& m) {
  m.def("_elementwise_warm",
        [](int device, unsigned threads) {
          nb::gil_scoped_release release;
          cuda::warm_elementwise_kernels(device, threads);
        },
        nb::arg("device") = 0, nb::arg("threads") = 8,
        "Compiles the dense kernel of every elementwise (op, dtype) on a CUDA device.");
}

}  // namespace xrt::py

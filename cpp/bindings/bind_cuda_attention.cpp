// cpp/bindings/bind_cuda_attention.cpp: `_core._cuda`'s cuDNN attention (plans and runs,
// xpuruntime/cuda/attention.h). xpuruntime.nn.attention and the PyTorch adapter build on it.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "xpuruntime/cuda/attention.h"
#include "xpuruntime/errors.h"

namespace xrt::py {

void bind_cuda_attention(nb::module_& m) {
  m.def("cudnn_version", &cuda::cudnn_version,
        "cuDNN's version (e.g. 91900); CudaError saying how to install cuDNN when it is missing.");
  m.def("cudnn_attention_plan", [](bool backward, nb::handle dtype, int device, bool causal,
                                   bool stats, bool bias, const std::vector<int64_t>& layouts) {
    if (layouts.size() % 8 != 0)
      throw ValueError("layouts: 8 numbers per tensor (4 sizes, then 4 strides)");
    cuda::AttentionSpec spec;
    spec.backward = backward;
    spec.dtype = dtype_arg(dtype);
    spec.device = device;
    spec.causal = causal;
    spec.stats = stats;
    spec.bias = bias;
    for (size_t i = 0; i < layouts.size(); i += 8) {
      cuda::AttentionLayout l;
      for (int a = 0; a < 4; ++a) {
        l.dims[a] = layouts[i + a];
        l.strides[a] = layouts[i + 4 + a];
      }
      spec.tensors.push_back(l);
    }
    nb::gil_scoped_release release;  // building may compile kernels
    cuda::AttentionPlan plan = cuda::cudnn_attention_plan(spec);
    return std::make_pair(plan.id, plan.workspace_bytes);
  }, nb::arg("backward"), nb::arg("dtype"), nb::arg("device"), nb::arg("causal"),
     nb::arg("stats"), nb::arg("bias"), nb::arg("layouts"),
     "(plan id, workspace bytes) for an attention call. layouts: per tensor 4 sizes then 4 "
     "strides (elements), in the order forward q, k, v, o / backward q, k, v, o, do, dq, dk, "
     "dv, then the bias.");
  m.def("cudnn_attention_run", &cuda::cudnn_attention_run, nb::arg("plan"), nb::arg("pointers"),
        nb::arg("stats"), nb::arg("workspace"), nb::arg("scale"), nb::arg("stream"),
        nb::call_guard<nb::gil_scoped_release>(),
        "Runs a plan on a stream (a CUstream as an int) with the call's device pointers.");
}

}  // namespace xrt::py

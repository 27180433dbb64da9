// cpp/src/cuda/host_fallback.cpp: every op that has a CPU kernel also works on CUDA tensors,
// through a kernel of lowest priority that runs the CPU kernel on host copies.
//
// Note [Host fallback]: the inputs are copied to the host, the outputs too (a kernel may read
// its output: scatter, masked_scatter, in-place operators), the CPU kernel runs through the
// dispatcher, and the outputs are copied back. Views of any strides are moved as the byte span
// they cover, so no device kernel is needed. It is synchronous and slow, and it exists so
// that the whole namespace gives the CPU's results (and errors) on CUDA while native kernels
// are written family by family; a native kernel of higher priority replaces it for what it
// supports, and explain() names the kernel that ran.
#include <algorithm>
#include <string>
#include <vector>

#include "cuda/kernels.h"
#include "xpuruntime/runtime/backend.h"
#include "xpuruntime/dispatcher.h"
#include "xpuruntime/ops.h"

namespace xrt::cuda {
namespace {

// A device view's extent in its storage, in elements relative to element 0.
struct Span {
  int64_t low = 0, count = 0;
};

Span span_of(const Tensor& t) {
  if (t.numel() == 0) return {};
  Span s;
  int64_t high = 0;
  for (int i = 0; i < t.ndim(); ++i) {
    int64_t reach = (t.shape()[i] - 1) * t.strides()[i];
    (reach < 0 ? s.low : high) += reach;
  }
  s.count = high - s.low + 1;
  return s;
}

// A host copy of a device view: same shape and strides, over a copy of the span it covers.
Tensor fetch(const Tensor& t, Span span) {
  Tensor buffer = empty(Dims{span.count}, t.dtype(), kCPU);
  int64_t item = t.itemsize();
  backend(DeviceType::CUDA).copy_bytes(buffer.data(), kCPU, t.data() + span.low * item,
                                       t.device(), span.count * item);
  return buffer.as_strided(t.shape(), t.strides(), -span.low * item);
}

void store(const Tensor& device_view, const Tensor& host_view, Span span) {
  int64_t item = device_view.itemsize();
  backend(DeviceType::CUDA).copy_bytes(device_view.data() + span.low * item,
                                       device_view.device(), host_view.data() + span.low * item,
                                       kCPU, span.count * item);
}

void run_on_host(OpId op, const KernelCall& call) {
  std::vector<Tensor> inputs(call.num_inputs), outputs(call.num_outputs);
  std::vector<const Tensor*> input_ptrs(call.num_inputs);
  std::vector<Span> spans(call.num_outputs);
  for (int i = 0; i < call.num_inputs; ++i) {
    const Tensor& t = call.in(i);
    inputs[i] = t.device().is_cpu() ? t : fetch(t, span_of(t));
    input_ptrs[i] = &inputs[i];
  }
  for (int i = 0; i < call.num_outputs; ++i) {
    const Tensor& t = call.out(i);
    spans[i] = span_of(t);
    outputs[i] = fetch(t, spans[i]);
  }
  KernelCall host;
  host.inputs = input_ptrs.data();
  host.num_inputs = call.num_inputs;
  host.outputs = outputs.data();
  host.num_outputs = call.num_outputs;
  host.attrs = call.attrs;
  dispatch(op, host);
  for (int i = 0; i < call.num_outputs; ++i)
    if (spans[i].count > 0) store(call.out(i), outputs[i], spans[i]);
}

}  // namespace

void register_host_fallback_kernels(KernelRegistry& registry) {
  std::vector<std::string> ops;
  for (const KernelRef& k : registry.all())
    if (k->device == DeviceType::CPU &&
        (ops.empty() || std::find(ops.begin(), ops.end(), k->op) == ops.end()))
      ops.push_back(k->op);
  for (const std::string& name : ops) {
    OpId id = registry.op_id(name);
    registry.add(kernel_info(
        name, "host_fallback", [id](const KernelCall& call) { run_on_host(id, call); },
        "copies the operands to the host, runs the CPU kernel and copies the results back "
        "(synchronous; used where no CUDA kernel supports the call)",
        {}, -100));
  }
}

}  // namespace xrt::cuda

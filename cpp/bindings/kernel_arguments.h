// cpp/bindings/kernel_arguments.h: a user kernel's Python arguments packed for its launch
// (bind_cuda_kernels.cpp), shared with the replay of recorded calls (bind_cuda_replay.cpp).
#pragma once
#include <vector>

#include "bindings.h"
#include "xpuruntime/cuda/user_kernel.h"

namespace xrt::py {

/// A grid or block: an int or 1 to 3 of them; ValueError naming `what` otherwise.
cuda::Dim3 dim3_of(nb::handle o, const char* what);
/// A tensor argument: its data pointer, on the kernel's one CUDA device.
void add_tensor(cuda::KernelArguments& out, const Tensor& t, int& device);
/// Any argument by CuPy's rules; device arrays imported through DLPack are kept in imported.
void add_argument(cuda::KernelArguments& out, nb::handle a, int& device,
                  std::vector<nb::object>& imported);
/// This thread's argument buffer, cleared.
cuda::KernelArguments& argument_buffer();
/// Launches kernel with buffer on stream (None: the current stream of device, or of the
/// current device when device < 0), compiling it first if it must.
void launch_packed(cuda::UserKernel& kernel, cuda::Dim3 grid, cuda::Dim3 block,
                   size_t shared_bytes, nb::handle stream, int device,
                   cuda::KernelArguments& buffer);

void bind_cuda_replay(nb::module_& m);

}  // namespace xrt::py

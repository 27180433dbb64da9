// cpp/src/cuda/user_kernel.cpp: user kernels on the JIT: per-device functions compiled on first
// launch, and the packed argument buffer their launches read.
#include "xpuruntime/cuda/user_kernel.h"

#include <cstring>

#include "cuda/jit.h"
#include "cuda/runtime.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {

void KernelArguments::add_bytes(const void* value, size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 ||
      alignment > alignof(std::max_align_t))
    alignment = alignof(std::max_align_t);
  size_t offset = (size_ + alignment - 1) & ~(alignment - 1);
  size_t needed = (offset + size + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  if (needed > storage_.size()) storage_.resize(needed * 2);
  std::memcpy(reinterpret_cast<char*>(storage_.data()) + offset, value, size);
  offsets_.push_back(offset);
  size_ = offset + size;
}

void** KernelArguments::pointers() {
  // Note: pointers are made last, since storage_ may move while arguments are added.
  pointers_.resize(offsets_.size());
  char* base = reinterpret_cast<char*>(storage_.data());
  for (size_t i = 0; i < offsets_.size(); ++i) pointers_[i] = base + offsets_[i];
  return pointers_.data();
}

UserKernel::UserKernel(KernelSource source, std::string name)
    : source_(std::move(source)), name_(std::move(name)) {
  if (name_.empty()) throw ValueError("a kernel needs a name");
}

namespace {

CUfunction compiled_function(std::atomic<void*>& slot, int device, const KernelSource& source,
                    const std::string& name) {
  if (void* f = slot.load(std::memory_order_acquire)) return static_cast<CUfunction>(f);
  if (device < 0 || device >= kMaxDevices)
    throw ValueError("cuda:" + std::to_string(device) + " is past xpuruntime's device limit");
  // Two threads may both get here: the JIT's caches make the second one a lookup.
  CUfunction f = jit_function(device, source, name);
  slot.store(f, std::memory_order_release);
  return f;
}

}  // namespace

Function UserKernel::function(Device device) {
  if (device.type != DeviceType::CUDA)
    throw ValueError("kernels run on CUDA devices, not " + device.str());
  activate(device.index);
  if (device.index < 0 || device.index >= static_cast<int>(handles_.size()))
    throw ValueError("cuda:" + std::to_string(device.index) + " is past the device limit");
  auto& slot = handles_[static_cast<size_t>(device.index)];
  return Function{compiled_function(slot, device.index, source_, name_), device, name_};
}

void UserKernel::launch(Dim3 grid, Dim3 block, size_t shared_bytes, const Stream& stream,
                        KernelArguments& args) {
  Device device = stream.device();
  if (device.type != DeviceType::CUDA)
    throw ValueError("kernel " + name_ + ": the stream must be a CUDA stream, not one of " +
                     device.str());
  if (device.index < 0 || device.index >= static_cast<int>(handles_.size()))
    throw ValueError("cuda:" + std::to_string(device.index) + " is past the device limit");
  if (args.bytes() > 32764)
    throw ValueError("kernel " + name_ + ": its arguments take " + std::to_string(args.bytes()) +
                     " bytes, more than CUDA's limit for kernel parameters");
  activate(device.index);
  auto& slot = handles_[static_cast<size_t>(device.index)];
  CUfunction f = compiled_function(slot, device.index, source_, name_);
  // Note: past 48 KB of shared memory, static and dynamic together, a function must opt in
  // (Hopper allows up to 227 KB); CuPy makes its users set the attribute, here a launch
  // that asks for more raises the function's limit itself (cheap next to the launch). The
  // static part is read only for launches that come near the line: 48 KB of dynamic memory
  // beside a kernel's own __shared__ array failed with CUDA_ERROR_INVALID_VALUE.
  if (shared_bytes > 32 * 1024) {
    int static_bytes = 0;
    check(driver().cuFuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f),
          "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
    if (shared_bytes + static_cast<size_t>(static_bytes) > 48 * 1024)
      check(driver().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        static_cast<int>(shared_bytes)),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  }
  cuda::launch(f, grid, block, shared_bytes, static_cast<CUstream>(stream.handle()),
               args.pointers());
}

int UserKernel::attribute(Device device, int attribute) {
  Function fn = function(device);
  int value = 0;
  check(driver().cuFuncGetAttribute(&value, static_cast<CUfunction_attribute>(attribute),
                                    static_cast<CUfunction>(fn.handle)),
        "cuFuncGetAttribute");
  return value;
}

}  // namespace xrt::cuda

// cpp/src/cuda/allocator.cpp: device memory for tensors.
// Note: plain cuMemAlloc/cuMemFree for now; the caching allocator replaces this.
#include "cuda/allocator.h"

#include "cuda/runtime.h"

namespace xrt::cuda {
namespace {

struct Block {
  int device;
};

void free_block(void* data, void* context) {
  auto* block = static_cast<Block*>(context);
  try {
    activate(block->device);
    driver().cuMemFree(reinterpret_cast<CUdeviceptr>(data));
  } catch (...) {
  }
  delete block;
}

}  // namespace

std::shared_ptr<Storage> allocate_storage(size_t nbytes, int device, CUstream) {
  CUdeviceptr ptr = 0;
  XRT_CU(cuMemAlloc, &ptr, nbytes == 0 ? 1 : nbytes);
  return Storage::wrap(reinterpret_cast<void*>(ptr), nbytes, Device{DeviceType::CUDA,
                       static_cast<int16_t>(device)}, &free_block, new Block{device}, false);
}

}  // namespace xrt::cuda

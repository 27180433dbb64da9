// cpp/src/core/memory_limit.cpp: LimitedMemory (see Note [Memory limit]).
#include "xpuruntime/memory_limit.h"

namespace xrt {

void* LimitedMemory::allocate(size_t nbytes) {
  size_t cap = limit();
  if (cap && (nbytes > cap || reserved_ > cap - nbytes)) return nullptr;
  void* ptr = upstream_.allocate(nbytes);
  if (ptr) reserved_ += nbytes;
  return ptr;
}

void LimitedMemory::free(void* ptr, size_t nbytes) {
  upstream_.free(ptr, nbytes);
  reserved_ -= nbytes;
}

}  // namespace xrt

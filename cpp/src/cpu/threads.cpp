// cpp/src/cpu/threads.cpp: the CPU backend's thread count (xpuruntime/cpu.h) is that of the
// host pool its kernels run on (core/host/thread_pool.h).
#include "core/host/thread_pool.h"
#include "xpuruntime/cpu.h"

namespace xrt::cpu {

int num_threads() { return host::num_threads(); }

void set_num_threads(int n) { host::set_num_threads(n); }

}  // namespace xrt::cpu

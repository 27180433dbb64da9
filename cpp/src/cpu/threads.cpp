// cpp/src/cpu/threads.cpp: the CPU backend's thread count (xpuruntime/cpu.h) is that of the
// host pool its kernels run on (core/host/thread_pool.h); OpenBLAS is kept to the same count.
#include "core/host/thread_pool.h"
#include "xpuruntime/cpu.h"

// scipy-openblas64's name for openblas_set_num_threads.
extern "C" void scipy_openblas_set_num_threads64_(int n);

namespace xrt::cpu {

int num_threads() { return host::num_threads(); }

void set_num_threads(int n) {
  host::set_num_threads(n);
  scipy_openblas_set_num_threads64_(n);  // BLAS and LAPACK calls stay within the same bound
}

int max_threads() { return host::max_threads(); }

}  // namespace xrt::cpu

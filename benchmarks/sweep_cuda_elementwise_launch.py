"""benchmarks/sweep_cuda_elementwise_launch.py: the dense elementwise kernel of
cpp/kernels/xrt/elementwise.cuh (float32 add of 2**28) under launch configurations (block
size, vectors per thread, grid cap, streaming cache hints), compiled by CuPy's NVRTC, next to
PyTorch in the same run. It chose the constants of cuda/elementwise_kernel.cpp.

    python benchmarks/sweep_cuda_elementwise_launch.py
"""

import itertools
import pathlib
import statistics

import cupy as cp
import numpy as np
import torch

KERNELS = pathlib.Path(__file__).resolve().parents[1] / "cpp" / "kernels"
N = 1 << 28

TEMPLATE = r"""
#include "xrt/elementwise.cuh"
extern "C" __global__ void __launch_bounds__(BLOCK) dense(char* o, char* a, char* b, long long n) {
  xrt::ew::DenseArgs<4> args{{o, a, b, nullptr}, n};
  xrt::ew::dense_kernel<xrt::ew::BinaryFn<xrt::ew::op::add, float>, 4, UNROLL, 0u>(args);
}
// The same loop with evict-first loads and stores (ld/st.global.cs).
extern "C" __global__ void __launch_bounds__(BLOCK) streaming(float* o, const float* a,
                                                               const float* b, long long n) {
  long long steps = n / 4;
  for (long long first = (long long)blockIdx.x * blockDim.x * UNROLL + threadIdx.x; first < steps;
       first += (long long)gridDim.x * blockDim.x * UNROLL) {
    float4 x[UNROLL], y[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      long long s = first + (long long)u * blockDim.x;
      if (s < steps) {
        asm volatile("ld.global.cs.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(x[u].x), "=f"(x[u].y),
                     "=f"(x[u].z), "=f"(x[u].w) : "l"(a + 4 * s));
        asm volatile("ld.global.cs.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(y[u].x), "=f"(y[u].y),
                     "=f"(y[u].z), "=f"(y[u].w) : "l"(b + 4 * s));
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      long long s = first + (long long)u * blockDim.x;
      if (s < steps)
        asm volatile("st.global.cs.v4.f32 [%0], {%1,%2,%3,%4};" :: "l"(o + 4 * s),
                     "f"(x[u].x + y[u].x), "f"(x[u].y + y[u].y), "f"(x[u].z + y[u].z),
                     "f"(x[u].w + y[u].w) : "memory");
    }
  }
}
"""


def device_ms(fn, repeat=10, inner=5):
    fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeat):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(inner):
            fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / inner)
    return statistics.median(times)


def main():
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    a = cp.random.rand(N, dtype=cp.float32)
    b = cp.random.rand(N, dtype=cp.float32)
    o = cp.empty_like(a)
    moved = 12 * N
    ta, tb = torch.from_dlpack(a), torch.from_dlpack(b)
    to = torch.empty_like(ta)
    torch_ms = device_ms(lambda: torch.add(ta, tb, out=to))
    print(f"torch add (out=): {moved / torch_ms / 1e9:.3f} TB/s", flush=True)
    results = []
    for block, unroll in itertools.product((256, 512), (1, 2, 4)):
        source = TEMPLATE.replace("BLOCK", str(block)).replace("UNROLL", str(unroll))
        module = cp.RawModule(code=source, options=("-std=c++17", "--fmad=false",
                                                     f"-I{KERNELS}"))
        for kind in ("dense", "streaming"):
            kernel = module.get_function(kind)
            full = -(-N // 4 // (block * unroll))
            for cap in (None, 8, 32):
                blocks = full if cap is None else min(full, cap * sms)
                ms = device_ms(lambda: kernel((blocks,), (block,), (o, a, b, np.int64(N))))
                results.append((moved / ms / 1e9, kind, block, unroll, cap))
        assert cp.array_equal(o, a + b)
    results.sort(reverse=True)
    for tbs, kind, block, unroll, cap in results[:25]:
        print(f"{tbs:.3f} TB/s  {kind:9s} block {block:3d} unroll {unroll} "
              f"grid {'full' if cap is None else f'{cap}/SM'}  vs torch "
              f"{tbs / (moved / torch_ms / 1e9):.3f}x")
    print("worst:", results[-1])


if __name__ == "__main__":
    main()

// cpp/src/cpu/math_kernels_avx512.cpp: the libm kernels for AVX-512 (x86-64-v4).
#define XRT_ISA_NS avx512
#include "cpu/math_kernels.cpp"

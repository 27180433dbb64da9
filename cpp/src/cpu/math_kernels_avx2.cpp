// cpp/src/cpu/math_kernels_avx2.cpp: the libm kernels for AVX2+FMA (x86-64-v3).
#define XRT_ISA_NS avx2
#include "cpu/math_kernels.cpp"

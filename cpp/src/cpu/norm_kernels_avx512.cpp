// cpp/src/cpu/norm_kernels_avx512.cpp: the row-op kernels for AVX-512 (x86-64-v4).
#define XRT_ISA_NS avx512
#include "cpu/norm_kernels.cpp"

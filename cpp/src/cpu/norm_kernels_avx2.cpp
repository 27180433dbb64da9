// cpp/src/cpu/norm_kernels_avx2.cpp: the row-op kernels for AVX2 (x86-64-v3).
#define XRT_ISA_NS avx2
#include "cpu/norm_kernels.cpp"

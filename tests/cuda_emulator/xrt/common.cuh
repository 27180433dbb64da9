// tests/cuda_emulator/xrt/common.cuh: what the sort kernels take from cpp/kernels'
// common.cuh, for the host (that one holds PTX): integer typedefs, conditional, the 16-bit
// float storage types. The emulator's include path puts it first.
#pragma once
#include <cstdint>

namespace xrt {

typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef long long index_t;

template <bool C, class A, class B> struct conditional { typedef A type; };
template <class A, class B> struct conditional<false, A, B> { typedef B type; };

struct float16 {
  uint16_t bits;
  static float16 from_bits(uint16_t b) { return float16{b}; }
};
struct bfloat16 {
  uint16_t bits;
  static bfloat16 from_bits(uint16_t b) { return bfloat16{b}; }
};

}  // namespace xrt

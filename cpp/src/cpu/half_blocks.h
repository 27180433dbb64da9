// cpp/src/cpu/half_blocks.h: float16 <-> float conversion of whole blocks, in hardware (F16C)
// where the CPU has it. The elementwise loops compute float16 in float: converting a block
// at a time, then running the float loop, is what lets float16 run at float32 speed.
#pragma once
#include <cstdint>

#include "xpuruntime/half.h"

namespace xrt::cpu {

/// out[i] = float(in[i]) for i < n (exact).
void widen_float16(const Float16* in, float* out, int64_t n);
/// out[i] = Float16(in[i]) for i < n, rounding to nearest even: bit for bit what
/// Float16::from_float gives, NaN payloads included.
void narrow_to_float16(const float* in, Float16* out, int64_t n);

}  // namespace xrt::cpu

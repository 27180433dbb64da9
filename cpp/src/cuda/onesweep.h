// cpp/src/cuda/onesweep.h: the onesweep LSD radix sort (device code: radix_sort.cuh), which
// sort/argsort (sort_kernels.cpp) and the pre-encoded keys of radix_sort_pairs and
// radix_sort_encoded (radix_sort.h: unique, isin) share. Defined in onesweep.cpp.
#pragma once
#include <cstdint>
#include <string>

#include "cuda/driver.h"
#include "xpuruntime/device.h"
#include "xpuruntime/dtype.h"

namespace xrt::cuda {

inline constexpr int64_t kOnesweepRow = int64_t(1) << 30;  // descriptors count in 30 bits

/// The shape of the onesweep pass: items per thread (0 selects the 4-bit radix sort) and
/// the blocks per multiprocessor its registers are held to (0: no bound).
struct Onesweep {
  int items = 0, min_blocks = 0;
};

/// radix_sort.cuh's Payload.
enum class Payload { None = 0, Position = 1, Carried = 2 };

/// What the onesweep kernels are compiled for: the element type T (a dtype's values, or
/// the unsigned keys of radix_sort_pairs), what travels with the keys, the passes (bytes
/// of the keys sorted by), whether zeros and NaNs are restored (a float value sort),
/// whether the keys are the result (with uint32 positions: radix_sort_encoded).
struct OnesweepKind {
  DType dtype;
  Payload payload;
  int passes;
  bool specials;
  bool keys_out = false;
};

/// The kind of a value sort (argsort: with positions) of dtype.
OnesweepKind sort_kind(DType dtype, bool arg);
/// radix_sort_pairs' keys: uint32 or uint64 sorted by ceil(bits / 8) bytes, with or without
/// a payload.
OnesweepKind pairs_kind(bool wide, bool payload, int bits);
/// radix_sort_encoded's: the keys of dtype's values, with or without their positions.
OnesweepKind encoded_kind(DType dtype, bool positions);

/// The onesweep radix kernels of one (kind, pass shape).
std::string onesweep_source(const OnesweepKind& kind, const Onesweep& shape);

/// The pass shape for keys of dtype (XPURUNTIME_CUDA_SORT may change it, or select the
/// 4-bit sort: items 0).
Onesweep onesweep_shape(DType dtype, bool arg);

/// The rows one onesweep sort reads and writes: in (values, or keys already encoded, with
/// their payload in in_index for Payload::Carried) and out (values, int64 positions for
/// Payload::Position, or keys with their payload in out_index). spare_keys / spare_index
/// (may be null) are buffers of the rows' size the sort may use once its first pass is
/// done (the caller's input buffers of radix_sort_pairs).
struct OnesweepRows {
  const char* in;
  char* out;
  const uint32_t* in_index;
  uint32_t* out_index;
  char* spare_keys;
  uint32_t* spare_index;
  bool descending;
  int64_t rows, n;
  Device device;
  CUstream stream;
};

/// Sorts job's rows (Note [Onesweep launches] in onesweep.cpp).
void onesweep_sort(const OnesweepKind& kind, const OnesweepRows& job, const Onesweep& shape);

}  // namespace xrt::cuda

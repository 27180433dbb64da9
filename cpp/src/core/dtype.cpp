// cpp/src/core/dtype.cpp: the promotion table and dtype lookups (the dtype table itself is
// in xpuruntime/dtype.h).
#include "xpuruntime/dtype.h"

namespace xrt {
namespace {

using K = DTypeKind;

// Note: the standard's promotion lattice, as "rank within kind" rules:
// - same kind: the wider type (float16 and bfloat16 meet at float32);
// - signed with unsigned: the smallest signed type wider than the unsigned one, if any
//   (uint64 with a signed type is undefined);
// - real float with complex: the complex type whose real part is the wider float;
// - any other mix of kinds (bool with numbers, integers with floats) is undefined.
int rank(DType d) { return itemsize(d); }

DType signed_of_size(int bytes) {
  switch (bytes) {
    case 1: return DType::Int8;
    case 2: return DType::Int16;
    case 4: return DType::Int32;
    default: return DType::Int64;
  }
}

DType complex_of_real(DType real) {
  return real == DType::Float64 ? DType::Complex128 : DType::Complex64;
}

}  // namespace

std::optional<DType> dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kDTypeTable[i].name == name) return static_cast<DType>(i);
  return std::nullopt;
}

std::optional<DType> dtype_from_dlpack(uint8_t code, uint8_t bits, uint16_t lanes) {
  if (lanes != 1) return std::nullopt;
  for (int i = 0; i < kNumDTypes; ++i)
    if (kDTypeTable[i].dlpack_code == code && kDTypeTable[i].dlpack_bits == bits)
      return static_cast<DType>(i);
  return std::nullopt;
}

DType real_dtype(DType dtype) {
  if (dtype == DType::Complex64) return DType::Float32;
  if (dtype == DType::Complex128) return DType::Float64;
  return dtype;
}

std::optional<DType> promote_types(DType a, DType b) {
  if (a == b) return a;
  K ka = kind(a), kb = kind(b);
  if (ka == K::Bool || kb == K::Bool) return std::nullopt;
  if (ka == kb) {
    if (ka == K::RealFloat && rank(a) == 2 && rank(b) == 2) return DType::Float32;
    return rank(a) >= rank(b) ? a : b;
  }
  if (ka == K::UnsignedInt && kb == K::SignedInt) return promote_types(b, a);
  if (ka == K::SignedInt && kb == K::UnsignedInt) {
    if (b == DType::UInt64) return std::nullopt;
    int bytes = rank(b) * 2 > rank(a) ? rank(b) * 2 : rank(a);
    return signed_of_size(bytes);
  }
  if (ka == K::ComplexFloat && kb == K::RealFloat) return promote_types(b, a);
  if (ka == K::RealFloat && kb == K::ComplexFloat) {
    DType real = rank(a) > rank(real_dtype(b)) ? a : real_dtype(b);
    return complex_of_real(real);
  }
  return std::nullopt;
}

}  // namespace xrt

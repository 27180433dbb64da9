// cpp/src/core/dtype.cpp: the dtype table and the promotion table.
#include "xpuruntime/dtype.h"

namespace xrt {
namespace {

using K = DTypeKind;
// DLPack codes: 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool.
constexpr DTypeInfo kTable[kNumDTypes] = {
    {"bool", 1, K::Bool, 6, 8, "?"},
    {"int8", 1, K::SignedInt, 0, 8, "b"},
    {"int16", 2, K::SignedInt, 0, 16, "h"},
    {"int32", 4, K::SignedInt, 0, 32, "i"},
    {"int64", 8, K::SignedInt, 0, 64, "q"},
    {"uint8", 1, K::UnsignedInt, 1, 8, "B"},
    {"uint16", 2, K::UnsignedInt, 1, 16, "H"},
    {"uint32", 4, K::UnsignedInt, 1, 32, "I"},
    {"uint64", 8, K::UnsignedInt, 1, 64, "Q"},
    {"float16", 2, K::RealFloat, 2, 16, "e"},
    {"bfloat16", 2, K::RealFloat, 4, 16, ""},
    {"float32", 4, K::RealFloat, 2, 32, "f"},
    {"float64", 8, K::RealFloat, 2, 64, "d"},
    {"complex64", 8, K::ComplexFloat, 5, 64, "Zf"},
    {"complex128", 16, K::ComplexFloat, 5, 128, "Zd"},
};

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

const DTypeInfo& dtype_info(DType dtype) { return kTable[static_cast<int>(dtype)]; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kTable[i].name == name) return static_cast<DType>(i);
  return std::nullopt;
}

std::optional<DType> dtype_from_dlpack(uint8_t code, uint8_t bits, uint16_t lanes) {
  if (lanes != 1) return std::nullopt;
  for (int i = 0; i < kNumDTypes; ++i)
    if (kTable[i].dlpack_code == code && kTable[i].dlpack_bits == bits)
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

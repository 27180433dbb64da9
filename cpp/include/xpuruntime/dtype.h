// cpp/include/xpuruntime/dtype.h: the fifteen element types, their facts and promotion.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace xrt {

/// Element type of a tensor. The order is part of the ABI of the dispatch key
/// (5 bits each), so new types go at the end.
enum class DType : uint8_t {
  Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
  Float16, BFloat16, Float32, Float64, Complex64, Complex128,
};
inline constexpr int kNumDTypes = 15;

/// The standard's dtype categories ("kinds").
enum class DTypeKind : uint8_t { Bool, SignedInt, UnsignedInt, RealFloat, ComplexFloat };

struct DTypeInfo {
  std::string_view name;  ///< the Array API name, e.g. "float32"
  uint8_t itemsize;       ///< bytes per element
  DTypeKind kind;
  uint8_t dlpack_code;    ///< DLDataTypeCode
  uint8_t dlpack_bits;
  std::string_view buffer_format;  ///< PEP 3118 format ("" when none exists)
};

// Note: the table is in the header, so that itemsize() and kind() inline into the hot
// paths (a tiny op asks them a dozen times; a call each was 40 instructions an op).
// DLPack codes: 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool.
inline constexpr DTypeInfo kDTypeTable[kNumDTypes] = {
    {"bool", 1, DTypeKind::Bool, 6, 8, "?"},
    {"int8", 1, DTypeKind::SignedInt, 0, 8, "b"},
    {"int16", 2, DTypeKind::SignedInt, 0, 16, "h"},
    {"int32", 4, DTypeKind::SignedInt, 0, 32, "i"},
    {"int64", 8, DTypeKind::SignedInt, 0, 64, "q"},
    {"uint8", 1, DTypeKind::UnsignedInt, 1, 8, "B"},
    {"uint16", 2, DTypeKind::UnsignedInt, 1, 16, "H"},
    {"uint32", 4, DTypeKind::UnsignedInt, 1, 32, "I"},
    {"uint64", 8, DTypeKind::UnsignedInt, 1, 64, "Q"},
    {"float16", 2, DTypeKind::RealFloat, 2, 16, "e"},
    {"bfloat16", 2, DTypeKind::RealFloat, 4, 16, ""},
    {"float32", 4, DTypeKind::RealFloat, 2, 32, "f"},
    {"float64", 8, DTypeKind::RealFloat, 2, 64, "d"},
    {"complex64", 8, DTypeKind::ComplexFloat, 5, 64, "Zf"},
    {"complex128", 16, DTypeKind::ComplexFloat, 5, 128, "Zd"},
};

inline const DTypeInfo& dtype_info(DType dtype) { return kDTypeTable[static_cast<int>(dtype)]; }
inline size_t itemsize(DType dtype) { return dtype_info(dtype).itemsize; }
inline DTypeKind kind(DType dtype) { return dtype_info(dtype).kind; }
inline bool is_integer(DType d) {
  return kind(d) == DTypeKind::SignedInt || kind(d) == DTypeKind::UnsignedInt;
}
inline bool is_floating(DType d) { return kind(d) == DTypeKind::RealFloat; }
inline bool is_complex(DType d) { return kind(d) == DTypeKind::ComplexFloat; }
inline bool is_numeric(DType d) { return d != DType::Bool; }

/// Parses an Array API name; nullopt when unknown.
std::optional<DType> dtype_from_name(std::string_view name);
/// DLPack (code, bits, lanes) to DType; nullopt when xpuruntime has no such type.
std::optional<DType> dtype_from_dlpack(uint8_t code, uint8_t bits, uint16_t lanes);

/// The standard's promotion table, extended to float16/bfloat16. nullopt where the
/// standard leaves the result undefined (mixed kinds, int64 with uint64): callers raise.
std::optional<DType> promote_types(DType a, DType b);

/// Defaults of the namespace (Array API "default dtypes" for the cpu device).
inline constexpr DType kDefaultInt = DType::Int64;
inline constexpr DType kDefaultFloat = DType::Float64;
inline constexpr DType kDefaultComplex = DType::Complex128;
inline constexpr DType kDefaultIndex = DType::Int64;

/// The real type of a complex type (complex64 -> float32); identity otherwise.
DType real_dtype(DType dtype);

}  // namespace xrt

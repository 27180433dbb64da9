// cpp/src/core/promotion.cpp: the dtype of a result: of two arrays (the standard's
// promotion table, dtype.cpp) and of an array with a Python scalar; TypeError wherever the
// standard leaves a mix undefined.
#include <string>

#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"

namespace xrt {
namespace {

std::string name_of(DType d) { return std::string(dtype_info(d).name); }

}  // namespace

DType result_type(DType a, DType b) {
  if (auto d = promote_types(a, b)) return *d;
  throw TypeError("the Array API standard does not define promotion of " + name_of(a) +
                  " with " + name_of(b) + "; convert one of them with astype() first");
}

DType scalar_result_type(DType array, Scalar::Kind scalar) {
  DTypeKind k = kind(array);
  using SK = Scalar::Kind;
  switch (scalar) {
    case SK::Bool:
      if (k == DTypeKind::Bool) return array;
      break;
    case SK::Int:
    case SK::UInt:
      if (k != DTypeKind::Bool) return array;
      break;
    case SK::Float:
      if (k == DTypeKind::RealFloat || k == DTypeKind::ComplexFloat) return array;
      break;
    case SK::Complex:
      if (k == DTypeKind::ComplexFloat) return array;
      if (k == DTypeKind::RealFloat)
        return array == DType::Float64 ? DType::Complex128 : DType::Complex64;
      break;
  }
  static const char* names[] = {"bool", "int", "int", "float", "complex"};
  throw TypeError(std::string("the Array API standard does not define mixing a Python ") +
                  names[static_cast<int>(scalar)] + " with an array of dtype " + name_of(array));
}

}  // namespace xrt

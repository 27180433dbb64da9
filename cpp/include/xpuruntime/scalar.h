// cpp/include/xpuruntime/scalar.h: Scalar, a Python-like number on its way into a tensor.
#pragma once
#include <complex>
#include <cstdint>

#include "xpuruntime/dtype.h"
#include "xpuruntime/half.h"

namespace xrt {

struct Scalar {
  enum class Kind : uint8_t { Bool, Int, UInt, Float, Complex };
  Kind kind = Kind::Int;
  bool b = false;
  int64_t i = 0;   ///< Kind::Int
  uint64_t u = 0;  ///< Kind::UInt: integers past int64's range
  std::complex<double> c;  ///< Kind::Float uses c.real()

  static Scalar from_bool(bool v) { Scalar s; s.kind = Kind::Bool; s.b = v; return s; }
  static Scalar from_int(int64_t v) { Scalar s; s.kind = Kind::Int; s.i = v; return s; }
  static Scalar from_uint(uint64_t v) { Scalar s; s.kind = Kind::UInt; s.u = v; return s; }
  static Scalar from_float(double v) { Scalar s; s.kind = Kind::Float; s.c = v; return s; }
  static Scalar from_complex(std::complex<double> v) {
    Scalar s; s.kind = Kind::Complex; s.c = v; return s;
  }

  /// Converts to a C++ element type the way a cast of an array would.
  template <class T> T to() const {
    switch (kind) {
      case Kind::Bool: return convert<T>(b);
      case Kind::Int: return convert<T>(i);
      case Kind::UInt: return convert<T>(u);
      case Kind::Float: return convert<T>(c.real());
      case Kind::Complex: return convert<T>(c);
    }
    return T();
  }

 private:
  template <class T, class V> static T convert(V v);
};

/// Element conversion shared by every cast in the project: complex to real keeps the real
/// part, anything to bool is "!= 0", float to int truncates (undefined when out of range
/// in C++, so it is clamped to the target range first; NaN becomes 0).
template <class To, class From> To cast_value(From v);

}  // namespace xrt

#include "xpuruntime/detail/cast_value.h"

template <class T, class V> T xrt::Scalar::convert(V v) { return cast_value<T>(v); }

// cpp/src/core/ops.cpp: op definitions: argument checks, result dtype and shape, dispatch.
#include "xpuruntime/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "xpuruntime/runtime/backend.h"
#include "xpuruntime/dispatcher.h"
#include "xpuruntime/elementwise.h"
#include "xpuruntime/errors.h"

namespace xrt {
namespace {

std::string name_of(DType d) { return std::string(dtype_info(d).name); }

void run_op(OpId op, std::initializer_list<const Tensor*> inputs, Tensor& out,
            const OpAttrs* attrs = nullptr) {
  KernelCall call{inputs.begin(), static_cast<int>(inputs.size()), &out, 1, attrs};
  dispatch(op, call);
}

void check_numeric(DType d, const char* op) {
  if (!is_numeric(d))
    throw TypeError(std::string(op) + " is not defined for " + name_of(d) +
                    " (it needs a numeric dtype)");
}

template <class Int> bool int_fits(const Scalar& s) {
  if (s.kind == Scalar::Kind::UInt) return s.u <= static_cast<uint64_t>(std::numeric_limits<Int>::max());
  if (s.kind != Scalar::Kind::Int) return true;
  if constexpr (std::is_signed_v<Int>)
    return s.i >= std::numeric_limits<Int>::min() && s.i <= std::numeric_limits<Int>::max();
  else
    return s.i >= 0 && static_cast<uint64_t>(s.i) <= std::numeric_limits<Int>::max();
}

void check_fits(const Scalar& s, DType d) {
  bool ok = true;
  switch (d) {
    case DType::Int8: ok = int_fits<int8_t>(s); break;
    case DType::Int16: ok = int_fits<int16_t>(s); break;
    case DType::Int32: ok = int_fits<int32_t>(s); break;
    case DType::Int64: ok = int_fits<int64_t>(s); break;
    case DType::UInt8: ok = int_fits<uint8_t>(s); break;
    case DType::UInt16: ok = int_fits<uint16_t>(s); break;
    case DType::UInt32: ok = int_fits<uint32_t>(s); break;
    case DType::UInt64: ok = int_fits<uint64_t>(s); break;
    default: break;
  }
  if (!ok) {
    std::string v = s.kind == Scalar::Kind::UInt ? std::to_string(s.u) : std::to_string(s.i);
    throw OverflowError("Python integer " + v + " out of bounds for " + name_of(d));
  }
}

}  // namespace

const Tensor& conform(const Tensor& t, DType dtype, const Dims& shape, Tensor& holder) {
  if (t.dtype() == dtype && t.shape() == shape) return t;
  holder = (t.dtype() == dtype ? t : astype(t, dtype, true)).broadcast_to(shape);
  return holder;
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  if (a.device() != b.device())
    throw ValueError(std::string(op) + ": arrays are on different devices (" + a.device().str() +
                     " and " + b.device().str() + "); move one with to_device() first");
}

const BuiltinOps& BuiltinOps::get() {
  static const BuiltinOps ops = [] {
    auto& r = KernelRegistry::global();
    return BuiltinOps{r.op_id("copy"), r.op_id("fill"), r.op_id("arange"),
                      r.op_id("add"), r.op_id("matmul")};
  }();
  return ops;
}

Tensor empty(const Dims& shape, DType dtype, Device device) {
  if (shape.size() > 64) throw ValueError("at most 64 dimensions are supported");
  return Tensor::empty(shape, dtype, device);
}

Tensor full(const Dims& shape, const Scalar& value, DType dtype, Device device) {
  check_fits(value, dtype);
  Tensor out = empty(shape, dtype, device);
  OpAttrs attrs;
  attrs.value = value;
  run_op(BuiltinOps::get().fill, {}, out, &attrs);
  return out;
}

Tensor arange(const Scalar& start, const Scalar& stop, const Scalar& step, DType dtype,
              Device device) {
  auto is_int = [](const Scalar& s) {
    return s.kind == Scalar::Kind::Int || s.kind == Scalar::Kind::UInt || s.kind == Scalar::Kind::Bool;
  };
  if (dtype == DType::Bool)
    throw TypeError("arange does not support " + name_of(dtype));
  int64_t length;
  if (is_int(start) && is_int(stop) && is_int(step) && is_integer(dtype)) {
    auto wide = [](const Scalar& s) -> __int128 {
      return s.kind == Scalar::Kind::UInt ? static_cast<__int128>(s.u)
             : s.kind == Scalar::Kind::Bool ? static_cast<__int128>(s.b) : static_cast<__int128>(s.i);
    };
    __int128 a = wide(start), b = wide(stop), c = wide(step);
    if (c == 0) throw ValueError("arange: step must not be zero");
    __int128 n = c > 0 ? (b - a + c - 1) / c : (a - b - c - 1) / -c;
    length = n > 0 ? static_cast<int64_t>(n) : 0;
    check_fits(start, dtype);
    if (length > 0) {
      Scalar last = Scalar::from_int(0);
      __int128 lv = a + (static_cast<__int128>(length) - 1) * c;
      if (lv > INT64_MAX) last = Scalar::from_uint(static_cast<uint64_t>(lv));
      else last.i = static_cast<int64_t>(lv);
      check_fits(last, dtype);
    }
  } else {
    double a = start.to<double>(), b = stop.to<double>(), c = step.to<double>();
    if (c == 0) throw ValueError("arange: step must not be zero");
    double n = std::ceil((b - a) / c);
    if (std::isnan(n)) throw ValueError("arange: start, stop and step must be finite");
    if (n > 9.2e18) throw ValueError("arange: the range is too long");
    length = n > 0 ? static_cast<int64_t>(n) : 0;
  }
  Tensor out = empty(Dims{length}, dtype, device);
  OpAttrs attrs;
  attrs.value = start;
  attrs.step = step;
  run_op(BuiltinOps::get().arange, {}, out, &attrs);
  return out;
}

void check_writable(const Tensor& x) {
  if (x.readonly())
    throw ValueError("the tensor is read-only (its producer exported it without write "
                     "access); copy it to write");
}

void copy_into(Tensor& dst, const Tensor& src) {
  check_writable(dst);
  check_same_device(dst, src, "copy");
  Tensor source = src.broadcast_to(dst.shape());
  run_op(BuiltinOps::get().copy, {&source}, dst);
}

Tensor astype(const Tensor& x, DType dtype, bool copy) {
  if (!copy && dtype == x.dtype()) return x;
  Tensor out = empty(x.shape(), dtype, x.device());
  copy_into(out, x);
  return out;
}

Tensor contiguous(const Tensor& x) { return x.is_contiguous() ? x : astype(x, x.dtype(), true); }

// Note [Copies between devices]: the backend moves contiguous bytes. A view that is not
// contiguous is made contiguous on its own device first: by the device's copy kernel, or,
// where it has none, by the host fallback's copy of the byte span the view covers (so a
// sparse view of a large buffer moves only its own elements when the device can copy).
Tensor to_device(const Tensor& x, Device device) {
  if (device == x.device()) return x;
  const Backend& b = backend(device.is_cpu() ? x.device().type : device.type);
  Tensor src = contiguous(x);
  Tensor out = empty(x.shape(), x.dtype(), device);
  b.copy_bytes(out.data(), device, src.data(), src.device(), src.numel() * src.itemsize());
  return out;
}

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

Tensor scalar_tensor(const Scalar& value, DType dtype, Device device) {
  return full(Dims{}, value, dtype, device);
}

// add predates the elementwise table and keeps its name for C++ callers.
Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::add, a, b); }
void add_inplace(Tensor& a, const Tensor& b) { binary_inplace(BinaryOp::add, a, b); }

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_same_device(a, b, "matmul");
  if (a.ndim() == 0 || b.ndim() == 0)
    throw ValueError("matmul: operands must have at least one dimension (got shapes " +
                     shape_str(a.shape()) + " and " + shape_str(b.shape()) + ")");
  DType dtype = result_type(a.dtype(), b.dtype());
  check_numeric(dtype, "matmul");
  Tensor x = a.ndim() == 1 ? a.unsqueeze(0) : a;
  Tensor y = b.ndim() == 1 ? b.unsqueeze(1) : b;
  int64_t k = x.shape().back(), kb = y.shape()[y.ndim() - 2];
  if (k != kb)
    throw ValueError("matmul: contracted dimensions differ: shapes " + shape_str(a.shape()) +
                     " and " + shape_str(b.shape()) + " (" + std::to_string(k) + " != " +
                     std::to_string(kb) + ")");
  Dims xb(x.shape().begin(), x.shape().end() - 2), yb(y.shape().begin(), y.shape().end() - 2);
  Dims batch = broadcast_shapes(xb, yb);
  Dims xs = batch, ys = batch, shape = batch;
  xs.push_back(x.shape()[x.ndim() - 2]); xs.push_back(k);
  ys.push_back(k); ys.push_back(y.shape().back());
  shape.push_back(x.shape()[x.ndim() - 2]); shape.push_back(y.shape().back());
  Tensor hold_x, hold_y;
  const Tensor& xa = conform(x, dtype, xs, hold_x);
  const Tensor& ya = conform(y, dtype, ys, hold_y);
  Tensor out = empty(shape, dtype, a.device());
  run_op(BuiltinOps::get().matmul, {&xa, &ya}, out);
  if (a.ndim() > 1 && b.ndim() > 1) return out;
  Dims final_shape = batch;
  if (a.ndim() > 1) final_shape.push_back(shape[shape.size() - 2]);
  if (b.ndim() > 1) final_shape.push_back(shape.back());
  return out.as_strided(final_shape, contiguous_strides(final_shape), 0);
}

Scalar item(const Tensor& x) {
  if (x.numel() != 1)
    throw TypeError("only tensors of one element can be converted to Python scalars (shape " +
                    shape_str(x.shape()) + ")");
  if (!x.device().is_cpu()) return item(to_device(x, kCPU));
  const char* p = x.data();
  auto get = [p](auto tag) { decltype(tag) v; std::memcpy(&v, p, sizeof v); return v; };
  switch (x.dtype()) {
    case DType::Bool: return Scalar::from_bool(get(uint8_t{}) != 0);
    case DType::Int8: return Scalar::from_int(get(int8_t{}));
    case DType::Int16: return Scalar::from_int(get(int16_t{}));
    case DType::Int32: return Scalar::from_int(get(int32_t{}));
    case DType::Int64: return Scalar::from_int(get(int64_t{}));
    case DType::UInt8: return Scalar::from_int(get(uint8_t{}));
    case DType::UInt16: return Scalar::from_int(get(uint16_t{}));
    case DType::UInt32: return Scalar::from_int(get(uint32_t{}));
    case DType::UInt64: return Scalar::from_uint(get(uint64_t{}));
    case DType::Float16: return Scalar::from_float(float(get(Float16{})));
    case DType::BFloat16: return Scalar::from_float(float(get(BFloat16{})));
    case DType::Float32: return Scalar::from_float(get(float{}));
    case DType::Float64: return Scalar::from_float(get(double{}));
    case DType::Complex64: return Scalar::from_complex(get(std::complex<float>{}));
    case DType::Complex128: return Scalar::from_complex(get(std::complex<double>{}));
  }
  throw ValueError("unknown dtype");
}

}  // namespace xrt

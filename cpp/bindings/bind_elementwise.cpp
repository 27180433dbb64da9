// cpp/bindings/bind_elementwise.cpp: the elementwise functions and the Tensor operators,
// generated from the tables of xpuruntime/elementwise.h.
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.h"
#include "xpuruntime/elementwise.h"
#include "xpuruntime/errors.h"

namespace xrt::py {
namespace {

bool is_tensor(nb::handle h) { return tensor_of(h) != nullptr; }
const Tensor& as_tensor(nb::handle h) { return *tensor_of(h); }  // after is_tensor

std::string py_type_name(nb::handle h) { return nb::type_name(h.type()).c_str(); }

nb::object not_implemented() { return nb::borrow(Py_NotImplemented); }

// The standard lets one operand of a binary function be a Python scalar; it takes the
// other operand's dtype (TypeError for the mixes the standard leaves undefined). The scalar
// stays on the host (Note [Host scalars] in xpuruntime/elementwise.h).
std::optional<Tensor> host_scalar(const Tensor& self, nb::handle other) {
  std::optional<Scalar> s = operand_scalar(other);
  if (!s) return std::nullopt;
  return scalar_tensor(*s, scalar_result_type(self.dtype(), s->kind), kCPU);
}

Tensor binary_args(BinaryOp op, nb::handle x1, nb::handle x2) {
  const Tensor* t1 = tensor_of(x1);
  const Tensor* t2 = tensor_of(x2);
  if (t1 && t2) return binary(op, *t1, *t2);
  if (t1) {
    if (std::optional<Tensor> rhs = host_scalar(*t1, x2))
      return binary_with_host_scalar(op, *t1, *rhs);
  } else if (t2) {
    if (std::optional<Tensor> lhs = host_scalar(*t2, x1))
      return binary_with_host_scalar(op, *lhs, *t2);
  }
  throw TypeError(std::string(binary_info(op).name) +
                  ": expected arrays, or an array and a Python scalar (got " + py_type_name(x1) +
                  " and " + py_type_name(x2) + ")");
}

struct OperatorRow {
  const char* name;
  const char* reflected;  // nullptr for comparisons
  const char* inplace;
  BinaryOp op;
};

const OperatorRow kOperators[] = {
    {"__add__", "__radd__", "__iadd__", BinaryOp::add},
    {"__sub__", "__rsub__", "__isub__", BinaryOp::subtract},
    {"__mul__", "__rmul__", "__imul__", BinaryOp::multiply},
    {"__truediv__", "__rtruediv__", "__itruediv__", BinaryOp::divide},
    {"__floordiv__", "__rfloordiv__", "__ifloordiv__", BinaryOp::floor_divide},
    {"__mod__", "__rmod__", "__imod__", BinaryOp::remainder},
    {"__pow__", "__rpow__", "__ipow__", BinaryOp::pow},
    {"__and__", "__rand__", "__iand__", BinaryOp::bitwise_and},
    {"__or__", "__ror__", "__ior__", BinaryOp::bitwise_or},
    {"__xor__", "__rxor__", "__ixor__", BinaryOp::bitwise_xor},
    {"__lshift__", "__rlshift__", "__ilshift__", BinaryOp::bitwise_left_shift},
    {"__rshift__", "__rrshift__", "__irshift__", BinaryOp::bitwise_right_shift},
    {"__eq__", nullptr, nullptr, BinaryOp::equal},
    {"__ne__", nullptr, nullptr, BinaryOp::not_equal},
    {"__lt__", nullptr, nullptr, BinaryOp::less},
    {"__le__", nullptr, nullptr, BinaryOp::less_equal},
    {"__gt__", nullptr, nullptr, BinaryOp::greater},
    {"__ge__", nullptr, nullptr, BinaryOp::greater_equal},
};

struct UnaryOperatorRow {
  const char* name;
  UnaryOp op;
};

const UnaryOperatorRow kUnaryOperators[] = {
    {"__abs__", UnaryOp::abs},
    {"__neg__", UnaryOp::negative},
    {"__pos__", UnaryOp::positive},
    {"__invert__", UnaryOp::bitwise_invert},
};

std::optional<Tensor> optional_bound(const Tensor& x, nb::handle b, const char* which) {
  if (b.is_none()) return std::nullopt;
  if (is_tensor(b)) return as_tensor(b);
  if (std::optional<Scalar> s = operand_scalar(b)) {
    if (s->kind == Scalar::Kind::Complex || s->kind == Scalar::Kind::Bool)
      throw TypeError(std::string("clip: ") + which + " must be a real number or an array");
    // A float bound next to an integer array has no integer value: the standard leaves
    // it unspecified; it is rejected rather than truncated.
    if (s->kind == Scalar::Kind::Float && is_integer(x.dtype()))
      throw TypeError(std::string("clip: a float ") + which + " with an integer array");
    return scalar_tensor(*s, x.dtype(), x.device());
  }
  throw TypeError(std::string("clip: ") + which + " must be None, a Python scalar or an array (got " +
                  py_type_name(b) + ")");
}

}  // namespace

void bind_elementwise(nb::module_& m) {
  for (int i = 0; i < num_unary_ops(); ++i) {
    UnaryOp op = static_cast<UnaryOp>(i);
    m.def(unary_info(op).name, [op](nb::handle x) {
      if (!is_tensor(x))
        throw TypeError(std::string(unary_info(op).name) + ": x must be an array, got " +
                        py_type_name(x));
      return unary(op, as_tensor(x));
    }, nb::arg("x"));
  }
  for (int i = 0; i < num_binary_ops(); ++i) {
    BinaryOp op = static_cast<BinaryOp>(i);
    m.def(binary_info(op).name, [op](nb::handle x1, nb::handle x2) {
      return binary_args(op, x1, x2);
    }, nb::arg("x1"), nb::arg("x2"));
  }

  m.def("where", [](nb::handle condition, nb::handle x1, nb::handle x2) {
    if (!is_tensor(condition))
      throw TypeError("where: condition must be an array, got " + py_type_name(condition));
    const Tensor& c = as_tensor(condition);
    bool t1 = is_tensor(x1), t2 = is_tensor(x2);
    if (t1 && t2) return where(c, as_tensor(x1), as_tensor(x2));
    if (t1 || t2) {
      const Tensor& ref = t1 ? as_tensor(x1) : as_tensor(x2);
      std::optional<Tensor> other = operand(ref, t1 ? x2 : x1);
      if (!other)
        throw TypeError("where: x1 and x2 must be arrays or Python scalars (got " +
                        py_type_name(t1 ? x2 : x1) + ")");
      return t1 ? where(c, ref, *other) : where(c, *other, ref);
    }
    throw TypeError("where: at least one of x1 and x2 must be an array");
  }, nb::arg("condition"), nb::arg("x1"), nb::arg("x2"));

  m.def("clip", [](nb::handle x, nb::handle min, nb::handle max) {
    if (!is_tensor(x)) throw TypeError("clip: x must be an array, got " + py_type_name(x));
    const Tensor& t = as_tensor(x);
    return clip(t, optional_bound(t, min, "min"), optional_bound(t, max, "max"));
  }, nb::arg("x"), nb::arg("min").none() = nb::none(), nb::arg("max").none() = nb::none());

  nb::handle tensor_type = nb::type<Tensor>();
  nb::object cls = nb::borrow(tensor_type);
  for (const OperatorRow& row : kOperators) {
    BinaryOp op = row.op;
    nb::cpp_function_def(
        [op](const Tensor& self, nb::handle other) -> nb::object {
          if (const Tensor* t = tensor_of(other)) return nb::cast(binary(op, self, *t));
          std::optional<Tensor> rhs = host_scalar(self, other);
          if (!rhs) return not_implemented();
          return nb::cast(binary_with_host_scalar(op, self, *rhs));
        },
        nb::scope(cls), nb::name(row.name), nb::is_method(), nb::is_operator(),
        nb::arg("other"));
    if (row.reflected)
      nb::cpp_function_def(
          [op](const Tensor& self, nb::handle other) -> nb::object {
            if (const Tensor* t = tensor_of(other)) return nb::cast(binary(op, *t, self));
            std::optional<Tensor> lhs = host_scalar(self, other);
            if (!lhs) return not_implemented();
            return nb::cast(binary_with_host_scalar(op, *lhs, self));
          },
          nb::scope(cls), nb::name(row.reflected), nb::is_method(), nb::is_operator(),
          nb::arg("other"));
    if (row.inplace)
      nb::cpp_function_def(
          [op](nb::handle self, nb::handle other) -> nb::object {
            Tensor& t = nb::cast<Tensor&>(self);
            if (const Tensor* o = tensor_of(other)) {
              binary_inplace(op, t, *o);
              return nb::borrow(self);
            }
            std::optional<Tensor> rhs = host_scalar(t, other);
            if (!rhs) return not_implemented();
            binary_inplace_with_host_scalar(op, t, *rhs);
            return nb::borrow(self);
          },
          nb::scope(cls), nb::name(row.inplace), nb::is_method(), nb::is_operator(),
          nb::arg("other"));
  }
  for (const UnaryOperatorRow& row : kUnaryOperators) {
    UnaryOp op = row.op;
    nb::cpp_function_def([op](const Tensor& self) { return unary(op, self); },
                         nb::scope(cls), nb::name(row.name), nb::is_method());
  }
}

}  // namespace xrt::py

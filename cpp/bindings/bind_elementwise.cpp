// cpp/bindings/bind_elementwise.cpp: the elementwise functions and the Tensor operators,
// generated from the tables of xpuruntime/elementwise.h.
#include <nanobind/stl/string.h>

#include <deque>
#include <new>
#include <string>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/elementwise.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/indexing.h"

namespace xrt::py {
namespace {

bool is_tensor(nb::handle h) { return tensor_of(h) != nullptr; }
const Tensor& as_tensor(nb::handle h) { return *tensor_of(h); }  // after is_tensor

std::string py_type_name(nb::handle h) { return nb::type_name(h.type()).c_str(); }

nb::object not_implemented() { return nb::borrow(Py_NotImplemented); }

// The standard lets one operand of a binary function be a Python scalar; it takes the
// other operand's dtype (TypeError for the mixes the standard leaves undefined). The scalar
// stays on the host (Note [Host scalars] in xpuruntime/elementwise.h). A logical op reads
// a scalar, like an array, as its truth value (Note [Logical ops read truth values]): its
// own, as NumPy reads it (logical_and(float16_array, 1e-120) is true there, though 1e-120
// is 0 in float16, and logical_and(int8_array, 300) raises no overflow).
std::optional<Tensor> host_scalar(BinaryOp op, const Tensor& self, nb::handle other) {
  std::optional<Scalar> s = operand_scalar(other);
  if (!s) return std::nullopt;
  DType dtype = binary_info(op).computes_in == ComputesIn::Truth
                    ? DType::Bool
                    : scalar_result_type(self.dtype(), s->kind);
  return scalar_tensor(*s, dtype, kCPU);
}

// self op other (self_first) or other op self: other a Tensor or a Python scalar; an
// undefined Tensor for anything else (an operator's NotImplemented). Note: a Tensor rather
// than an optional one, so the result is built in place (a move less per operator).
Tensor with_operand(BinaryOp op, const Tensor& self, nb::handle other, bool self_first) {
  if (const Tensor* t = tensor_of(other))
    return self_first ? binary(op, self, *t) : binary(op, *t, self);
  std::optional<Tensor> s = host_scalar(op, self, other);
  if (!s) return Tensor();
  return self_first ? binary_with_host_scalar(op, self, *s) : binary_with_host_scalar(op, *s, self);
}

// a op b where either may be the Tensor (the functions, and the slots, which get the
// operands in the expression's order).
Tensor binary_operands(BinaryOp op, nb::handle a, nb::handle b) {
  if (const Tensor* x = tensor_of(a)) return with_operand(op, *x, b, true);
  if (const Tensor* y = tensor_of(b)) return with_operand(op, *y, a, false);
  return Tensor();
}

// self op= other; false when other is neither a Tensor nor a Python scalar.
bool inplace_operand(BinaryOp op, Tensor& self, nb::handle other) {
  if (const Tensor* t = tensor_of(other)) {
    binary_inplace(op, self, *t);
    return true;
  }
  std::optional<Tensor> s = host_scalar(op, self, other);
  if (s) binary_inplace_with_host_scalar(op, self, *s);
  return s.has_value();
}

Tensor binary_args(BinaryOp op, nb::handle x1, nb::handle x2) {
  Tensor r = binary_operands(op, x1, x2);
  if (r.defined()) return r;
  throw TypeError(std::string(binary_info(op).name) +
                  ": expected arrays, or an array and a Python scalar (got " + py_type_name(x1) +
                  " and " + py_type_name(x2) + ")");
}

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

// ---- Note [Operator slots] ---------------------------------------------------------------
// `a + b` reaches the Tensor type's nb_add slot. A `__add__` defined as a method makes
// CPython fill that slot with its generic wrapper, which looks `__add__` and `__radd__` up in
// the type's dictionary and calls them through nanobind's function dispatch: 65 ns of the
// 450 that a 16-element CPU `a + b` took. The operators therefore also get C slots that
// call the same core functions directly; the methods stay, for `x.__add__(y)`, signatures
// and subclasses (a Python subclass's slots are CPython's wrappers again, which call the
// methods). A slot receives the operands in the expression's order, either of them the
// Tensor; NotImplemented lets the other operand's type try, as the methods' did.

PyObject* not_implemented_result() { return Py_NewRef(Py_NotImplemented); }

template <BinaryOp Op> PyObject* binary_slot(PyObject* a, PyObject* b) {
  try {
    Tensor r = binary_operands(Op, a, b);
    return r.defined() ? tensor_result(std::move(r)) : not_implemented_result();
  } catch (...) {
    return raise_current();
  }
}

template <BinaryOp Op> PyObject* inplace_slot(PyObject* a, PyObject* b) {
  try {
    Tensor* x = tensor_of(a);
    if (!x || !inplace_operand(Op, *x, b)) return not_implemented_result();
    return Py_NewRef(a);
  } catch (...) {
    return raise_current();
  }
}

// pow(a, b, mod) has no array meaning: a modulus makes it NotImplemented (then TypeError).
PyObject* power_slot(PyObject* a, PyObject* b, PyObject* mod) {
  if (mod != Py_None) return not_implemented_result();
  return binary_slot<BinaryOp::pow>(a, b);
}
PyObject* inplace_power_slot(PyObject* a, PyObject* b, PyObject* mod) {
  if (mod != Py_None) return not_implemented_result();
  return inplace_slot<BinaryOp::pow>(a, b);
}

template <UnaryOp Op> PyObject* unary_slot(PyObject* a) {
  try {
    const Tensor* x = tensor_of(a);
    if (!x) return not_implemented_result();
    return tensor_result(unary(Op, *x));
  } catch (...) {
    return raise_current();
  }
}

// CPython calls the left operand's richcompare, then the right one's with the operator
// reflected, so self is the Tensor here.
PyObject* richcompare_slot(PyObject* self, PyObject* other, int op) {
  static constexpr BinaryOp ops[] = {BinaryOp::less,      BinaryOp::less_equal,
                                     BinaryOp::equal,     BinaryOp::not_equal,
                                     BinaryOp::greater,   BinaryOp::greater_equal};
  try {
    const Tensor* x = tensor_of(self);
    if (!x || op < Py_LT || op > Py_GE) return not_implemented_result();
    Tensor r = with_operand(ops[op], *x, other, true);
    return r.defined() ? tensor_result(std::move(r)) : not_implemented_result();
  } catch (...) {
    return raise_current();
  }
}

// The operators: the methods' names and, for the arithmetic and bitwise ones, their
// number slots (pow's are ternary and the comparisons share tp_richcompare: set apart).
struct OperatorRow {
  const char* name;
  const char* reflected;  // nullptr for comparisons
  const char* inplace;
  BinaryOp op;
  binaryfunc PyNumberMethods::*slot = nullptr;
  binaryfunc PyNumberMethods::*inplace_slot_field = nullptr;
  binaryfunc slot_function = nullptr;
  binaryfunc inplace_function = nullptr;
};

#define XRT_OPERATOR(py, op, nb)                                                           \
  {"__" py "__", "__r" py "__", "__i" py "__", BinaryOp::op, &PyNumberMethods::nb_##nb,     \
   &PyNumberMethods::nb_inplace_##nb, binary_slot<BinaryOp::op>, inplace_slot<BinaryOp::op>}
const OperatorRow kOperators[] = {
    XRT_OPERATOR("add", add, add),
    XRT_OPERATOR("sub", subtract, subtract),
    XRT_OPERATOR("mul", multiply, multiply),
    XRT_OPERATOR("truediv", divide, true_divide),
    XRT_OPERATOR("floordiv", floor_divide, floor_divide),
    XRT_OPERATOR("mod", remainder, remainder),
    {"__pow__", "__rpow__", "__ipow__", BinaryOp::pow},
    XRT_OPERATOR("and", bitwise_and, and),
    XRT_OPERATOR("or", bitwise_or, or),
    XRT_OPERATOR("xor", bitwise_xor, xor),
    XRT_OPERATOR("lshift", bitwise_left_shift, lshift),
    XRT_OPERATOR("rshift", bitwise_right_shift, rshift),
    {"__eq__", nullptr, nullptr, BinaryOp::equal},
    {"__ne__", nullptr, nullptr, BinaryOp::not_equal},
    {"__lt__", nullptr, nullptr, BinaryOp::less},
    {"__le__", nullptr, nullptr, BinaryOp::less_equal},
    {"__gt__", nullptr, nullptr, BinaryOp::greater},
    {"__ge__", nullptr, nullptr, BinaryOp::greater_equal},
};
#undef XRT_OPERATOR

struct UnaryOperatorRow {
  const char* name;
  UnaryOp op;
  unaryfunc PyNumberMethods::*slot;
  unaryfunc slot_function;
};

const UnaryOperatorRow kUnaryOperators[] = {
    {"__abs__", UnaryOp::abs, &PyNumberMethods::nb_absolute, unary_slot<UnaryOp::abs>},
    {"__neg__", UnaryOp::negative, &PyNumberMethods::nb_negative, unary_slot<UnaryOp::negative>},
    {"__pos__", UnaryOp::positive, &PyNumberMethods::nb_positive, unary_slot<UnaryOp::positive>},
    {"__invert__", UnaryOp::bitwise_invert, &PyNumberMethods::nb_invert,
     unary_slot<UnaryOp::bitwise_invert>},
};

void install_operator_slots(PyTypeObject* type) {
  PyNumberMethods* n = type->tp_as_number;
  for (const OperatorRow& row : kOperators) {
    if (!row.slot) continue;
    n->*row.slot = row.slot_function;
    n->*row.inplace_slot_field = row.inplace_function;
  }
  n->nb_power = power_slot;
  n->nb_inplace_power = inplace_power_slot;
  for (const UnaryOperatorRow& row : kUnaryOperators) n->*row.slot = row.slot_function;
  type->tp_richcompare = richcompare_slot;
  PyType_Modified(type);
}

// ---- Note [Elementwise function entries] ------------------------------------------------
// xrt.add(a, b) did the work of `a + b`, plus nanobind's function dispatch (about 120
// instructions) and its cast of the result (about 190: a lookup and registration in its
// instance table), where the operator slot makes the result with tensor_result: 450
// instructions more a call on CUDA (callgrind, tools/cuda_host_instructions.sh). Array API
// code calls functions (xp.exp, xp.multiply) as often as operators, so each elementwise
// function is a plain METH_FASTCALL function whose `self` is its op's number, reading its
// arguments itself (positionally or by name, as before) and making its result as the slots do.

PyObject* unary_entry(PyObject* self, PyObject* const* args, Py_ssize_t nargsf,
                      PyObject* kwnames) {
  static const char* const params[] = {"x"};
  auto op = static_cast<UnaryOp>(PyLong_AsLong(self));
  try {
    PyObject* x;
    if (!kwnames && PyVectorcall_NARGS(nargsf) == 1)  // the common call
      x = args[0];
    else
      read_arguments(unary_info(op).name, params, 1, 1, args, PyVectorcall_NARGS(nargsf),
                     kwnames, nullptr, &x);
    if (!is_tensor(x))
      throw TypeError(std::string(unary_info(op).name) + ": x must be an array, got " +
                      py_type_name(x));
    return tensor_result(unary(op, as_tensor(x)));
  } catch (...) {
    return raise_current();
  }
}

PyObject* binary_entry(PyObject* self, PyObject* const* args, Py_ssize_t nargsf,
                       PyObject* kwnames) {
  static const char* const params[] = {"x1", "x2"};
  auto op = static_cast<BinaryOp>(PyLong_AsLong(self));
  try {
    PyObject* x[2];
    if (!kwnames && PyVectorcall_NARGS(nargsf) == 2) {  // the common call
      x[0] = args[0];
      x[1] = args[1];
    } else {
      read_arguments(binary_info(op).name, params, 2, 2, args, PyVectorcall_NARGS(nargsf),
                     kwnames, nullptr, x);
    }
    return tensor_result(binary_args(op, x[0], x[1]));
  } catch (...) {
    return raise_current();
  }
}

// One function per op, named for it, with the op's number for self; the definitions and
// their docstrings (the text signature inspect reads) live as long as the process.
void add_entry(nb::module_& m, const char* name, int op, const char* params,
               PyObject* (*entry)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*)) {
  static std::deque<PyMethodDef> defs;
  static std::deque<std::string> docs;
  docs.push_back(std::string(name) + params + "\n--\n\n");
  defs.push_back({name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(entry)),
                  METH_FASTCALL | METH_KEYWORDS, docs.back().c_str()});
  nb::object number = nb::steal(PyLong_FromLong(op));
  nb::object function = nb::steal(PyCFunction_NewEx(&defs.back(), number.ptr(),
                                                    m.attr("__name__").ptr()));
  if (!function.is_valid()) throw nb::python_error();
  m.attr(name) = function;
}

}  // namespace

void bind_elementwise(nb::module_& m) {
  for (int i = 0; i < num_unary_ops(); ++i)
    add_entry(m, unary_info(static_cast<UnaryOp>(i)).name, i, "(x)", unary_entry);
  for (int i = 0; i < num_binary_ops(); ++i)
    add_entry(m, binary_info(static_cast<BinaryOp>(i)).name, i, "(x1, x2)", binary_entry);

  // where(condition) alone is NumPy's, CuPy's and PyTorch's nonzero(condition), and code
  // written for them calls it so (scikit-learn's roc_curve does); the standard has only
  // the three-argument form.
  m.def("where", [](nb::handle condition, nb::handle x1, nb::handle x2) -> nb::object {
    if (!is_tensor(condition))
      throw TypeError("where: condition must be an array, got " + py_type_name(condition));
    const Tensor& c = as_tensor(condition);
    if (x1.is_none() && x2.is_none()) return tensor_tuple(nonzero(c));
    if (x1.is_none() || x2.is_none())
      throw TypeError("where: x1 and x2 go together (or neither, for nonzero(condition))");
    bool t1 = is_tensor(x1), t2 = is_tensor(x2);
    if (t1 && t2) return nb::cast(where(c, as_tensor(x1), as_tensor(x2)));
    if (t1 || t2) {
      const Tensor& ref = t1 ? as_tensor(x1) : as_tensor(x2);
      std::optional<Tensor> other = operand(ref, t1 ? x2 : x1);
      if (!other)
        throw TypeError("where: x1 and x2 must be arrays or Python scalars (got " +
                        py_type_name(t1 ? x2 : x1) + ")");
      return nb::cast(t1 ? where(c, ref, *other) : where(c, *other, ref));
    }
    throw TypeError("where: at least one of x1 and x2 must be an array");
  }, nb::arg("condition"), nb::arg("x1").none() = nb::none(), nb::arg("x2").none() = nb::none());

  m.def("clip", [](nb::handle x, nb::handle min, nb::handle max) {
    if (!is_tensor(x)) throw TypeError("clip: x must be an array, got " + py_type_name(x));
    const Tensor& t = as_tensor(x);
    return clip(t, optional_bound(t, min, "min"), optional_bound(t, max, "max"));
  }, nb::arg("x"), nb::arg("min").none() = nb::none(), nb::arg("max").none() = nb::none());

  nb::handle tensor_type = nb::type<Tensor>();
  nb::object cls = nb::borrow(tensor_type);
  // The methods, for x.__add__(y), signatures and Python subclasses; the operators
  // themselves run through the slots (Note [Operator slots]).
  auto result = [](Tensor&& r) { return r.defined() ? nb::cast(std::move(r)) : not_implemented(); };
  for (const OperatorRow& row : kOperators) {
    BinaryOp op = row.op;
    nb::cpp_function_def(
        [op, result](const Tensor& self, nb::handle other) {
          return result(with_operand(op, self, other, true));
        },
        nb::scope(cls), nb::name(row.name), nb::is_method(), nb::is_operator(),
        nb::arg("other"));
    if (row.reflected)
      nb::cpp_function_def(
          [op, result](const Tensor& self, nb::handle other) {
            return result(with_operand(op, self, other, false));
          },
          nb::scope(cls), nb::name(row.reflected), nb::is_method(), nb::is_operator(),
          nb::arg("other"));
    if (row.inplace)
      nb::cpp_function_def(
          [op](nb::handle self, nb::handle other) -> nb::object {
            if (!inplace_operand(op, nb::cast<Tensor&>(self), other)) return not_implemented();
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
  // Setting a dunder method on the type (as the Python layer's signature wrappers do)
  // hands its slot back to CPython's wrapper: the Python layer calls this after its own.
  m.def("_install_operator_slots", [tensor_type] {
    install_operator_slots(reinterpret_cast<PyTypeObject*>(tensor_type.ptr()));
  }, "Points the Tensor type's operator slots at the C operators (Note [Operator slots]).");
}

}  // namespace xrt::py

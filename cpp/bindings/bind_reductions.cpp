// cpp/bindings/bind_reductions.cpp: the statistical and utility functions, argmax, argmin
// and count_nonzero (cpp/include/xpuruntime/reductions.h).
#include <string>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/reductions.h"

namespace xrt::py {
namespace {

std::string python_type(nb::handle obj) { return nb::type_name(obj.type()).c_str(); }

const Tensor& x_arg(nb::handle obj, const char* op) {
  if (!nb::isinstance<Tensor>(obj))
    throw TypeError(std::string(op) + ": x must be an xpuruntime Tensor, got " + python_type(obj));
  return nb::cast<const Tensor&>(obj);
}

bool is_int(nb::handle obj) { return PyIndex_Check(obj.ptr()) && !PyBool_Check(obj.ptr()); }

int64_t int_arg(nb::handle obj, const char* op, const char* what) {
  if (!is_int(obj))
    throw TypeError(std::string(op) + ": " + what + " must be an int, got " + python_type(obj));
  return ::xrt::py::int_arg(obj, (std::string(op) + ": " + what).c_str());
}

// None, an int or a tuple of ints.
OptionalAxes axes_arg(nb::handle axis, const char* op) {
  if (axis.is_none()) return std::nullopt;
  Dims axes;
  if (PyTuple_Check(axis.ptr())) {
    for (nb::handle a : axis) axes.push_back(int_arg(a, op, "each axis"));
  } else if (is_int(axis)) {
    axes.push_back(int_arg(axis, op, "axis"));
  } else {
    throw TypeError(std::string(op) + ": axis must be None, an int or a tuple of ints, got " +
                    python_type(axis));
  }
  return axes;
}

std::optional<int64_t> axis_arg(nb::handle axis, const char* op) {
  if (axis.is_none()) return std::nullopt;
  return int_arg(axis, op, "axis");
}

double correction_arg(nb::handle c, const char* op) {
  if (is_int(c) || PyFloat_Check(c.ptr())) return nb::cast<double>(c);
  throw TypeError(std::string(op) + ": correction must be an int or a float, got " +
                  python_type(c));
}

// diff's prepend/append: None, a tensor, or (NumPy-style) a Python scalar, which takes x's
// dtype by the standard's scalar rule.
std::optional<Tensor> edge_arg(const Tensor& x, nb::handle obj, const char* what) {
  if (obj.is_none()) return std::nullopt;
  if (std::optional<Tensor> t = operand(x, obj)) return t;
  throw TypeError(std::string("diff: ") + what + " must be an array or a Python scalar, got " +
                  python_type(obj));
}

// Note [NumPy's positional arguments]: the standard makes these keyword-only; NumPy,
// CuPy and PyTorch also take the leading ones by position (`sum(x, 0)`, `concat(xs, 0)`,
// `zeros(shape, float32)`), and code written for them, scikit-learn's roc_curve among it,
// passes them so. A parameter is positional here where it sits at the same place, with the
// same meaning, in NumPy's signature; the ones after it stay keyword-only (NumPy's next
// positional is often `out` or `order`, which the standard has not).

// sum(x, /, axis=None, dtype=None, *, keepdims=False) and prod.
template <Tensor (*Op)(const Tensor&, const OptionalAxes&, std::optional<DType>, bool)>
void def_accumulation(nb::module_& m, const char* name) {
  m.def(name, [name](nb::handle x, nb::handle axis, nb::handle dtype, bool keepdims) {
    return Op(x_arg(x, name), axes_arg(axis, name), optional_dtype_arg(dtype), keepdims);
  }, nb::arg("x"), nb::arg("axis").none() = nb::none(), nb::arg("dtype").none() = nb::none(),
     nb::kw_only(), nb::arg("keepdims") = false);
}

// max(x, /, axis=None, *, keepdims=False) and the others of that signature.
template <Tensor (*Op)(const Tensor&, const OptionalAxes&, bool)>
void def_reduction(nb::module_& m, const char* name) {
  m.def(name, [name](nb::handle x, nb::handle axis, bool keepdims) {
    return Op(x_arg(x, name), axes_arg(axis, name), keepdims);
  }, nb::arg("x"), nb::arg("axis").none() = nb::none(), nb::kw_only(),
     nb::arg("keepdims") = false);
}

// var(x, /, axis=None, *, correction=0.0, keepdims=False) and std.
template <Tensor (*Op)(const Tensor&, const OptionalAxes&, double, bool)>
void def_moment(nb::module_& m, const char* name) {
  m.def(name, [name](nb::handle x, nb::handle axis, nb::handle correction, bool keepdims) {
    return Op(x_arg(x, name), axes_arg(axis, name), correction_arg(correction, name),
              keepdims);
  }, nb::arg("x"), nb::arg("axis").none() = nb::none(), nb::kw_only(),
     nb::arg("correction") = 0.0, nb::arg("keepdims") = false);
}

// cumulative_sum(x, /, axis=None, dtype=None, *, include_initial=False) and
// cumulative_prod (NumPy's cumsum order).
template <Tensor (*Op)(const Tensor&, std::optional<int64_t>, std::optional<DType>, bool)>
void def_cumulative(nb::module_& m, const char* name) {
  m.def(name, [name](nb::handle x, nb::handle axis, nb::handle dtype, bool include_initial) {
    return Op(x_arg(x, name), axis_arg(axis, name), optional_dtype_arg(dtype),
              include_initial);
  }, nb::arg("x"), nb::arg("axis").none() = nb::none(), nb::arg("dtype").none() = nb::none(),
     nb::kw_only(), nb::arg("include_initial") = false);
}

// argmax(x, /, axis=None, *, keepdims=False) and argmin.
template <Tensor (*Op)(const Tensor&, std::optional<int64_t>, bool)>
void def_search(nb::module_& m, const char* name) {
  m.def(name, [name](nb::handle x, nb::handle axis, bool keepdims) {
    return Op(x_arg(x, name), axis_arg(axis, name), keepdims);
  }, nb::arg("x"), nb::arg("axis").none() = nb::none(), nb::kw_only(),
     nb::arg("keepdims") = false);
}

}  // namespace

void bind_reductions(nb::module_& m) {
  def_accumulation<sum>(m, "sum");
  def_accumulation<prod>(m, "prod");
  def_reduction<max>(m, "max");
  def_reduction<min>(m, "min");
  def_reduction<mean>(m, "mean");
  def_moment<var>(m, "var");
  def_moment<std_dev>(m, "std");
  def_cumulative<cumulative_sum>(m, "cumulative_sum");
  def_cumulative<cumulative_prod>(m, "cumulative_prod");
  def_reduction<all>(m, "all");
  def_reduction<any>(m, "any");
  def_reduction<count_nonzero>(m, "count_nonzero");
  def_search<argmax>(m, "argmax");
  def_search<argmin>(m, "argmin");
  // diff(x, /, n=1, axis=-1, prepend=None, append=None): NumPy's order.
  m.def("diff", [](nb::handle x, nb::handle n, nb::handle axis, nb::handle prepend,
                   nb::handle append) {
    const Tensor& t = x_arg(x, "diff");
    return diff(t, int_arg(axis, "diff", "axis"), int_arg(n, "diff", "n"),
                edge_arg(t, prepend, "prepend"), edge_arg(t, append, "append"));
  }, nb::arg("x"), nb::arg("n") = 1, nb::arg("axis") = -1,
     nb::arg("prepend").none() = nb::none(), nb::arg("append").none() = nb::none());
}

}  // namespace xrt::py

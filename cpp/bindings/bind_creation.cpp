// cpp/bindings/bind_creation.cpp: the creation functions of creation.h.
#include <nanobind/stl/string_view.h>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/creation.h"
#include "xpuruntime/errors.h"

namespace xrt::py {
namespace {

Scalar bound_arg(nb::handle o, const char* what) {
  std::optional<Scalar> s = scalar_from_python(o);
  if (!s || s->kind == Scalar::Kind::Bool)
    throw TypeError(std::string(what) + " must be an int, float or complex, got " +
                    type_name_of(o));
  return *s;
}

template <int Fill> Tensor filled_like(nb::handle x, nb::handle dtype, nb::handle device) {
  return full_like(tensor_arg(x, "x"), Scalar::from_int(Fill), optional_dtype_arg(dtype),
                   optional_device_arg(device));
}

}  // namespace

void bind_creation(nb::module_& m) {
  m.def("empty_like", [](nb::handle x, nb::handle dtype, nb::handle device) {
    return empty_like(tensor_arg(x, "empty_like: x"), optional_dtype_arg(dtype),
                      optional_device_arg(device));
  }, nb::arg("x"), nb::arg("dtype").none() = nb::none(), nb::kw_only(),
     nb::arg("device").none() = nb::none());  // Note [NumPy's positional arguments]
  m.def("zeros_like", filled_like<0>, nb::arg("x"), nb::arg("dtype").none() = nb::none(),
        nb::kw_only(), nb::arg("device").none() = nb::none());
  m.def("ones_like", filled_like<1>, nb::arg("x"), nb::arg("dtype").none() = nb::none(),
        nb::kw_only(), nb::arg("device").none() = nb::none());
  m.def("full_like", [](nb::handle x, nb::handle fill_value, nb::handle dtype, nb::handle device) {
    const Tensor& like = tensor_arg(x, "full_like: x");
    std::variant<Scalar, Tensor> value = fill_value_arg(fill_value, "full_like: fill_value");
    std::optional<DType> d = optional_dtype_arg(dtype);
    std::optional<Device> where = optional_device_arg(device);
    if (const Scalar* s = std::get_if<Scalar>(&value)) return full_like(like, *s, d, where);
    Tensor out = empty_like(like, d, where);  // Note [Array fill values]: x's dtype stays
    copy_into(out, to_device(std::get<Tensor>(value), out.device()));
    return out;
  }, nb::arg("x"), nb::arg("fill_value"), nb::arg("dtype").none() = nb::none(), nb::kw_only(),
     nb::arg("device").none() = nb::none());

  m.def("eye", [](nb::handle n_rows, nb::handle n_cols, nb::handle k, nb::handle dtype,
                  nb::handle device) {
    return eye(int_arg(n_rows, "eye: n_rows"), optional_int_arg(n_cols, "eye: n_cols"),
               clamped_int_arg(k, "eye: k"), optional_dtype_arg(dtype).value_or(kDefaultFloat),
               optional_device_arg(device).value_or(default_device()));
  }, nb::arg("n_rows"), nb::arg("n_cols").none() = nb::none(), nb::arg("k") = 0,
     nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("device").none() = nb::none());
  m.def("linspace", [](nb::handle start, nb::handle stop, nb::handle num, nb::handle dtype,
                       nb::handle device, nb::handle endpoint) {
    Scalar a = bound_arg(start, "linspace: start"), b = bound_arg(stop, "linspace: stop");
    bool complex_input = a.kind == Scalar::Kind::Complex || b.kind == Scalar::Kind::Complex;
    DType d = optional_dtype_arg(dtype).value_or(complex_input ? kDefaultComplex : kDefaultFloat);
    return linspace(a, b, int_arg(num, "linspace: num"), d,
                    optional_device_arg(device).value_or(default_device()),
                    bool_arg(endpoint, "linspace: endpoint"));
  }, nb::arg("start"), nb::arg("stop"), nb::arg("num"), nb::kw_only(),
     nb::arg("dtype").none() = nb::none(), nb::arg("device").none() = nb::none(),
     nb::arg("endpoint") = true);
  m.def("meshgrid", [](nb::args arrays, nb::handle indexing) {
    std::vector<Tensor> tensors;
    tensors.reserve(arrays.size());
    for (nb::handle a : arrays) tensors.push_back(tensor_arg(a, "meshgrid: arrays"));
    bool xy = nb::isinstance<nb::str>(indexing) && nb::cast<std::string_view>(indexing) == "xy";
    bool ij = nb::isinstance<nb::str>(indexing) && nb::cast<std::string_view>(indexing) == "ij";
    if (!xy && !ij)
      throw ValueError("meshgrid: indexing must be 'xy' or 'ij', got " +
                       std::string(nb::repr(indexing).c_str()));
    return tensor_tuple(meshgrid(tensors, xy));
  }, nb::arg("arrays"), nb::kw_only(), nb::arg("indexing") = "xy");
  m.def("tril", [](nb::handle x, nb::handle k) {
    return tril(tensor_arg(x, "tril: x"), clamped_int_arg(k, "tril: k"));
  }, nb::arg("x"), nb::arg("k") = 0);
  m.def("triu", [](nb::handle x, nb::handle k) {
    return triu(tensor_arg(x, "triu: x"), clamped_int_arg(k, "triu: k"));
  }, nb::arg("x"), nb::arg("k") = 0);
}

}  // namespace xrt::py

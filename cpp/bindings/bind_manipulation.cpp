// cpp/bindings/bind_manipulation.cpp: the manipulation functions (manipulation.h).
#include <nanobind/stl/vector.h>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/manipulation.h"

namespace xrt::py {

void bind_manipulation(nb::module_& m) {
  m.def("_as_strided", [](const Tensor& x, const std::vector<int64_t>& shape,
                          const std::vector<int64_t>& strides) {
    return restride(x, Dims(shape.begin(), shape.end()), Dims(strides.begin(), strides.end()));
  }, nb::arg("x"), nb::arg("shape"), nb::arg("strides"));
  m.def("broadcast_arrays", [](nb::args arrays) {
    std::vector<Tensor> tensors;
    tensors.reserve(arrays.size());
    for (nb::handle a : arrays) tensors.push_back(tensor_arg(a, "broadcast_arrays: arrays"));
    return tensor_tuple(broadcast_arrays(tensors));
  }, nb::arg("arrays"));
  m.def("broadcast_shapes", [](nb::args shapes) {
    std::vector<Dims> dims;
    dims.reserve(shapes.size());
    for (nb::handle s : shapes) dims.push_back(int_tuple_arg(s, "broadcast_shapes: shapes"));
    return shape_tuple(broadcast_shapes(dims));
  }, nb::arg("shapes"));
  m.def("broadcast_to", [](nb::handle x, nb::handle shape) {
    return broadcast_to(tensor_arg(x, "broadcast_to: x"),
                        int_tuple_arg(shape, "broadcast_to: shape"));
  }, nb::arg("x"), nb::arg("shape"));
  m.def("concat", [](nb::handle arrays, nb::handle axis) {
    return concat(tensor_sequence_arg(arrays, "concat: arrays"),
                  optional_int_arg(axis, "concat: axis"));
  }, nb::arg("arrays"), nb::arg("axis").none() = 0);  // Note [NumPy's positional arguments]
  m.def("expand_dims", [](nb::handle x, nb::handle axis) {
    return expand_dims(tensor_arg(x, "expand_dims: x"), int_tuple_arg(axis, "expand_dims: axis"));
  }, nb::arg("x"), nb::arg("axis"));
  m.def("flip", [](nb::handle x, nb::handle axis) {
    std::optional<Dims> axes;
    if (!axis.is_none()) axes = int_tuple_arg(axis, "flip: axis");
    return flip(tensor_arg(x, "flip: x"), axes);
  }, nb::arg("x"), nb::arg("axis").none() = nb::none());
  m.def("moveaxis", [](nb::handle x, nb::handle source, nb::handle destination) {
    return moveaxis(tensor_arg(x, "moveaxis: x"), int_tuple_arg(source, "moveaxis: source"),
                    int_tuple_arg(destination, "moveaxis: destination"));
  }, nb::arg("x"), nb::arg("source"), nb::arg("destination"));
  m.def("permute_dims", [](nb::handle x, nb::handle axes) {
    return permute_dims(tensor_arg(x, "permute_dims: x"),
                        int_tuple_arg(axes, "permute_dims: axes"));
  }, nb::arg("x"), nb::arg("axes"));
  m.def("repeat", [](nb::handle x, nb::handle repeats, nb::handle axis) {
    const Tensor& t = tensor_arg(x, "repeat: x");
    std::optional<int64_t> a = optional_int_arg(axis, "repeat: axis");
    if (nb::isinstance<Tensor>(repeats)) return repeat(t, nb::cast<const Tensor&>(repeats), a);
    if (!is_int(repeats))
      throw TypeError("repeat: repeats must be an int or an integer array, got " +
                      type_name_of(repeats));
    return repeat(t, int_arg(repeats, "repeat: repeats"), a);
  }, nb::arg("x"), nb::arg("repeats"), nb::arg("axis").none() = nb::none());
  m.def("reshape", [](nb::handle x, nb::handle shape, nb::handle copy) {
    std::optional<bool> c;
    if (!copy.is_none()) c = bool_arg(copy, "reshape: copy");
    return reshape(tensor_arg(x, "reshape: x"), int_tuple_arg(shape, "reshape: shape"), c);
  }, nb::arg("x"), nb::arg("shape"), nb::kw_only(), nb::arg("copy").none() = nb::none());
  m.def("roll", [](nb::handle x, nb::handle shift, nb::handle axis) {
    std::optional<Dims> axes;
    if (!axis.is_none()) axes = int_tuple_arg(axis, "roll: axis");
    Dims shifts = int_tuple_arg(shift, "roll: shift");
    if (!is_int(shift) && (!axes || !is_tuple_or_list(axis)))
      throw ValueError("roll: a tuple of shifts needs a tuple of axes of the same length");
    return roll(tensor_arg(x, "roll: x"), shifts, axes);
  }, nb::arg("x"), nb::arg("shift"), nb::arg("axis").none() = nb::none());
  m.def("squeeze", [](nb::handle x, nb::handle axis) {
    return squeeze(tensor_arg(x, "squeeze: x"), int_tuple_arg(axis, "squeeze: axis"));
  }, nb::arg("x"), nb::arg("axis"));
  m.def("stack", [](nb::handle arrays, nb::handle axis) {
    return stack(tensor_sequence_arg(arrays, "stack: arrays"), int_arg(axis, "stack: axis"));
  }, nb::arg("arrays"), nb::arg("axis") = 0);
  m.def("tile", [](nb::handle x, nb::handle repetitions) {
    return tile(tensor_arg(x, "tile: x"), int_tuple_arg(repetitions, "tile: repetitions"));
  }, nb::arg("x"), nb::arg("repetitions"));
  m.def("unstack", [](nb::handle x, nb::handle axis) {
    return tensor_tuple(unstack(tensor_arg(x, "unstack: x"), int_arg(axis, "unstack: axis")));
  }, nb::arg("x"), nb::arg("axis") = 0);
}

}  // namespace xrt::py

// cpp/bindings/bind_fft.cpp: the fft extension's functions as _core._fft; the public
// signatures (positional-only x, keyword-only options) are in python/xpuruntime/fft.py.
// The transforms run without the GIL.
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/fft.h"

namespace xrt::py {
namespace {

// (convert.cpp's tensor_arg is private to that file.)
const Tensor& tensor_arg(nb::handle obj, const char* what) {
  if (!nb::isinstance<Tensor>(obj))
    throw TypeError(std::string(what) + " must be an xpuruntime Tensor, got " +
                    std::string(nb::type_name(obj.type()).c_str()));
  return nb::cast<const Tensor&>(obj);
}

int64_t int_arg(nb::handle obj, const char* what) {
  if (!PyIndex_Check(obj.ptr()) || PyBool_Check(obj.ptr()))
    throw TypeError(std::string(what) + " must be an integer, got " +
                    std::string(nb::repr(obj).c_str()));
  return nb::cast<int64_t>(obj);
}

std::optional<int64_t> optional_int_arg(nb::handle obj, const char* what) {
  if (obj.is_none()) return std::nullopt;
  return int_arg(obj, what);
}

// None, a sequence of ints, or (where `allow_int`) a single int.
std::optional<Dims> int_sequence_arg(nb::handle obj, const char* what, bool allow_int = false) {
  if (obj.is_none()) return std::nullopt;
  Dims values;
  if (allow_int && PyIndex_Check(obj.ptr()) && !PyBool_Check(obj.ptr())) {
    values.push_back(int_arg(obj, what));
  } else if (PySequence_Check(obj.ptr()) && !PyUnicode_Check(obj.ptr())) {
    for (nb::handle item : nb::borrow<nb::sequence>(obj)) values.push_back(int_arg(item, what));
  } else {
    throw TypeError(std::string(what) + " must be " + (allow_int ? "an int, " : "") +
                    "a sequence of ints or None, got " + std::string(nb::repr(obj).c_str()));
  }
  return values;
}

FftNorm norm_arg(nb::handle obj) {
  if (!nb::isinstance<nb::str>(obj))
    throw ValueError("norm must be 'backward', 'ortho' or 'forward', got " +
                     std::string(nb::repr(obj).c_str()));
  return fft_norm_from_name(nb::cast<std::string>(obj));
}

// A Python int or float, or anything with __float__ (NumPy scalars); not bool or complex.
double spacing_arg(nb::handle obj) {
  if (PyBool_Check(obj.ptr()) || PyComplex_Check(obj.ptr()) ||
      !(PyIndex_Check(obj.ptr()) || PyObject_HasAttrString(obj.ptr(), "__float__")))
    throw TypeError("d must be a real number, got " + std::string(nb::repr(obj).c_str()));
  double d = PyFloat_AsDouble(obj.ptr());
  if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return d;
}

using OneAxis = Tensor (*)(const Tensor&, std::optional<int64_t>, int64_t, FftNorm);
using ManyAxes = Tensor (*)(const Tensor&, const std::optional<Dims>&,
                            const std::optional<Dims>&, FftNorm);
using Frequencies = Tensor (*)(int64_t, double, std::optional<DType>, Device);
using Shift = Tensor (*)(const Tensor&, const std::optional<Dims>&);

}  // namespace

void bind_fft(nb::module_& m) {
  nb::module_ fft = m.def_submodule("_fft", "Bindings behind xpuruntime.fft");
  const std::pair<const char*, OneAxis> one_axis[] = {
      {"fft", &xrt::fft},     {"ifft", &xrt::ifft}, {"rfft", &xrt::rfft},
      {"irfft", &xrt::irfft}, {"hfft", &xrt::hfft}, {"ihfft", &xrt::ihfft}};
  for (auto [name, op] : one_axis) {
    fft.def(name, [op, name](nb::handle x, nb::handle n, nb::handle axis, nb::handle norm) {
      std::string what = std::string(name) + ": ";
      const Tensor& input = tensor_arg(x, (what + "x").c_str());
      std::optional<int64_t> length = optional_int_arg(n, (what + "n").c_str());
      int64_t dim = int_arg(axis, (what + "axis").c_str());
      FftNorm mode = norm_arg(norm);
      nb::gil_scoped_release release;
      return op(input, length, dim, mode);
    }, nb::arg("x"), nb::arg("n").none(), nb::arg("axis"), nb::arg("norm").none());
  }
  const std::pair<const char*, ManyAxes> many_axes[] = {
      {"fftn", &xrt::fftn}, {"ifftn", &xrt::ifftn}, {"rfftn", &xrt::rfftn},
      {"irfftn", &xrt::irfftn}};
  for (auto [name, op] : many_axes) {
    fft.def(name, [op, name](nb::handle x, nb::handle s, nb::handle axes, nb::handle norm) {
      std::string what = std::string(name) + ": ";
      const Tensor& input = tensor_arg(x, (what + "x").c_str());
      std::optional<Dims> lengths = int_sequence_arg(s, (what + "s").c_str());
      std::optional<Dims> dims = int_sequence_arg(axes, (what + "axes").c_str());
      FftNorm mode = norm_arg(norm);
      nb::gil_scoped_release release;
      return op(input, lengths, dims, mode);
    }, nb::arg("x"), nb::arg("s").none(), nb::arg("axes").none(), nb::arg("norm").none());
  }
  const std::pair<const char*, Frequencies> frequencies[] = {{"fftfreq", &xrt::fftfreq},
                                                             {"rfftfreq", &xrt::rfftfreq}};
  for (auto [name, op] : frequencies) {
    fft.def(name, [op, name](nb::handle n, nb::handle d, nb::handle dtype, nb::handle device) {
      return op(int_arg(n, (std::string(name) + ": n").c_str()), spacing_arg(d),
                optional_dtype_arg(dtype), optional_device_arg(device).value_or(default_device()));
    }, nb::arg("n"), nb::arg("d"), nb::arg("dtype").none(), nb::arg("device").none());
  }
  const std::pair<const char*, Shift> shifts[] = {{"fftshift", &xrt::fftshift},
                                                  {"ifftshift", &xrt::ifftshift}};
  for (auto [name, op] : shifts) {
    fft.def(name, [op, name](nb::handle x, nb::handle axes) {
      std::string what = std::string(name) + ": ";
      return op(tensor_arg(x, (what + "x").c_str()),
                int_sequence_arg(axes, (what + "axes").c_str(), /*allow_int=*/true));
    }, nb::arg("x"), nb::arg("axes").none());
  }
}

}  // namespace xrt::py

// cpp/bindings/bind_fft.cpp: the fft extension's functions as _core._fft, with the
// standard's parameter names; python/xpuruntime/fft.py exports them with their signatures
// (Note [Signatures] in function.cpp). The transforms run without the GIL.
#include <nanobind/stl/string.h>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/fft.h"

namespace xrt::py {
namespace {




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
  nb::module_ fft = m.def_submodule("_fft", "The native functions of xpuruntime.fft");
  struct OneAxisEntry { const char* name; OneAxis op; const char* doc; };
  const OneAxisEntry one_axis[] = {
      {"fft", &xrt::fft, "One-dimensional discrete Fourier transform along axis."},
      {"ifft", &xrt::ifft, "One-dimensional inverse discrete Fourier transform along axis."},
      {"rfft", &xrt::rfft, "DFT of real input: the n//2 + 1 non-negative frequencies."},
      {"irfft", &xrt::irfft, "Inverse of rfft: n (default 2*(M-1)) real values along axis."},
      {"hfft", &xrt::hfft, "DFT of a Hermitian signal given by its first half: real output."},
      {"ihfft", &xrt::ihfft, "Inverse of hfft: the n//2 + 1 coefficients of real input."}};
  for (const OneAxisEntry& e : one_axis) {
    fft.def(e.name, [op = e.op, name = e.name](nb::handle x, nb::handle n, nb::handle axis,
                                               nb::handle norm) {
      std::string what = std::string(name) + ": ";
      const Tensor& input = tensor_arg(x, (what + "x").c_str());
      std::optional<int64_t> length = optional_int_arg(n, (what + "n").c_str());
      int64_t dim = int_arg(axis, (what + "axis").c_str());
      FftNorm mode = norm_arg(norm);
      nb::gil_scoped_release release;
      return op(input, length, dim, mode);
    }, nb::arg("x"), nb::arg("n").none() = nb::none(), nb::arg("axis") = -1,
       nb::arg("norm").none() = "backward", e.doc);  // Note [NumPy's positional arguments]
  }
  struct ManyAxesEntry { const char* name; ManyAxes op; const char* doc; };
  const ManyAxesEntry many_axes[] = {
      {"fftn", &xrt::fftn, "N-dimensional discrete Fourier transform over axes (default all)."},
      {"ifftn", &xrt::ifftn, "N-dimensional inverse discrete Fourier transform over axes."},
      {"rfftn", &xrt::rfftn, "N-dimensional DFT of real input (the last axis is halved)."},
      {"irfftn", &xrt::irfftn, "Inverse of rfftn."}};
  for (const ManyAxesEntry& e : many_axes) {
    fft.def(e.name, [op = e.op, name = e.name](nb::handle x, nb::handle s, nb::handle axes,
                                               nb::handle norm) {
      std::string what = std::string(name) + ": ";
      const Tensor& input = tensor_arg(x, (what + "x").c_str());
      std::optional<Dims> lengths = int_sequence_arg(s, (what + "s").c_str());
      std::optional<Dims> dims = int_sequence_arg(axes, (what + "axes").c_str());
      FftNorm mode = norm_arg(norm);
      nb::gil_scoped_release release;
      return op(input, lengths, dims, mode);
    }, nb::arg("x"), nb::arg("s").none() = nb::none(), nb::arg("axes").none() = nb::none(),
       nb::arg("norm").none() = "backward", e.doc);
  }
  struct FrequenciesEntry { const char* name; Frequencies op; const char* doc; };
  const FrequenciesEntry frequencies[] = {
      {"fftfreq", &xrt::fftfreq, "Sample frequencies [0, 1, ..., -1] / (d*n)."},
      {"rfftfreq", &xrt::rfftfreq, "The n//2 + 1 non-negative sample frequencies (for rfft)."}};
  for (const FrequenciesEntry& e : frequencies) {
    fft.def(e.name, [op = e.op, name = e.name](nb::handle n, nb::handle d, nb::handle dtype,
                                               nb::handle device) {
      return op(int_arg(n, (std::string(name) + ": n").c_str()), spacing_arg(d),
                optional_dtype_arg(dtype), optional_device_arg(device).value_or(default_device()));
    }, nb::arg("n"), nb::arg("d") = 1.0, nb::kw_only(), nb::arg("dtype").none() = nb::none(),
       nb::arg("device").none() = nb::none(), e.doc);
  }
  struct ShiftEntry { const char* name; Shift op; const char* doc; };
  const ShiftEntry shifts[] = {
      {"fftshift", &xrt::fftshift, "Moves the zero frequency to the centre along axes."},
      {"ifftshift", &xrt::ifftshift, "Inverse of fftshift."}};
  for (const ShiftEntry& e : shifts) {
    fft.def(e.name, [op = e.op, name = e.name](nb::handle x, nb::handle axes) {
      std::string what = std::string(name) + ": ";
      return op(tensor_arg(x, (what + "x").c_str()),
                int_sequence_arg(axes, (what + "axes").c_str(), /*allow_int=*/true));
    }, nb::arg("x"), nb::arg("axes").none() = nb::none(), e.doc);
  }
}

}  // namespace xrt::py

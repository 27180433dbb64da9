// cpp/bindings/bindings.h: what the binding files share (conversions between Python
// objects and core values). Bindings only translate; logic lives in cpp/src.
#pragma once
#include <nanobind/nanobind.h>

#include <optional>
#include <string>
#include <variant>

#include "xpuruntime/dispatcher.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"
#include "xpuruntime/scalar.h"
#include "xpuruntime/tensor.h"

namespace nb = nanobind;

namespace xrt::py {

/// The Tensor that h holds, or nullptr when h is not a Tensor (or one never initialised).
/// Note [Tensor checks]: the type is compared by pointer, then its subclasses through the
/// MRO. nb::isinstance<Tensor> looks the type up by its C++ type_info on every call, and
/// `a + b` asked four times (is it a tensor, then the cast, per operand).
inline Tensor* tensor_of(nb::handle h) {
  static PyTypeObject* const tensor_type = reinterpret_cast<PyTypeObject*>(nb::type<Tensor>().ptr());
  PyTypeObject* type = Py_TYPE(h.ptr());
  if (type != tensor_type && !PyType_IsSubtype(type, tensor_type)) return nullptr;
  return nb::inst_ready(h) ? nb::inst_ptr<Tensor>(h) : nullptr;
}

/// The Python face of a DType: one immortal instance per dtype.
struct PyDType { DType value; };

/// The Python dtype object of a DType (borrowed).
nb::handle dtype_object(DType dtype);
/// DType from a Python dtype object; TypeError for anything else.
DType dtype_arg(nb::handle obj);
std::optional<DType> optional_dtype_arg(nb::handle obj);
/// Device from None (default), a Device, or a string.
std::optional<Device> optional_device_arg(nb::handle obj);
Device default_device();
/// Sets the Python error for a C++ exception the way bound functions report it (the core's
/// errors, a Python error, nanobind's cast errors, bad_alloc), for code outside nanobind's
/// function wrappers; false (nothing set) for any other exception.
bool set_python_error(const std::exception_ptr& error);
/// The Python error for the exception being handled (set_python_error's, else a
/// RuntimeError), and nullptr: what a C slot or C function returns from its catch (...).
PyObject* raise_current();
/// A C-level call's arguments into out[0..count), matched to params by position or by
/// name: the keywords are a vectorcall's (kwnames, their values after the nargs positional
/// ones in args) or a dict (kwargs); either may be null. An optional parameter (index >=
/// required) not given stays nullptr. TypeError worded as Python's for too many, unknown,
/// repeated and missing arguments, naming function.
void read_arguments(const char* function, const char* const* params, int count, int required,
                    PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                    PyObject* kwargs, PyObject** out);
/// The C++ object of an instance of a bound class, also of a Python subclass's; TypeError
/// when that subclass's __init__ did not call super().__init__().
template <class T>
T& initialised(PyObject* self) {
  if (!nb::inst_ready(self))
    throw TypeError(std::string("this ") + Py_TYPE(self)->tp_name + " was not initialised (a "
                    "subclass's __init__ must call super().__init__())");
  return *nb::inst_ptr<T>(self);
}
/// A CUDA device index from None (the current device), an int, "cuda[:N]" or a Device;
/// checks that it exists (bind_cuda.cpp).
int cuda_index(nb::handle obj);

/// A Python bool/int/float/complex as a Scalar; nullopt for anything else.
std::optional<Scalar> scalar_from_python(nb::handle obj);
/// An operand's scalar: a Python scalar, or a NumPy scalar as the Python scalar of its kind
/// (np.float32(2) acts as 2.0: the tensor's dtype wins, as with Python scalars and in
/// PyTorch). nullopt for anything else.
std::optional<Scalar> operand_scalar(nb::handle obj);
nb::object scalar_to_python(const Scalar& s);
/// A fill value of full and full_like: a Scalar for a Python or NumPy scalar, else a 0-d
/// Tensor (Note [Array fill values]); TypeError for anything else.
std::variant<Scalar, Tensor> fill_value_arg(nb::handle obj, const char* what);
/// The right operand of a binary operator as a tensor (a Python scalar takes the array's
/// dtype per the standard); nullopt means NotImplemented.
std::optional<Tensor> operand(const Tensor& self, nb::handle other);

/// The standard's asarray.
Tensor asarray(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device,
               std::optional<bool> copy);
/// The Python object of a new tensor, made directly (new reference; nullptr with the
/// allocation's error set): nb::cast looks the type up by its type_info and asks whether the
/// pointer is already bound, about 180 instructions a call.
PyObject* tensor_result(Tensor&& t);

/// The standard's from_dlpack.
Tensor from_dlpack(nb::handle obj, std::optional<Device> device, std::optional<bool> copy);
/// obj has __dlpack__: looked up on its type first (no bound method is made), then on obj.
bool has_dlpack(nb::handle obj);

/// A dispatcher decision as explain() shows it.
nb::dict record_dict(const DecisionRecord& r);

void bind_tensor(nb::module_& m);
void bind_dlpack(nb::module_& m);
void bind_dispatch(nb::module_& m);
void bind_convert(nb::module_& m);
void bind_elementwise(nb::module_& m);
void bind_function(nb::module_& m);
void bind_reductions(nb::module_& m);
void bind_sorting(nb::module_& m);
void bind_indexing(nb::module_& m);
void bind_manipulation(nb::module_& m);
void bind_creation(nb::module_& m);
void bind_fft(nb::module_& m);
void bind_linalg(nb::module_& m);
void bind_runtime(nb::module_& m);
void bind_profiler(nb::module_& m);
/// c: the `_cuda` submodule of m.
void bind_cuda(nb::module_& m, nb::module_& c);
void bind_cuda_jit(nb::module_& m);
void bind_cuda_kernels(nb::module_& m);
void bind_cuda_memory(nb::module_& m);
void bind_cuda_elementwise(nb::module_& m);
void bind_cuda_collectives(nb::module_& m);
void bind_cuda_attention(nb::module_& m);

}  // namespace xrt::py

// cpp/bindings/function.cpp: `_core.Function`, a callable that forwards to a nanobind
// function and carries the Array API signature, so that inspect.signature works.
//
// Note [Signatures]: nanobind's function objects are immutable and inspect cannot read
// them, and a Python wrapper would cost a Python frame on every call of the hot path.
// Function forwards through vectorcall (a few nanoseconds), keeps the signature as text
// (the standard's, positional-only markers included) and turns it into an
// inspect.Signature on first request through a Python hook. It is a method descriptor, so
// it can also replace a Tensor method: operator slots call it unbound, attribute access
// binds it like a Python function.
#include "bindings.h"

#include <structmember.h>

#include "xpuruntime/errors.h"

namespace xrt::py {
namespace {

// PyCFunctionFastWithKeywords (its public name since Python 3.13).
using FastCall = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*);

struct FunctionObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* target;     // the callable forwarded to
  PyObject* name;       // __name__
  PyObject* qualname;   // __qualname__
  PyObject* module;     // __module__
  PyObject* text;       // the signature as text, "(x1, x2, /)"
  PyObject* signature;  // the inspect.Signature, made on first use
  PyObject* positional_only;  // tuple of the names that must not be passed by keyword
  PyObject* doc;        // __doc__ when assigned (help() shows it), else the target's
  // A target that is a C function taking a vectorcall's arguments (METH_FASTCALL |
  // METH_KEYWORDS: the elementwise functions, from_dlpack) is called directly, without
  // CPython's call machinery between (about 50 instructions a call).
  FastCall fast;
  PyObject* fast_self;  // its self, borrowed: target holds it
};

// Set by _core._set_signature_parser: text -> inspect.Signature.
PyObject* signature_parser = nullptr;

PyObject* function_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                              PyObject* kwnames) {
  auto* f = reinterpret_cast<FunctionObject*>(self);
  // The native functions take any argument by keyword; the standard's `/` forbids that
  // for the leading parameters. Only calls with keywords pay for the check.
  if (kwnames != nullptr && PyTuple_GET_SIZE(f->positional_only) > 0) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); ++i) {
      PyObject* name = PyTuple_GET_ITEM(kwnames, i);
      int found = PySequence_Contains(f->positional_only, name);
      if (found < 0) return nullptr;
      if (found) {
        PyErr_Format(PyExc_TypeError,
                     "%U() got some positional-only arguments passed as keyword arguments: '%U'",
                     f->name, name);
        return nullptr;
      }
    }
  }
  if (f->fast) return f->fast(f->fast_self, args, PyVectorcall_NARGS(nargsf), kwnames);
  return PyObject_Vectorcall(f->target, args, nargsf, kwnames);
}

void function_dealloc(PyObject* self) {
  auto* f = reinterpret_cast<FunctionObject*>(self);
  Py_XDECREF(f->target);
  Py_XDECREF(f->name);
  Py_XDECREF(f->qualname);
  Py_XDECREF(f->module);
  Py_XDECREF(f->text);
  Py_XDECREF(f->signature);
  Py_XDECREF(f->positional_only);
  Py_XDECREF(f->doc);
  Py_TYPE(self)->tp_free(self);
}

PyObject* function_descr_get(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

PyObject* function_repr(PyObject* self) {
  auto* f = reinterpret_cast<FunctionObject*>(self);
  return PyUnicode_FromFormat("<function %U.%U%U>", f->module, f->qualname, f->text);
}

PyObject* get_signature(PyObject* self, void*) {
  auto* f = reinterpret_cast<FunctionObject*>(self);
  if (f->signature == nullptr) {
    if (signature_parser == nullptr) Py_RETURN_NONE;
    f->signature = PyObject_CallOneArg(signature_parser, f->text);
    if (f->signature == nullptr) return nullptr;
  }
  return Py_NewRef(f->signature);
}

PyObject* get_doc(PyObject* self, void*) {
  auto* f = reinterpret_cast<FunctionObject*>(self);
  if (f->doc != nullptr) return Py_NewRef(f->doc);
  return PyObject_GetAttrString(f->target, "__doc__");
}

int set_doc(PyObject* self, PyObject* value, void*) {
  auto* f = reinterpret_cast<FunctionObject*>(self);
  Py_XSETREF(f->doc, Py_XNewRef(value));
  return 0;
}

PyObject* get_wrapped_target(PyObject* self, void*) {
  return Py_NewRef(reinterpret_cast<FunctionObject*>(self)->target);
}

PyGetSetDef function_getset[] = {
    {"__signature__", get_signature, nullptr, nullptr, nullptr},
    {"__doc__", get_doc, set_doc, nullptr, nullptr},
    {"_target", get_wrapped_target, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMemberDef function_members[] = {
    {"__name__", T_OBJECT, offsetof(FunctionObject, name), READONLY, nullptr},
    {"__qualname__", T_OBJECT, offsetof(FunctionObject, qualname), READONLY, nullptr},
    {"__module__", T_OBJECT, offsetof(FunctionObject, module), READONLY, nullptr},
    {"__text_signature__", T_OBJECT, offsetof(FunctionObject, text), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyTypeObject function_type = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "xpuruntime._core.Function";
  t.tp_basicsize = sizeof(FunctionObject);
  t.tp_dealloc = function_dealloc;
  t.tp_vectorcall_offset = offsetof(FunctionObject, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_repr = function_repr;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  t.tp_doc = "A function of the xpuruntime namespace (forwards to the native implementation).";
  t.tp_getset = function_getset;
  t.tp_members = function_members;
  t.tp_descr_get = function_descr_get;
  return t;
}();

}  // namespace

void bind_function(nb::module_& m) {
  if (PyType_Ready(&function_type) < 0) throw nb::python_error();
  m.attr("Function") = nb::handle(reinterpret_cast<PyObject*>(&function_type));
  m.def("_make_function", [](nb::handle target, nb::str name, nb::str qualname,
                             nb::str module, nb::str text, nb::tuple positional_only) {
    if (!PyCallable_Check(target.ptr())) throw TypeError("_make_function: target is not callable");
    auto* f = PyObject_New(FunctionObject, &function_type);
    if (f == nullptr) throw nb::python_error();
    f->vectorcall = function_vectorcall;
    f->target = Py_NewRef(target.ptr());
    f->name = Py_NewRef(name.ptr());
    f->qualname = Py_NewRef(qualname.ptr());
    f->module = Py_NewRef(module.ptr());
    f->text = Py_NewRef(text.ptr());
    f->signature = nullptr;
    f->positional_only = Py_NewRef(positional_only.ptr());
    f->doc = nullptr;
    f->fast = nullptr;
    f->fast_self = nullptr;
    constexpr int kFast = METH_FASTCALL | METH_KEYWORDS;
    if (PyCFunction_Check(target.ptr()) &&
        (PyCFunction_GET_FLAGS(target.ptr()) & (kFast | METH_METHOD)) == kFast) {
      f->fast = reinterpret_cast<FastCall>(
          reinterpret_cast<void (*)()>(PyCFunction_GET_FUNCTION(target.ptr())));
      f->fast_self = PyCFunction_GET_SELF(target.ptr());
    }
    return nb::steal(reinterpret_cast<PyObject*>(f));
  }, "Wraps a callable as a Function with the given name and signature text.");
  m.def("_set_signature_parser", [](nb::handle parser) {
    Py_XDECREF(signature_parser);
    signature_parser = Py_NewRef(parser.ptr());
  });
}

}  // namespace xrt::py

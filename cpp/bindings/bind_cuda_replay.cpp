// cpp/bindings/bind_cuda_replay.cpp: recorded ElementwiseKernel and ReductionKernel calls
// replayed from C++ (`_core._cuda._Replay`, `_RecordedKernel`, `_layout_signature`), packing
// their arguments as bind_cuda_kernels.cpp packs a RawKernel's.
#include <cfloat>
#include <cmath>
#include <complex>
#include <string>
#include <unordered_map>

#include "bind_args.h"
#include "kernel_arguments.h"
#include "xpuruntime/errors.h"

namespace xrt::py {
namespace {

using cuda::KernelArguments;
using cuda::UserKernel;

/// Note [Replaying a user kernel call]: ElementwiseKernel and ReductionKernel keep, per
/// layout of their arguments, what a call needs beyond the arguments themselves (the plan,
/// the scalar conversions, the outputs to allocate). The layout is these bytes: per tensor
/// its dtype, device, read-only flag, shape and strides; per other argument its Python type.
/// Read here from the C++ tensors, it costs a tenth of the same tuple built from Python
/// properties, and a read-only output gets a key of its own (the long path refuses it).
void put_layout(nb::handle args, std::string& key) {
  auto put = [&key](const void* p, size_t n) { key.append(static_cast<const char*>(p), n); };
  if (!PyTuple_Check(args.ptr()))
    throw TypeError("the arguments must be a tuple, got " + type_name_of(args));
  Py_ssize_t n = PyTuple_GET_SIZE(args.ptr());
  for (Py_ssize_t i = 0; i < n; ++i) {
    nb::handle a = PyTuple_GET_ITEM(args.ptr(), i);
    if (const Tensor* tensor = tensor_of(a)) {
      const Tensor& t = *tensor;
      Device d = t.device();
      const uint8_t head[4] = {'T', static_cast<uint8_t>(t.dtype()),
                               static_cast<uint8_t>(d.type), static_cast<uint8_t>(t.readonly())};
      const int32_t ndim = t.ndim();
      put(head, sizeof head);
      put(&d.index, sizeof d.index);
      put(&ndim, sizeof ndim);
      put(t.shape().data(), sizeof(int64_t) * t.ndim());
      put(t.strides().data(), sizeof(int64_t) * t.ndim());
    } else {
      const char tag = 'S';
      PyTypeObject* type = Py_TYPE(a.ptr());
      put(&tag, 1);
      put(&type, sizeof type);
    }
  }
}

nb::bytes layout_signature(nb::handle args) {
  static thread_local std::string key;
  key.clear();
  put_layout(args, key);
  return nb::bytes(key.data(), key.size());
}

/// A recorded call of an ElementwiseKernel or ReductionKernel (Note [Replaying a user kernel
/// call]), replayed without Python in between: per argument, None (passed as it is) or the
/// function that converts it; the outputs to allocate, each passed as the tensor or, when
/// raw, through pack (its CArray bytes); the arguments after them (layouts, sizes); the
/// launch shape. A call returns the allocated outputs, a tuple.
class Replay {
 public:
  struct Output {
    Dims shape;
    DType dtype;
    Device device;
    bool raw;
  };

  Replay(nb::object kernel, nb::handle grid, nb::handle block, nb::sequence converts,
         nb::sequence outputs, nb::sequence tail, nb::object pack)
      : kernel_owner_(std::move(kernel)), kernel_(&nb::cast<UserKernel&>(kernel_owner_)),
        grid_(dim3_of(grid, "grid")), block_(dim3_of(block, "block")), pack_(std::move(pack)) {
    for (nb::handle c : converts) {
      Convert convert;
      if (PyTuple_Check(c.ptr()) && PyTuple_GET_SIZE(c.ptr()) == 2) {
        convert.dtype = dtype_arg(PyTuple_GET_ITEM(c.ptr(), 0));
        convert.fallback = nb::borrow(PyTuple_GET_ITEM(c.ptr(), 1));
      } else {
        convert.fallback = nb::borrow(c);
      }
      converts_.push_back(std::move(convert));
    }
    for (nb::handle o : outputs) {
      auto spec = nb::cast<nb::tuple>(o);
      if (nb::len(spec) != 4) throw ValueError("an output is (shape, dtype, device, raw)");
      std::optional<Device> device = optional_device_arg(spec[2]);
      if (!device) throw ValueError("an output needs a device");
      outputs_.push_back({shape_of(spec[0]), dtype_arg(spec[1]), *device,
                          nb::cast<bool>(spec[3])});
    }
    for (nb::handle t : tail) tail_.push_back(nb::borrow(t));
  }

  nb::tuple call(nb::handle args, nb::handle stream) {
    if (!PyTuple_Check(args.ptr()))
      throw TypeError("the arguments must be a tuple, got " + type_name_of(args));
    Py_ssize_t n = PyTuple_GET_SIZE(args.ptr());
    if (static_cast<size_t>(n) != converts_.size())
      throw TypeError("this call was recorded with " + std::to_string(converts_.size()) +
                      " arguments, got " + std::to_string(n));
    KernelArguments& buffer = argument_buffer();
    int device = -1;
    std::vector<nb::object> imported;
    for (Py_ssize_t i = 0; i < n; ++i) {
      nb::handle a = PyTuple_GET_ITEM(args.ptr(), i);
      const Convert& convert = converts_[static_cast<size_t>(i)];
      if (convert.dtype && add_scalar(buffer, a, *convert.dtype)) continue;
      if (convert.fallback.is_none()) {
        add_argument(buffer, a, device, imported);
      } else {
        imported.push_back(convert.fallback(a));
        add_argument(buffer, imported.back(), device, imported);
      }
    }
    nb::tuple made = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(outputs_.size())));
    for (size_t k = 0; k < outputs_.size(); ++k) {
      const Output& o = outputs_[k];
      nb::object t = nb::steal(tensor_result(empty(o.shape, o.dtype, o.device)));
      if (!t.is_valid()) throw nb::python_error();
      PyTuple_SET_ITEM(made.ptr(), static_cast<Py_ssize_t>(k), t.inc_ref().ptr());
      if (o.raw) {
        imported.push_back(pack_(t));
        add_argument(buffer, imported.back(), device, imported);
      } else {
        add_tensor(buffer, *tensor_of(t), device);
      }
    }
    for (const nb::object& t : tail_) add_argument(buffer, t, device, imported);
    launch_packed(*kernel_, grid_, block_, 0, stream, device, buffer);
    return made;
  }

 private:
  // Note [Scalars of a replayed call]: a Python bool, int or float for a parameter of a
  // bool, integer, float32/64 or complex type goes into the arguments from here, as the
  // bytes of the NumPy scalar that the Python conversion (kernels/_layout.scalar_value)
  // makes, with the alignment add_argument gives that scalar's buffer. What NumPy would
  // refuse or warn about (an int out of the type's range, a float past float32's, a float
  // for an integer type, an int that a double does not hold exactly) takes the Python
  // conversion, whose errors and warnings the caller then sees. That conversion cost about
  // 0.5 us a scalar on a 2-core VM.
  static bool add_scalar(KernelArguments& out, nb::handle value, DType dtype) {
    PyObject* v = value.ptr();
    auto put = [&out](const auto& x) {
      size_t size = sizeof x, align = size >= 16 ? 16 : size >= 8 ? 8 : size >= 4 ? 4 : size;
      while (size % align) align /= 2;
      out.add_bytes(&x, size, align);
      return true;
    };
    bool is_bool = PyBool_Check(v);
    bool is_int = !is_bool && PyLong_CheckExact(v);
    if (!is_bool && !is_int && !PyFloat_CheckExact(v)) return false;
    int64_t i = 0;
    double d = 0;
    if (is_bool) {
      i = v == Py_True;
      d = static_cast<double>(i);
    } else if (is_int) {
      int overflow = 0;
      i = PyLong_AsLongLongAndOverflow(v, &overflow);
      if (overflow) return false;
      if (i == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      constexpr int64_t kExact = int64_t{1} << 53;  // ints a double holds exactly
      d = (i >= -kExact && i <= kExact) ? static_cast<double>(i) : NAN;
    } else {
      d = PyFloat_AS_DOUBLE(v);
    }
    bool integral = is_bool || is_int;
    auto in_range = [&](int64_t low, int64_t high) { return integral && i >= low && i <= high; };
    switch (dtype) {
      case DType::Bool:
        if (!is_bool) return false;
        return put(static_cast<bool>(i));
      case DType::Int8:
        return in_range(INT8_MIN, INT8_MAX) && put(static_cast<int8_t>(i));
      case DType::Int16:
        return in_range(INT16_MIN, INT16_MAX) && put(static_cast<int16_t>(i));
      case DType::Int32:
        return in_range(INT32_MIN, INT32_MAX) && put(static_cast<int32_t>(i));
      case DType::Int64:
        return integral && put(i);
      case DType::UInt8:
        return in_range(0, UINT8_MAX) && put(static_cast<uint8_t>(i));
      case DType::UInt16:
        return in_range(0, UINT16_MAX) && put(static_cast<uint16_t>(i));
      case DType::UInt32:
        return in_range(0, UINT32_MAX) && put(static_cast<uint32_t>(i));
      case DType::UInt64:
        return in_range(0, INT64_MAX) && put(static_cast<uint64_t>(i));
      case DType::Float64:
        if (integral && std::isnan(d)) return false;  // an int past 2^53
        return put(d);
      case DType::Float32:
      case DType::Complex64: {
        if (integral && std::isnan(d)) return false;
        if (std::isfinite(d) && std::fabs(d) > FLT_MAX) return false;  // NumPy warns
        float f = static_cast<float>(d);
        if (dtype == DType::Float32) return put(f);
        return put(std::complex<float>(f, 0.0f));
      }
      case DType::Complex128:
        if (integral && std::isnan(d)) return false;
        return put(std::complex<double>(d, 0.0));
      default:
        return false;  // float16, bfloat16: the Python conversion
    }
  }

  static Dims shape_of(nb::handle shape) {
    Dims d;
    for (nb::handle e : shape) d.push_back(int_arg(e, "an output's shape"));
    return d;
  }

  nb::object kernel_owner_;
  UserKernel* kernel_;
  cuda::Dim3 grid_, block_;
  struct Convert {
    std::optional<DType> dtype;  // a Python scalar converted here (Note [Scalars of a ...])
    nb::object fallback;         // None (passed as it is) or the Python conversion
  };

  nb::object pack_;
  std::vector<Convert> converts_;
  std::vector<Output> outputs_;
  std::vector<nb::object> tail_;
};

// At most this many layouts per kernel, here and in the Python tables (Note [Bounded
// replay tables] in python/xpuruntime/kernels/_layout.py, which reads it as max_replays).
constexpr size_t kMaxReplays = 1024;

/// Note [Calling a recorded kernel from C++]: ElementwiseKernel and ReductionKernel derive
/// from _RecordedKernel, whose __call__ is C++. A call whose key (its arguments' layout, as
/// _layout_signature reads it, and its keywords as passed, each None, a bool, an int or a
/// tuple of ints) was recorded replays from here: no Python frame, no tuple of the key, no
/// dictionary lookup in Python. Any other call goes to the class's _call, the Python path,
/// which records its replay with _remember under the key this call computed. The call is the
/// type's tp_call slot, which a Python subclass inherits while it defines no __call__.
class RecordedKernel {
 public:
  /// What a replay returns: nothing, the first output, or all of them as a tuple.
  enum Result : int { kNothing = 0, kFirst = 1, kAll = 2 };

  nb::object call(nb::handle self, nb::handle args, PyObject* kwargs) {
    static thread_local std::string key;
    key.clear();
    bool keyed = put_key(args, kwargs, key);
    if (keyed) {
      auto it = entries_.find(key);
      if (it != entries_.end()) {
        // Copied out: the replay's conversions run Python, which may add entries.
        nb::object keep = it->second.replay;
        Replay* replay = it->second.target;
        Py_ssize_t nin = it->second.nin;
        Result result = it->second.result;
        return finish(replay->call(args, nb::none()), args, nin, result);
      }
    }
    // The key waits for _remember in this thread's state: another thread may call this
    // kernel while this call's Python path runs (the GIL passes between bytecodes), and its
    // recording must not land under our key.
    std::string own = keyed ? key : std::string();
    Pending& pending = pending_call();
    struct Restore {
      Pending& pending;
      Pending outer;
      ~Restore() { pending = outer; }
    } restore{pending, pending};
    pending = Pending{this, keyed ? &own : nullptr};
    nb::object slow = self.attr("_call");
    PyObject* r = PyObject_Call(slow.ptr(), args.ptr(), kwargs);
    if (!r) throw nb::python_error();
    return nb::steal(r);
  }

  /// Records replay for the call in progress through call() (nothing when there is none, or
  /// when its key could not be read): nin inputs, and what the call returns.
  void remember(nb::object replay, Py_ssize_t nin, int result) {
    if (result < kNothing || result > kAll) throw ValueError("result must be 0, 1 or 2");
    const Pending& pending = pending_call();
    if (pending.kernel != this || !pending.key) return;
    Replay* target = &nb::cast<Replay&>(replay);
    // A full table starts over (a call in progress holds its own reference to its replay).
    if (entries_.size() >= kMaxReplays && entries_.find(*pending.key) == entries_.end())
      entries_.clear();
    entries_[*pending.key] = Entry{std::move(replay), target, nin, static_cast<Result>(result)};
  }

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    nb::object replay;
    Replay* target;
    Py_ssize_t nin;
    Result result;
  };

  // The call of this thread whose Python path runs now: its kernel and its key (none when
  // the call could not be keyed).
  struct Pending {
    const RecordedKernel* kernel = nullptr;
    const std::string* key = nullptr;
  };

  static Pending& pending_call() {
    static thread_local Pending pending;
    return pending;
  }

  // False when a keyword's value is none of None, bool, int (int64), tuple of ints.
  static bool put_key(nb::handle args, PyObject* kwargs, std::string& key) {
    put_layout(args, key);
    if (!kwargs) return true;
    PyObject *name, *value;
    Py_ssize_t at = 0;
    auto put_int = [&key](PyObject* v) {
      int overflow = 0;
      long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
      if (overflow || (i == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return false;
      }
      key.append(reinterpret_cast<const char*>(&i), sizeof i);
      return true;
    };
    while (PyDict_Next(kwargs, &at, &name, &value)) {
      Py_ssize_t length = 0;
      const char* text = PyUnicode_AsUTF8AndSize(name, &length);
      if (!text) {
        PyErr_Clear();
        return false;
      }
      key.push_back('K');
      key.append(text, static_cast<size_t>(length) + 1);  // with its terminating zero
      if (value == Py_None) {
        key.push_back('N');
      } else if (PyBool_Check(value)) {
        key.push_back(value == Py_True ? 't' : 'f');
      } else if (PyLong_CheckExact(value)) {
        key.push_back('I');
        if (!put_int(value)) return false;
      } else if (PyTuple_CheckExact(value)) {
        Py_ssize_t n = PyTuple_GET_SIZE(value);
        key.push_back('U');
        key.append(reinterpret_cast<const char*>(&n), sizeof n);
        for (Py_ssize_t i = 0; i < n; ++i) {
          PyObject* item = PyTuple_GET_ITEM(value, i);
          if (!PyLong_CheckExact(item) || !put_int(item)) return false;
        }
      } else {
        return false;
      }
    }
    return true;
  }

  static nb::object finish(nb::tuple made, nb::handle args, Py_ssize_t nin, Result result) {
    if (result == kNothing) return nb::none();
    nb::handle outs = made;
    Py_ssize_t first = 0;
    if (PyTuple_GET_SIZE(made.ptr()) == 0) {  // the outputs were passed: they follow the inputs
      if (result == kAll) return nb::steal(PyTuple_GetSlice(args.ptr(), nin, PY_SSIZE_T_MAX));
      outs = args;
      first = nin;
    }
    if (PyTuple_GET_SIZE(outs.ptr()) <= first) throw ValueError("the call has no output to return");
    if (result == kAll) return made;
    return nb::borrow(PyTuple_GET_ITEM(outs.ptr(), first));
  }

  std::unordered_map<std::string, Entry> entries_;
};

// The type's call slot: a call reaches it with the arguments' tuple as CPython made it, not
// through a __call__ looked up and called with the instance prepended.
PyObject* recorded_tp_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  try {
    return initialised<RecordedKernel>(self).call(self, args, kwargs).release().ptr();
  } catch (...) {
    return raise_current();
  }
}

PyType_Slot recorded_slots[] = {{Py_tp_call, reinterpret_cast<void*>(recorded_tp_call)},
                                {0, nullptr}};

}  // namespace

void bind_cuda_replay(nb::module_& m) {
  nb::class_<Replay>(m, "_Replay",
                     "A recorded user kernel call, replayed from C++ (Note [Replaying a user "
                     "kernel call]).")
      .def(nb::init<nb::object, nb::handle, nb::handle, nb::sequence, nb::sequence,
                    nb::sequence, nb::object>(),
           nb::arg("kernel"), nb::arg("grid"), nb::arg("block"), nb::arg("converts"),
           nb::arg("outputs"), nb::arg("tail"), nb::arg("pack").none())
      .def("__call__", &Replay::call, nb::arg("args"), nb::arg("stream").none(),
           "Converts and packs args, allocates the outputs, launches; returns the outputs.");
  nb::class_<RecordedKernel>(m, "_RecordedKernel", nb::type_slots(recorded_slots),
                             "Base of ElementwiseKernel and ReductionKernel: calls laid out "
                             "like a recorded one replay from C++ (Note [Calling a recorded "
                             "kernel from C++]).")
      .def(nb::init<>())
      .def("_remember", &RecordedKernel::remember, nb::arg("replay"), nb::arg("nin"),
           nb::arg("result"),
           "Records replay for the call in progress (0: it returns None, 1: its first "
           "output, 2: the tuple of its outputs).")
      .def_prop_ro("_recorded", &RecordedKernel::size, "How many calls replay from C++.");
  m.attr("max_replays") = kMaxReplays;
  m.def("_layout_signature", &layout_signature, nb::arg("args"),
        "A call's argument layout as bytes (Note [Replaying a user kernel call]).");
}

}  // namespace xrt::py

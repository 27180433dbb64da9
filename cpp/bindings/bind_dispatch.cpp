// cpp/bindings/bind_dispatch.cpp: the registry (Python kernels), policies, explain logs.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "xpuruntime/dispatcher.h"
#include "xpuruntime/errors.h"

namespace xrt::py {
namespace {

// Holds a Python callable inside C++ kernels; the last reference may drop on any thread.
struct PyCallable {
  PyObject* fn;
  explicit PyCallable(nb::handle f) : fn(f.inc_ref().ptr()) {}
  ~PyCallable() {
    if (!Py_IsInitialized()) return;  // at exit: leak rather than touch a dead interpreter
    PyGILState_STATE state = PyGILState_Ensure();
    Py_DECREF(fn);
    PyGILState_Release(state);
  }
};

nb::tuple inputs_of(const KernelCall& call) {
  nb::list items;
  for (int i = 0; i < call.num_inputs; ++i) items.append(nb::cast(call.in(i)));
  return nb::tuple(items);
}

nb::dict attrs_of(const KernelCall& call) {
  nb::dict kw;
  if (!call.attrs) return kw;
  if (!call.attrs->axes.empty()) {
    nb::list axes;
    for (int64_t a : call.attrs->axes) axes.append(a);
    kw["axis"] = nb::tuple(axes);
    kw["keepdims"] = call.attrs->keepdims;
  }
  return kw;
}

KernelInfo python_kernel(const std::string& op, const std::string& name, nb::handle fn,
                         DeviceType device, nb::handle supports, int priority) {
  KernelInfo k;
  k.op = op;
  k.name = name;
  k.device = device;
  k.priority = priority;
  k.builtin = false;
  k.description = "Python callable " + std::string(nb::repr(fn).c_str());
  auto callable = std::make_shared<PyCallable>(fn);
  k.run = [callable, name](const KernelCall& call) {
    nb::gil_scoped_acquire gil;
    nb::object result = nb::borrow(callable->fn)(*inputs_of(call), **attrs_of(call));
    Tensor out = asarray(result, std::nullopt, std::nullopt, std::nullopt);
    Tensor& expected = call.out();
    if (out.device() != expected.device())
      throw ValueError("kernel '" + name + "' returned a tensor on " + out.device().str() +
                       "; the op runs on " + expected.device().str());
    if (!(out.shape() == expected.shape()) || out.dtype() != expected.dtype())
      throw ValueError("kernel '" + name + "' returned shape " + shape_str(out.shape()) + " " +
                       std::string(dtype_info(out.dtype()).name) + "; the op expects " +
                       shape_str(expected.shape()) + " " +
                       std::string(dtype_info(expected.dtype()).name));
    copy_into(expected, out);
  };
  if (!supports.is_none()) {
    auto predicate = std::make_shared<PyCallable>(supports);
    k.accepts = [predicate](const KernelCall& call) {
      nb::gil_scoped_acquire gil;
      return nb::cast<bool>(nb::borrow(predicate->fn)(*inputs_of(call), **attrs_of(call)));
    };
  }
  return k;
}

DeviceType device_type_arg(const std::string& device) {
  return Device::parse(device).type;
}

nb::list record_list(const std::vector<DecisionRecord>& records) {
  nb::list out;
  for (const auto& r : records) out.append(record_dict(r));
  return out;
}

}  // namespace

nb::dict record_dict(const DecisionRecord& r) {
  static const char* kinds[] = {"pinned", "first_supported", "best_performance", "fallback"};
  nb::dict d;
  d["op"] = r.op;
  d["device"] = r.device;
  d["dtypes"] = r.dtypes;
  d["kernel"] = r.kernel;
  d["kind"] = kinds[static_cast<int>(r.reason)];
  d["reason"] = r.detail;
  d["candidates"] = r.candidates;
  return d;
}


void bind_dispatch(nb::module_& m) {
  m.def("register_kernel", [](const std::string& op, const std::string& name, nb::handle fn,
                              const std::string& device, nb::handle supports, int priority) {
    if (!PyCallable_Check(fn.ptr())) throw TypeError("register_kernel: fn must be callable");
    if (!supports.is_none() && !PyCallable_Check(supports.ptr()))
      throw TypeError("register_kernel: supports must be callable or None");
    // A CUDA kernel in Python (an ElementwiseKernel, a function launching a RawKernel)
    // enqueues on the current stream, as the built-in kernels do.
    DeviceType type = device_type_arg(device);
    KernelRegistry::global().add(python_kernel(op, name, fn, type, supports, priority));
  }, nb::arg("op"), nb::arg("name"), nb::arg("fn"), nb::kw_only(), nb::arg("device") = "cpu",
     nb::arg("supports").none() = nb::none(), nb::arg("priority") = 0,
     "Registers a Python callable (a user kernel: ElementwiseKernel, ReductionKernel, or a "
     "function) as a kernel of op on device: fn(*inputs, **attrs) -> Tensor.");
  m.def("unregister_kernel", [](const std::string& op, const std::string& name,
                                const std::string& device) {
    if (!KernelRegistry::global().remove(op, name, device_type_arg(device)))
      throw ValueError("no kernel named '" + name + "' is registered for op '" + op + "'");
  }, nb::arg("op"), nb::arg("name"), nb::kw_only(), nb::arg("device") = "cpu");
  m.def("_select_kernel", [](const std::string& op, const std::vector<const Tensor*>& inputs,
                             std::vector<Tensor> outputs) {
    KernelCall call{inputs.data(), static_cast<int>(inputs.size()), outputs.data(),
                    static_cast<int>(outputs.size()), nullptr};
    KernelRef k = select_kernel(KernelRegistry::global().op_id(op), call, true);
    return k ? k->name : std::string();
  }, nb::arg("op"), nb::arg("inputs"), nb::arg("outputs"),
     "The name of the kernel the policy picks for op on these inputs and outputs (recorded "
     "in an open explain log); the caller runs it. UnsupportedOperationError as dispatch.");
  m.def("_run_selected", [](const std::string& op, const std::vector<const Tensor*>& inputs,
                             std::vector<Tensor> outputs, nb::callable fn) {
    KernelCall call{inputs.data(), static_cast<int>(inputs.size()), outputs.data(),
                    static_cast<int>(outputs.size()), nullptr};
    nb::object result;
    run_selected(KernelRegistry::global().op_id(op), call,
                 [&](const KernelInfo& k) { result = fn(k.name); });
    return result;
  }, nb::arg("op"), nb::arg("inputs"), nb::arg("outputs"), nb::arg("fn"),
     "fn(kernel name) for the kernel the policy picks for op, as _select_kernel, run as an "
     "op of the profiler (timed, with the inputs' shapes); returns what fn returns.");
  m.def("list_kernels", [](nb::handle op) {
    nb::list out;
    for (const auto& k : KernelRegistry::global().all()) {
      if (!op.is_none() && k->op != nb::cast<std::string>(op)) continue;
      nb::dict d;
      d["op"] = k->op;
      d["name"] = k->name;
      d["device"] = k->device == DeviceType::CPU ? "cpu" : "cuda";
      d["builtin"] = k->builtin;
      d["priority"] = k->priority;
      d["description"] = k->description;
      out.append(d);
    }
    return out;
  }, nb::arg("op").none() = nb::none());

  nb::class_<KernelPolicy>(m, "_KernelPolicy")
      .def(nb::init<>())
      .def("set", &KernelPolicy::set, nb::arg("op"), nb::arg("kernel"))
      .def("get", &KernelPolicy::get, nb::arg("op"))
      .def("remove", &KernelPolicy::remove, nb::arg("op"))
      .def_prop_ro("preferences", &KernelPolicy::preferences)
      .def_prop_rw("auto_strategy",
                   [](const KernelPolicy& p) { return std::string(strategy_name(p.auto_strategy())); },
                   [](KernelPolicy& p, const std::string& name) {
                     auto s = strategy_from_name(name);
                     if (!s) throw ValueError("auto_strategy must be 'FirstSupported' or "
                                              "'BestPerformance', got '" + name + "'");
                     p.set_auto_strategy(*s);
                   })
      .def_prop_rw("allow_tf32", &KernelPolicy::allow_tf32, &KernelPolicy::set_allow_tf32)
      .def_prop_ro("version", &KernelPolicy::version);
  m.def("_set_global_policy", &set_global_policy);
  m.def("_global_policy", &global_policy);
  m.def("_current_policy", [] { return current_policy(); });
  m.def("_push_thread_policy", &push_thread_policy);
  m.def("_pop_thread_policy", &pop_thread_policy);

  m.def("_explain_begin", &push_explain_log);
  m.def("_explain_end", [] { return record_list(pop_explain_log()); });
  m.def("_cached_decisions", [] { return record_list(cached_decisions()); });
  m.def("_replayed_calls", [] { return replayed_calls(); },
        "Calls of this thread that ran a kept replay (Note [Replayed calls]).");
  m.def("_time_decision_lookup", [](const Tensor& a, const Tensor& b, int iterations) {
    Tensor out = empty(broadcast_shapes(a.shape(), b.shape()), a.dtype(), a.device());
    const Tensor* inputs[2] = {&a, &b};
    KernelCall call{inputs, 2, &out, 1, nullptr};
    return time_decision_lookup(BuiltinOps::get().add, call, iterations);
  }, "Mean ns of one cached dispatcher lookup for add(a, b) (benchmarks).");
  m.def("_time_dispatch", [](const Tensor& a, const Tensor& b, int iterations, bool hook) {
    Tensor out = empty(broadcast_shapes(a.shape(), b.shape()), a.dtype(), a.device());
    const Tensor* inputs[2] = {&a, &b};
    KernelCall call{inputs, 2, &out, 1, nullptr};
    nb::gil_scoped_release release;
    return time_dispatch(BuiltinOps::get().add, call, iterations, hook);
  }, nb::arg("a"), nb::arg("b"), nb::arg("iterations"), nb::arg("hook") = true,
     "Mean ns of dispatching add(a, b) into a preallocated output, from C++ (benchmarks); "
     "hook=False leaves out the profiler's test, to measure what it costs.");
}

}  // namespace xrt::py

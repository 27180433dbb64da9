// cpp/bindings/bind_sorting.cpp: sort, argsort, searchsorted, isin and the core of the
// unique functions (whose named tuples are built in python/xpuruntime/_set_functions.py).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/sorting.h"

namespace xrt::py {
namespace {

/// Releases the GIL for the lifetime of the guard when the work is large enough to be
/// worth the hand-over (other Python threads run meanwhile).
class ReleaseForLargeWork {
 public:
  explicit ReleaseForLargeWork(int64_t elements) {
    if (elements >= 32768) release_.emplace();
  }

 private:
  std::optional<nb::gil_scoped_release> release_;
};

/// An array argument, or a Python scalar converted next to `other` by the standard's
/// mixing rules.
Tensor array_or_scalar(nb::handle value, const Tensor& other, const char* what) {
  if (std::optional<Tensor> t = operand(other, value)) return *t;
  throw TypeError(std::string(what) + " must be an xpuruntime Tensor or a Python scalar, got " +
                  std::string(nb::type_name(value.type()).c_str()));
}

bool side_arg(const std::string& side) {
  if (side == "left") return false;
  if (side == "right") return true;
  throw ValueError("searchsorted: side must be 'left' or 'right', got '" + side + "'");
}

nb::object optional_tensor(const Tensor& t) { return t.defined() ? nb::cast(t) : nb::none(); }

}  // namespace

void bind_sorting(nb::module_& m) {
  m.def("sort", [](nb::handle x, nb::handle axis, bool descending, bool stable) {
    const Tensor& t = tensor_arg(x, "sort: x");
    int64_t a = int_arg(axis, "sort: axis");
    ReleaseForLargeWork guard(t.numel());
    return sort(t, a, descending, stable);
  }, nb::arg("x"), nb::arg("axis") = -1, nb::kw_only(), nb::arg("descending") = false,
     nb::arg("stable") = true, "A sorted copy of x along axis.");

  m.def("argsort", [](nb::handle x, nb::handle axis, bool descending, bool stable) {
    const Tensor& t = tensor_arg(x, "argsort: x");
    int64_t a = int_arg(axis, "argsort: axis");
    ReleaseForLargeWork guard(t.numel());
    return argsort(t, a, descending, stable);
  }, nb::arg("x"), nb::arg("axis") = -1, nb::kw_only(), nb::arg("descending") = false,
     nb::arg("stable") = true, "The indices that sort x along axis.");

  m.def("searchsorted", [](nb::handle x1, nb::handle x2, const std::string& side,
                           nb::handle sorter) {
    const Tensor& a = tensor_arg(x1, "searchsorted: x1");
    Tensor v = array_or_scalar(x2, a, "searchsorted: x2");
    std::optional<Tensor> order;
    if (!sorter.is_none()) order = tensor_arg(sorter, "searchsorted: sorter");
    bool right = side_arg(side);
    ReleaseForLargeWork guard(a.numel() + v.numel());
    return searchsorted(a, v, right, order ? &*order : nullptr);
  }, nb::arg("x1"), nb::arg("x2"), nb::arg("side") = "left", nb::arg("sorter").none() = nb::none(),
     "Indices where x2's values would be inserted into the ascending x1.");

  m.def("isin", [](nb::handle x1, nb::handle x2, bool invert) {
    bool t1 = nb::isinstance<Tensor>(x1), t2 = nb::isinstance<Tensor>(x2);
    if (!t1 && !t2) throw TypeError("isin: at least one of x1 and x2 must be an array");
    Tensor a = t1 ? nb::cast<const Tensor&>(x1)
                  : array_or_scalar(x1, nb::cast<const Tensor&>(x2), "isin: x1");
    Tensor b = t2 ? nb::cast<const Tensor&>(x2) : array_or_scalar(x2, a, "isin: x2");
    ReleaseForLargeWork guard(a.numel() + b.numel());
    return isin(a, b, invert);
  }, nb::arg("x1"), nb::arg("x2"), nb::kw_only(), nb::arg("invert") = false,
     "Whether each element of x1 is in x2.");

  m.def("_unique", [](nb::handle x, bool indices, bool inverse, bool counts) {
    const Tensor& t = tensor_arg(x, "unique: x");
    UniqueResult r;
    {
      ReleaseForLargeWork guard(t.numel());
      r = unique(t, indices, inverse, counts);
    }
    return nb::make_tuple(r.values, optional_tensor(r.indices),
                          optional_tensor(r.inverse_indices), optional_tensor(r.counts));
  }, nb::arg("x"), nb::arg("indices"), nb::arg("inverse"), nb::arg("counts"),
     "(values, indices, inverse_indices, counts) of x, None where not asked for.");
}

}  // namespace xrt::py

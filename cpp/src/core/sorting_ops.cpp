// cpp/src/core/sorting_ops.cpp: op definitions of sort, argsort, searchsorted, unique and
// isin: argument checks, result dtypes and shapes, dispatch.
#include <initializer_list>
#include <string>

#include "xpuruntime/dispatcher.h"
#include "xpuruntime/profiler.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"
#include "xpuruntime/sorting.h"

namespace xrt {
namespace {

struct SortingOps {
  OpId sort, argsort, searchsorted, unique, isin;
  static const SortingOps& get() {
    static const SortingOps ops = [] {
      auto& r = KernelRegistry::global();
      return SortingOps{r.op_id("sort"), r.op_id("argsort"), r.op_id("searchsorted"),
                        r.op_id("unique"), r.op_id("isin")};
    }();
    return ops;
  }
};

std::string name_of(DType d) { return std::string(dtype_info(d).name); }

void check_real(DType d, const char* op, const char* what = "x") {
  if (!is_numeric(d) || is_complex(d))
    throw TypeError(std::string(op) + ": " + what + " must have a real numeric dtype, got " +
                    name_of(d));
}


void run(OpId op, std::initializer_list<const Tensor*> inputs, Tensor* outputs, int num_outputs,
         const OpAttrs& attrs) {
  KernelCall call{inputs.begin(), static_cast<int>(inputs.size()), outputs, num_outputs, &attrs};
  dispatch(op, call);
}

Tensor sort_like(OpId op, const char* name, const Tensor& x, int64_t axis, bool descending,
                 bool stable, DType out_dtype) {
  check_real(x.dtype(), name);
  SortingAttrs attrs;
  attrs.axes = Dims{normalize_axis(axis, x.ndim())};
  attrs.descending = descending;
  attrs.stable = stable;
  Tensor out = empty(x.shape(), out_dtype, x.device());
  run(op, {&x}, &out, 1, attrs);
  return out;
}

// The first n elements of a 1-D tensor: a view, or a copy when the view would keep a
// much larger buffer alive.
Tensor prefix(const Tensor& t, int64_t n) {
  Tensor view = t.as_strided(Dims{n}, Dims{1}, t.byte_offset());
  return 2 * n < t.numel() ? astype(view, view.dtype(), true) : view;
}

}  // namespace

Tensor sort(const Tensor& x, int64_t axis, bool descending, bool stable) {
  return sort_like(SortingOps::get().sort, "sort", x, axis, descending, stable, x.dtype());
}

Tensor argsort(const Tensor& x, int64_t axis, bool descending, bool stable) {
  return sort_like(SortingOps::get().argsort, "argsort", x, axis, descending, stable,
                   kDefaultIndex);
}

Tensor searchsorted(const Tensor& x1, const Tensor& x2, bool right, const Tensor* sorter) {
  check_same_device(x1, x2, "searchsorted");
  if (x1.ndim() != 1)
    throw ValueError("searchsorted: x1 must be one-dimensional, got shape " +
                     shape_str(x1.shape()));
  check_real(x1.dtype(), "searchsorted", "x1");
  check_real(x2.dtype(), "searchsorted", "x2");
  DType common = result_type(x1.dtype(), x2.dtype());
  Tensor a = astype(x1, common, false), v = astype(x2, common, false), order;
  if (sorter) {
    check_same_device(x1, *sorter, "searchsorted");
    if (!is_integer(sorter->dtype()))
      throw TypeError("searchsorted: sorter must have an integer dtype, got " +
                      name_of(sorter->dtype()));
    if (!(sorter->shape() == x1.shape()))
      throw ValueError("searchsorted: sorter has shape " + shape_str(sorter->shape()) +
                       ", x1 has shape " + shape_str(x1.shape()));
    order = astype(*sorter, DType::Int64, false);
  }
  SortingAttrs attrs;
  attrs.right = right;
  Tensor out = empty(x2.shape(), kDefaultIndex, x1.device());
  if (sorter) run(SortingOps::get().searchsorted, {&a, &v, &order}, &out, 1, attrs);
  else run(SortingOps::get().searchsorted, {&a, &v}, &out, 1, attrs);
  return out;
}

UniqueResult unique(const Tensor& x, bool with_indices, bool with_inverse, bool with_counts) {
  int64_t n = x.numel();
  Tensor flat = contiguous(x);
  flat = flat.as_strided(Dims{n}, Dims{1}, flat.byte_offset());
  Device device = x.device();
  auto index_output = [&](bool wanted) {
    return empty(Dims{wanted ? n : 0}, kDefaultIndex, device);
  };
  // Outputs at their largest size; the kernel reports how many values are unique.
  Tensor outputs[5] = {empty(Dims{n}, x.dtype(), device), index_output(with_indices),
                       index_output(with_inverse), index_output(with_counts),
                       empty(Dims{}, kDefaultIndex, device)};
  run(SortingOps::get().unique, {&flat}, outputs, 5, SortingAttrs{});
  int64_t k;
  {
    profiler::CauseScope cause(profiler::Cause::DataDependent);
    k = item(outputs[4]).i;
  }
  UniqueResult result;
  result.values = prefix(outputs[0], k);
  if (with_indices) result.indices = prefix(outputs[1], k);
  if (with_inverse)
    result.inverse_indices = outputs[2].as_strided(x.shape(), contiguous_strides(x.shape()),
                                                   outputs[2].byte_offset());
  if (with_counts) result.counts = prefix(outputs[3], k);
  return result;
}

Tensor isin(const Tensor& x1, const Tensor& x2, bool invert) {
  check_same_device(x1, x2, "isin");
  DType common = result_type(x1.dtype(), x2.dtype());
  Tensor a = astype(x1, common, false), b = contiguous(astype(x2, common, false));
  b = b.as_strided(Dims{b.numel()}, Dims{1}, b.byte_offset());  // the kernel reads x2 flat
  SortingAttrs attrs;
  attrs.invert = invert;
  Tensor out = empty(x1.shape(), DType::Bool, x1.device());
  run(SortingOps::get().isin, {&a, &b}, &out, 1, attrs);
  return out;
}

}  // namespace xrt

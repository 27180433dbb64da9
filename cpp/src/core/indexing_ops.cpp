// cpp/src/core/indexing_ops.cpp: x[index] and x[index] = value: views, gather/scatter,
// masks. The kernels (cpu/index_kernels.cpp, cpu/mask_kernels.cpp) only move elements; this
// file decides shapes, dtypes, placement and errors, from the plan of index_plan.cpp.
#include <string>

#include "core/indexing_internal.h"
#include "xpuruntime/dispatcher.h"
#include "xpuruntime/profiler.h"

namespace xrt {
namespace indexing_detail {

const Ops& Ops::get() {
  static const Ops ops = [] {
    auto& r = KernelRegistry::global();
    return Ops{r.op_id("gather"),         r.op_id("scatter"),       r.op_id("masked_gather"),
               r.op_id("masked_scatter"), r.op_id("nonzero_count"), r.op_id("nonzero"),
               r.op_id("take_along_axis")};
  }();
  return ops;
}

std::string name_of(DType d) { return std::string(dtype_info(d).name); }

void run(OpId op, std::initializer_list<const Tensor*> inputs, Tensor* outputs, int num_outputs,
         int axis) {
  OpAttrs attrs;
  attrs.axes = Dims{axis};
  KernelCall call{inputs.begin(), static_cast<int>(inputs.size()), outputs, num_outputs, &attrs};
  dispatch(op, call);
}

void run_indexed(OpId op, const Tensor* const* inputs, int num_inputs, Tensor& out, int axis,
                 const int* x_axes) {
  OpAttrs attrs;
  attrs.axes = Dims{axis};
  KernelCall call{inputs, num_inputs, &out, 1, &attrs};
  try {
    dispatch(op, call);
  } catch (const IndexOutOfRange& e) {
    throw IndexError(out_of_range_message(e.index, x_axes[e.slot], e.size));
  }
}

int64_t count_nonzero(const Tensor& x) {
  Tensor count = empty(Dims{}, DType::Int64, x.device());
  run(Ops::get().nonzero_count, {&x}, &count, 1, 0);
  profiler::CauseScope cause(profiler::Cause::DataDependent);
  return item(count).i;
}

Tensor gather_axis(const Tensor& x, const Tensor& indices, int axis) {
  Dims shape(x.shape().begin(), x.shape().begin() + axis);
  for (int64_t d : indices.shape()) shape.push_back(d);
  for (int d = axis + 1; d < x.ndim(); ++d) shape.push_back(x.shape()[d]);
  Tensor out = empty(shape, x.dtype(), x.device());
  const Tensor* inputs[] = {&x, &indices};
  run_indexed(Ops::get().gather, inputs, 2, out, axis, &axis);
  return out;
}

}  // namespace indexing_detail

namespace {

using namespace indexing_detail;

// inputs = {first, arrays...} for the kernels.
int gather_inputs(const Tensor& first, const std::vector<Tensor>& arrays,
                  const Tensor* (&inputs)[kMaxDims + 1]) {
  inputs[0] = &first;
  for (size_t j = 0; j < arrays.size(); ++j) inputs[j + 1] = &arrays[j];
  return static_cast<int>(arrays.size()) + 1;
}

Tensor gather(const Gather& g) {
  Tensor out = empty(g.result_shape, g.view.dtype(), g.view.device());
  const Tensor* inputs[kMaxDims + 1];
  int n = gather_inputs(g.view, g.arrays, inputs);
  run_indexed(Ops::get().gather, inputs, n, out, g.axis, g.x_axes.data());
  return out;
}

Dims masked_shape(const Tensor& v, int axis, int mask_ndim, int64_t count) {
  Dims shape(v.shape().begin(), v.shape().begin() + axis);
  shape.push_back(count);
  for (int d = axis + mask_ndim; d < v.ndim(); ++d) shape.push_back(v.shape()[d]);
  return shape;
}

// v[..., mask, ...] with the mask over v's axes [axis, axis + mask.ndim).
Tensor masked_gather(const Tensor& v, const Tensor& mask, int axis) {
  int64_t count = count_nonzero(mask);
  Tensor out = empty(masked_shape(v, axis, mask.ndim(), count), v.dtype(), v.device());
  if (out.numel() > 0) run(Ops::get().masked_gather, {&v, &mask}, &out, 1, axis);
  return out;
}

void check_value_dtype(const Tensor& x, const Tensor& value) {
  std::optional<DType> promoted = promote_types(x.dtype(), value.dtype());
  if (promoted != x.dtype())
    throw TypeError("cannot assign a " + name_of(value.dtype()) + " value to a " +
                    name_of(x.dtype()) + " tensor: the standard's type promotion of the two " +
                    (promoted ? "gives " + name_of(*promoted) : std::string("is undefined")));
}

void check_value_shape(const Tensor& value, const Dims& shape) {
  if (!(broadcast_shapes(value.shape(), shape) == shape))
    throw ValueError("could not broadcast the value of shape " + shape_str(value.shape()) +
                     " to the indexing result of shape " + shape_str(shape));
}

// value as the scatter kernels take it: dtype of x, the selection's shape, either
// contiguous or one element broadcast, and not sharing memory with x.
Tensor scatter_values(const Tensor& x, const Tensor& value, const Dims& shape) {
  Tensor v = value;
  if (v.storage() == x.storage()) v = astype(v, v.dtype(), true);
  v = astype(v, x.dtype(), false);
  if (v.numel() == 1) return v.as_strided(shape, Dims(shape.size(), int64_t{0}), v.byte_offset());
  return contiguous(v.broadcast_to(shape));
}

// v[..., indices, ...] = value with indices on axis (v a view of x, or x).
void scatter_axis(Tensor& v, const Tensor& indices, int axis, const Tensor& value) {
  Dims shape(v.shape().begin(), v.shape().begin() + axis);
  for (int64_t d : indices.shape()) shape.push_back(d);
  for (int d = axis + 1; d < v.ndim(); ++d) shape.push_back(v.shape()[d]);
  check_value_shape(value, shape);
  Tensor values = scatter_values(v, value, shape);
  const Tensor* inputs[] = {&values, &indices};
  run_indexed(Ops::get().scatter, inputs, 2, v, axis, &axis);
}

// v[..., mask, ...] = value with the mask over v's axes [axis, axis + mask.ndim).
void masked_scatter(Tensor& v, const Tensor& mask, int axis, const Tensor& value) {
  // Note: one value fills every selected element whatever their number, and broadcasts
  // (or fails to) alike for every count, so the count (a transfer to the host on a
  // device) is taken only for an array of values, or for the error message.
  if (value.numel() == 1) {
    Dims shape = masked_shape(v, axis, mask.ndim(), 1);
    try {
      check_value_shape(value, shape);
    } catch (const ValueError&) {
      check_value_shape(value, masked_shape(v, axis, mask.ndim(), count_nonzero(mask)));
      throw;
    }
    if (shape_numel(shape) == 0 || mask.numel() == 0) return;
    Tensor values = scatter_values(v, value, shape);
    run(Ops::get().masked_scatter, {&values, &mask}, &v, 1, axis);
    return;
  }
  Dims shape = masked_shape(v, axis, mask.ndim(), count_nonzero(mask));
  check_value_shape(value, shape);
  if (shape_numel(shape) == 0) return;
  Tensor values = scatter_values(v, value, shape);
  run(Ops::get().masked_scatter, {&values, &mask}, &v, 1, axis);
}

}  // namespace

IndexOutOfRange::IndexOutOfRange(int64_t index, int64_t size, int slot)
    : IndexError(out_of_range_message(index, -1, size)), index(index), size(size), slot(slot) {}

std::string out_of_range_message(int64_t index, int axis, int64_t size) {
  if (axis < 0)
    return "index " + std::to_string(index) + " is out of bounds for size " + std::to_string(size);
  return "index " + std::to_string(index) + " is out of bounds for axis " + std::to_string(axis) +
         " with size " + std::to_string(size);
}

Tensor getitem(const Tensor& x, const TensorIndex& index) {
  // x[indices] and x[mask], the common advanced forms, skip the general plan.
  if (index.size() == 1 && index[0].kind == IndexItem::Kind::Array && x.ndim() > 0) {
    const Tensor& t = index.array(index[0]);
    if (is_integer(t.dtype()) && t.ndim() > 0) return gather_axis(x, t, 0);
    if (t.dtype() == DType::Bool && t.ndim() > 0 && t.ndim() <= x.ndim()) {
      check_mask_shape(t, x, 0);
      return masked_gather(x, t, 0);
    }
  }
  IndexPlan plan = plan_index(x, index);
  if (!plan.advanced) return std::move(plan.view);
  if (plan.mask >= 0) {
    const ArrayIndex& m = plan.arrays[static_cast<size_t>(plan.mask)];
    return masked_gather(plan.view, m.array, m.axis);
  }
  return gather(plan_gather(plan));
}

void setitem(Tensor& x, const TensorIndex& index, const Tensor& value) {
  check_writable(x);
  if (value.device() != x.device())
    throw ValueError("setitem: the value is on " + value.device().str() + ", the tensor on " +
                     x.device().str());
  check_value_dtype(x, value);
  // An index array that aliases x would be read while x is written.
  auto unaliased = [&x](const Tensor& t) {
    return t.storage() == x.storage() ? astype(t, t.dtype(), true) : t;
  };
  // x[indices] = value and x[mask] = value skip the general plan, as in getitem.
  if (index.size() == 1 && index[0].kind == IndexItem::Kind::Array && x.ndim() > 0) {
    const Tensor& t = index.array(index[0]);
    if (is_integer(t.dtype()) && t.ndim() > 0) return scatter_axis(x, unaliased(t), 0, value);
    if (t.dtype() == DType::Bool && t.ndim() > 0 && t.ndim() <= x.ndim()) {
      check_mask_shape(t, x, 0);
      return masked_scatter(x, unaliased(t), 0, value);
    }
  }
  IndexPlan plan = plan_index(x, index);
  if (!plan.advanced) {
    check_value_shape(value, plan.view.shape());
    Tensor source = value;
    bool same_view = value.byte_offset() == plan.view.byte_offset() &&
                     value.strides() == plan.view.strides() && value.shape() == plan.view.shape();
    if (value.storage() == x.storage() && !same_view) source = astype(value, value.dtype(), true);
    copy_into(plan.view, source);
    return;
  }
  for (ArrayIndex& entry : plan.arrays) entry.array = unaliased(entry.array);
  if (plan.mask >= 0) {
    const ArrayIndex& m = plan.arrays[static_cast<size_t>(plan.mask)];
    return masked_scatter(plan.view, m.array, m.axis, value);
  }
  Gather g = plan_gather(plan);
  check_value_shape(value, g.result_shape);
  Tensor values = scatter_values(x, value, g.result_shape);
  const Tensor* inputs[kMaxDims + 1];
  int n = gather_inputs(values, g.arrays, inputs);
  run_indexed(Ops::get().scatter, inputs, n, g.view, g.axis, g.x_axes.data());
}

void setitem(Tensor& x, const TensorIndex& index, const Scalar& value) {
  check_writable(x);
  if (scalar_result_type(x.dtype(), value.kind) != x.dtype())
    throw TypeError("cannot assign a Python complex to a " + name_of(x.dtype()) +
                    " tensor: the standard's rule for scalars would make it complex");
  setitem(x, index, scalar_tensor(value, x.dtype(), x.device()));
}

}  // namespace xrt

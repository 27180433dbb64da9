// cpp/src/core/indexing_ops.cpp: x[index] and x[index] = value: views, gather/scatter,
// masks. The kernels (cpu/index_kernels.cpp, cpu/mask_kernels.cpp) only move elements; this
// file decides shapes, dtypes, placement and errors.
//
// Note [Index plan]: an index is applied in two steps. First every basic item is applied
// as a view: slices, None and ellipsis reshape the view, integers become an offset (their
// axis goes away). Array items keep their axes in that view ("V"). Second, the arrays:
// - one boolean array and no other array or integer: a masked gather over V's axes
//   [a, a + mask.ndim), without materialising coordinates;
// - otherwise boolean arrays become their nonzero() coordinates, Python/0-d booleans a new
//   axis indexed by [0] or [], and all arrays broadcast to one shape B. When the advanced
//   items (integers included) were adjacent in the index, B replaces their axes in place;
//   else V is permuted (a view) so that the indexed axes come first, and B goes first.
//   The kernels then see one contract: indexed axes [a, a + k) of V.
#include <string>

#include "core/indexing_internal.h"
#include "xpuruntime/dispatcher.h"

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

constexpr int kMaxDims = 64;  // as empty() allows

// Python's PySlice_AdjustIndices: clamps start and stop to an axis of size n and returns
// the number of elements the slice selects.
int64_t adjust_slice(int64_t& start, int64_t& stop, int64_t step, int64_t n) {
  if (step == 0) throw ValueError("slice step cannot be zero");
  auto clamp = [&](int64_t& v) {
    if (v < 0) {
      v += n;
      if (v < 0) v = step < 0 ? -1 : 0;
    } else if (v >= n) {
      v = step < 0 ? n - 1 : n;
    }
  };
  clamp(start);
  clamp(stop);
  if (step < 0) return stop < start ? (start - stop - 1) / -step + 1 : 0;
  return start < stop ? (stop - start - 1) / step + 1 : 0;
}

bool is_index_array(const Tensor& t) { return t.dtype() == DType::Bool || is_integer(t.dtype()); }

// The value of a 0-d integer tensor used as an index; out-of-int64 values saturate (they
// are out of range for any axis).
int64_t integer_of(const Tensor& t) {
  Scalar s = item(t);
  return s.kind == Scalar::Kind::UInt ? INT64_MAX : s.i;
}

// One array of the advanced part, on axis `axis` of V; x_axis names it in errors.
struct ArrayIndex {
  int axis;
  Tensor array;
  int x_axis;
};

// Note [Index plan] in code: V, its array indices, and where their result goes.
struct IndexPlan {
  Tensor view;
  std::vector<ArrayIndex> arrays;  // in index order; bool arrays still whole
  int mask = -1;                   // position in arrays of the one bool array (mask path)
  bool advanced = false;
  bool adjacent = true;      // the advanced items are adjacent in the index
  bool has_integer = false;  // an integer item sits among advanced ones
};

void check_mask_shape(const Tensor& mask, const Tensor& x, int first_axis) {
  for (int d = 0; d < mask.ndim(); ++d) {
    int64_t want = x.shape()[first_axis + d], got = mask.shape()[d];
    if (got != want && got != 0)
      throw IndexError("boolean index did not match indexed tensor along axis " +
                       std::to_string(first_axis + d) + "; size of axis is " +
                       std::to_string(want) + " but size of corresponding boolean axis is " +
                       std::to_string(got));
  }
}

IndexPlan plan_index(const Tensor& x, const TensorIndex& index) {
  using Kind = IndexItem::Kind;
  int ndim = x.ndim(), consumed = 0, ellipses = 0;
  IndexPlan plan;
  for (int i = 0; i < index.size(); ++i) {
    const IndexItem& item = index[i];
    switch (item.kind) {
      case Kind::Integer:
      case Kind::Slice:
        ++consumed;
        break;
      case Kind::Ellipsis:
        if (++ellipses > 1) throw IndexError("an index can only have a single ellipsis ('...')");
        break;
      case Kind::NewAxis:
        break;
      case Kind::Boolean:
        plan.advanced = true;
        break;
      case Kind::Array: {
        const Tensor& t = index.array(item);
        if (!is_index_array(t))
          throw IndexError("arrays used as indices must be of integer or boolean type, not " +
                           name_of(t.dtype()));
        if (t.dtype() == DType::Bool)
          consumed += t.ndim();
        else
          ++consumed;
        if (t.dtype() == DType::Bool || t.ndim() > 0) plan.advanced = true;
        break;
      }
    }
  }
  if (consumed > ndim)
    throw IndexError("too many indices for tensor: tensor is " + std::to_string(ndim) +
                     "-dimensional, but " + std::to_string(consumed) + " were indexed");
  int fill = ndim - consumed;  // axes the ellipsis (or the implicit trailing one) covers

  Dims shape, strides;
  int64_t offset = x.byte_offset(), item_size = static_cast<int64_t>(x.itemsize());
  int axis = 0;  // next axis of x
  bool seen_advanced = false, basic_after_advanced = false;
  auto keep_axes = [&](int count) {  // copies x's axes [axis, axis + count) to V
    for (int d = 0; d < count; ++d, ++axis) {
      shape.push_back(x.shape()[axis]);
      strides.push_back(x.strides()[axis]);
    }
  };
  auto mark_advanced = [&] {
    if (basic_after_advanced) plan.adjacent = false;
    seen_advanced = true;
  };
  auto mark_basic = [&] {
    if (seen_advanced) basic_after_advanced = true;
  };
  // A Python or 0-d boolean: a new axis of length 1, indexed by [0] (True) or [] (False).
  auto add_boolean_axis = [&](bool value) {
    mark_advanced();
    Tensor positions = full(Dims{value ? 1 : 0}, Scalar::from_int(0), kDefaultIndex, x.device());
    plan.arrays.push_back({static_cast<int>(shape.size()), std::move(positions), -1});
    shape.push_back(1);
    strides.push_back(0);
  };
  for (int i = 0; i < index.size(); ++i) {
    const IndexItem& item = index[i];
    bool integer =
        item.kind == Kind::Integer || (item.kind == Kind::Array && index.array(item).ndim() == 0 &&
                                       index.array(item).dtype() != DType::Bool);
    if (integer) {
      int64_t value = item.kind == Kind::Integer ? item.start : integer_of(index.array(item));
      int64_t n = x.shape()[axis], j = value < 0 ? value + n : value;
      if (j < 0 || j >= n) throw IndexError(out_of_range_message(value, axis, n));
      offset += j * x.strides()[axis] * item_size;
      ++axis;
      if (plan.advanced) {
        mark_advanced();
        plan.has_integer = true;
      }
      continue;
    }
    switch (item.kind) {
      case Kind::Slice: {
        int64_t start = item.start, stop = item.stop, step = item.step;
        int64_t n = x.shape()[axis];
        int64_t length = adjust_slice(start, stop, step, n);
        if (length > 0) offset += start * x.strides()[axis] * item_size;
        shape.push_back(length);
        strides.push_back(x.strides()[axis] * step);
        ++axis;
        mark_basic();
        break;
      }
      case Kind::NewAxis:
        shape.push_back(1);
        strides.push_back(0);
        mark_basic();
        break;
      case Kind::Ellipsis:
        mark_basic();  // separates advanced items even when it covers no axis, as in NumPy
        keep_axes(fill);
        break;
      case Kind::Boolean:
        add_boolean_axis(item.start != 0);
        break;
      case Kind::Array: {
        const Tensor& t = index.array(item);
        if (t.dtype() == DType::Bool && t.ndim() == 0) {
          add_boolean_axis(xrt::item(t).b);
          break;
        }
        mark_advanced();
        int count = t.dtype() == DType::Bool ? t.ndim() : 1;
        if (t.dtype() == DType::Bool) {
          check_mask_shape(t, x, axis);
          plan.mask = plan.mask == -1 ? static_cast<int>(plan.arrays.size()) : -2;
        } else {
          plan.mask = -2;  // any integer array rules out the mask path
        }
        plan.arrays.push_back({static_cast<int>(shape.size()), t, axis});
        keep_axes(count);
        break;
      }
      default:
        break;
    }
  }
  keep_axes(ndim - axis);
  if (shape.size() > kMaxDims)
    throw IndexError("the index would make a tensor of " + std::to_string(shape.size()) +
                     " dimensions; at most " + std::to_string(kMaxDims) + " are supported");
  plan.view = x.as_strided(std::move(shape), std::move(strides), offset);
  if (plan.mask >= 0 && (plan.has_integer || plan.arrays.size() != 1)) plan.mask = -2;
  return plan;
}

// The advanced part as the kernels take it: V with the indexed axes at [a, a + k) and the
// index arrays broadcast to one shape.
struct Gather {
  Tensor view;
  std::vector<Tensor> arrays;  // broadcast to the common shape
  std::vector<int> x_axes;     // the axis of x each array indexes (-1: a new axis)
  int axis = 0;                // a
  Dims result_shape;           // V.shape[:a] + B + V.shape[a + k:]
};

Gather plan_gather(const IndexPlan& plan) {
  Gather g;
  std::vector<int> v_axes;
  for (const ArrayIndex& entry : plan.arrays) {
    if (entry.array.dtype() == DType::Bool) {
      std::vector<Tensor> coordinates = nonzero(entry.array);
      for (int d = 0; d < entry.array.ndim(); ++d) {
        v_axes.push_back(entry.axis + d);
        g.arrays.push_back(coordinates[static_cast<size_t>(d)]);
        g.x_axes.push_back(entry.x_axis + d);
      }
    } else {
      v_axes.push_back(entry.axis);
      g.arrays.push_back(entry.array);
      g.x_axes.push_back(entry.x_axis);
    }
  }
  Dims b;
  try {
    for (const Tensor& t : g.arrays) b = broadcast_shapes(b, t.shape());
  } catch (const ValueError&) {
    std::string shapes;
    for (const Tensor& t : g.arrays) shapes += (shapes.empty() ? "" : " ") + shape_str(t.shape());
    throw IndexError(
        "shape mismatch: indexing arrays could not be broadcast together with "
        "shapes " +
        shapes);
  }
  for (Tensor& t : g.arrays) t = t.broadcast_to(b);
  int k = static_cast<int>(v_axes.size());
  const Tensor& v = plan.view;
  if (plan.adjacent) {
    g.view = v;
    g.axis = v_axes[0];
  } else {  // the indexed axes first, the others after them in order
    Dims order;
    for (int d : v_axes) order.push_back(d);
    for (int d = 0, j = 0; d < v.ndim(); ++d) {
      if (j < k && v_axes[static_cast<size_t>(j)] == d) {
        ++j;
        continue;
      }
      order.push_back(d);
    }
    g.view = v.permute(order);
    g.axis = 0;
  }
  for (int d = 0; d < g.axis; ++d) g.result_shape.push_back(g.view.shape()[d]);
  for (int64_t d : b) g.result_shape.push_back(d);
  for (int d = g.axis + k; d < g.view.ndim(); ++d) g.result_shape.push_back(g.view.shape()[d]);
  return g;
}

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

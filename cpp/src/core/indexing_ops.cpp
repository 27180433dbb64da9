// cpp/src/core/indexing_ops.cpp: applying an index: views, gather/scatter, masks, take,
// take_along_axis, nonzero. The kernels (cpu/index_kernels.cpp) only move elements; this
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
#include "xpuruntime/indexing.h"

#include <cstring>
#include <string>

#include "xpuruntime/dispatcher.h"
#include "xpuruntime/ops.h"

namespace xrt {
namespace {

struct IndexOps {
  OpId gather, scatter, masked_gather, masked_scatter, nonzero_count, nonzero, take_along_axis;
  static const IndexOps& get() {
    static const IndexOps ops = [] {
      auto& r = KernelRegistry::global();
      return IndexOps{r.op_id("gather"),        r.op_id("scatter"),
                      r.op_id("masked_gather"), r.op_id("masked_scatter"),
                      r.op_id("nonzero_count"), r.op_id("nonzero"),
                      r.op_id("take_along_axis")};
    }();
    return ops;
  }
};

std::string name_of(DType d) { return std::string(dtype_info(d).name); }

void run(OpId op, const std::vector<const Tensor*>& inputs, Tensor* outputs, int num_outputs,
         int axis) {
  OpAttrs attrs;
  attrs.axes = Dims{axis};
  KernelCall call{inputs.data(), static_cast<int>(inputs.size()), outputs, num_outputs, &attrs};
  dispatch(op, call);
}

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

int64_t count_nonzero_all(const Tensor& x) {
  Tensor count = empty(Dims{}, DType::Int64, x.device());
  run(IndexOps::get().nonzero_count, {&x}, &count, 1, 0);
  return item(count).i;
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
  bool adjacent = true;            // the advanced items are adjacent in the index
  bool has_integer = false;        // an integer item sits among advanced ones
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
      case Kind::Integer: case Kind::Slice: ++consumed; break;
      case Kind::Ellipsis:
        if (++ellipses > 1) throw IndexError("an index can only have a single ellipsis ('...')");
        break;
      case Kind::NewAxis: break;
      case Kind::Boolean: plan.advanced = true; break;
      case Kind::Array: {
        const Tensor& t = item.array;
        if (!is_index_array(t))
          throw IndexError("arrays used as indices must be of integer or boolean type, not " +
                           name_of(t.dtype()));
        if (t.dtype() == DType::Bool) consumed += t.ndim();
        else ++consumed;
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
  int axis = 0;         // next axis of x
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
  auto mark_basic = [&] { if (seen_advanced) basic_after_advanced = true; };
  for (int i = 0; i < index.size(); ++i) {
    const IndexItem& item = index[i];
    bool integer = item.kind == Kind::Integer ||
                   (item.kind == Kind::Array && item.array.ndim() == 0 &&
                    item.array.dtype() != DType::Bool);
    if (integer) {
      int64_t value = item.kind == Kind::Integer ? item.start : integer_of(item.array);
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
        if (fill > 0) mark_basic();
        keep_axes(fill);
        break;
      case Kind::Boolean: {  // a new axis of length 1, indexed by [0] (True) or [] (False)
        mark_advanced();
        Tensor positions = empty(Dims{item.start ? 1 : 0}, DType::Int64, x.device());
        if (item.start) std::memset(positions.data(), 0, sizeof(int64_t));
        plan.arrays.push_back({static_cast<int>(shape.size()), positions, -1});
        shape.push_back(1);
        strides.push_back(0);
        break;
      }
      case Kind::Array: {
        mark_advanced();
        const Tensor& t = item.array;
        int count = t.dtype() == DType::Bool ? t.ndim() : 1;
        if (t.dtype() == DType::Bool) {
          check_mask_shape(t, x, axis);
          if (t.ndim() == 0) {  // a 0-d bool: as a Python bool
            bool value = xrt::item(t).b;
            Tensor positions = empty(Dims{value ? 1 : 0}, DType::Int64, x.device());
            if (value) std::memset(positions.data(), 0, sizeof(int64_t));
            plan.arrays.push_back({static_cast<int>(shape.size()), positions, -1});
            shape.push_back(1);
            strides.push_back(0);
            break;
          }
          plan.mask = plan.mask == -1 ? static_cast<int>(plan.arrays.size()) : -2;
        } else {
          plan.mask = -2;  // any integer array rules out the mask path
        }
        plan.arrays.push_back({static_cast<int>(shape.size()), t, axis});
        keep_axes(count);
        break;
      }
      default: break;
    }
  }
  keep_axes(ndim - axis);
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
    throw IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                     "shapes " + shapes);
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
      if (j < k && v_axes[static_cast<size_t>(j)] == d) { ++j; continue; }
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

// Runs a gather or scatter and names the user's axis when an index is out of range.
void run_indexed(OpId op, std::vector<const Tensor*> inputs, Tensor& out, int axis,
                 const std::vector<int>& x_axes) {
  try {
    run(op, inputs, &out, 1, axis);
  } catch (const IndexOutOfRange& e) {
    int x_axis = e.slot < static_cast<int>(x_axes.size()) ? x_axes[static_cast<size_t>(e.slot)] : -1;
    throw IndexError(out_of_range_message(e.index, x_axis, e.size));
  }
}

Tensor gather(const Gather& g) {
  Tensor out = empty(g.result_shape, g.view.dtype(), g.view.device());
  std::vector<const Tensor*> inputs{&g.view};
  for (const Tensor& t : g.arrays) inputs.push_back(&t);
  run_indexed(IndexOps::get().gather, inputs, out, g.axis, g.x_axes);
  return out;
}

Dims masked_shape(const Tensor& v, int axis, int mask_ndim, int64_t count) {
  Dims shape(v.shape().begin(), v.shape().begin() + axis);
  shape.push_back(count);
  for (int d = axis + mask_ndim; d < v.ndim(); ++d) shape.push_back(v.shape()[d]);
  return shape;
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
  IndexPlan plan = plan_index(x, index);
  if (!plan.advanced) return plan.view;
  if (plan.mask >= 0) {
    const ArrayIndex& m = plan.arrays[static_cast<size_t>(plan.mask)];
    int64_t count = count_nonzero_all(m.array);
    Tensor out = empty(masked_shape(plan.view, m.axis, m.array.ndim(), count), x.dtype(),
                       x.device());
    if (out.numel() > 0) run(IndexOps::get().masked_gather, {&plan.view, &m.array}, &out, 1, m.axis);
    return out;
  }
  return gather(plan_gather(plan));
}

void setitem(Tensor& x, const TensorIndex& index, const Tensor& value) {
  check_writable(x);
  if (value.device() != x.device())
    throw ValueError("setitem: the value is on " + value.device().str() + ", the tensor on " +
                     x.device().str());
  check_value_dtype(x, value);
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
  // An index array that aliases x would be read while x is written.
  for (ArrayIndex& entry : plan.arrays)
    if (entry.array.storage() == x.storage()) entry.array = astype(entry.array, entry.array.dtype(), true);
  if (plan.mask >= 0) {
    const ArrayIndex& m = plan.arrays[static_cast<size_t>(plan.mask)];
    int64_t count = count_nonzero_all(m.array);
    Dims shape = masked_shape(plan.view, m.axis, m.array.ndim(), count);
    check_value_shape(value, shape);
    if (shape_numel(shape) == 0) return;
    Tensor values = scatter_values(x, value, shape);
    run(IndexOps::get().masked_scatter, {&values, &m.array}, &plan.view, 1, m.axis);
    return;
  }
  Gather g = plan_gather(plan);
  check_value_shape(value, g.result_shape);
  Tensor values = scatter_values(x, value, g.result_shape);
  std::vector<const Tensor*> inputs{&values};
  for (const Tensor& t : g.arrays) inputs.push_back(&t);
  run_indexed(IndexOps::get().scatter, inputs, g.view, g.axis, g.x_axes);
}

void setitem(Tensor& x, const TensorIndex& index, const Scalar& value) {
  check_writable(x);
  if (scalar_result_type(x.dtype(), value.kind) != x.dtype())
    throw TypeError("cannot assign a Python complex to a " + name_of(x.dtype()) +
                    " tensor: the standard's rule for scalars would make it complex");
  setitem(x, index, scalar_tensor(value, x.dtype(), x.device()));
}

Tensor take(const Tensor& x, const Tensor& indices, std::optional<int64_t> axis) {
  if (!is_integer(indices.dtype()))
    throw TypeError("take: indices must have an integer dtype, not " + name_of(indices.dtype()));
  if (x.ndim() == 0) throw ValueError("take: x must have at least one dimension");
  if (!axis && x.ndim() > 1)
    throw ValueError("take: axis is required when x has more than one dimension (x has " +
                     std::to_string(x.ndim()) + ")");
  if (indices.device() != x.device())
    throw ValueError("take: x and indices are on different devices");
  int a = normalize_axis(axis.value_or(0), x.ndim());
  Gather g;
  g.view = x;
  g.arrays = {indices};
  g.x_axes = {a};
  g.axis = a;
  for (int d = 0; d < a; ++d) g.result_shape.push_back(x.shape()[d]);
  for (int64_t d : indices.shape()) g.result_shape.push_back(d);
  for (int d = a + 1; d < x.ndim(); ++d) g.result_shape.push_back(x.shape()[d]);
  return gather(g);
}

Tensor take_along_axis(const Tensor& x, const Tensor& indices, int64_t axis) {
  if (!is_integer(indices.dtype()))
    throw TypeError("take_along_axis: indices must have an integer dtype, not " +
                    name_of(indices.dtype()));
  if (indices.ndim() != x.ndim())
    throw ValueError("take_along_axis: x and indices must have the same number of dimensions "
                     "(got " + std::to_string(x.ndim()) + " and " +
                     std::to_string(indices.ndim()) + ")");
  if (indices.device() != x.device())
    throw ValueError("take_along_axis: x and indices are on different devices");
  int a = normalize_axis(axis, x.ndim());
  Dims xs = x.shape(), is = indices.shape();
  xs[a] = 1;
  is[a] = 1;
  Dims shape;
  try {
    shape = broadcast_shapes(xs, is);
  } catch (const ValueError&) {
    throw ValueError("take_along_axis: shapes " + shape_str(x.shape()) + " and " +
                     shape_str(indices.shape()) + " do not broadcast outside axis " +
                     std::to_string(a));
  }
  Dims x_shape = shape;
  x_shape[a] = x.shape()[a];
  shape[a] = indices.shape()[a];
  Tensor xv = x.broadcast_to(x_shape), iv = indices.broadcast_to(shape);
  Tensor out = empty(shape, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  run_indexed(IndexOps::get().take_along_axis, {&xv, &iv}, out, a, {a});
  return out;
}

std::vector<Tensor> nonzero(const Tensor& x) {
  if (x.ndim() == 0)
    throw ValueError("nonzero is not defined for 0-d tensors; use nonzero(reshape(x, (1,))) "
                     "or x[None]");
  int64_t count = count_nonzero_all(x);
  std::vector<Tensor> out;
  for (int d = 0; d < x.ndim(); ++d) out.push_back(empty(Dims{count}, kDefaultIndex, x.device()));
  if (count == 0) return out;
  Tensor input = contiguous(x);
  run(IndexOps::get().nonzero, {&input}, out.data(), static_cast<int>(out.size()), 0);
  return out;
}

}  // namespace xrt

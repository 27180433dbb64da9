// cpp/src/core/index_plan.cpp: how x[index] is planned: the basic items applied as a view,
// the array items collected, and the advanced part laid out as the gather and scatter
// kernels take it. indexing_ops.cpp runs the plan.
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
#include <utility>
#include <vector>

#include "core/indexing_internal.h"

namespace xrt::indexing_detail {
namespace {

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

}  // namespace

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

}  // namespace xrt::indexing_detail

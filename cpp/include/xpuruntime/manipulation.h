// cpp/include/xpuruntime/manipulation.h: the standard's manipulation functions.
//
// Views where the layout allows one (permute_dims, moveaxis, expand_dims, squeeze,
// broadcast_to, broadcast_arrays, flip, unstack, reshape when the strides fit); copies
// otherwise: concat, stack, tile and roll as a few strided copies through the dispatched
// copy op (never one per element), repeat through its own dispatched op.
//
// Errors follow the standard: an axis out of range is an IndexError, repeated axes, shapes
// that do not fit and impossible copy=False requests are ValueErrors, a `repeats` array of
// a non-integer dtype is a TypeError.
#pragma once
#include <optional>
#include <vector>

#include "xpuruntime/tensor.h"

namespace xrt {

// ---- Views ------------------------------------------------------------------------------

/// The broadcast shape of any number of shapes; () for none.
Dims broadcast_shapes(const std::vector<Dims>& shapes);
/// Views of every array broadcast to their common shape.
std::vector<Tensor> broadcast_arrays(const std::vector<Tensor>& arrays);
/// A view of x broadcast to shape (stride 0 on the broadcast axes).
Tensor broadcast_to(const Tensor& x, const Dims& shape);
/// Inserts size-1 axes; each entry of axes is a position in the result (2025.12).
Tensor expand_dims(const Tensor& x, const Dims& axes);
/// Reverses the given axes (all of them when axes is nullopt): negative strides.
Tensor flip(const Tensor& x, const std::optional<Dims>& axes);
/// Moves axes source[i] to positions destination[i], the others keep their order.
Tensor moveaxis(const Tensor& x, const Dims& source, const Dims& destination);
/// Axis i of the result is axis axes[i] of x.
Tensor permute_dims(const Tensor& x, const Dims& axes);
/// Removes the given size-1 axes.
Tensor squeeze(const Tensor& x, const Dims& axes);
/// A view of x's elements with this shape and these element strides from x's first element,
/// inside the span of memory x's own view reaches (ValueError otherwise): a re-indexing of x
/// computed elsewhere (the native engine's view chains), never a widening of it.
Tensor restride(const Tensor& x, const Dims& shape, const Dims& strides);
/// The slices of x along axis, as views.
std::vector<Tensor> unstack(const Tensor& x, int64_t axis);
/// x with another shape (one entry may be -1). copy: nullopt = a view when the strides
/// allow one, else a copy; true = always a copy; false = a view or ValueError.
Tensor reshape(const Tensor& x, const Dims& shape, std::optional<bool> copy);

// ---- Copies -----------------------------------------------------------------------------

/// Joins arrays along an existing axis (flattened first when axis is nullopt); the result
/// dtype is the promotion of all the inputs.
Tensor concat(const std::vector<Tensor>& arrays, std::optional<int64_t> axis);
/// Joins same-shaped arrays along a new axis.
Tensor stack(const std::vector<Tensor>& arrays, int64_t axis);
/// x repeated repetitions[i] times along each axis (the shorter of the two is padded
/// with leading ones).
Tensor tile(const Tensor& x, const Dims& repetitions);
/// Every element repeated `repeats` times along axis (of the flattened x when nullopt).
Tensor repeat(const Tensor& x, int64_t repeats, std::optional<int64_t> axis);
/// Element i repeated repeats[i] times; repeats is an integer array of shape (1,) or (n,).
Tensor repeat(const Tensor& x, const Tensor& repeats, std::optional<int64_t> axis);
/// Rolls x by shifts[i] along axes[i] (shifts of a repeated axis add up); with no axes,
/// rolls the flattened x by the one shift.
Tensor roll(const Tensor& x, const Dims& shifts, const std::optional<Dims>& axes);

}  // namespace xrt

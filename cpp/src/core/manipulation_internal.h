// cpp/src/core/manipulation_internal.h: what the two manipulation op files share (axis
// checks, views of one axis, the copy step). Defined in manipulation_ops.cpp.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "xpuruntime/tensor.h"

namespace xrt::manipulation_detail {

std::string dims_str(int ndim);
/// axis normalised against ndim; IndexError naming op when out of range.
int axis_in(const char* op, int64_t axis, int ndim);
/// Normalised, sorted axes; ValueError naming op when one repeats.
Dims unique_axes(const char* op, const Dims& axes, int ndim);
/// x[..., index, ...] along axis, as a view.
Tensor select(const Tensor& x, int axis, int64_t index);
/// x[..., start:start + length, ...] along axis, as a view.
Tensor narrow(const Tensor& x, int axis, int64_t start, int64_t length);
/// Strides that show x as shape without copying; nullopt when no such strides exist.
std::optional<Dims> reshape_strides(const Tensor& x, const Dims& shape);
/// shape with its -1 resolved; ValueError when the sizes do not match.
Dims resolve_shape(const Tensor& x, const Dims& shape);
Tensor copy_of(const Tensor& x);
/// dst[...] = src[...] through the dispatched copy op, for a freshly allocated dst of
/// src's shape (copy_into without its checks).
void copy_piece(Tensor& dst, const Tensor& src);
void check_devices(const char* op, const std::vector<Tensor>& arrays);
DType common_dtype(const std::vector<Tensor>& arrays);
void check_non_empty(const char* op, const std::vector<Tensor>& arrays);

}  // namespace xrt::manipulation_detail

// cpp/include/xpuruntime/reductions.h: the Array API's statistical, utility and
// reduction-like searching functions (sum ... std, cumulative_*, all/any, diff,
// argmax/argmin, count_nonzero).
//
// Axes: nullopt reduces every axis; an empty Dims reduces none. Axes may be negative;
// an axis out of range raises IndexError and a repeated one ValueError, both naming the
// function. The dtype rules are the standard's (see reduction_ops.cpp).
#pragma once
#include <optional>

#include "xpuruntime/kernel.h"

namespace xrt {

using OptionalAxes = std::optional<Dims>;

// Statistical functions
Tensor sum(const Tensor& x, const OptionalAxes& axes, std::optional<DType> dtype,
           bool keepdims);
Tensor prod(const Tensor& x, const OptionalAxes& axes, std::optional<DType> dtype,
            bool keepdims);
/// ValueError when a reduction has no elements (a maximum of nothing is undefined).
Tensor max(const Tensor& x, const OptionalAxes& axes, bool keepdims);
Tensor min(const Tensor& x, const OptionalAxes& axes, bool keepdims);
Tensor mean(const Tensor& x, const OptionalAxes& axes, bool keepdims);
/// Divides by (count - correction); NaN where that is not positive. Complex input gives
/// a real result (the variance of the complex values).
Tensor var(const Tensor& x, const OptionalAxes& axes, double correction, bool keepdims);
/// The Array API's std (named so that it cannot be mistaken for the namespace).
Tensor std_dev(const Tensor& x, const OptionalAxes& axes, double correction, bool keepdims);
/// axis is required when x has more than one dimension.
Tensor cumulative_sum(const Tensor& x, std::optional<int64_t> axis, std::optional<DType> dtype,
                      bool include_initial);
Tensor cumulative_prod(const Tensor& x, std::optional<int64_t> axis,
                       std::optional<DType> dtype, bool include_initial);

// Utility functions
Tensor all(const Tensor& x, const OptionalAxes& axes, bool keepdims);
Tensor any(const Tensor& x, const OptionalAxes& axes, bool keepdims);
/// The n-th forward difference along axis, after prepending/appending along it. prepend
/// and append must match x's shape off the axis; dtypes promote.
Tensor diff(const Tensor& x, int64_t axis, int64_t n, const std::optional<Tensor>& prepend,
            const std::optional<Tensor>& append);

// Searching functions
/// Index of the first maximum (minimum) in the flattened array (axis nullopt) or along
/// axis; a NaN counts as larger (smaller) than everything, so the first NaN wins.
Tensor argmax(const Tensor& x, std::optional<int64_t> axis, bool keepdims);
Tensor argmin(const Tensor& x, std::optional<int64_t> axis, bool keepdims);
Tensor count_nonzero(const Tensor& x, const OptionalAxes& axes, bool keepdims);

}  // namespace xrt

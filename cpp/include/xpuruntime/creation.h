// cpp/include/xpuruntime/creation.h: the creation functions beyond empty/full/arange
// (those live in ops.h): *_like, eye, linspace, meshgrid, tril and triu.
#pragma once
#include <optional>
#include <vector>

#include "xpuruntime/scalar.h"
#include "xpuruntime/tensor.h"

namespace xrt {

/// Uninitialised, with x's shape; dtype and device default to x's.
Tensor empty_like(const Tensor& x, std::optional<DType> dtype, std::optional<Device> device);
/// Filled with value, with x's shape; dtype and device default to x's.
Tensor full_like(const Tensor& x, const Scalar& value, std::optional<DType> dtype,
                 std::optional<Device> device);

/// Ones on diagonal k (k > 0 above the main one), zeros elsewhere; n_cols defaults to n_rows.
Tensor eye(int64_t n_rows, std::optional<int64_t> n_cols, int64_t k, DType dtype,
           Device device);
/// num values start + i * (stop - start) / (num - 1) (/ num without the endpoint); the
/// last one is exactly stop with the endpoint. Integer dtypes take the floor, as NumPy.
Tensor linspace(const Scalar& start, const Scalar& stop, int64_t num, DType dtype,
                Device device, bool endpoint);
/// Coordinate arrays of 1-D arrays; indexing "xy" swaps the first two output axes.
/// The results are new arrays (not broadcast views), so writing to one is safe.
std::vector<Tensor> meshgrid(const std::vector<Tensor>& arrays, bool xy_indexing);

/// x with the elements above diagonal k of every matrix set to zero.
Tensor tril(const Tensor& x, int64_t k);
/// x with the elements below diagonal k of every matrix set to zero.
Tensor triu(const Tensor& x, int64_t k);

}  // namespace xrt

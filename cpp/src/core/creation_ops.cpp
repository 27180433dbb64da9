// cpp/src/core/creation_ops.cpp: definitions of the creation functions of creation.h.
#include "xpuruntime/creation.h"

#include <cmath>
#include <string>

#include "xpuruntime/dispatcher.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"

namespace xrt {
namespace {

std::string name_of(DType d) { return std::string(dtype_info(d).name); }

void run_op(OpId op, const Tensor* input, Tensor& out, const OpAttrs& attrs) {
  const Tensor* inputs[1] = {input};
  KernelCall call{inputs, input ? 1 : 0, &out, 1, &attrs};
  dispatch(op, call);
}

// Writes value to every element of t (any strides) through the dispatched fill op.
void fill_view(Tensor& t, const Scalar& value) {
  OpAttrs attrs;
  attrs.value = value;
  run_op(BuiltinOps::get().fill, nullptr, t, attrs);
}

Tensor triangle(const char* op, const Tensor& x, int64_t k) {
  static const OpId tril_id = KernelRegistry::global().op_id("tril");
  static const OpId triu_id = KernelRegistry::global().op_id("triu");
  if (x.ndim() < 2)
    throw ValueError(std::string(op) + ": x must have at least 2 dimensions, got shape " +
                     shape_str(x.shape()));
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  OpAttrs attrs;
  attrs.value = Scalar::from_int(k);
  run_op(op[3] == 'l' ? tril_id : triu_id, &x, out, attrs);
  return out;
}

}  // namespace

// Note: laid out as x is (NumPy's order='K', PyTorch's preserved memory format), so that
// `out = zeros_like(m.T); out += m.T` walks both in memory order (Note [Result layout]).
Tensor empty_like(const Tensor& x, std::optional<DType> dtype, std::optional<Device> device) {
  return empty_following(x.shape(), dtype.value_or(x.dtype()), device.value_or(x.device()),
                         {&x});
}

Tensor full_like(const Tensor& x, const Scalar& value, std::optional<DType> dtype,
                 std::optional<Device> device) {
  return full_following(x.shape(), value, dtype.value_or(x.dtype()),
                        device.value_or(x.device()), {&x});
}

Tensor eye(int64_t n_rows, std::optional<int64_t> n_cols, int64_t k, DType dtype,
           Device device) {
  int64_t rows = n_rows, cols = n_cols.value_or(n_rows);
  if (rows < 0 || cols < 0)
    throw ValueError("eye: n_rows and n_cols must be non-negative, got " +
                     std::to_string(rows) + " and " + std::to_string(cols));
  Tensor out = full(Dims{rows, cols}, Scalar::from_int(0), dtype, device);
  if (k <= -rows || k >= cols) return out;
  // Diagonal k starts at (max(-k, 0), max(k, 0)) and steps by cols + 1 elements.
  int64_t row = k < 0 ? -k : 0, col = k > 0 ? k : 0;
  int64_t length = std::min(rows - row, cols - col);
  Tensor diagonal = out.as_strided(Dims{length}, Dims{cols + 1},
                                   (row * cols + col) * static_cast<int64_t>(out.itemsize()));
  fill_view(diagonal, Scalar::from_int(1));
  return out;
}

Tensor linspace(const Scalar& start, const Scalar& stop, int64_t num, DType dtype,
                Device device, bool endpoint) {
  static const OpId id = KernelRegistry::global().op_id("linspace");
  if (num < 0) throw ValueError("linspace: num must be non-negative, got " + std::to_string(num));
  if (dtype == DType::Bool) throw TypeError("linspace: the dtype must be numeric, got bool");
  bool complex_input = start.kind == Scalar::Kind::Complex || stop.kind == Scalar::Kind::Complex;
  if (complex_input && !is_complex(dtype))
    throw TypeError("linspace: a complex start or stop needs a complex dtype, got " +
                    name_of(dtype));
  Tensor out = empty(Dims{num}, dtype, device);
  if (num == 0) return out;
  // Note: values are start + i * step in double (complex double) precision, as NumPy
  // computes them; with the endpoint, the last one is stop itself, not start + div * step.
  int64_t div = endpoint ? num - 1 : num;
  OpAttrs attrs;
  attrs.value = start;
  std::complex<double> a = start.to<std::complex<double>>(), b = stop.to<std::complex<double>>();
  std::complex<double> step = div > 0 ? (b - a) / static_cast<double>(div) : 0.0;
  attrs.step = complex_input ? Scalar::from_complex(step) : Scalar::from_float(step.real());
  run_op(id, nullptr, out, attrs);
  if (endpoint && num > 1) {
    Tensor last = out.as_strided(Dims{}, Dims{}, (num - 1) * static_cast<int64_t>(out.itemsize()));
    Scalar value = stop;
    if (is_integer(dtype) && stop.kind == Scalar::Kind::Float)  // the kernel's floor rule
      value = Scalar::from_float(std::floor(stop.c.real()));
    fill_view(last, value);
  }
  return out;
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& arrays, bool xy_indexing) {
  int n = static_cast<int>(arrays.size());
  Dims shape(n);
  for (int i = 0; i < n; ++i) {
    const Tensor& t = arrays[i];
    if (t.ndim() != 1)
      throw ValueError("meshgrid: the arrays must be one-dimensional, but array " +
                       std::to_string(i) + " has shape " + shape_str(t.shape()));
    if (t.dtype() != arrays[0].dtype())
      throw ValueError("meshgrid: the arrays must have one dtype, got " +
                       name_of(arrays[0].dtype()) + " and " + name_of(t.dtype()));
    if (t.device() != arrays[0].device())
      throw ValueError("meshgrid: arrays are on different devices (" +
                       arrays[0].device().str() + " and " + t.device().str() + ")");
    shape[i] = t.shape()[0];
  }
  bool swap = xy_indexing && n > 1;
  if (swap) std::swap(shape[0], shape[1]);
  std::vector<Tensor> out;
  out.reserve(arrays.size());
  for (int i = 0; i < n; ++i) {
    // Array i varies along output axis i (axes 0 and 1 trade places under "xy").
    int axis = swap && i < 2 ? 1 - i : i;
    Dims strides(n, int64_t{0});
    strides[axis] = arrays[i].strides()[0];
    Tensor grid = empty(shape, arrays[i].dtype(), arrays[i].device());
    copy_into(grid, arrays[i].as_strided(shape, std::move(strides), arrays[i].byte_offset()));
    out.push_back(std::move(grid));
  }
  return out;
}

Tensor tril(const Tensor& x, int64_t k) { return triangle("tril", x, k); }
Tensor triu(const Tensor& x, int64_t k) { return triangle("triu", x, k); }

}  // namespace xrt

// cpp/src/core/elementwise_ops.cpp: definitions of the elementwise functions: the dtype
// each accepts and returns, promotion, broadcasting, in-place rules. Kernels only compute.
#include "xpuruntime/elementwise.h"

#include <string>
#include <utility>

#include "xpuruntime/dispatcher.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"
#include "xpuruntime/registry.h"

namespace xrt {
namespace {

#define XRT_INFO_ENTRY(name, accepts, result, math_library, computes_in)          \
  {#name, DTypeCategory::accepts, ResultKind::result, MathLibrary::math_library, \
   ComputesIn::computes_in},
const ElementwiseInfo kUnary[] = {XRT_UNARY_OPS(XRT_INFO_ENTRY)};
const ElementwiseInfo kBinary[] = {XRT_BINARY_OPS(XRT_INFO_ENTRY)};
#undef XRT_INFO_ENTRY

constexpr int kNumUnary = sizeof(kUnary) / sizeof(kUnary[0]);
constexpr int kNumBinary = sizeof(kBinary) / sizeof(kBinary[0]);

// Registry ids, interned once: index = enum value.
struct OpIds {
  OpId unary[kNumUnary];
  OpId binary[kNumBinary];
  OpId where;
  static const OpIds& get() {
    static const OpIds ids = [] {
      OpIds o;
      auto& r = KernelRegistry::global();
      for (int i = 0; i < kNumUnary; ++i) o.unary[i] = r.op_id(kUnary[i].name);
      for (int i = 0; i < kNumBinary; ++i) o.binary[i] = r.op_id(kBinary[i].name);
      o.where = r.op_id("where");
      return o;
    }();
    return ids;
  }
};

const char* category_text(DTypeCategory c) {
  switch (c) {
    case DTypeCategory::Any: return "any dtype";
    case DTypeCategory::Bool: return "a boolean dtype";
    case DTypeCategory::Integer: return "an integer dtype";
    case DTypeCategory::IntegerOrBool: return "an integer or boolean dtype";
    case DTypeCategory::Numeric: return "a numeric dtype";
    case DTypeCategory::RealNumeric: return "a real numeric dtype";
    case DTypeCategory::Floating: return "a floating-point dtype";
    case DTypeCategory::RealFloating: return "a real floating-point dtype";
  }
  return "";
}

std::string dtype_name(DType d) { return std::string(dtype_info(d).name); }

void check_category(const ElementwiseInfo& info, DType d) {
  if (!in_category(d, info.accepts))
    throw TypeError(std::string(info.name) + " is not defined for " + dtype_name(d) +
                    " (it needs " + category_text(info.accepts) + ")");
}

DType result_dtype(const ElementwiseInfo& info, DType input) {
  switch (info.result) {
    case ResultKind::Same: return input;
    case ResultKind::Bool: return DType::Bool;
    case ResultKind::RealPart: return real_dtype(input);
  }
  return input;
}

// The dtype a function computes in (the table's "computes in" column), from
// promoted_inputs' dtype (bool already for a Truth op).
DType compute_dtype(const ElementwiseInfo& info, DType promoted) {
  if (info.computes_in == ComputesIn::FloatForIntegers && is_integer(promoted))
    return kDefaultFloat;
  return promoted;
}

// Note [Logical ops read truth values]: the standard asks for boolean inputs to
// logical_and, logical_or, logical_xor and logical_not and leaves others unspecified.
// NumPy, CuPy and PyTorch read any input as its truth value (nonzero is true, NaN
// included), and code written for them passes numbers (scikit-learn's roc_curve does, to
// logical_or). So these ops accept every dtype and cast a non-boolean input to bool
// first; their kernels take bools only (the table's "accepts" column).
// Two inputs of different kinds need no common dtype then: both become bools, and a
// Python scalar beside any array is read the same way (host_scalar in bind_elementwise.cpp).
DType promoted_inputs(const ElementwiseInfo& info, DType a, DType b) {
  if (info.computes_in == ComputesIn::Truth) return DType::Bool;
  DType promoted = result_type(a, b);
  check_category(info, promoted);
  return promoted;
}

void run(OpId op, std::initializer_list<const Tensor*> inputs, Tensor& out) {
  KernelCall call{inputs.begin(), static_cast<int>(inputs.size()), &out, 1, nullptr};
  dispatch(op, call);
}

// The byte range [first, last) that a view can touch.
std::pair<const char*, const char*> byte_span(const Tensor& t) {
  const char* lo = t.data();
  const char* hi = t.data();
  int64_t item = static_cast<int64_t>(t.itemsize());
  if (t.numel() == 0) return {lo, lo};
  for (int d = 0; d < t.ndim(); ++d) {
    int64_t reach = (t.shape()[d] - 1) * t.strides()[d] * item;
    if (reach < 0) lo += reach;
    else hi += reach;
  }
  return {lo, hi + item};
}

// True when writing `out` element by element could change `in` before it is read: their
// memory overlaps (whichever tensors or imports they came from) and they are not the
// same view.
bool overlaps_differently(const Tensor& out, const Tensor& in) {
  if (in.byte_offset() == out.byte_offset() && in.storage() == out.storage() &&
      in.strides() == out.strides() && in.dtype() == out.dtype())
    return false;
  auto [a_lo, a_hi] = byte_span(out);
  auto [b_lo, b_hi] = byte_span(in);
  return a_lo < b_hi && b_lo < a_hi;
}

}  // namespace

int num_unary_ops() { return kNumUnary; }
int num_binary_ops() { return kNumBinary; }
const ElementwiseInfo& unary_info(UnaryOp op) { return kUnary[static_cast<int>(op)]; }
const ElementwiseInfo& binary_info(BinaryOp op) { return kBinary[static_cast<int>(op)]; }

bool in_category(DType d, DTypeCategory c) {
  DTypeKind k = kind(d);
  switch (c) {
    case DTypeCategory::Any: return true;
    case DTypeCategory::Bool: return k == DTypeKind::Bool;
    case DTypeCategory::Integer: return is_integer(d);
    case DTypeCategory::IntegerOrBool: return is_integer(d) || k == DTypeKind::Bool;
    case DTypeCategory::Numeric: return k != DTypeKind::Bool;
    case DTypeCategory::RealNumeric: return is_integer(d) || k == DTypeKind::RealFloat;
    case DTypeCategory::Floating: return k == DTypeKind::RealFloat || k == DTypeKind::ComplexFloat;
    case DTypeCategory::RealFloating: return k == DTypeKind::RealFloat;
  }
  return false;
}

Tensor unary(UnaryOp op, const Tensor& x) {
  OpId id = OpIds::get().unary[static_cast<int>(op)];
  const Tensor* inputs[] = {&x};
  if (const ReplayEntry* entry = find_replay(id, inputs, 1))  // Note [Replayed calls]
    return replay(*entry, id, inputs, 1);
  const ElementwiseInfo& info = unary_info(op);
  if (info.computes_in == ComputesIn::Truth && x.dtype() != DType::Bool)
    return unary(op, astype(x, DType::Bool, false));  // Note [Logical ops read truth values]
  check_category(info, x.dtype());
  Tensor out = empty_following(x.shape(), result_dtype(info, x.dtype()), x.device(), {&x});
  dispatch_keeping_replay(id, KernelCall{inputs, 1, &out, 1, nullptr});
  return out;
}

namespace {

// Operands that need a cast or a broadcast (binary_on's general case, kept off its path).
[[gnu::noinline]] Tensor binary_conformed(BinaryOp op, const ElementwiseInfo& info, DType dtype,
                                          const Tensor& a, const Tensor& b, Device device) {
  Dims shape = a.shape() == b.shape() ? a.shape() : broadcast_shapes(a.shape(), b.shape());
  Tensor hold_a, hold_b;
  const Tensor& x = conform(a, dtype, shape, hold_a);
  const Tensor& y = conform(b, dtype, shape, hold_b);
  Tensor out = empty_following(shape, result_dtype(info, dtype), device, {&x, &y});
  const Tensor* inputs[] = {&x, &y};
  // Note [Replayed calls]: kept where the conformed call is one (a host scalar broadcast).
  dispatch_keeping_replay(OpIds::get().binary[static_cast<int>(op)],
                          KernelCall{inputs, 2, &out, 1, nullptr});
  return out;
}

// Note: the common call (one dtype, one shape) goes straight to the kernel: the host time
// of a tiny op follows the code lines it runs (Note [Where the host time of a tiny op goes]).
[[gnu::noinline]] Tensor binary_on(BinaryOp op, const Tensor& a, const Tensor& b, Device device) {
  const ElementwiseInfo& info = binary_info(op);
  DType promoted = promoted_inputs(info, a.dtype(), b.dtype());
  DType dtype = compute_dtype(info, promoted);
  if (a.dtype() != dtype || b.dtype() != dtype || !(a.shape() == b.shape()))
    return binary_conformed(op, info, dtype, a, b, device);
  Tensor out = empty_following(a.shape(), result_dtype(info, dtype), device, {&a, &b});
  const Tensor* inputs[] = {&a, &b};
  dispatch_keeping_replay(OpIds::get().binary[static_cast<int>(op)],
                          KernelCall{inputs, 2, &out, 1, nullptr});
  return out;
}

void binary_inplace_unchecked(BinaryOp op, Tensor& a, const Tensor& b) {
  const ElementwiseInfo& info = binary_info(op);
  DType promoted = promoted_inputs(info, a.dtype(), b.dtype());
  DType dtype = compute_dtype(info, promoted);
  DType out_dtype = result_dtype(info, dtype);
  if (out_dtype != a.dtype())
    throw TypeError(std::string("in-place ") + info.name + " would change the dtype from " +
                    dtype_name(a.dtype()) + " to " + dtype_name(out_dtype));
  if (!(a.shape() == b.shape()) && !(broadcast_shapes(a.shape(), b.shape()) == a.shape()))
    throw ValueError(std::string("in-place ") + info.name + ": shape " + shape_str(b.shape()) +
                     " does not broadcast to " + shape_str(a.shape()));
  const Tensor* other = &b;
  Tensor copied;
  if (a.device() == b.device() && overlaps_differently(a, b)) {
    copied = astype(b, b.dtype(), true);
    other = &copied;
  }
  Tensor hold;
  const Tensor& y = conform(*other, dtype, a.shape(), hold);
  const Tensor* inputs[] = {&a, &y};
  dispatch_keeping_replay(OpIds::get().binary[static_cast<int>(op)],
                          KernelCall{inputs, 2, &a, 1, nullptr});
}

// a op= b by the entry kept for a call of op on (a, b) (Note [Replayed calls]); false where
// there is none or it does not take the call. b may not overlap a but as a itself.
bool replayed_inplace(BinaryOp op, Tensor& a, const Tensor& b) {
  OpId id = OpIds::get().binary[static_cast<int>(op)];
  const Tensor* inputs[] = {&a, &b};
  if (a.device() == b.device() && overlaps_differently(a, b)) return false;
  const ReplayEntry* entry = find_replay(id, inputs, 2);
  return entry && replay_into(*entry, inputs, 2, a);
}

void check_host_scalar(const Tensor& scalar, const char* op) {
  if (!scalar.device().is_cpu() || scalar.ndim() != 0)
    throw ValueError(std::string(op) + ": a host scalar must be a 0-d CPU tensor");
}

}  // namespace

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  check_same_device(a, b, binary_info(op).name);
  OpId id = OpIds::get().binary[static_cast<int>(op)];
  const Tensor* inputs[] = {&a, &b};
  if (const ReplayEntry* entry = find_replay(id, inputs, 2))  // Note [Replayed calls]
    return replay(*entry, id, inputs, 2);
  return binary_on(op, a, b, a.device());
}

void binary_inplace(BinaryOp op, Tensor& a, const Tensor& b) {
  check_writable(a);
  check_same_device(a, b, binary_info(op).name);
  if (!replayed_inplace(op, a, b)) binary_inplace_unchecked(op, a, b);
}

Tensor binary_with_host_scalar(BinaryOp op, const Tensor& a, const Tensor& b) {
  if (a.device() == b.device()) return binary(op, a, b);
  OpId id = OpIds::get().binary[static_cast<int>(op)];
  const Tensor* inputs[] = {&a, &b};
  if (const ReplayEntry* entry = find_replay(id, inputs, 2))  // Note [Replayed calls]
    if (Tensor out = replay(*entry, id, inputs, 2); out.defined()) return out;
  bool scalar_first = a.device().is_cpu();
  check_host_scalar(scalar_first ? a : b, binary_info(op).name);
  return binary_on(op, a, b, scalar_first ? b.device() : a.device());
}

void binary_inplace_with_host_scalar(BinaryOp op, Tensor& a, const Tensor& scalar) {
  if (a.device() == scalar.device()) return binary_inplace(op, a, scalar);
  check_writable(a);
  check_host_scalar(scalar, binary_info(op).name);
  if (!replayed_inplace(op, a, scalar)) binary_inplace_unchecked(op, a, scalar);
}

Tensor where(const Tensor& condition, const Tensor& x, const Tensor& y) {
  check_same_device(condition, x, "where");
  check_same_device(x, y, "where");
  if (condition.dtype() != DType::Bool)
    throw TypeError("where: condition must have a boolean dtype, not " +
                    dtype_name(condition.dtype()));
  DType dtype = result_type(x.dtype(), y.dtype());
  Dims shape = broadcast_shapes(broadcast_shapes(condition.shape(), x.shape()), y.shape());
  Tensor hold_c, hold_x, hold_y;
  const Tensor& c = conform(condition, DType::Bool, shape, hold_c);
  const Tensor& a = conform(x, dtype, shape, hold_x);
  const Tensor& b = conform(y, dtype, shape, hold_y);
  Tensor out = empty_following(shape, dtype, x.device(), {&c, &a, &b});
  run(OpIds::get().where, {&c, &a, &b}, out);
  return out;
}

Tensor clip(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  if (!in_category(x.dtype(), DTypeCategory::RealNumeric))
    throw TypeError("clip is not defined for " + dtype_name(x.dtype()) +
                    " (it needs a real numeric dtype)");
  auto check_bound = [&](const std::optional<Tensor>& b, const char* which) {
    if (!b) return;
    check_same_device(x, *b, "clip");
    if (!in_category(b->dtype(), DTypeCategory::RealNumeric))
      throw TypeError(std::string("clip: ") + which + " must have a real numeric dtype, not " +
                      dtype_name(b->dtype()));
    if (is_floating(b->dtype()) != is_floating(x.dtype()))
      throw TypeError(std::string("clip: ") + which + " (" + dtype_name(b->dtype()) +
                      ") and x (" + dtype_name(x.dtype()) + ") are of different kinds");
  };
  check_bound(min, "min");
  check_bound(max, "max");
  // x and the bounds broadcast together; the bounds take x's dtype (the standard's rule).
  Dims shape = x.shape();
  if (min) shape = broadcast_shapes(shape, min->shape());
  if (max) shape = broadcast_shapes(shape, max->shape());
  Tensor hold_x, hold_lo, hold_hi;
  const Tensor& value = conform(x, x.dtype(), shape, hold_x);
  const Tensor& lo = min ? conform(*min, x.dtype(), shape, hold_lo) : value;
  const Tensor& hi = max ? conform(*max, x.dtype(), shape, hold_hi) : value;
  // min(max(x, lo), hi): two passes of the NaN-propagating maximum/minimum kernels; an
  // absent bound is x itself, which leaves the value unchanged.
  const OpIds& ids = OpIds::get();
  Tensor out = empty_following(shape, x.dtype(), x.device(), {&value, &lo, &hi});
  run(ids.binary[static_cast<int>(BinaryOp::maximum)], {&value, &lo}, out);
  if (max) run(ids.binary[static_cast<int>(BinaryOp::minimum)], {&out, &hi}, out);
  return out;
}

// add predates the elementwise table and keeps its name for C++ callers.
Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::add, a, b); }
void add_inplace(Tensor& a, const Tensor& b) { binary_inplace(BinaryOp::add, a, b); }

}  // namespace xrt

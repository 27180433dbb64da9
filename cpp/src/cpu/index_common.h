// cpp/src/cpu/index_common.h: what the indexing kernels share (index_kernels.cpp: integer
// arrays; mask_kernels.cpp: masks and nonzero). Not a public header.
//
// - Elements move as units of their size (1, 2, 4, 8 or 16 bytes); the dtype is irrelevant.
// - Index arrays may have any integer dtype; a negative index counts from the end. Every
//   index is checked before it is used; the error names the first bad one in row-major
//   order, whatever the thread count.
#pragma once
#include <atomic>
#include <cstring>
#include <type_traits>

#include "core/host/dtype_dispatch.h"
#include "cpu/loops.h"
#include "xpuruntime/indexing.h"
#include "xpuruntime/kernel.h"

namespace xrt::cpu {

using host::visit_dtype;

inline constexpr int64_t kGrain = 1 << 15;      // elements moved per task
inline constexpr int64_t kMaskGrain = 1 << 16;  // mask positions per chunk

// An element of S bytes, moved as one unit.
// clang-format off
template <int S> struct ElemOf;
template <> struct ElemOf<1> { using type = uint8_t; };
template <> struct ElemOf<2> { using type = uint16_t; };
template <> struct ElemOf<4> { using type = uint32_t; };
template <> struct ElemOf<8> { using type = uint64_t; };
template <> struct ElemOf<16> { struct type { uint64_t lo, hi; }; };
// clang-format on
template <int S>
using Elem = typename ElemOf<S>::type;

template <class F>
void visit_size(size_t size, F&& f) {
  switch (size) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 8:
      return f(std::integral_constant<int, 8>{});
    case 16:
      return f(std::integral_constant<int, 16>{});
  }
  throw ValueError("indexing: unsupported element size " + std::to_string(size));
}

template <class F>
void visit_index_dtype(DType dtype, F&& f) {
  visit_dtype(dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>)
      f(tag);
    else
      throw TypeError("index arrays must have an integer dtype");
  });
}

// parallel_for, but a single chunk runs here directly (no std::function, no pool): small
// inputs pay nothing for the threading.
template <class F>
void for_chunks(int64_t n, int64_t grain, F&& fn) {
  if (n <= grain) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  parallel_for(n, grain, fn);
}

// j = raw, counted from the end when negative; false when outside [0, n).
template <class I>
inline bool normalize(I raw, int64_t n, int64_t& j) {
  if constexpr (std::is_signed_v<I>) {
    j = raw < 0 ? static_cast<int64_t>(raw) + n : static_cast<int64_t>(raw);
    return static_cast<uint64_t>(j) < static_cast<uint64_t>(n);
  } else {
    j = static_cast<int64_t>(raw);
    return static_cast<uint64_t>(raw) < static_cast<uint64_t>(n);
  }
}

// The smallest failing position reported by any chunk.
class FirstBad {
 public:
  void report(int64_t position) {
    int64_t current = first_.load(std::memory_order_relaxed);
    while (position < current && !first_.compare_exchange_weak(current, position)) {
    }
  }
  bool any() const { return first_.load() != INT64_MAX; }
  int64_t position() const { return first_.load(); }

 private:
  std::atomic<int64_t> first_{INT64_MAX};
};

// Byte offset of element `flat` (row-major) of t from t.data().
inline int64_t offset_of(const Tensor& t, int64_t flat) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (flat % t.shape()[d]) * t.strides()[d];
    flat /= t.shape()[d];
  }
  return off * static_cast<int64_t>(t.itemsize());
}

// t's axes [first, last) as a tensor of their own, at t's data.
inline Tensor axes_view(const Tensor& t, int first, int last) {
  Dims shape(t.shape().begin() + first, t.shape().begin() + last);
  Dims strides(t.strides().begin() + first, t.strides().begin() + last);
  return t.as_strided(std::move(shape), std::move(strides), t.byte_offset());
}

// A view of shape `shape` over the bytes at t.data(): contiguous, or one repeated element.
inline Tensor block_view(const Tensor& t, const Dims& shape, bool repeated) {
  return t.as_strided(shape, repeated ? Dims(shape.size(), int64_t{0}) : contiguous_strides(shape),
                      t.byte_offset());
}

inline bool all_strides_zero(const Tensor& t) {
  for (int64_t s : t.strides())
    if (s != 0) return false;
  return true;
}

[[noreturn]] inline void throw_out_of_range(const Tensor& indices, int64_t position, int64_t size,
                                            int slot) {
  int64_t value = 0;
  visit_index_dtype(indices.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    I raw;
    std::memcpy(&raw, indices.data() + offset_of(indices, position), sizeof raw);
    value = std::is_unsigned_v<I> && static_cast<uint64_t>(raw) > INT64_MAX
                ? INT64_MAX
                : static_cast<int64_t>(raw);
  });
  throw IndexOutOfRange(value, size, slot);
}

// Moves one block (the axes after the indexed ones) between two layouts of its shape.
template <int S>
class Block {
 public:
  Block(const Tensor& dst, const Tensor& src) : numel_(dst.numel()) {
    LoopPlan<2> plan({&dst, &src});
    shape_ = plan.shape;
    dst_strides_ = plan.strides[0];
    src_strides_ = plan.strides[1];
    contiguous_ = shape_.size() == 1 && dst_strides_[0] == S && src_strides_[0] == S;
  }
  int64_t numel() const { return numel_; }
  void move(char* dst, const char* src) const {
    if (numel_ == 1)
      std::memcpy(dst, src, S);
    else if (contiguous_)
      std::memcpy(dst, src, static_cast<size_t>(numel_) * S);
    else
      move_dims(dst, src, 0);
  }

 private:
  void move_dims(char* dst, const char* src, int d) const {
    int64_t n = shape_[d], ds = dst_strides_[d], ss = src_strides_[d];
    if (d == shape_.size() - 1) {
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * ds, src + i * ss, S);
      return;
    }
    for (int64_t i = 0; i < n; ++i) move_dims(dst + i * ds, src + i * ss, d + 1);
  }
  Dims shape_, dst_strides_, src_strides_;
  int64_t numel_;
  bool contiguous_ = false;
};

// Kernels of mask_kernels.cpp, registered with the others by register_index_kernels.
void masked_gather_kernel(const KernelCall& call);
void masked_scatter_kernel(const KernelCall& call);
void nonzero_count_kernel(const KernelCall& call);
void nonzero_kernel(const KernelCall& call);

}  // namespace xrt::cpu

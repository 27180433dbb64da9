// cpp/include/xpuruntime/small_vector.h: Dims, a vector of int64 with inline room for 6.
// Shapes and strides of almost every tensor fit inline, so creating a tensor allocates
// nothing but its storage.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>

namespace xrt {

class Dims {
 public:
  static constexpr int kInline = 6;

  Dims() = default;
  explicit Dims(int n, int64_t value = 0) { resize(n, value); }
  Dims(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }
  template <class It> Dims(It first, It last) { assign(first, last); }
  // Note: an inline Dims is copied and moved whole (its fixed room, whatever its size): a
  // copy the compiler inlines, where copying size_ elements called memmove.
  Dims(const Dims& other) {
    if (other.heap_) assign(other.begin(), other.end());
    else copy_inline(other);
  }
  Dims(Dims&& other) noexcept : size_(other.size_) {
    if (other.heap_) {
      heap_ = std::move(other.heap_);
      capacity_ = other.capacity_;
      other.capacity_ = kInline;
      other.size_ = 0;
    } else {
      std::memcpy(inline_, other.inline_, sizeof inline_);
    }
  }
  Dims& operator=(const Dims& other) {
    if (this == &other) return *this;
    if (other.heap_ || heap_) assign(other.begin(), other.end());
    else copy_inline(other);
    return *this;
  }
  Dims& operator=(Dims&& other) noexcept {
    if (this == &other) return *this;
    if (other.heap_) {
      heap_ = std::move(other.heap_);
      capacity_ = other.capacity_;
      size_ = other.size_;
      other.capacity_ = kInline;
      other.size_ = 0;
    } else {
      heap_.reset();
      capacity_ = kInline;
      copy_inline(other);
    }
    return *this;
  }

  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return heap_ ? heap_.get() : inline_; }
  const int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t& operator[](int i) { return data()[i]; }
  int64_t operator[](int i) const { return data()[i]; }
  int64_t back() const { return data()[size_ - 1]; }

  void resize(int n, int64_t value = 0) {
    reserve(n);
    for (int i = size_; i < n; ++i) data()[i] = value;
    size_ = n;
  }
  void push_back(int64_t value) {
    reserve(size_ + 1);
    data()[size_++] = value;
  }
  void insert(int pos, int64_t value) {
    reserve(size_ + 1);
    int64_t* d = data();
    std::memmove(d + pos + 1, d + pos, sizeof(int64_t) * static_cast<size_t>(size_ - pos));
    d[pos] = value;
    ++size_;
  }
  void erase(int pos) {
    int64_t* d = data();
    std::memmove(d + pos, d + pos + 1, sizeof(int64_t) * static_cast<size_t>(size_ - pos - 1));
    --size_;
  }
  // Note: a plain loop, which inlines: std::equal on int64 calls memcmp (15 instructions
  // a call for a 1-d shape, and a tiny op compares shapes and strides several times).
  bool operator==(const Dims& other) const {
    if (size_ != other.size_) return false;
    const int64_t *a = data(), *b = other.data();
    for (int i = 0; i < size_; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

 private:
  void copy_inline(const Dims& other) {
    std::memcpy(inline_, other.inline_, sizeof inline_);
    size_ = other.size_;
  }
  template <class It> void assign(It first, It last) {
    int n = static_cast<int>(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data());
    size_ = n;
  }
  void reserve(int n) {
    if (n <= capacity_) return;
    int capacity = std::max(n, capacity_ * 2);
    std::unique_ptr<int64_t[]> grown(new int64_t[static_cast<size_t>(capacity)]);
    std::copy(begin(), end(), grown.get());
    heap_ = std::move(grown);
    capacity_ = capacity;
  }

  int64_t inline_[kInline] = {};
  std::unique_ptr<int64_t[]> heap_;
  int size_ = 0;
  int capacity_ = kInline;
};

}  // namespace xrt

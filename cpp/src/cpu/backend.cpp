// cpp/src/cpu/backend.cpp: the CPU as a backend: host memory, memcpy, and the host's single
// in-order stream (work on the host runs when it is called, so there is nothing to wait for).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include <sys/mman.h>

#include "xpuruntime/errors.h"
#include "xpuruntime/runtime/backend.h"

namespace xrt::cpu {
namespace {

constexpr size_t kHostAlignment = 64;  // a cache line, and enough for any SIMD load
constexpr size_t kSmallBuffer = 1024;

void free_host(void* data, void*) { std::free(data); }

// Note: as NumPy does, large buffers ask for transparent huge pages: a fresh buffer is
// written once page by page, and 2 MiB pages make that first touch 512 times fewer faults
// (concat of 1e7 doubles: 600k page faults without, 35k with). Only a hint.
constexpr size_t kHugePageMinimum = size_t{4} << 20;

void advise_huge_pages(void* data, size_t nbytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kPage = 4096;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + nbytes) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

// A host event is the time it was recorded: host work has finished when it is recorded.
using Clock = std::chrono::steady_clock;
Clock::time_point& time_of(NativeEvent e) { return *static_cast<Clock::time_point*>(e); }

class CpuBackend final : public Backend {
 public:
  DeviceType device_type() const override { return DeviceType::CPU; }
  const char* name() const override { return "CPU"; }
  std::string unavailable_reason() const override { return ""; }
  void check_available() const override {}
  int device_count() const override { return 1; }
  void check_device(int index) const override {
    if (index != 0)
      throw ValueError("cpu:" + std::to_string(index) + " does not exist (cpu:0 does)");
  }
  int current_device() const override { return 0; }
  void set_current_device(int index) const override { check_device(index); }

  std::shared_ptr<Storage> allocate(size_t nbytes, Device device) const override {
    // Note: small buffers come from plain malloc (16-byte aligned, enough for every dtype
    // and much cheaper than memalign); larger ones are aligned to a cache line.
    void* data;
    if (nbytes <= kSmallBuffer) {
      data = std::malloc(nbytes == 0 ? 1 : nbytes);
    } else {
      size_t rounded = (nbytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
      data = rounded < nbytes ? nullptr : std::aligned_alloc(kHostAlignment, rounded);
      if (data && rounded >= kHugePageMinimum) advise_huge_pages(data, rounded);
    }
    if (!data)
      throw OutOfMemoryError("out of host memory allocating " + std::to_string(nbytes) +
                             " bytes");
    return Storage::wrap(data, nbytes, device, &free_host, nullptr, false);
  }
  void copy_bytes(void* dst, Device, const void* src, Device, size_t nbytes) const override {
    if (nbytes) std::memcpy(dst, src, nbytes);
  }
  void synchronize(Device) const override {}

  Stream current_stream(Device) const override { return Stream(); }
  void set_current_stream(const Stream& stream) const override {
    if (stream.handle())
      throw ValueError("the cpu has one stream; it cannot be replaced by another");
  }
  Stream default_stream(Device) const override { return Stream(); }
  Stream create_stream(Device, int) const override { return Stream(); }
  int stream_priority(const Stream&) const override { return 0; }
  bool query_stream(const Stream&) const override { return true; }
  void synchronize_stream(const Stream&) const override {}
  void wait_stream(const Stream&, const Stream&) const override {}
  void wait_event(const Stream&, NativeEvent) const override {}

  NativeEvent create_event(Device, bool, bool) const override {
    return new Clock::time_point();
  }
  void destroy_event(Device, NativeEvent e) const noexcept override {
    delete static_cast<Clock::time_point*>(e);
  }
  void record_event(NativeEvent e, const Stream&) const override { time_of(e) = Clock::now(); }
  bool query_event(Device, NativeEvent) const override { return true; }
  void synchronize_event(Device, NativeEvent) const override {}
  float elapsed_ms(Device, NativeEvent start, NativeEvent end) const override {
    return std::chrono::duration<float, std::milli>(time_of(end) - time_of(start)).count();
  }

  int64_t dlpack_stream_number(Device) const override { return -1; }
  Stream stream_from_dlpack_number(Device, int64_t number) const override {
    if (number != -1)
      throw ValueError("a cpu tensor has no streams: stream must be None (got " +
                       std::to_string(number) + ")");
    return Stream();
  }
};

}  // namespace
}  // namespace xrt::cpu

XRT_REGISTER_BACKEND(xrt::cpu::CpuBackend)

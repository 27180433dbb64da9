// cpp/include/xpuruntime/device.h: Device, a small value type (kind + index).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace xrt {

enum class DeviceType : uint8_t { CPU = 0, CUDA = 1 };
inline constexpr int kNumDeviceTypes = 2;

struct Device {
  DeviceType type = DeviceType::CPU;
  int16_t index = 0;

  bool operator==(const Device&) const = default;
  bool is_cpu() const { return type == DeviceType::CPU; }
  /// "cpu" or "cuda:N".
  std::string str() const;
  /// Parses "cpu", "cpu:0", "cuda", "cuda:N"; ValueError otherwise.
  static Device parse(std::string_view text);
  /// CUDA device `index` ("cuda:N"); no check that it exists.
  static Device cuda(int index) { return Device{DeviceType::CUDA, static_cast<int16_t>(index)}; }
  /// DLPack device type code (kDLCPU = 1, kDLCUDA = 2).
  int32_t dlpack_type() const { return type == DeviceType::CPU ? 1 : 2; }
};

inline constexpr Device kCPU{DeviceType::CPU, 0};

}  // namespace xrt

// cpp/src/core/device.cpp: Device parsing and printing.
#include "xpuruntime/device.h"

#include <charconv>

#include "xpuruntime/errors.h"

namespace xrt {

std::string Device::str() const {
  return type == DeviceType::CPU ? std::string("cpu") : "cuda:" + std::to_string(index);
}

Device Device::parse(std::string_view text) {
  auto colon = text.find(':');
  std::string_view kind = text.substr(0, colon);
  int index = 0;
  if (colon != std::string_view::npos) {
    std::string_view digits = text.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
        index < 0 || index > 32767)
      throw ValueError("invalid device index in '" + std::string(text) + "'");
  }
  if (kind == "cpu") {
    if (index != 0) throw ValueError("there is one cpu device, 'cpu' (got '" +
                                     std::string(text) + "')");
    return kCPU;
  }
  if (kind == "cuda") return Device::cuda(index);
  throw ValueError("unknown device '" + std::string(text) +
                   "': expected 'cpu', 'cuda' or 'cuda:N'");
}

}  // namespace xrt

// cpp/include/xpuruntime/default_device.h: the device that creation functions use when they
// are given none.
#pragma once
#include "xpuruntime/device.h"

namespace xrt {

/// The calling thread's innermost default-device scope, else the process-wide default (the
/// cpu until set_default_device).
Device default_device();
/// Sets the process-wide default (what `xpuruntime.set_default_device` does).
void set_default_device(Device device);

/// Per-thread scopes (`with xpuruntime.Device("cuda:0"):`): the innermost wins, and leaving
/// it restores what was there. ValueError when popping more than was pushed.
void push_default_device(Device device);
void pop_default_device();

}  // namespace xrt

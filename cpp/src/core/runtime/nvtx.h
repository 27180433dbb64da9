// cpp/src/core/runtime/nvtx.h: NVTX ranges in the "xpuruntime" domain, through NVTX's
// injection interface (declarations of our own; no NVTX header or library needed).
#pragma once

namespace xrt::nvtx {

/// Loads the tool on first use (NVTX_INJECTION64_PATH, or one preloaded into the
/// process); true when one attached. Without a tool, push and pop do nothing.
bool attach();
void push(const char* message);
void pop();
void mark(const char* message);

}  // namespace xrt::nvtx

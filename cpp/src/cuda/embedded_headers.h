// cpp/src/cuda/embedded_headers.h: the headers of cpp/kernels, embedded in the binary at
// build time (cmake/embed_kernel_headers.cmake), so kernels compile with no files installed.
#pragma once
#include <span>
#include <string_view>

namespace xrt::cuda {

struct EmbeddedHeader {
  const char* name;  ///< relative to cpp/kernels, as sources #include it: "xrt/common.cuh"
  const char* text;
};

/// Every embedded header, sorted by name.
std::span<const EmbeddedHeader> embedded_headers();

}  // namespace xrt::cuda

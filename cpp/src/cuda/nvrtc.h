// cpp/src/cuda/nvrtc.h: NVRTC, declared here (only what is used) and loaded at run time from
// the library the probe found. Independent of the driver: CI compiles kernels with no GPU.
#pragma once
#include <cstddef>
#include <string>

namespace xrt::cuda {

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;

inline constexpr nvrtcResult NVRTC_SUCCESS = 0;

// X(name, parameters): every NVRTC function xpuruntime calls (all return nvrtcResult).
#define XRT_NVRTC_FUNCTIONS(X)                                                           \
  X(nvrtcVersion, (int* major, int* minor))                                              \
  X(nvrtcGetNumSupportedArchs, (int* count))                                             \
  X(nvrtcGetSupportedArchs, (int* archs))                                                \
  X(nvrtcCreateProgram, (nvrtcProgram * program, const char* source, const char* name,   \
                         int num_headers, const char* const* headers,                    \
                         const char* const* include_names))                              \
  X(nvrtcCompileProgram, (nvrtcProgram program, int num_options, const char* const* options)) \
  X(nvrtcGetProgramLogSize, (nvrtcProgram program, size_t * size))                      \
  X(nvrtcGetProgramLog, (nvrtcProgram program, char* log))                               \
  X(nvrtcGetCUBINSize, (nvrtcProgram program, size_t * size))                           \
  X(nvrtcGetCUBIN, (nvrtcProgram program, char* cubin))                                 \
  X(nvrtcDestroyProgram, (nvrtcProgram * program))                                       \
  X(nvrtcAddNameExpression, (nvrtcProgram program, const char* name_expression))         \
  X(nvrtcGetLoweredName, (nvrtcProgram program, const char* name_expression,            \
                          const char** lowered_name))

/// The loaded NVRTC: one function pointer per entry of the table above.
struct NvrtcApi {
#define XRT_DECLARE_NVRTC_FN(name, params) nvrtcResult(*name) params = nullptr;
  XRT_NVRTC_FUNCTIONS(XRT_DECLARE_NVRTC_FN)
#undef XRT_DECLARE_NVRTC_FN
  const char* (*nvrtcGetErrorString)(nvrtcResult result) = nullptr;
  int major = 0, minor = 0;  ///< nvrtcVersion's answer
};

/// NVRTC, loaded on first use; CudaError saying why when it cannot be found or is unusable.
const NvrtcApi& nvrtc();

/// Throws CudaError ("<what> failed: <NVRTC's error string>") unless result is success.
void nvrtc_check(nvrtcResult result, const char* what);

}  // namespace xrt::cuda

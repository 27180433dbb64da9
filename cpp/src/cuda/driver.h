// cpp/src/cuda/driver.h: the CUDA driver API, declared here (only what is used) and loaded
// from libcuda.so.1 at run time. Nothing includes cuda.h: the build never needs the toolkit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace xrt::cuda {

// The driver's handle types, as cuda.h declares them (opaque pointers and integers).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUgraphNode = struct CUgraphNode_st*;
using CUmemoryPool = struct CUmemPoolHandle_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901;

struct CUuuid { char bytes[16]; };

// Flags and attributes (values from cuda.h).
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned CU_EVENT_DEFAULT = 0x0;
inline constexpr unsigned CU_EVENT_BLOCKING_SYNC = 0x1;
inline constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
inline constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 0x1;
inline constexpr unsigned CU_MEMHOSTREGISTER_PORTABLE = 0x1;
/// The legacy default stream and the per-thread default stream, as DLPack numbers them too.
inline const CUstream CU_STREAM_LEGACY = reinterpret_cast<CUstream>(0x1);
inline const CUstream CU_STREAM_PER_THREAD = reinterpret_cast<CUstream>(0x2);

enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
};

enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum CUstreamCaptureMode : int {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
};

enum CUstreamCaptureStatus : int {
  CU_STREAM_CAPTURE_STATUS_NONE = 0,
  CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
  CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
};

enum CUpointer_attribute : int {
  CU_POINTER_ATTRIBUTE_CONTEXT = 1,
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
};

enum CUmemPool_attribute : int {
  CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
  CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5,
  CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH = 6,
  CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7,
  CU_MEMPOOL_ATTR_USED_MEM_HIGH = 8,
};

// X(name, symbol, parameters): every driver function xpuruntime calls. `symbol` is the
// versioned name exported by libcuda (what cuda.h's #defines resolve to).
#define XRT_CUDA_DRIVER_FUNCTIONS(X)                                                         \
  X(cuInit, "cuInit", (unsigned flags))                                                      \
  X(cuDriverGetVersion, "cuDriverGetVersion", (int* version))                                \
  X(cuGetErrorName, "cuGetErrorName", (CUresult error, const char** text))                   \
  X(cuGetErrorString, "cuGetErrorString", (CUresult error, const char** text))               \
  X(cuDeviceGetCount, "cuDeviceGetCount", (int* count))                                      \
  X(cuDeviceGet, "cuDeviceGet", (CUdevice * device, int ordinal))                            \
  X(cuDeviceGetName, "cuDeviceGetName", (char* name, int len, CUdevice device))              \
  X(cuDeviceGetUuid, "cuDeviceGetUuid_v2", (CUuuid * uuid, CUdevice device))                  \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", (size_t * bytes, CUdevice device))              \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute",                                            \
    (int* value, CUdevice_attribute attribute, CUdevice device))                             \
  X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer",                                          \
    (int* can, CUdevice device, CUdevice peer))                                              \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * ctx, CUdevice device)) \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice device))            \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext ctx))                                     \
  X(cuCtxGetCurrent, "cuCtxGetCurrent", (CUcontext * ctx))                                   \
  X(cuCtxGetDevice, "cuCtxGetDevice", (CUdevice * device))                                   \
  X(cuCtxSynchronize, "cuCtxSynchronize", ())                                                \
  X(cuCtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange", (int* least, int* greatest)) \
  X(cuMemGetInfo, "cuMemGetInfo_v2", (size_t * free, size_t * total))                        \
  X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr * ptr, size_t bytes))                          \
  X(cuMemFree, "cuMemFree_v2", (CUdeviceptr ptr))                                            \
  X(cuMemAllocAsync, "cuMemAllocAsync", (CUdeviceptr * ptr, size_t bytes, CUstream stream))  \
  X(cuMemFreeAsync, "cuMemFreeAsync", (CUdeviceptr ptr, CUstream stream))                    \
  X(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", (CUmemoryPool * pool, CUdevice device)) \
  X(cuMemPoolSetAttribute, "cuMemPoolSetAttribute",                                          \
    (CUmemoryPool pool, CUmemPool_attribute attribute, void* value))                         \
  X(cuMemPoolGetAttribute, "cuMemPoolGetAttribute",                                          \
    (CUmemoryPool pool, CUmemPool_attribute attribute, void* value))                         \
  X(cuMemPoolTrimTo, "cuMemPoolTrimTo", (CUmemoryPool pool, size_t keep))                    \
  X(cuMemHostAlloc, "cuMemHostAlloc", (void** ptr, size_t bytes, unsigned flags))            \
  X(cuMemFreeHost, "cuMemFreeHost", (void* ptr))                                             \
  X(cuMemHostRegister, "cuMemHostRegister_v2", (void* ptr, size_t bytes, unsigned flags))    \
  X(cuMemHostUnregister, "cuMemHostUnregister", (void* ptr))                                 \
  X(cuPointerGetAttribute, "cuPointerGetAttribute",                                          \
    (void* data, CUpointer_attribute attribute, CUdeviceptr ptr))                            \
  X(cuMemcpyAsync, "cuMemcpyAsync", (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream)) \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                               \
    (CUdeviceptr dst, const void* src, size_t bytes, CUstream stream))                       \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2",                                               \
    (void* dst, CUdeviceptr src, size_t bytes, CUstream stream))                             \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                               \
    (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream))                       \
  X(cuMemcpyPeerAsync, "cuMemcpyPeerAsync",                                                  \
    (CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t bytes,   \
     CUstream stream))                                                                       \
  X(cuMemsetD8Async, "cuMemsetD8Async", (CUdeviceptr dst, unsigned char value, size_t n, CUstream stream)) \
  X(cuMemsetD32Async, "cuMemsetD32Async", (CUdeviceptr dst, unsigned value, size_t n, CUstream stream)) \
  X(cuStreamCreateWithPriority, "cuStreamCreateWithPriority",                                \
    (CUstream * stream, unsigned flags, int priority))                                       \
  X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream stream))                                \
  X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream stream))                           \
  X(cuStreamQuery, "cuStreamQuery", (CUstream stream))                                       \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", (CUstream stream, CUevent event, unsigned flags)) \
  X(cuStreamGetPriority, "cuStreamGetPriority", (CUstream stream, int* priority))            \
  X(cuStreamGetCtx, "cuStreamGetCtx", (CUstream stream, CUcontext * ctx))                     \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream stream, CUstreamCaptureMode mode)) \
  X(cuStreamEndCapture, "cuStreamEndCapture", (CUstream stream, CUgraph * graph))            \
  X(cuStreamIsCapturing, "cuStreamIsCapturing", (CUstream stream, CUstreamCaptureStatus * status)) \
  X(cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode",                  \
    (CUstreamCaptureMode * mode))                                                            \
  X(cuEventCreate, "cuEventCreate", (CUevent * event, unsigned flags))                       \
  X(cuEventDestroy, "cuEventDestroy_v2", (CUevent event))                                    \
  X(cuEventRecord, "cuEventRecord", (CUevent event, CUstream stream))                        \
  X(cuEventQuery, "cuEventQuery", (CUevent event))                                           \
  X(cuEventSynchronize, "cuEventSynchronize", (CUevent event))                               \
  X(cuEventElapsedTime, "cuEventElapsedTime_v2", (float* ms, CUevent start, CUevent end))       \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags",                              \
    (CUgraphExec * exec, CUgraph graph, unsigned long long flags))                           \
  X(cuGraphLaunch, "cuGraphLaunch", (CUgraphExec exec, CUstream stream))                     \
  X(cuGraphUpload, "cuGraphUpload", (CUgraphExec exec, CUstream stream))                     \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec exec))                            \
  X(cuGraphDestroy, "cuGraphDestroy", (CUgraph graph))                                       \
  X(cuGraphGetNodes, "cuGraphGetNodes", (CUgraph graph, CUgraphNode * nodes, size_t * count)) \
  X(cuModuleLoadData, "cuModuleLoadData", (CUmodule * module, const void* image))            \
  X(cuModuleUnload, "cuModuleUnload", (CUmodule module))                                     \
  X(cuModuleGetFunction, "cuModuleGetFunction", (CUfunction * fn, CUmodule module, const char* name)) \
  X(cuModuleGetGlobal, "cuModuleGetGlobal_v2",                                               \
    (CUdeviceptr * ptr, size_t * bytes, CUmodule module, const char* name))                   \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction fn, CUfunction_attribute attribute, int value)) \
  X(cuFuncGetAttribute, "cuFuncGetAttribute", (int* value, CUfunction_attribute attribute, CUfunction fn)) \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", \
    (int* blocks, CUfunction fn, int block_size, size_t dynamic_shared))                    \
  X(cuLaunchKernel, "cuLaunchKernel",                                                        \
    (CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,         \
     unsigned bz, unsigned shared_bytes, CUstream stream, void** params, void** extra))

/// cuda.h's CUlaunchConfig: cuLaunchKernelEx's launch, attributes aside.
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  CUstream hStream;
  void* attrs;  // CUlaunchAttribute*
  unsigned numAttrs;
};

/// The loaded driver: one function pointer per entry of the table above, and the optional
/// ones (null when this driver lacks them).
struct DriverApi {
#define XRT_DECLARE_DRIVER_FN(name, symbol, params) CUresult (*name) params = nullptr;
  XRT_CUDA_DRIVER_FUNCTIONS(XRT_DECLARE_DRIVER_FN)
#undef XRT_DECLARE_DRIVER_FN
  /// CUDA 11.8+; launch() prefers it (Note [Launching through cuLaunchKernelEx] in launch.cpp).
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig* config, CUfunction fn, void** params,
                               void** extra) = nullptr;
};

/// The driver, loaded and initialised on first use; CudaError with the reason (no driver,
/// no device) when CUDA cannot be used here.
const DriverApi& driver();

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a driver result code.
std::string error_text(CUresult result);

/// Throws CudaError ("<what> failed: <error_text>"), or OutOfMemoryError for
/// CUDA_ERROR_OUT_OF_MEMORY, when result is not CUDA_SUCCESS.
void check(CUresult result, const char* what);


}  // namespace xrt::cuda

#define XRT_CU(call_name, ...) \
  ::xrt::cuda::check(::xrt::cuda::driver().call_name(__VA_ARGS__), #call_name)

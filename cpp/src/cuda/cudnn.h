// cpp/src/cuda/cudnn.h: cuDNN's graph (backend) API, declared here (only what is used) and
// opened on first use from the `nvidia-cudnn-cu13` wheel like the other CUDA libraries;
// one handle per device. Nothing includes cudnn.h: the build never needs cuDNN.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>

#include "cuda/driver.h"

namespace xrt::cuda {

using cudnnStatus_t = int;
using cudnnHandle_t = struct cudnnContext*;
using cudnnBackendDescriptor_t = void*;

inline constexpr cudnnStatus_t CUDNN_STATUS_SUCCESS = 0;

// Enum values from cudnn_graph.h (cuDNN 9; read from 9.28's header, unchanged since 9.0).
enum cudnnDataType_t : int {
  CUDNN_DATA_FLOAT = 0, CUDNN_DATA_HALF = 2, CUDNN_DATA_INT32 = 4, CUDNN_DATA_BFLOAT16 = 9,
  CUDNN_DATA_BOOLEAN = 11,
};
enum cudnnBackendAttributeType_t : int {
  CUDNN_TYPE_HANDLE = 0, CUDNN_TYPE_DATA_TYPE = 1, CUDNN_TYPE_BOOLEAN = 2, CUDNN_TYPE_INT64 = 3,
  CUDNN_TYPE_FLOAT = 4, CUDNN_TYPE_VOID_PTR = 6, CUDNN_TYPE_HEUR_MODE = 8,
  CUDNN_TYPE_POINTWISE_MODE = 14, CUDNN_TYPE_BACKEND_DESCRIPTOR = 15,
  CUDNN_TYPE_REDUCTION_OPERATOR_TYPE = 18,
};
enum cudnnBackendDescriptorType_t : int {
  CUDNN_BACKEND_POINTWISE_DESCRIPTOR = 0, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR = 3,
  CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR = 4, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR = 5,
  CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR = 13, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR = 15,
  CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR = 16, CUDNN_BACKEND_TENSOR_DESCRIPTOR = 17,
  CUDNN_BACKEND_MATMUL_DESCRIPTOR = 18, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR = 19,
  CUDNN_BACKEND_REDUCTION_DESCRIPTOR = 21, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR = 22,
  CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR = 31,
};
enum cudnnBackendAttributeName_t : int {
  CUDNN_ATTR_POINTWISE_MODE = 0, CUDNN_ATTR_POINTWISE_MATH_PREC = 1,
  CUDNN_ATTR_POINTWISE_AXIS = 9,
  CUDNN_ATTR_ENGINEHEUR_MODE = 200, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 201,
  CUDNN_ATTR_ENGINEHEUR_RESULTS = 202,
  CUDNN_ATTR_EXECUTION_PLAN_HANDLE = 400, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401,
  CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402,
  CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR = 750, CUDNN_ATTR_OPERATION_POINTWISE_XDESC = 751,
  CUDNN_ATTR_OPERATION_POINTWISE_BDESC = 752, CUDNN_ATTR_OPERATION_POINTWISE_YDESC = 753,
  CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1 = 754, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2 = 755,
  CUDNN_ATTR_OPERATION_POINTWISE_TDESC = 758,
  CUDNN_ATTR_OPERATIONGRAPH_HANDLE = 800, CUDNN_ATTR_OPERATIONGRAPH_OPS = 801,
  CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT = 900, CUDNN_ATTR_TENSOR_DATA_TYPE = 901,
  CUDNN_ATTR_TENSOR_DIMENSIONS = 902, CUDNN_ATTR_TENSOR_STRIDES = 903,
  CUDNN_ATTR_TENSOR_UNIQUE_ID = 906, CUDNN_ATTR_TENSOR_IS_VIRTUAL = 907,
  CUDNN_ATTR_TENSOR_IS_BY_VALUE = 908,
  CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS = 1000, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS = 1001,
  CUDNN_ATTR_VARIANT_PACK_WORKSPACE = 1003,
  CUDNN_ATTR_MATMUL_COMP_TYPE = 1500,
  CUDNN_ATTR_OPERATION_MATMUL_ADESC = 1520, CUDNN_ATTR_OPERATION_MATMUL_BDESC = 1521,
  CUDNN_ATTR_OPERATION_MATMUL_CDESC = 1522, CUDNN_ATTR_OPERATION_MATMUL_DESC = 1523,
  CUDNN_ATTR_REDUCTION_OPERATOR = 1600, CUDNN_ATTR_REDUCTION_COMP_TYPE = 1601,
  CUDNN_ATTR_OPERATION_REDUCTION_XDESC = 1610, CUDNN_ATTR_OPERATION_REDUCTION_YDESC = 1611,
  CUDNN_ATTR_OPERATION_REDUCTION_DESC = 1612,
  CUDNN_ATTR_OPERATION_RESHAPE_XDESC = 2200, CUDNN_ATTR_OPERATION_RESHAPE_YDESC = 2201,
};
enum cudnnPointwiseMode_t : int {
  CUDNN_POINTWISE_ADD = 0, CUDNN_POINTWISE_MUL = 1, CUDNN_POINTWISE_DIV = 6,
  CUDNN_POINTWISE_SUB = 9, CUDNN_POINTWISE_EXP = 13, CUDNN_POINTWISE_LOG = 15,
  CUDNN_POINTWISE_IDENTITY = 21, CUDNN_POINTWISE_CMP_GE = 303,
  CUDNN_POINTWISE_GEN_INDEX = 501, CUDNN_POINTWISE_BINARY_SELECT = 601,
};
enum cudnnReduceTensorOp_t : int { CUDNN_REDUCE_TENSOR_ADD = 0, CUDNN_REDUCE_TENSOR_MAX = 3 };
enum cudnnBackendHeurMode_t : int { CUDNN_HEUR_MODE_A = 3, CUDNN_HEUR_MODE_FALLBACK = 2 };

// X(name, parameters): the cuDNN functions xpuruntime calls.
#define XRT_CUDNN_FUNCTIONS(X)                                                               \
  X(cudnnCreate, (cudnnHandle_t * handle))                                                   \
  X(cudnnSetStream, (cudnnHandle_t handle, CUstream stream))                                 \
  X(cudnnBackendCreateDescriptor,                                                            \
    (cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t * descriptor))              \
  X(cudnnBackendDestroyDescriptor, (cudnnBackendDescriptor_t descriptor))                    \
  X(cudnnBackendFinalize, (cudnnBackendDescriptor_t descriptor))                             \
  X(cudnnBackendSetAttribute,                                                                \
    (cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,                  \
     cudnnBackendAttributeType_t type, int64_t count, const void* elements))                 \
  X(cudnnBackendGetAttribute,                                                                \
    (cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,                  \
     cudnnBackendAttributeType_t type, int64_t requested, int64_t* returned,                 \
     void* elements))                                                                        \
  X(cudnnBackendExecute,                                                                     \
    (cudnnHandle_t handle, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack))

struct CudnnApi {
#define XRT_DECLARE_CUDNN_FN(name, params) cudnnStatus_t (*name) params = nullptr;
  XRT_CUDNN_FUNCTIONS(XRT_DECLARE_CUDNN_FN)
#undef XRT_DECLARE_CUDNN_FN
  size_t (*cudnnGetVersion)() = nullptr;
  const char* (*cudnnGetErrorString)(cudnnStatus_t status) = nullptr;
  void (*cudnnGetLastErrorString)(char* message, size_t max_size) = nullptr;  ///< optional
};

/// cuDNN, resolved on first use; CudaError saying how to install it when it cannot be loaded
/// (`pip install nvidia-cudnn-cu13`, the `cuda` extra).
const CudnnApi& cudnn();

/// "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN: <cuDNN's last error message>"
std::string cudnn_error_text(cudnnStatus_t status);

/// Throws CudaError ("cuDNN <what> failed: <cudnn_error_text>") unless status is success.
void check_cudnn(cudnnStatus_t status, const char* what);

/// The process's handle on device and the mutex that serialises its use (a handle is not
/// safe to use from two threads at once, and execution plans belong to the handle that
/// built them). Created on first use, never destroyed: at process exit the driver may
/// already be gone (Note [cuBLAS handles]).
struct CudnnHandle {
  std::mutex mutex;
  cudnnHandle_t handle = nullptr;
  CUstream stream = nullptr;  ///< the stream the handle is bound to
  /// Binds the handle to stream (mutex held).
  void bind(CUstream s);
};
/// device's handle; makes device current on the calling thread.
CudnnHandle& cudnn_handle(int device);

}  // namespace xrt::cuda

#define XRT_CUDNN(call_name, ...) \
  ::xrt::cuda::check_cudnn(::xrt::cuda::cudnn().call_name(__VA_ARGS__), #call_name)

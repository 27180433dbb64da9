// cpp/src/cuda/nccl.h: NCCL, declared here (only what is used) and opened on first use.
// Nothing includes nccl.h: the build never needs NCCL, the wheel `nvidia-nccl-cu13` (or the
// system's libnccl.so.2) is found at run time like cuBLAS.
#pragma once
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda/driver.h"
#include "xpuruntime/cuda/collectives.h"
#include "xpuruntime/dtype.h"

namespace xrt::cuda {

// Types and values as nccl.h declares them (NCCL 2.14 and newer).
using ncclResult_t = int;
using ncclComm_t = struct ncclComm*;
inline constexpr ncclResult_t ncclSuccess = 0;
inline constexpr ncclResult_t ncclInvalidArgument = 4;
inline constexpr ncclResult_t ncclInvalidUsage = 5;
inline constexpr ncclResult_t ncclInProgress = 7;

/// The opaque id rank 0 makes and every rank passes to the communicator's init.
struct ncclUniqueId {
  char internal[128];
};

enum ncclDataType_t : int {
  ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclUint32 = 3, ncclInt64 = 4, ncclUint64 = 5,
  ncclFloat16 = 6, ncclFloat32 = 7, ncclFloat64 = 8, ncclBfloat16 = 9,
};
enum ncclRedOp_t : int { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 };

// Note [NCCL config]: ncclConfig_t grows with each NCCL release; NCCL reads `size` bytes of
// what it is given and resets every field newer than `version` to its default. So declaring
// the 2.14 prefix (the release that added `blocking`) with version 2.14.0 is understood by
// every newer library, and the build needs no nccl.h. The int after `blocking` fills the
// struct's tail padding (it is 2.17's cgaClusterSize, reset to its default for 2.14).
struct ncclConfig_v21400 {
  size_t size = sizeof(ncclConfig_v21400);
  unsigned magic = 0xcafebeef;
  unsigned version = 21400;  // NCCL_VERSION(2, 14, 0)
  int blocking = INT_MIN;    // NCCL_CONFIG_UNDEF_INT: NCCL's default
  int cga_cluster_size = INT_MIN;
};
static_assert(sizeof(ncclConfig_v21400) == 24, "the layout of NCCL 2.14's config prefix");

// X(name, parameters): the NCCL functions xpuruntime calls.
#define XRT_NCCL_FUNCTIONS(X)                                                                 \
  X(ncclGetVersion, (int* version))                                                           \
  X(ncclGetUniqueId, (ncclUniqueId * id))                                                     \
  X(ncclCommInitRankConfig,                                                                   \
    (ncclComm_t * comm, int nranks, ncclUniqueId id, int rank, ncclConfig_v21400* config))    \
  X(ncclCommGetAsyncError, (ncclComm_t comm, ncclResult_t * error))                           \
  X(ncclCommFinalize, (ncclComm_t comm))                                                      \
  X(ncclCommDestroy, (ncclComm_t comm))                                                       \
  X(ncclCommAbort, (ncclComm_t comm))                                                         \
  X(ncclAllReduce, (const void* send, void* recv, size_t count, ncclDataType_t type,         \
                    ncclRedOp_t op, ncclComm_t comm, CUstream stream))                        \
  X(ncclBroadcast, (const void* send, void* recv, size_t count, ncclDataType_t type,         \
                    int root, ncclComm_t comm, CUstream stream))                              \
  X(ncclReduce, (const void* send, void* recv, size_t count, ncclDataType_t type,            \
                 ncclRedOp_t op, int root, ncclComm_t comm, CUstream stream))                 \
  X(ncclAllGather, (const void* send, void* recv, size_t send_count, ncclDataType_t type,    \
                    ncclComm_t comm, CUstream stream))                                        \
  X(ncclReduceScatter, (const void* send, void* recv, size_t recv_count,                     \
                        ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,                 \
                        CUstream stream))                                                     \
  X(ncclSend, (const void* send, size_t count, ncclDataType_t type, int peer,                \
               ncclComm_t comm, CUstream stream))                                             \
  X(ncclRecv, (void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,     \
               CUstream stream))                                                              \
  X(ncclGroupStart, ())                                                                       \
  X(ncclGroupEnd, ())

/// The loaded library: one function pointer per entry of the table above, and the two
/// that return text.
struct NcclApi {
#define XRT_DECLARE_NCCL_FN(name, params) ncclResult_t (*name) params = nullptr;
  XRT_NCCL_FUNCTIONS(XRT_DECLARE_NCCL_FN)
#undef XRT_DECLARE_NCCL_FN
  const char* (*ncclGetErrorString)(ncclResult_t result) = nullptr;
  const char* (*ncclGetLastError)(ncclComm_t comm) = nullptr;  ///< optional (2.13+)
};

/// NCCL, resolved on first use; CudaError saying how to install it when it cannot be loaded
/// (`pip install nvidia-nccl-cu13`, the `distributed` extra).
const NcclApi& nccl();

/// The NCCL type of dtype and how many of it one element is (2 for complex, itemsize for
/// data movement, which moves bytes); false when NCCL cannot reduce dtype with op.
bool nccl_wire_type(DType dtype, ReduceOp op, bool reduction, int& type, int& lanes);

/// "ncclRemoteError (remote process exited or there was a network error): <last error>"
std::string nccl_error_text(ncclResult_t result, ncclComm_t comm = nullptr);

}  // namespace xrt::cuda

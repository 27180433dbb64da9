// cpp/src/cuda/nccl.cpp: resolves the NCCL table; the checks every collective makes before
// it queues anything (xpuruntime/cuda/collectives.h).
#include "cuda/nccl.h"

#include <cstring>
#include <string>

#include "cuda/library_table.h"
#include "xpuruntime/cuda/collectives.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

NcclApi load_nccl() {
  return load_library_table<NcclApi>(Library::Nccl, "NCCL", "nvidia-nccl-cu13",
                                     [](NcclApi& api, auto resolve) {
#define XRT_RESOLVE_NCCL_FN(name, params) \
  api.name = reinterpret_cast<decltype(api.name)>(resolve(#name));
    XRT_NCCL_FUNCTIONS(XRT_RESOLVE_NCCL_FN)
#undef XRT_RESOLVE_NCCL_FN
    api.ncclGetErrorString =
        reinterpret_cast<decltype(api.ncclGetErrorString)>(resolve("ncclGetErrorString"));
    api.ncclGetLastError =
        reinterpret_cast<decltype(api.ncclGetLastError)>(resolve("ncclGetLastError", false));
  }, "distributed");
}

const char* result_name(ncclResult_t result) {
  switch (result) {
    case 0: return "ncclSuccess";
    case 1: return "ncclUnhandledCudaError";
    case 2: return "ncclSystemError";
    case 3: return "ncclInternalError";
    case 4: return "ncclInvalidArgument";
    case 5: return "ncclInvalidUsage";
    case 6: return "ncclRemoteError";
    case 7: return "ncclInProgress";
    default: return "ncclUnknownError";
  }
}

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "SUM";
    case ReduceOp::Prod: return "PROD";
    case ReduceOp::Min: return "MIN";
    case ReduceOp::Max: return "MAX";
    case ReduceOp::Avg: return "AVG";
  }
  return "?";
}

const char* collective_name(Collective kind) {
  switch (kind) {
    case Collective::AllReduce: return "all_reduce";
    case Collective::Broadcast: return "broadcast";
    case Collective::Reduce: return "reduce";
    case Collective::AllGather: return "all_gather";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::AllToAll: return "all_to_all";
    case Collective::Send: return "send";
    case Collective::Recv: return "recv";
  }
  return "?";
}

bool reduces(Collective kind) {
  return kind == Collective::AllReduce || kind == Collective::Reduce ||
         kind == Collective::ReduceScatter;
}

std::string dtype_name(DType dtype) { return std::string(dtype_info(dtype).name); }

void check_defined(const char* what, const char* role, const Tensor& t) {
  if (!t.defined()) throw ValueError(std::string(what) + ": the " + role + " is undefined");
}

void check_placement(const char* what, const char* role, const Tensor& t, int device) {
  Device d = t.device();
  if (d.is_cpu() || d.index != device)
    throw ValueError(std::string(what) + ": the " + role + " is on " + d.str() +
                     ", the communicator on cuda:" + std::to_string(device) +
                     " (NCCL moves device memory only)");
  if (!t.is_contiguous())
    throw ValueError(std::string(what) + ": the " + role + " must be contiguous (shape " +
                     shape_str(t.shape()) + ")");
}

// (world_size * n0, *rest) or (world_size, *part): the two layouts of a gathered tensor.
bool is_gathered_shape(const Dims& whole, const Dims& part, int world_size) {
  if (part.size() == 0) return whole.size() == 1 && whole[0] == world_size;
  if (whole.size() == part.size() + 1 && whole[0] == world_size) {
    for (size_t i = 0; i < part.size(); ++i)
      if (whole[i + 1] != part[i]) return false;
    return true;
  }
  if (whole.size() != part.size() || whole[0] != part[0] * world_size) return false;
  for (size_t i = 1; i < part.size(); ++i)
    if (whole[i] != part[i]) return false;
  return true;
}

}  // namespace

const NcclApi& nccl() {
  // Finds NCCL outside this one-time initialisation: Note [Finding libraries].
  library_handle(Library::Nccl);
  static const NcclApi api = load_nccl();  // a failed load throws again on the next call
  return api;
}

std::string nccl_error_text(ncclResult_t result, ncclComm_t comm) {
  std::string text = std::string(result_name(result)) + " (" + std::to_string(result) + ")";
  const NcclApi& api = nccl();
  if (const char* s = api.ncclGetErrorString(result); s && *s) text += ": " + std::string(s);
  if (api.ncclGetLastError)
    if (const char* s = api.ncclGetLastError(comm); s && *s) text += "; " + std::string(s);
  return text;
}

int nccl_version() {
  int version = 0;
  ncclResult_t r = nccl().ncclGetVersion(&version);
  if (r != ncclSuccess) throw CudaError("ncclGetVersion failed: " + nccl_error_text(r));
  return version;
}

UniqueId nccl_unique_id() {
  ncclUniqueId id;
  ncclResult_t r = nccl().ncclGetUniqueId(&id);
  if (r != ncclSuccess) throw CudaError("ncclGetUniqueId failed: " + nccl_error_text(r));
  UniqueId out;
  static_assert(sizeof(id) == kUniqueIdBytes);
  std::memcpy(out.data(), &id, kUniqueIdBytes);
  return out;
}

bool nccl_wire_type(DType dtype, ReduceOp op, bool reduction, int& type, int& lanes) {
  lanes = 1;
  if (!reduction) {  // data movement: bytes are bytes
    type = ncclUint8;
    lanes = static_cast<int>(itemsize(dtype));
    return true;
  }
  switch (dtype) {
    case DType::Int8: type = ncclInt8; break;
    case DType::UInt8: type = ncclUint8; break;
    case DType::Int32: type = ncclInt32; break;
    case DType::UInt32: type = ncclUint32; break;
    case DType::Int64: type = ncclInt64; break;
    case DType::UInt64: type = ncclUint64; break;
    case DType::Float16: type = ncclFloat16; break;
    case DType::BFloat16: type = ncclBfloat16; break;
    case DType::Float32: type = ncclFloat32; break;
    case DType::Float64: type = ncclFloat64; break;
    // Note: a sum (or mean) of complex numbers is the sum of their real and imaginary
    // parts, so complex reduces as twice as many reals; products and orderings do not.
    case DType::Complex64: type = ncclFloat32, lanes = 2; break;
    case DType::Complex128: type = ncclFloat64, lanes = 2; break;
    // Booleans are one byte holding 0 or 1: MAX is "any", MIN is "all".
    case DType::Bool: type = ncclUint8; break;
    default: return false;
  }
  if (is_complex(dtype)) return op == ReduceOp::Sum || op == ReduceOp::Avg;
  if (dtype == DType::Bool) return op == ReduceOp::Max || op == ReduceOp::Min;
  // Note: NCCL would average integers with a truncating division; refusing keeps AVG the
  // mean the Array API's `mean` computes (floating only).
  if (op == ReduceOp::Avg) return is_floating(dtype);
  return true;
}

void check_collective(Collective kind, const Tensor& input, const Tensor& output, ReduceOp op,
                      int world_size, int device, int peer) {
  const char* what = collective_name(kind);
  const bool p2p = kind == Collective::Send || kind == Collective::Recv;
  // Dtypes and shapes first, the device last: the checks that need no GPU come first.
  check_defined(what, p2p ? "tensor" : "input", input);
  if (!p2p) {
    check_defined(what, "output", output);
    if (input.dtype() != output.dtype())
      throw TypeError(std::string(what) + ": the input is " + dtype_name(input.dtype()) +
                      ", the output " + dtype_name(output.dtype()) + " (they must match)");
  }
  int type = 0, lanes = 0;
  if (!nccl_wire_type(input.dtype(), op, reduces(kind), type, lanes))
    throw TypeError(std::string(what) + ": NCCL cannot reduce " + dtype_name(input.dtype()) +
                    " with " + op_name(op));
  const Dims& in = input.shape();
  switch (kind) {
    case Collective::AllReduce:
    case Collective::Broadcast:
    case Collective::Reduce:
      if (in != output.shape())
        throw ValueError(std::string(what) + ": the input's shape " + shape_str(in) +
                         " differs from the output's " + shape_str(output.shape()));
      break;
    case Collective::AllGather:
      if (!is_gathered_shape(output.shape(), in, world_size))
        throw ValueError(std::string(what) + ": an output of shape " +
                         shape_str(output.shape()) + " cannot hold " +
                         std::to_string(world_size) + " inputs of shape " + shape_str(in));
      break;
    case Collective::ReduceScatter:
      if (!is_gathered_shape(in, output.shape(), world_size))
        throw ValueError(std::string(what) + ": an input of shape " + shape_str(in) +
                         " is not " + std::to_string(world_size) + " outputs of shape " +
                         shape_str(output.shape()));
      break;
    case Collective::AllToAll:
      if (in != output.shape())
        throw ValueError(std::string(what) + ": the input's shape " + shape_str(in) +
                         " differs from the output's " + shape_str(output.shape()));
      if (in.size() == 0 || in[0] % world_size != 0)
        throw ValueError(std::string(what) + ": the first axis (shape " + shape_str(in) +
                         ") must split into " + std::to_string(world_size) +
                         " equal blocks, one per rank");
      break;
    case Collective::Send:
    case Collective::Recv:
      break;
  }
  if (peer < 0 || peer >= world_size)
    throw ValueError(std::string(what) + ": " + (p2p ? "peer " : "root ") +
                     std::to_string(peer) + " is not a rank of a communicator of " +
                     std::to_string(world_size));
  check_placement(what, p2p ? "tensor" : "input", input, device);
  if (kind == Collective::Recv && input.readonly())
    throw ValueError(std::string(what) + ": the tensor is read-only");
  if (!p2p) {
    check_placement(what, "output", output, device);
    if (output.readonly()) throw ValueError(std::string(what) + ": the output is read-only");
  }
}

}  // namespace xrt::cuda

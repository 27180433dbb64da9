// cpp/src/cuda/cudnn_graph.h: a cuDNN operation graph under construction (tensors; pointwise,
// matmul, reduction and reshape operations on 4-d tensors) and its execution plan. The graph
// owns every descriptor it makes; the plan it builds is the caller's.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/cudnn.h"

namespace xrt::cuda {

using CudnnDesc = cudnnBackendDescriptor_t;
using Dims4 = std::array<int64_t, 4>;

/// Row-major strides (elements) of a 4-d shape.
Dims4 contiguous_strides(const Dims4& dims);

class CudnnGraph {
 public:
  /// io: the type of the inputs and outputs; intermediates take ids from first_virtual on.
  CudnnGraph(cudnnDataType_t io, int64_t first_virtual) : io_(io), next_virtual_(first_virtual) {}
  CudnnGraph(const CudnnGraph&) = delete;
  CudnnGraph& operator=(const CudnnGraph&) = delete;
  ~CudnnGraph();

  CudnnDesc make(cudnnBackendDescriptorType_t type);
  /// A tensor the variant pack names (by_value: a host scalar passed at each run).
  CudnnDesc tensor(int64_t uid, const Dims4& dims, const Dims4& strides, cudnnDataType_t type,
                   bool by_value = false);
  /// An intermediate the engine keeps to itself.
  CudnnDesc virtual_tensor(const Dims4& dims, const Dims4& strides, cudnnDataType_t type);
  /// A float host scalar passed by value at each run.
  CudnnDesc scalar(int64_t uid);

  void pointwise(cudnnPointwiseMode_t mode, CudnnDesc x, CudnnDesc b, CudnnDesc t, CudnnDesc y,
                 cudnnDataType_t compute = CUDNN_DATA_FLOAT, int64_t axis = -1);
  /// y = x op b with y a new float intermediate of `shape`.
  CudnnDesc pointwise(cudnnPointwiseMode_t mode, CudnnDesc x, CudnnDesc b, const Dims4& shape);
  void matmul(CudnnDesc a, CudnnDesc b, CudnnDesc c);
  void reduction(cudnnReduceTensorOp_t reduce, CudnnDesc x, CudnnDesc y);
  void reshape(CudnnDesc x, CudnnDesc y);

  /// The execution plan of the first of cuDNN's engine configurations (heuristics mode A,
  /// then the fallback list) that builds on handle; null, with why_not set, when none does,
  /// and `transient` set when a failure may pass (Note [cuDNN plan failures]).
  CudnnDesc build_plan(cudnnHandle_t handle, std::string& why_not, bool& transient);

  cudnnDataType_t io() const { return io_; }
  /// The variant pack's ids, in the order they were declared.
  const std::vector<int64_t>& uids() const { return uids_; }

 private:
  CudnnDesc make_tensor(int64_t uid, const Dims4& dims, const Dims4& strides,
                        cudnnDataType_t type, bool is_virtual, bool by_value);
  void finish(CudnnDesc op);

  cudnnDataType_t io_;
  int64_t next_virtual_;
  std::vector<CudnnDesc> owned_, ops_;
  std::vector<int64_t> uids_;
};

}  // namespace xrt::cuda

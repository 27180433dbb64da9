// cpp/src/cuda/cudnn_graph.cpp: cuDNN operation graphs (cuda/cudnn_graph.h): descriptors made,
// set and finalised through cuDNN's backend API, and the search for an execution plan.
#include "cuda/cudnn_graph.h"

namespace xrt::cuda {
namespace {

void set(CudnnDesc d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
         int64_t count, const void* values) {
  XRT_CUDNN(cudnnBackendSetAttribute, d, name, type, count, values);
}

}  // namespace

Dims4 contiguous_strides(const Dims4& dims) {
  return {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
}

CudnnGraph::~CudnnGraph() {
  for (CudnnDesc d : owned_) cudnn().cudnnBackendDestroyDescriptor(d);
}

CudnnDesc CudnnGraph::make(cudnnBackendDescriptorType_t type) {
  CudnnDesc d = nullptr;
  XRT_CUDNN(cudnnBackendCreateDescriptor, type, &d);
  owned_.push_back(d);
  return d;
}

CudnnDesc CudnnGraph::tensor(int64_t uid, const Dims4& dims, const Dims4& strides,
                             cudnnDataType_t type, bool by_value) {
  return make_tensor(uid, dims, strides, type, false, by_value);
}

CudnnDesc CudnnGraph::virtual_tensor(const Dims4& dims, const Dims4& strides,
                                     cudnnDataType_t type) {
  return make_tensor(next_virtual_++, dims, strides, type, true, false);
}

CudnnDesc CudnnGraph::scalar(int64_t uid) {
  return tensor(uid, {1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, true);
}

void CudnnGraph::pointwise(cudnnPointwiseMode_t mode, CudnnDesc x, CudnnDesc b, CudnnDesc t,
                           CudnnDesc y, cudnnDataType_t compute, int64_t axis) {
  CudnnDesc pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  if (mode == CUDNN_POINTWISE_GEN_INDEX)
    set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
  XRT_CUDNN(cudnnBackendFinalize, pw);
  CudnnDesc op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
  set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  if (b) set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
  if (t) set(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t);
  set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
  const float one = 1.0f;
  set(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one);
  set(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one);
  finish(op);
}

CudnnDesc CudnnGraph::pointwise(cudnnPointwiseMode_t mode, CudnnDesc x, CudnnDesc b,
                                const Dims4& shape) {
  CudnnDesc y = virtual_tensor(shape, contiguous_strides(shape), CUDNN_DATA_FLOAT);
  pointwise(mode, x, b, nullptr, y);
  return y;
}

void CudnnGraph::matmul(CudnnDesc a, CudnnDesc b, CudnnDesc c) {
  CudnnDesc mm = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  XRT_CUDNN(cudnnBackendFinalize, mm);
  CudnnDesc op = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a);
  set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
  set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c);
  set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm);
  finish(op);
}

void CudnnGraph::reduction(cudnnReduceTensorOp_t reduce, CudnnDesc x, CudnnDesc y) {
  CudnnDesc r = make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  set(r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  set(r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce);
  XRT_CUDNN(cudnnBackendFinalize, r);
  CudnnDesc op = make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  set(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
  set(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &r);
  finish(op);
}

void CudnnGraph::reshape(CudnnDesc x, CudnnDesc y) {
  CudnnDesc op = make(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  set(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  set(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
  finish(op);
}

CudnnDesc CudnnGraph::make_tensor(int64_t uid, const Dims4& dims, const Dims4& strides,
                                  cudnnDataType_t type, bool is_virtual, bool by_value) {
  CudnnDesc t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const int64_t alignment = 16;
  set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
  set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
  set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
  if (by_value) set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
  XRT_CUDNN(cudnnBackendFinalize, t);
  if (!is_virtual) uids_.push_back(uid);
  return t;
}

void CudnnGraph::finish(CudnnDesc op) {
  XRT_CUDNN(cudnnBackendFinalize, op);
  ops_.push_back(op);
}

namespace {

// Note [cuDNN plan failures]: cuDNN 9 numbers its statuses by family. 2xxx (a bad
// parameter) and 3xxx (not supported) say that this graph does not build on this cuDNN, and
// never will in this process; 4xxx (an internal error: host or device memory it could not
// allocate, a kernel it could not compile) and 5xxx (execution failed) may pass, say under
// memory pressure. A caller declines a signature for good only on the first kind.
bool lasting(cudnnStatus_t status) { return status / 1000 == 2 || status / 1000 == 3; }

}  // namespace

CudnnDesc CudnnGraph::build_plan(cudnnHandle_t handle, std::string& why_not, bool& transient) {
  transient = false;
  CudnnDesc graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
      static_cast<int64_t>(ops_.size()), ops_.data());
  cudnnStatus_t st = cudnn().cudnnBackendFinalize(graph);
  if (st != CUDNN_STATUS_SUCCESS) {
    why_not = "the operation graph: " + cudnn_error_text(st);
    transient = !lasting(st);
    return nullptr;
  }
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    CudnnDesc heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if ((st = cudnn().cudnnBackendFinalize(heur)) != CUDNN_STATUS_SUCCESS) {
      why_not = "the heuristics: " + cudnn_error_text(st);
      transient |= !lasting(st);
      continue;
    }
    int64_t count = 0;
    XRT_CUDNN(cudnnBackendGetAttribute, heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
              CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr);
    if (count == 0) {
      why_not = "no engine configuration";
      continue;
    }
    std::vector<CudnnDesc> configs(static_cast<size_t>(count));
    for (CudnnDesc& c : configs) c = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    XRT_CUDNN(cudnnBackendGetAttribute, heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
              CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count, configs.data());
    for (int64_t i = 0; i < count; ++i) {
      CudnnDesc plan = nullptr;
      XRT_CUDNN(cudnnBackendCreateDescriptor, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
      set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
          &configs[static_cast<size_t>(i)]);
      if ((st = cudnn().cudnnBackendFinalize(plan)) == CUDNN_STATUS_SUCCESS) return plan;
      why_not = "its engines: " + cudnn_error_text(st);
      transient |= !lasting(st);
      cudnn().cudnnBackendDestroyDescriptor(plan);
    }
  }
  return nullptr;
}

}  // namespace xrt::cuda

// cpp/src/cuda/attention_cudnn.cpp: scaled dot-product attention as a cuDNN operation graph
// (xpuruntime/cuda/attention.h): the graph is built once per shape, layout and options, its
// execution plan kept, and each call runs the plan with the call's pointers.
//
// Note [cuDNN attention graphs]: cuDNN has no "attention" call in its C API. Its fused
// flash-attention engines are chosen by recognising a graph of matmul, pointwise and
// reduction operations; the graphs below are the ones cuDNN's frontend builds for its SDPA
// node (cudnn-frontend's CompositeSDPANode and CompositeSDPABackwardNode, without dropout,
// paged caches or ragged batches), so they are the ones cuDNN's engines are tested on:
//
//   forward:  S = Q·Kᵀ · scale [+ bias] [causal: S = row >= col ? S : -inf]
//             M = max(S), E = exp(S - M), Z = sum(E), stats = M + log(Z), P = E / Z,
//             O = P·V   (stats virtual when the caller does not want them)
//   backward: D = sum(dO * O) (per row, kept in the workspace)
//             S = Q·Kᵀ · scale [+ bias] - stats [causal mask], E = exp(S)  (= P)
//             dV = Eᵀ·dO, dS = (dO·Vᵀ - D) * E * scale, dK = dSᵀ·Q,
//             dQ = dS·K, accumulated in float32 in the workspace, then converted
//
// K and V enter as Kᵀ and Vᵀ (their last two sizes and strides swapped), and transposes of
// virtual tensors are reshape operations, as cuDNN's backend expects. Intermediates are
// float32 except P, Eᵀ and dSᵀ, which take the inputs' type as the matmuls after them do.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/cudnn.h"
#include "cuda/cudnn_graph.h"
#include "cuda/driver.h"
#include "xpuruntime/cuda/attention.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

using Desc = CudnnDesc;
using Dims = Dims4;
using Graph = CudnnGraph;

// The user-visible tensors' ids in the variant pack; virtual tensors count up from kFirstVirtual.
enum Uid : int64_t {
  kQ = 1, kK, kV, kO, kDO, kDQ, kDK, kDV, kBias, kStats, kScale, kNegInf, kOne, kRowSum,
  kDQAccum, kFirstVirtual = 100,
};

Dims swap_last(Dims v) {
  std::swap(v[2], v[3]);
  return v;
}

/// The causal mask of Note [cuDNN attention graphs]: s where row >= col, else -inf.
Desc causal_mask(Graph& g, Desc s, const Dims& shape) {
  const Dims strides = contiguous_strides(shape);
  Desc row = g.virtual_tensor(shape, strides, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, row, CUDNN_DATA_FLOAT, 2);
  Desc col = g.virtual_tensor(shape, strides, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, col, CUDNN_DATA_FLOAT, 3);
  Desc keep = g.virtual_tensor(shape, strides, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, col, nullptr, keep, CUDNN_DATA_BOOLEAN);
  Desc out = g.virtual_tensor(shape, strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, s, g.scalar(kNegInf), keep, out);
  return out;
}

struct Shape {
  int64_t b, h, sq, skv, d, dv;
};

void build_forward(Graph& g, const AttentionSpec& spec, const Shape& s) {
  const auto& t = spec.tensors;
  const cudnnDataType_t io = g.io();
  const Dims scores{s.b, s.h, s.sq, s.skv}, rows{s.b, s.h, s.sq, 1};
  Desc q = g.tensor(kQ, t[0].dims, t[0].strides, io);
  Desc kt = g.tensor(kK, swap_last(t[1].dims), swap_last(t[1].strides), io);
  Desc v = g.tensor(kV, t[2].dims, t[2].strides, io);
  Desc o = g.tensor(kO, t[3].dims, t[3].strides, io);

  Desc logits = g.virtual_tensor(scores, contiguous_strides(scores), CUDNN_DATA_FLOAT);
  g.matmul(q, kt, logits);
  Desc x = g.pointwise(CUDNN_POINTWISE_MUL, logits, g.scalar(kScale), scores);
  if (spec.bias)
    x = g.pointwise(CUDNN_POINTWISE_ADD, x, g.tensor(kBias, t[4].dims, t[4].strides, io), scores);
  if (spec.causal) x = causal_mask(g, x, scores);

  Desc max = g.virtual_tensor(rows, contiguous_strides(rows), CUDNN_DATA_FLOAT);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, x, max);
  Desc shifted = g.pointwise(CUDNN_POINTWISE_SUB, x, max, scores);
  Desc e = g.virtual_tensor(scores, contiguous_strides(scores), CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, nullptr, e);
  Desc sum = g.virtual_tensor(rows, contiguous_strides(rows), CUDNN_DATA_FLOAT);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  // The statistics are part of the pattern cuDNN's engines recognise even for inference
  // (measured: without them no engine takes the graph); unwanted, they stay virtual.
  Desc log = g.virtual_tensor(rows, contiguous_strides(rows), CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, nullptr, log);
  Desc stats = spec.stats ? g.tensor(kStats, rows, contiguous_strides(rows), CUDNN_DATA_FLOAT)
                          : g.virtual_tensor(rows, contiguous_strides(rows), CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_ADD, max, log, nullptr, stats);
  Desc p = g.virtual_tensor(scores, contiguous_strides(scores), io);
  g.pointwise(CUDNN_POINTWISE_DIV, e, sum, nullptr, p);
  g.matmul(p, v, o);
}

/// The backward's float32 buffers in the workspace, after cuDNN's own part.
struct Extras {
  int64_t row_sum_offset = 0, dq_accum_offset = 0, dq_accum_bytes = 0, total = 0;
};

void build_backward(Graph& g, const AttentionSpec& spec, const Shape& s) {
  const auto& t = spec.tensors;
  const cudnnDataType_t io = g.io();
  const Dims scores{s.b, s.h, s.sq, s.skv}, rows{s.b, s.h, s.sq, 1};
  const Dims transposed{s.b, s.h, s.skv, s.sq};
  const Dims transposed_strides{s.h * s.sq * s.skv, s.sq * s.skv, 1, s.skv};
  Desc q = g.tensor(kQ, t[0].dims, t[0].strides, io);
  Desc kt = g.tensor(kK, swap_last(t[1].dims), swap_last(t[1].strides), io);
  Desc vt = g.tensor(kV, swap_last(t[2].dims), swap_last(t[2].strides), io);
  Desc o = g.tensor(kO, t[3].dims, t[3].strides, io);
  Desc dout = g.tensor(kDO, t[4].dims, t[4].strides, io);
  Desc dq = g.tensor(kDQ, t[5].dims, t[5].strides, io);
  Desc dk = g.tensor(kDK, t[6].dims, t[6].strides, io);
  Desc dv = g.tensor(kDV, t[7].dims, t[7].strides, io);
  Desc stats = g.tensor(kStats, rows, contiguous_strides(rows), CUDNN_DATA_FLOAT);
  Desc scale = g.scalar(kScale);

  // D = sum(dO * O) per row (the frontend's layout for the product, which stays virtual).
  const Dims out_shape{s.b, s.h, s.sq, s.dv};
  Desc product = g.virtual_tensor(out_shape, {s.h * s.sq * s.dv, s.sq * s.dv, s.h * s.dv, 1},
                                  CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, dout, o, nullptr, product);
  Desc row_dot = g.virtual_tensor(rows, contiguous_strides(rows), CUDNN_DATA_FLOAT);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, product, row_dot);
  Desc row_sum = g.tensor(kRowSum, rows, contiguous_strides(rows), CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, row_dot, g.scalar(kOne), nullptr, row_sum);

  // P = exp(Q·Kᵀ · scale [+ bias] - stats), masked.
  Desc logits = g.virtual_tensor(scores, contiguous_strides(scores), CUDNN_DATA_FLOAT);
  g.matmul(q, kt, logits);
  Desc x = g.pointwise(CUDNN_POINTWISE_MUL, logits, scale, scores);
  if (spec.bias)
    x = g.pointwise(CUDNN_POINTWISE_ADD, x, g.tensor(kBias, t[8].dims, t[8].strides, io), scores);
  x = g.pointwise(CUDNN_POINTWISE_SUB, x, stats, scores);
  if (spec.causal) x = causal_mask(g, x, scores);
  Desc p = g.virtual_tensor(scores, contiguous_strides(scores), CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_EXP, x, nullptr, nullptr, p);

  // dV = Pᵀ·dO
  Desc pt = g.virtual_tensor(transposed, transposed_strides, io);
  g.reshape(p, pt);
  g.matmul(pt, dout, dv);

  // dS = (dO·Vᵀ - D) * P * scale
  Desc dp = g.virtual_tensor(scores, contiguous_strides(scores), CUDNN_DATA_FLOAT);
  g.matmul(dout, vt, dp);
  Desc ds = g.pointwise(CUDNN_POINTWISE_SUB, dp, row_sum, scores);
  ds = g.pointwise(CUDNN_POINTWISE_MUL, ds, p, scores);
  ds = g.pointwise(CUDNN_POINTWISE_MUL, ds, scale, scores);

  // dK = dSᵀ·Q
  Desc dst = g.virtual_tensor(transposed, transposed_strides, io);
  g.reshape(ds, dst);
  g.matmul(dst, q, dk);

  // dQ = dS·K, accumulated in float32, then converted.
  Desc k = g.virtual_tensor(t[1].dims, t[1].strides, io);
  g.reshape(kt, k);
  const Dims dq_shape{s.b, s.h, s.sq, s.d};
  Desc dq_accum = g.tensor(kDQAccum, dq_shape, contiguous_strides(dq_shape), CUDNN_DATA_FLOAT);
  g.matmul(ds, k, dq_accum);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_accum, nullptr, nullptr, dq);
}

struct Plan {
  int device = 0;
  std::shared_ptr<Graph> graph;  // the descriptors the plan was built from, kept with it
  Desc plan = nullptr;           // the execution plan
  std::vector<int64_t> uids;
  int64_t cudnn_workspace = 0;
  Extras extras;
  bool backward = false;
  bool memset_dq_accum = false;
};

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }


void check_spec(const AttentionSpec& spec, Shape& s) {
  if (spec.dtype != DType::Float16 && spec.dtype != DType::BFloat16)
    throw TypeError("cuDNN attention takes float16 or bfloat16 tensors, got " +
                    std::string(dtype_info(spec.dtype).name));
  const size_t want = (spec.backward ? 8 : 4) + (spec.bias ? 1 : 0);
  if (spec.tensors.size() != want)
    throw ValueError("cuDNN attention: expected " + std::to_string(want) +
                     " tensor layouts, got " + std::to_string(spec.tensors.size()));
  if (spec.backward && spec.stats)
    throw ValueError(
        "cuDNN attention: `stats` is for the forward (the backward always reads them)");
  const auto& t = spec.tensors;
  s = {t[0].dims[0], t[0].dims[1], t[0].dims[2], t[1].dims[2], t[0].dims[3], t[2].dims[3]};
  auto expect = [&](size_t i, const Dims& dims, const char* name) {
    if (t[i].dims != dims)
      throw ValueError(std::string("cuDNN attention: ") + name + " has sizes [" +
                       std::to_string(t[i].dims[0]) + ", " + std::to_string(t[i].dims[1]) +
                       ", " + std::to_string(t[i].dims[2]) + ", " +
                       std::to_string(t[i].dims[3]) + "], expected [" +
                       std::to_string(dims[0]) + ", " + std::to_string(dims[1]) + ", " +
                       std::to_string(dims[2]) + ", " + std::to_string(dims[3]) + "]");
    for (int a = 0; a < 4; ++a)
      if (t[i].strides[a] < 0)
        throw ValueError(std::string("cuDNN attention: ") + name + " has a negative stride");
    if (t[i].strides[3] != 1 && t[i].dims[3] != 1)
      throw ValueError(std::string("cuDNN attention: ") + name +
                       "'s last dimension must be contiguous (stride 1)");
  };
  if (s.b <= 0 || s.h <= 0 || s.sq <= 0 || s.skv <= 0 || s.d <= 0 || s.dv <= 0)
    throw ValueError("cuDNN attention: every size must be positive");
  expect(1, {s.b, s.h, s.skv, s.d}, "k");
  expect(2, {s.b, s.h, s.skv, s.dv}, "v");
  expect(3, {s.b, s.h, s.sq, s.dv}, "o");
  if (spec.backward) {
    expect(4, {s.b, s.h, s.sq, s.dv}, "do");
    expect(5, {s.b, s.h, s.sq, s.d}, "dq");
    expect(6, {s.b, s.h, s.skv, s.d}, "dk");
    expect(7, {s.b, s.h, s.skv, s.dv}, "dv");
  }
  if (spec.bias) {
    const AttentionLayout& b = t.back();
    const Dims full{s.b, s.h, s.sq, s.skv};
    for (int a = 0; a < 4; ++a)
      if (b.dims[a] != full[a] && !(b.dims[a] == 1 || b.strides[a] == 0))
        throw ValueError("cuDNN attention: the bias must broadcast to [B, H, Sq, Skv]");
  }
}

std::vector<int64_t> key_of(const AttentionSpec& spec) {
  std::vector<int64_t> key{spec.backward, static_cast<int64_t>(spec.dtype), spec.device,
                           spec.causal, spec.stats, spec.bias};
  for (const AttentionLayout& l : spec.tensors) {
    key.insert(key.end(), l.dims.begin(), l.dims.end());
    key.insert(key.end(), l.strides.begin(), l.strides.end());
  }
  return key;
}

struct Plans {
  std::mutex mutex;
  std::map<std::vector<int64_t>, int64_t> ids;
  std::deque<Plan> plans;  // never shrinks: ids index it
};

Plans& plans() {
  static Plans* p = new Plans;  // leaked: plans outlive static destruction (the driver may be gone)
  return *p;
}

}  // namespace

int cudnn_version() { return static_cast<int>(cudnn().cudnnGetVersion()); }

AttentionPlan cudnn_attention_plan(const AttentionSpec& spec) {
  Shape s{};
  check_spec(spec, s);
  std::vector<int64_t> key = key_of(spec);
  Plans& all = plans();
  {
    std::lock_guard lock(all.mutex);
    if (auto it = all.ids.find(key); it != all.ids.end()) {
      const Plan& p = all.plans[static_cast<size_t>(it->second)];
      return {it->second, p.cudnn_workspace + p.extras.total};
    }
  }
  CudnnHandle& handle = cudnn_handle(spec.device);
  std::lock_guard use(handle.mutex);
  auto graph = std::make_shared<Graph>(
      spec.dtype == DType::Float16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16, kFirstVirtual);
  Graph& g = *graph;
  if (spec.backward)
    build_backward(g, spec, s);
  else
    build_forward(g, spec, s);
  std::string why_not;
  bool transient = false;
  Plan plan;
  plan.plan = g.build_plan(handle.handle, why_not, transient);
  if (!plan.plan) {
    std::string what = std::string("cuDNN ") + std::to_string(cudnn_version()) +
                       (transient ? " could not build a plan for this "
                                  : " has no engine for this ") +
                       (spec.backward ? "attention backward" : "attention") + " (B=" +
                       std::to_string(s.b) + ", H=" + std::to_string(s.h) + ", Sq=" +
                       std::to_string(s.sq) + ", Skv=" + std::to_string(s.skv) + ", D=" +
                       std::to_string(s.d) + "): " + why_not;
    // Note [cuDNN plan failures]
    if (transient) throw CudaError(what + " (a failure that may pass)");
    throw UnsupportedOperationError(what);
  }
  plan.device = spec.device;
  plan.graph = std::move(graph);
  plan.uids = g.uids();
  plan.backward = spec.backward;
  XRT_CUDNN(cudnnBackendGetAttribute, plan.plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
            CUDNN_TYPE_INT64, 1, nullptr, &plan.cudnn_workspace);
  if (spec.backward) {
    // Before cuDNN 9.6 the engine expected dQ's accumulator zeroed by its caller.
    plan.memset_dq_accum = cudnn_version() < 90600;
    Extras& e = plan.extras;
    e.row_sum_offset = round_up(plan.cudnn_workspace, 256);
    e.dq_accum_offset = round_up(e.row_sum_offset + s.b * s.h * s.sq * 4, 256);
    e.dq_accum_bytes = s.b * s.h * s.sq * s.d * 4;
    e.total = e.dq_accum_offset + e.dq_accum_bytes - plan.cudnn_workspace;
  }
  std::lock_guard lock(all.mutex);
  if (auto it = all.ids.find(key); it != all.ids.end()) {  // another thread built it first
    cudnn().cudnnBackendDestroyDescriptor(plan.plan);
    const Plan& p = all.plans[static_cast<size_t>(it->second)];
    return {it->second, p.cudnn_workspace + p.extras.total};
  }
  const int64_t id = static_cast<int64_t>(all.plans.size());
  all.plans.push_back(std::move(plan));
  all.ids.emplace(std::move(key), id);
  const Plan& p = all.plans.back();
  return {id, p.cudnn_workspace + p.extras.total};
}

void cudnn_attention_run(int64_t id, const std::vector<uintptr_t>& pointers, uintptr_t stats,
                         uintptr_t workspace, float scale, uintptr_t stream) {
  Plans& all = plans();
  const Plan* plan = nullptr;
  {
    std::lock_guard lock(all.mutex);
    if (id < 0 || id >= static_cast<int64_t>(all.plans.size()))
      throw ValueError("cuDNN attention: no plan " + std::to_string(id));
    plan = &all.plans[static_cast<size_t>(id)];  // deque elements never move
  }
  const size_t tensors = plan->backward ? 8 : 4;
  if (pointers.size() < tensors)
    throw ValueError("cuDNN attention: expected at least " + std::to_string(tensors) +
                     " pointers, got " + std::to_string(pointers.size()));
  for (uintptr_t p : pointers)
    if (p == 0 || p % 16 != 0)
      throw ValueError("cuDNN attention: every tensor must start on a 16-byte boundary");
  const bool wants_stats = std::find(plan->uids.begin(), plan->uids.end(), kStats) !=
                           plan->uids.end();
  if (wants_stats && (stats == 0 || stats % 16 != 0))
    throw ValueError("cuDNN attention: the statistics must be given, 16-byte aligned");
  const int64_t total = plan->cudnn_workspace + plan->extras.total;
  if (total > 0 && workspace == 0)
    throw ValueError("cuDNN attention: this plan needs a workspace of " + std::to_string(total) +
                     " bytes");
  const float neg_inf = -std::numeric_limits<float>::infinity(), one = 1.0f;
  std::vector<void*> data;
  data.reserve(plan->uids.size());
  for (int64_t uid : plan->uids) {
    void* p = nullptr;
    if (uid >= kQ && uid <= kBias) {
      // Forward packs q, k, v, o then the bias; backward q .. dv then the bias.
      size_t index = uid == kBias ? tensors : static_cast<size_t>(uid - kQ);
      if (index >= pointers.size())
        throw ValueError("cuDNN attention: the bias pointer is missing");
      p = reinterpret_cast<void*>(pointers[index]);
    } else if (uid == kStats) {
      p = reinterpret_cast<void*>(stats);
    } else if (uid == kScale) {
      p = const_cast<float*>(&scale);
    } else if (uid == kNegInf) {
      p = const_cast<float*>(&neg_inf);
    } else if (uid == kOne) {
      p = const_cast<float*>(&one);
    } else if (uid == kRowSum) {
      p = reinterpret_cast<void*>(workspace + plan->extras.row_sum_offset);
    } else if (uid == kDQAccum) {
      p = reinterpret_cast<void*>(workspace + plan->extras.dq_accum_offset);
    }
    data.push_back(p);
  }
  CudnnHandle& handle = cudnn_handle(plan->device);
  std::lock_guard use(handle.mutex);
  auto s = reinterpret_cast<CUstream>(stream);
  handle.bind(s);
  if (plan->memset_dq_accum)
    XRT_CU(cuMemsetD8Async, workspace + plan->extras.dq_accum_offset, 0,
           static_cast<size_t>(plan->extras.dq_accum_bytes), s);
  Desc pack = nullptr;
  XRT_CUDNN(cudnnBackendCreateDescriptor, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
  struct Release {
    Desc d;
    ~Release() { cudnn().cudnnBackendDestroyDescriptor(d); }
  } release{pack};
  void* ws = reinterpret_cast<void*>(workspace);
  XRT_CUDNN(cudnnBackendSetAttribute, pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
            CUDNN_TYPE_INT64, static_cast<int64_t>(plan->uids.size()), plan->uids.data());
  XRT_CUDNN(cudnnBackendSetAttribute, pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
            CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(data.size()), data.data());
  XRT_CUDNN(cudnnBackendSetAttribute, pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
            CUDNN_TYPE_VOID_PTR, 1, &ws);
  XRT_CUDNN(cudnnBackendFinalize, pack);
  XRT_CUDNN(cudnnBackendExecute, handle.handle, plan->plan, pack);
}

}  // namespace xrt::cuda

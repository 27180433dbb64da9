// cpp/src/cuda/gemm.cpp: batched products of row-major strided views through cuBLAS and
// cuBLASLt.
//
// Note [Row-major through column-major BLAS]: a row-major m x n matrix C is, read
// column-major, C^T (n x m). So c = a @ b is computed as the column-major product
// c^T = b^T a^T: cuBLAS's first operand is b, its second a, and its (m, n) is our (n, m).
// An operand with unit column stride is passed as is (op N, ld = its row stride); one
// with unit row stride is its transpose (op T, ld = its column stride), so transposed
// views need no copy. Batches: the innermost batch dimensions that every operand steps
// through evenly become one strided-batched call (stride 0 for broadcast operands); the
// dimensions outside that run are looped over here.
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cuda/cublas.h"
#include "cuda/gemm.h"
#include "cuda/runtime.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"
#include "xpuruntime/policy.h"

namespace xrt::cuda {
namespace {

struct Operand {
  cublasOperation_t op;
  int64_t ld;
};

// How column-major BLAS reads the row-major rows x cols matrix with element strides
// (s_row, s_col) as the transpose it needs, if it can; conj asks for op C, which only
// the transposed form has.
std::optional<Operand> operand_layout(int64_t rows, int64_t cols, int64_t s_row,
                                      int64_t s_col, bool conj) {
  int64_t r = std::max<int64_t>(rows, 1), c = std::max<int64_t>(cols, 1);
  bool as_is = (cols <= 1 || s_col == 1) && (rows <= 1 || s_row >= c);
  bool transposed = (rows <= 1 || s_row == 1) && (cols <= 1 || s_col >= r);
  if (as_is && !conj) return Operand{CUBLAS_OP_N, rows <= 1 ? c : s_row};
  if (transposed) return Operand{conj ? CUBLAS_OP_C : CUBLAS_OP_T, cols <= 1 ? r : s_col};
  return std::nullopt;
}

// Whether BLAS can read the matrices of t (..., rows, cols) where they are.
bool addressable(const Tensor& t, bool conj) {
  int nd = t.ndim();
  if (reinterpret_cast<uintptr_t>(t.data()) % t.itemsize() != 0) return false;
  return operand_layout(t.shape()[nd - 2], t.shape()[nd - 1], t.strides()[nd - 2],
                        t.strides()[nd - 1], conj).has_value();
}

// Calls fn for each strided run of the batch (see the Note above).
void for_each_run(const Tensor& a, const Tensor& b, Tensor& c,
                  const std::function<void(const GemmRun&)>& fn) {
  const int nd = c.ndim();
  const int64_t item = static_cast<int64_t>(c.itemsize());
  struct Dim {
    int64_t size, a, b, c;
  };
  std::vector<Dim> dims;
  for (int d = 0; d < nd - 2; ++d)
    if (c.shape()[d] != 1) dims.push_back({c.shape()[d], a.strides()[d], b.strides()[d],
                                           c.strides()[d]});
  GemmRun r{};
  r.m = c.shape()[nd - 2];
  r.n = c.shape()[nd - 1];
  r.k = a.shape()[nd - 1];
  r.a_row = a.strides()[nd - 2];
  r.a_col = a.strides()[nd - 1];
  r.b_row = b.strides()[nd - 2];
  r.b_col = b.strides()[nd - 1];
  r.count = 1;
  size_t inner = dims.size();
  if (inner > 0) {
    const Dim& last = dims[--inner];
    r.count = last.size;
    r.a_batch = last.a;
    r.b_batch = last.b;
    r.c_batch = last.c;
    while (inner > 0) {
      const Dim& d = dims[inner - 1];
      if (d.a != r.a_batch * r.count || d.b != r.b_batch * r.count ||
          d.c != r.c_batch * r.count)
        break;
      r.count *= d.size;
      --inner;
    }
  }
  int64_t outer = 1;
  for (size_t i = 0; i < inner; ++i) outer *= dims[i].size;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rest = o, oa = 0, ob = 0, oc = 0;
    for (size_t i = inner; i-- > 0;) {
      int64_t index = rest % dims[i].size;
      rest /= dims[i].size;
      oa += index * dims[i].a;
      ob += index * dims[i].b;
      oc += index * dims[i].c;
    }
    r.a = a.data() + oa * item;
    r.b = b.data() + ob * item;
    r.c = c.data() + oc * item;
    fn(r);
  }
}

// ---- types and scalars ---------------------------------------------------------------------

struct Types {
  cudaDataType_t data, scale;
  cublasComputeType_t compute;
};

Types types_of(DType dtype, bool tf32) {
  cublasComputeType_t single = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  switch (dtype) {
    case DType::Float32: return {CUDA_R_32F, CUDA_R_32F, single};
    case DType::Float64: return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
    // Note: float16/bfloat16 accumulate in float32 (alpha and beta are then float).
    case DType::Float16: return {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::BFloat16: return {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::Complex64: return {CUDA_C_32F, CUDA_C_32F, single};
    case DType::Complex128: return {CUDA_C_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F};
    default:
      throw UnsupportedOperationError("cuBLAS computes floating dtypes only, not " +
                                      std::string(dtype_info(dtype).name));
  }
}

// alpha = 1 and beta = 0 in the scale type (real or complex, single or double).
const void* one(cudaDataType_t scale) {
  alignas(16) static const float single[2] = {1.0f, 0.0f};
  alignas(16) static const double twice[2] = {1.0, 0.0};
  return scale == CUDA_R_32F || scale == CUDA_C_32F ? static_cast<const void*>(single) : twice;
}
const void* zero() {
  alignas(16) static const double zeros[2] = {0.0, 0.0};
  return zeros;
}

// ---- cuBLAS --------------------------------------------------------------------------------

void run_cublas(const GemmRun& r, const Types& t, bool conj_a, const BlasHandles& h) {
  Operand la = *operand_layout(r.m, r.k, r.a_row, r.a_col, conj_a);
  Operand lb = *operand_layout(r.k, r.n, r.b_row, r.b_col, false);
  const CublasApi& api = cublas();
  if (r.count == 1) {
    check_cublas(api.cublasGemmEx(h.blas, lb.op, la.op, r.n, r.m, r.k, one(t.scale), r.b,
                                  t.data, lb.ld, r.a, t.data, la.ld, zero(), r.c, t.data, r.n,
                                  t.compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
    return;
  }
  check_cublas(api.cublasGemmStridedBatchedEx(
                   h.blas, lb.op, la.op, r.n, r.m, r.k, one(t.scale), r.b, t.data, lb.ld,
                   r.b_batch, r.a, t.data, la.ld, r.a_batch, zero(), r.c, t.data, r.n,
                   r.c_batch, r.count, t.compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx");
}

// ---- cuBLASLt ------------------------------------------------------------------------------
//
// Note [cuBLASLt plans]: descriptors, layouts and the heuristic's algorithm depend only on
// the problem (types, shapes, strides, alignment, device), so they are built once per
// problem and kept in a process-wide cache; a call then costs one cublasLtMatmul. The
// heuristic is told the real alignment of each pointer (it otherwise assumes 256 bytes).

struct LtKey {
  int64_t v[20] = {};
  bool operator==(const LtKey& o) const { return std::memcmp(v, o.v, sizeof v) == 0; }
};
struct LtKeyHash {
  size_t operator()(const LtKey& k) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t x : k.v) h = (h ^ static_cast<uint64_t>(x)) * 1099511628211ull;
    return h;
  }
};

struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, out = nullptr;  // b, a, c
  cublasLtMatmulAlgo_t algo{};
  ~LtPlan() {
    const CublasLtApi& api = cublaslt();
    if (out) api.cublasLtMatrixLayoutDestroy(out);
    if (second) api.cublasLtMatrixLayoutDestroy(second);
    if (first) api.cublasLtMatrixLayoutDestroy(first);
    if (desc) api.cublasLtMatmulDescDestroy(desc);
  }
};

struct LtCache {
  std::mutex mutex;
  std::unordered_map<LtKey, std::shared_ptr<const LtPlan>, LtKeyHash> plans;
};
LtCache& lt_cache() {
  static LtCache* cache = new LtCache;  // leaked: plans must outlive every thread
  return *cache;
}

uint32_t alignment(const void* p, int64_t batch_bytes, int64_t count) {
  uintptr_t v = reinterpret_cast<uintptr_t>(p) | (count > 1 ? static_cast<uintptr_t>(batch_bytes) : 0);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a >>= 1;
  return a;
}

cublasLtMatrixLayout_t lt_layout(const Types& t, Operand op, int64_t rows, int64_t cols,
                                 int64_t count, int64_t batch) {
  // The stored matrix: op(X) is rows x cols, X itself cols x rows when transposed.
  const CublasLtApi& api = cublaslt();
  cublasLtMatrixLayout_t layout;
  bool flip = op.op != CUBLAS_OP_N;
  XRT_CUBLAS(cublaslt, cublasLtMatrixLayoutCreate, &layout, t.data,
             static_cast<uint64_t>(flip ? cols : rows), static_cast<uint64_t>(flip ? rows : cols),
             op.ld);
  if (count > 1) {
    int32_t n = static_cast<int32_t>(count);
    check_cublas(api.cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                      &n, sizeof n),
                 "cublasLtMatrixLayoutSetAttribute");
    check_cublas(api.cublasLtMatrixLayoutSetAttribute(
                     layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch, sizeof batch),
                 "cublasLtMatrixLayoutSetAttribute");
  }
  return layout;
}

// What cuBLASLt applies to the product before it stores it (Note [Fused linear]): a bias
// over the output's columns (the rows of cuBLASLt's column-major D, so a vector of n) and
// an activation; `bias` is part of the plan (and of its key), so a cached descriptor is
// never changed while another thread runs it.
struct LtEpilogue {
  cublasLtEpilogue_t kind = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
};

std::shared_ptr<const LtPlan> make_plan(const GemmRun& r, const Types& t, Operand la,
                                        Operand lb, const uint32_t align[3], bool half,
                                        const BlasHandles& h, const LtEpilogue& epilogue) {
  const CublasLtApi& api = cublaslt();
  auto plan = std::make_shared<LtPlan>();
  XRT_CUBLAS(cublaslt, cublasLtMatmulDescCreate, &plan->desc, t.compute, t.scale);
  int32_t op_first = lb.op, op_second = la.op;
  XRT_CUBLAS(cublaslt, cublasLtMatmulDescSetAttribute, plan->desc, CUBLASLT_MATMUL_DESC_TRANSA,
             &op_first, sizeof op_first);
  XRT_CUBLAS(cublaslt, cublasLtMatmulDescSetAttribute, plan->desc, CUBLASLT_MATMUL_DESC_TRANSB,
             &op_second, sizeof op_second);
  if (epilogue.kind != CUBLASLT_EPILOGUE_DEFAULT) {
    XRT_CUBLAS(cublaslt, cublasLtMatmulDescSetAttribute, plan->desc,
               CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue.kind, sizeof epilogue.kind);
    if (epilogue.bias)
      XRT_CUBLAS(cublaslt, cublasLtMatmulDescSetAttribute, plan->desc,
                 CUBLASLT_MATMUL_DESC_BIAS_POINTER, &epilogue.bias, sizeof epilogue.bias);
  }
  plan->first = lt_layout(t, lb, r.n, r.k, r.count, r.b_batch);
  plan->second = lt_layout(t, la, r.k, r.m, r.count, r.a_batch);
  plan->out = lt_layout(t, Operand{CUBLAS_OP_N, r.n}, r.n, r.m, r.count, r.c_batch);

  cublasLtMatmulPreference_t preference;
  XRT_CUBLAS(cublaslt, cublasLtMatmulPreferenceCreate, &preference);
  std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>,
                  cublasStatus_t (*)(cublasLtMatmulPreference_t)>
      owner(preference, api.cublasLtMatmulPreferenceDestroy);
  auto set = [&](cublasLtMatmulPreferenceAttributes_t attribute, const void* value,
                 size_t bytes) {
    check_cublas(api.cublasLtMatmulPreferenceSetAttribute(preference, attribute, value, bytes),
                 "cublasLtMatmulPreferenceSetAttribute");
  };
  uint64_t workspace = h.workspace_bytes;
  set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align[0], sizeof align[0]);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align[1], sizeof align[1]);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align[2], sizeof align[2]);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align[2], sizeof align[2]);
  if (half) {  // split-K partial sums in float32, as cuBLAS does for us (cublas.cpp)
    uint32_t mask = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    set(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask);
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  XRT_CUBLAS(cublaslt, cublasLtMatmulAlgoGetHeuristic, h.lt, plan->desc, plan->first,
             plan->second, plan->out, plan->out, preference, 1, &result, &found);
  if (found == 0 && epilogue.kind != CUBLASLT_EPILOGUE_DEFAULT) return nullptr;
  if (found == 0)
    throw CudaError("cuBLASLt has no algorithm for this matmul (m=" + std::to_string(r.m) +
                    ", n=" + std::to_string(r.n) + ", k=" + std::to_string(r.k) +
                    ", batch=" + std::to_string(r.count) + ")");
  plan->algo = result.algo;
  return plan;
}

// Returns false (having run nothing) when cuBLASLt has no algorithm for the epilogue; a
// plain product without one raises instead.
bool run_cublaslt(const GemmRun& whole, const Types& t, bool half, bool conj_a, int device,
                  const BlasHandles& h, const LtEpilogue& epilogue = {}) {
  Operand la = *operand_layout(whole.m, whole.k, whole.a_row, whole.a_col, conj_a);
  Operand lb = *operand_layout(whole.k, whole.n, whole.b_row, whole.b_col, false);
  const int64_t item = [&] {
    switch (t.data) {
      case CUDA_R_16F: case CUDA_R_16BF: return 2;
      case CUDA_R_32F: return 4;
      case CUDA_R_64F: case CUDA_C_32F: return 8;
      default: return 16;
    }
  }();
  constexpr int64_t kMaxBatch = INT32_MAX;  // cuBLASLt counts a batch in int32
  for (int64_t done = 0; done < whole.count; done += kMaxBatch) {
    GemmRun r = whole;
    r.count = std::min(kMaxBatch, whole.count - done);
    r.a += done * r.a_batch * item;
    r.b += done * r.b_batch * item;
    r.c += done * r.c_batch * item;
    uint32_t align[3] = {alignment(r.b, r.b_batch * item, r.count),
                         alignment(r.a, r.a_batch * item, r.count),
                         alignment(r.c, r.c_batch * item, r.count)};
    LtKey key;
    int64_t fields[] = {device, t.data, t.scale, t.compute, lb.op, la.op, r.n, r.m, r.k,
                        lb.ld, la.ld, r.count, r.b_batch, r.a_batch, r.c_batch,
                        align[0], align[1], align[2], static_cast<int64_t>(epilogue.kind),
                        static_cast<int64_t>(reinterpret_cast<uintptr_t>(epilogue.bias))};
    std::memcpy(key.v, fields, sizeof fields);
    std::shared_ptr<const LtPlan> plan;
    {
      std::lock_guard lock(lt_cache().mutex);
      auto it = lt_cache().plans.find(key);
      if (it != lt_cache().plans.end()) plan = it->second;
    }
    if (!plan) {
      plan = make_plan(r, t, la, lb, align, half, h, epilogue);
      if (!plan) return false;  // an epilogue cuBLASLt cannot fuse here (only whole.count == 1)
      std::lock_guard lock(lt_cache().mutex);
      if (lt_cache().plans.size() >= 4096) lt_cache().plans.clear();  // plans in use live on
      lt_cache().plans.emplace(key, plan);
    }
    check_cublas(cublaslt().cublasLtMatmul(h.lt, plan->desc, one(t.scale), r.b, plan->first,
                                           r.a, plan->second, zero(), r.c, plan->out, r.c,
                                           plan->out, &plan->algo, h.workspace,
                                           h.workspace_bytes, h.stream),
                 "cublasLtMatmul");
  }
  return true;
}

}  // namespace

bool gemm_linear(const Tensor& x, const Tensor& weight, const Tensor* bias,
                 LinearEpilogue activation, Tensor& out) {
  const int device = out.device().index;
  activate(device);
  CUstream stream = current_stream(device);
  const bool half = out.dtype() == DType::Float16 || out.dtype() == DType::BFloat16;
  if (!is_floating(out.dtype()) || x.shape()[1] == 0 || out.numel() == 0) return false;
  Tensor wt = weight.matrix_transpose();  // (k, n): the b operand, a strided view
  if (!addressable(x, false) || !addressable(wt, false)) return false;
  LtEpilogue epilogue;
  epilogue.bias = bias ? bias->data() : nullptr;
  switch (activation) {
    case LinearEpilogue::None:
      epilogue.kind = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT; break;
    case LinearEpilogue::Relu:
      epilogue.kind = bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU; break;
    case LinearEpilogue::GeluTanh:
      epilogue.kind = bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU; break;
  }
  const Types types = types_of(out.dtype(), current_policy()->allow_tf32());
  const BlasHandles& h = blas_handles(device, stream, true);
  bool done = true;
  for_each_run(x, wt, out, [&](const GemmRun& r) {
    done = run_cublaslt(r, types, half, false, device, h, epilogue);
  });
  return done;
}

bool gemm_supports(GemmLibrary library, DType dtype) {
  if (library == GemmLibrary::Native) return is_integer(dtype);
  return is_floating(dtype) || is_complex(dtype);
}

void gemm(GemmLibrary library, const Tensor& a_in, const Tensor& b_in, Tensor& c, bool conj_a) {
  if (c.numel() == 0) return;
  const int device = c.device().index;
  activate(device);
  CUstream stream = current_stream(device);
  if (a_in.shape()[a_in.ndim() - 1] == 0) {  // empty sums: zeros (c is contiguous)
    XRT_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(c.data()), 0,
           static_cast<size_t>(c.numel()) * c.itemsize(), stream);
    return;
  }
  if (library == GemmLibrary::Native) {
    for_each_run(a_in, b_in, c, [&](const GemmRun& r) { gemm_native(r, c.dtype(), device, stream); });
    return;
  }
  Tensor a = addressable(a_in, conj_a) ? a_in : contiguous(a_in);
  Tensor b = addressable(b_in, false) ? b_in : contiguous(b_in);
  const bool lt = library == GemmLibrary::CublasLt;
  const Types types = types_of(c.dtype(), current_policy()->allow_tf32());
  const bool half = c.dtype() == DType::Float16 || c.dtype() == DType::BFloat16;
  const BlasHandles& h = blas_handles(device, stream, lt);
  for_each_run(a, b, c, [&](const GemmRun& r) {
    if (lt)
      run_cublaslt(r, types, half, conj_a, device, h);
    else
      run_cublas(r, types, conj_a, h);
  });
}

}  // namespace xrt::cuda

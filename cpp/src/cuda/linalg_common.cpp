// cpp/src/cuda/linalg_common.cpp: the shared pieces of the CUDA linalg kernels (see
// linalg_common.h) and the sources of the helper kernels of cpp/kernels/xrt/linalg.cuh.
#include "cuda/linalg_common.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>

#include "cuda/allocator.h"
#include "cuda/codegen.h"
#include "cuda/kernel_check.h"
#include "cuda/kernels.h"
#include "cuda/runtime.h"
#include "xpuruntime/runtime/backend.h"
#include "xpuruntime/dispatcher.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/ops.h"

namespace xrt::cuda::solver {

bool is_solver_dtype(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::Complex64 ||
         d == DType::Complex128;
}

cudaDataType_t data_type(DType d) {
  return typed(d, CUDA_R_32F, CUDA_R_64F, CUDA_C_32F, CUDA_C_64F);
}

cudaDataType_t real_data_type(DType d) {
  return typed(d, CUDA_R_32F, CUDA_R_64F, CUDA_R_32F, CUDA_R_64F);
}

Context::Context(const Tensor& t) : where(t.device()), device(t.device().index) {
  activate(device);
  stream = current_stream(device);
}

const SolverHandles& Context::solver() const { return solver_handles(device, stream); }

cublasHandle_t Context::blas() const { return blas_handles(device, stream, false).blas; }

int64_t stack_count(const Tensor& t, int core_ndim) {
  int64_t n = 1;
  for (int d = 0; d < t.ndim() - core_ndim; ++d) n *= t.shape()[d];
  return n;
}

Dims stack_shape(const Tensor& x, std::initializer_list<int64_t> core) {
  Dims shape(x.shape().begin(), x.shape().end() - 2);
  for (int64_t d : core) shape.push_back(d);
  return shape;
}

Tensor row_major_copy(const Tensor& x) { return astype(x, x.dtype(), true); }

Tensor column_major_view(const Tensor& w, int64_t rows, int64_t cols) {
  Dims shape(w.shape().begin(), w.shape().end() - 2), strides(w.strides().begin(),
                                                              w.strides().end() - 2);
  shape.push_back(rows);
  shape.push_back(cols);
  strides.push_back(1);
  strides.push_back(w.shape().back());
  return w.as_strided(shape, strides, w.byte_offset());
}

Tensor column_major_copy(const Tensor& x, int64_t columns) {
  const int nd = x.ndim();
  const int64_t rows = x.shape()[nd - 2], cols = x.shape()[nd - 1];
  Tensor w = empty(stack_shape(x, {std::max(columns, cols), rows}), x.dtype(), x.device());
  Tensor view = column_major_view(w, rows, cols);
  copy_matrices(view, x);
  return w;
}

Output::Output(Tensor& t)
    : target(t), buffer(t.is_contiguous() ? t : empty(t.shape(), t.dtype(), t.device())) {}

void Output::finish() {
  if (buffer.data() != target.data() || !target.is_contiguous()) copy_into(target, buffer);
}

std::shared_ptr<Storage> workspace(const Context& ctx, size_t bytes) {
  return allocate_storage(std::max<size_t>(bytes, 16), ctx.device, ctx.stream);
}

HostWorkspace::~HostWorkspace() {
  if (!bytes.empty()) driver().cuStreamSynchronize(stream);  // no throw from a destructor
}

Tensor info_buffer(const Context& ctx, int64_t count) {
  Tensor info = empty(Dims{std::max<int64_t>(count, 1)}, DType::Int32, ctx.where);
  XRT_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(info.data()), 0,
         static_cast<size_t>(info.numel()) * 4, ctx.stream);
  return info;
}

std::vector<int32_t> read_back(const Tensor& ints) {
  std::vector<int32_t> host(static_cast<size_t>(ints.numel()));
  backend(DeviceType::CUDA).copy_bytes(host.data(), kCPU, ints.data(), ints.device(),
                                       host.size() * sizeof(int32_t));
  return host;
}

Tensor pointer_array(const Context& ctx, const void* base, int64_t stride_bytes, int64_t count) {
  Tensor out = empty(Dims{std::max<int64_t>(count, 1)}, DType::UInt64, ctx.where);
  void* o = out.data();
  auto b = static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(base));
  long long stride = stride_bytes, n = count;
  launch_helper(ctx, Helper::PointerArray, DType::Float32, false, count, {&o, &b, &stride, &n});
  return out;
}

void fill_nan(Tensor& values, int64_t index) {
  const int64_t k = values.shape().back();
  Tensor row = values.as_strided(Dims{k}, Dims{1},
                                 values.byte_offset() + index * k * int64_t(values.itemsize()));
  copy_into(row, full(Dims{}, Scalar::from_float(std::numeric_limits<double>::quiet_NaN()),
                      values.dtype(), values.device()));
}

void set_identity(Tensor& t) {
  if (t.numel() == 0) return;
  Context ctx(t);
  void* o = t.data();
  long long rows = t.shape()[t.ndim() - 2], cols = t.shape().back(), total = t.numel();
  launch_helper(ctx, Helper::Identity, t.dtype(), false, total, {&o, &rows, &cols, &total});
}

Tensor nonfinite_flags(const Tensor& buffer, int64_t count, const MatrixLayout& m,
                       Triangle triangle) {
  Context ctx(buffer);
  Tensor flags = info_buffer(ctx, count);
  int64_t per = m.rows * m.cols;
  if (count == 0 || per == 0) return flags;
  const void* a = buffer.data();
  int* f = reinterpret_cast<int*>(flags.data());
  long long args[6] = {m.matrix_stride, m.rows, m.cols, m.row_stride, m.col_stride, count};
  int tri = static_cast<int>(triangle);
  unsigned grid_y = static_cast<unsigned>(std::min<int64_t>(count, 65535));
  launch_helper(ctx, Helper::NonfiniteFlags, buffer.dtype(), false, std::min<int64_t>(per, 1 << 20),
                {&a, &args[0], &args[1], &args[2], &args[3], &args[4], &tri, &args[5], &f},
                grid_y);
  return flags;
}

Tensor nonfinite_flags(const Tensor& x, Triangle triangle) {
  Tensor c = contiguous(x);
  const int64_t rows = x.shape()[x.ndim() - 2], cols = x.shape().back();
  return nonfinite_flags(c, stack_count(x, 2), {rows, cols, cols, 1, rows * cols}, triangle);
}

int64_t first_nonzero(const Tensor& info, const Tensor* flags) {
  Context ctx(info);
  Tensor first = empty(Dims{1}, DType::UInt64, ctx.where);
  XRT_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(first.data()), 0xff, 8, ctx.stream);
  void *a = info.data(), *b = flags ? flags->data() : nullptr, *out = first.data();
  long long count = info.numel();
  launch_helper(ctx, Helper::FirstNonzero, DType::Float32, false, count, {&a, &b, &count, &out});
  uint64_t host = 0;
  backend(DeviceType::CUDA).copy_bytes(&host, kCPU, first.data(), first.device(), sizeof host);
  return host == UINT64_MAX ? -1 : static_cast<int64_t>(host);
}

int64_t first_failure(const Tensor& info_codes, const Tensor& x, Triangle triangle,
                      const char* routine) {
  if (first_nonzero(info_codes) < 0) return -1;
  std::vector<int32_t> info = read_back(info_codes);
  bool failed = false;
  for (int32_t code : info) {
    if (code < 0)
      throw CudaError(std::string(routine) + " rejected its argument " + std::to_string(-code) +
                      " (an xpuruntime bug: please report it)");
    failed |= code > 0;
  }
  if (!failed) return -1;
  std::vector<int32_t> flags = read_back(nonfinite_flags(x, triangle));
  for (size_t s = 0; s < info.size() && s < flags.size(); ++s)
    if (info[s] > 0 && flags[s] != 2) return static_cast<int64_t>(s);
  return -1;
}

void triangle_into(Tensor& out, const Tensor& in, bool lower) {
  static const OpId tril = KernelRegistry::global().op_id("tril");
  static const OpId triu = KernelRegistry::global().op_id("triu");
  OpAttrs attrs;
  attrs.value = Scalar::from_int(0);
  const Tensor* inputs[1] = {&in};
  dispatch(lower ? tril : triu, KernelCall{inputs, 1, &out, 1, &attrs});
}

void conj_into(Tensor& out, const Tensor& in) {
  static const OpId conj = KernelRegistry::global().op_id("conj");
  const Tensor* inputs[1] = {&in};
  dispatch(conj, KernelCall{inputs, 1, &out, 1, nullptr});
}

namespace {

/// A stack of matrices with one element stride between them (0 for a single matrix) and
/// unit stride along one of the two matrix axes; ld is the other axis's stride.
struct StackLayout {
  int64_t ld = 0, matrix_stride = 0;
};

/// t's layout when its matrices have unit stride along their last axis (row_major) or
/// the one before it, and its stack dimensions collapse to one stride.
std::optional<StackLayout> stack_layout(const Tensor& t, bool row_major) {
  const int nd = t.ndim();
  const int64_t unit = t.strides()[row_major ? nd - 1 : nd - 2];
  const int64_t ld = t.strides()[row_major ? nd - 2 : nd - 1];
  const int64_t along = t.shape()[row_major ? nd - 1 : nd - 2];
  if (along > 1 && unit != 1) return std::nullopt;
  StackLayout layout{ld, 0};
  int64_t expected = -1;  // the stride the next outer stack dimension must have
  for (int d = nd - 3; d >= 0; --d) {
    if (t.shape()[d] == 1) continue;
    if (expected < 0) layout.matrix_stride = t.strides()[d];
    else if (t.strides()[d] != expected) return std::nullopt;
    expected = t.strides()[d] * t.shape()[d];
  }
  return layout;
}

constexpr int64_t kTile = 32, kMaxGridYZ = 65535;

}  // namespace

void copy_matrices(Tensor& out, const Tensor& in, Triangle triangle, bool conj) {
  const int nd = out.ndim();
  const int64_t rows = out.shape()[nd - 2], cols = out.shape()[nd - 1];
  const int64_t count = stack_count(out, 2);
  if (count == 0 || rows == 0 || cols == 0) return;
  conj = conj && is_complex(out.dtype());
  // The kernel writes row-major and reads column-major; a copy the other way round is the
  // same one between the transposed views, whose triangles swap.
  for (bool swapped : {false, true}) {
    const int64_t r = swapped ? cols : rows, c = swapped ? rows : cols;
    auto o = stack_layout(out, !swapped);
    auto i = stack_layout(in, swapped);
    if (!o || !i || out.dtype() != in.dtype() || !is_solver_dtype(out.dtype()) ||
        (r + kTile - 1) / kTile > kMaxGridYZ)
      continue;
    Context ctx(out);
    const void* src = in.data();
    void* dst = out.data();
    long long args[7] = {r, c, i->ld, o->ld, i->matrix_stride, o->matrix_stride, count};
    int tri = static_cast<int>(triangle);
    if (swapped && triangle != Triangle::All)
      tri = static_cast<int>(triangle == Triangle::Lower ? Triangle::Upper : Triangle::Lower);
    int conjugate = conj ? 1 : 0;
    std::vector<void*> params = {&src, &dst, &args[0], &args[1], &args[2], &args[3],
                                 &args[4], &args[5], &args[6], &tri, &conjugate};
    launch_transpose(ctx, out.dtype(), Dim3{grid_dim((c + kTile - 1) / kTile, 'x', "transpose"),
                                            static_cast<unsigned>((r + kTile - 1) / kTile),
                                            static_cast<unsigned>(std::min(count, kMaxGridYZ))},
                     params);
    return;
  }
  if (triangle != Triangle::All) {
    triangle_into(out, in, triangle == Triangle::Lower);
    if (conj) conj_into(out, out);
  } else if (conj) {
    conj_into(out, in);
  } else {
    copy_into(out, in);
  }
}

// ---- helper kernels -------------------------------------------------------------------------

namespace {

const char* solver_type(DType d) {
  return typed<const char*>(d, "float", "double", "xrt::ew::Complex<float>",
                            "xrt::ew::Complex<double>");
}
const char* real_type(DType d) {
  return typed<const char*>(d, "float", "double", "float", "double");
}

struct HelperText {
  const char* name;
  const char* params;  // $T: the type, $R: its real type, $P: the pivot type
  const char* call;
};

const HelperText& text_of(Helper h) {
  static const HelperText texts[] = {
      {"xrt_pointer_array",
       "unsigned long long* out, unsigned long long base, long long stride, long long count",
       "xrt::linalg::pointer_array(out, base, stride, count)"},
      {"xrt_identity", "$T* out, long long rows, long long cols, long long total",
       "xrt::linalg::identity<$T>(out, rows, cols, total)"},
      {"xrt_nonfinite_flags",
       "const $T* a, long long matrix_stride, long long rows, long long cols, long long "
       "row_stride, long long col_stride, int triangle, long long count, int* flags",
       "xrt::linalg::nonfinite_flags<$T>(a, matrix_stride, rows, cols, row_stride, col_stride, "
       "triangle, count, flags)"},
      {"xrt_det", "const $T* lu, long long n, const $P* pivots, long long count, $T* det",
       "xrt::linalg::determinant<$T, $P>(lu, n, pivots, count, det)"},
      {"xrt_slogdet",
       "const $T* lu, long long n, const $P* pivots, long long count, $T* sign, $R* logabs",
       "xrt::linalg::log_determinant<$T, $P>(lu, n, pivots, count, sign, logabs)"},
      {"xrt_scale_rows",
       "$T* vh, const $R* s, const $R* rtol, long long k, long long n, long long total",
       "xrt::linalg::scale_rows<$T>(vh, s, rtol, k, n, total)"},
      {"xrt_rank", "const $R* s, const $R* rtol, long long k, long long count, long long* out",
       "xrt::linalg::rank<$R>(s, rtol, k, count, out)"},
      {"xrt_real_eigenvectors",
       "const $R* vr, const xrt::ew::Complex<$R>* w, long long n, long long count, "
       "xrt::ew::Complex<$R>* out",
       "xrt::linalg::real_eigenvectors<$R>(vr, w, n, count, out)"},
      {"xrt_first_nonzero",
       "const int* a, const int* b, long long count, unsigned long long* first",
       "xrt::linalg::first_nonzero(a, b, count, first)"},
      {"xrt_transpose",
       "const $T* in, $T* out, long long rows, long long cols, long long in_ld, long long "
       "out_ld, long long in_stride, long long out_stride, long long count, int triangle, "
       "int conj",
       "xrt::linalg::transpose<$T>(in, out, rows, cols, in_ld, out_ld, in_stride, out_stride, "
       "count, triangle, conj)"},
  };
  return texts[static_cast<int>(h)];
}

std::string substitute(std::string text, DType dtype, bool pivots64) {
  const std::pair<const char*, std::string> names[] = {
      {"$T", solver_type(dtype)}, {"$R", real_type(dtype)}, {"$P", pivots64 ? "long long" : "int"}};
  for (const auto& [from, to] : names)
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, 2, to);
  return text;
}

KernelSource helper_source(Helper h, DType dtype, bool pivots64) {
  const HelperText& t = text_of(h);
  return {"#include \"xrt/linalg.cuh\"\nextern \"C\" __global__ void __launch_bounds__(256) " +
              std::string(t.name) + "(" + substitute(t.params, dtype, pivots64) + ") {\n  " +
              substitute(t.call, dtype, pivots64) + ";\n}\n",
          {}};
}

std::vector<KernelSample> helper_samples() {
  std::vector<KernelSample> samples;
  const DType dtypes[] = {DType::Float32, DType::Float64, DType::Complex64, DType::Complex128};
  for (Helper h : {Helper::PointerArray, Helper::FirstNonzero})
    samples.push_back({text_of(h).name, helper_source(h, DType::Float32, false)});
  for (DType d : dtypes) {
    std::string suffix = " " + std::string(dtype_info(d).name);
    for (Helper h : {Helper::Identity, Helper::NonfiniteFlags, Helper::ScaleRows,
                     Helper::Transpose})
      samples.push_back({text_of(h).name + suffix, helper_source(h, d, false)});
    for (bool p64 : {false, true})
      for (Helper h : {Helper::Det, Helper::LogDet})
        samples.push_back({text_of(h).name + suffix + (p64 ? " int64" : " int32"),
                           helper_source(h, d, p64)});
  }
  for (DType d : {DType::Float32, DType::Float64})
    for (Helper h : {Helper::Rank, Helper::RealEigenvectors})
      samples.push_back({std::string(text_of(h).name) + " " + std::string(dtype_info(d).name),
                         helper_source(h, d, false)});
  return samples;
}

}  // namespace

void launch_helper(const Context& ctx, Helper helper, DType dtype, bool pivots64,
                   int64_t threads, std::vector<void*> args, unsigned grid_y) {
  if (threads <= 0) return;
  char key[48];
  std::snprintf(key, sizeof key, "linalg/%d/%d/%d", static_cast<int>(helper),
                static_cast<int>(dtype), pivots64 ? 1 : 0);
  auto source = [&] { return helper_source(helper, dtype, pivots64); };
  CUfunction fn = jit_function(ctx.device, key, source, text_of(helper).name);
  Dim3 grid{grid_blocks(threads, 256), grid_y, 1};
  launch(fn, grid, {256}, 0, ctx.stream, args.data());
}

void launch_transpose(const Context& ctx, DType dtype, Dim3 grid, std::vector<void*> args) {
  char key[48];
  std::snprintf(key, sizeof key, "linalg/%d/%d/0", static_cast<int>(Helper::Transpose),
                static_cast<int>(dtype));
  auto source = [&] { return helper_source(Helper::Transpose, dtype, false); };
  CUfunction fn = jit_function(ctx.device, key, source, text_of(Helper::Transpose).name);
  launch(fn, grid, {static_cast<unsigned>(kTile), 8, 1}, 0, ctx.stream, args.data());
}

void add_solver_kernel(KernelRegistry& registry, const char* op, KernelFn run,
                       const char* description, CallPredicate accepts, int priority,
                       const char* name) {
  KernelInfo k = kernel_info(op, name, std::move(run), description,
                             [](const DTypeSignature& s) { return is_solver_dtype(s.dtypes[0]); },
                             priority);
  k.accepts = std::move(accepts);
  registry.add(std::move(k));
}

void register_helper_samples() { register_kernel_samples("linalg", helper_samples); }

}  // namespace xrt::cuda::solver

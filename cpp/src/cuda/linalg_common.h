// cpp/src/cuda/linalg_common.h: what the cuSOLVER-backed linalg kernels share: data types,
// work copies in the layout cuSOLVER wants, workspaces, info codes read back, and the small
// NVRTC kernels of cpp/kernels/xrt/linalg.cuh.
//
// Note [Row-major matrices through cuSOLVER]: cuSOLVER is column-major. A row-major m x n
// matrix read column-major is its transpose, which several ops can use as it is:
//  - det/slogdet: det(A^T) = det(A);
//  - inv: inv(A^T) = inv(A)^T, so inverting the transpose in place gives the row-major
//    inverse;
//  - solve: the LU of A^T serves A X = B through getrs with op T; B and X are copied
//    column-major (transposed) unless they are single columns;
//  - cholesky, upper: potrf (lower triangle) of A^T reads A's upper one, and its L, read
//    back row-major, is U (A^T = conj(A) for Hermitian A); the lower factor comes from a
//    column-major copy instead, since potrf's upper triangle is the slow one;
//  - svd of a wide or square matrix: the SVD of A^T = U' S V'^H gives A's factors
//    U = conj(V') and Vh = U'^T, which are exactly V'^H and U' read row-major, so gesvd
//    writes the outputs in place.
// The others (qr, eigh, eig with vectors, svd of a tall matrix) copy the matrices
// transposed into a column-major buffer and back with the copy kernel.
//
// Note [Linalg errors on CUDA]: an op that must raise (singular inv/solve, cholesky of a
// matrix that is not positive definite, no convergence) waits for the stream to learn
// whether any info code is set (a device kernel finds the first; 8 bytes come back, the
// codes themselves only when one is); the others (det, slogdet, qr) never wait. Where the
// CPU's LAPACK lets NaN through without an error (gesv, potrf), a matrix whose read part
// holds a NaN never raises here either: its flags are computed only when a code is set.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "cuda/cusolver.h"
#include "cuda/jit.h"
#include "xpuruntime/registry.h"
#include "xpuruntime/tensor.h"

namespace xrt::cuda::solver {

/// float32, float64, complex64, complex128: the dtypes the linalg kernels compute in.
bool is_solver_dtype(DType d);

/// cuSOLVER's / cuBLAS's name of a dtype, and of its real part.
cudaDataType_t data_type(DType d);
cudaDataType_t real_data_type(DType d);

/// The S, D, C or Z entry point of a typed routine for dtype d.
template <class F> F typed(DType d, F s, F double_fn, F c, F z) {
  switch (d) {
    case DType::Float32: return s;
    case DType::Float64: return double_fn;
    case DType::Complex64: return c;
    default: return z;
  }
}

/// The device and current stream a kernel runs on (its context made current).
struct Context {
  Device where;
  int device;
  CUstream stream;
  explicit Context(const Tensor& t);
  const SolverHandles& solver() const;
  cublasHandle_t blas() const;
};

/// Matrices in the stack of t: the product of all but its last core_ndim dimensions.
int64_t stack_count(const Tensor& t, int core_ndim);
/// x's stack shape (all but its last two dimensions) followed by `core`: the shape of a
/// buffer that copy_into can pair with views of x's matrices.
Dims stack_shape(const Tensor& x, std::initializer_list<int64_t> core);

/// A fresh contiguous copy of x's matrices (row-major; read column-major, transposed).
Tensor row_major_copy(const Tensor& x);
/// A contiguous buffer of x's batch + (columns, rows) holding x's matrices column-major
/// (leading dimension rows) in its first cols columns; columns >= x's, -1 for x's.
Tensor column_major_copy(const Tensor& x, int64_t columns = -1);
/// The rows x cols matrices that the column-major buffer w holds, as a strided view.
Tensor column_major_view(const Tensor& w, int64_t rows, int64_t cols);

/// t itself when contiguous, else a contiguous tensor like it; finish() copies it into t.
struct Output {
  Tensor& target;
  Tensor buffer;
  explicit Output(Tensor& t);
  char* data() const { return buffer.data(); }
  void finish();
};

/// Device scratch of at least `bytes` for the context's stream.
std::shared_ptr<Storage> workspace(const Context& ctx, size_t bytes);

/// cuSOLVER's host workspace of a call. Note: the routines used here ask for none, but
/// where one does, the stream is synchronised before the workspace is freed, since the
/// library may still read it.
struct HostWorkspace {
  CUstream stream;
  std::vector<char> bytes;
  HostWorkspace(const Context& ctx, size_t n) : stream(ctx.stream), bytes(n) {}
  ~HostWorkspace();
  void* data() { return bytes.empty() ? nullptr : bytes.data(); }
};

/// count int32 info codes on the device, zeroed.
Tensor info_buffer(const Context& ctx, int64_t count);
/// The values of an int32 device tensor on the host (waits for its stream).
std::vector<int32_t> read_back(const Tensor& ints);

/// A device array of count pointers base + i * stride_bytes (the batched routines' input).
Tensor pointer_array(const Context& ctx, const void* base, int64_t stride_bytes, int64_t count);

/// The batched Jacobi routines (syevjBatched, gesvdjBatched) take matrices up to this
/// order; they serve stacks of more than one.
inline constexpr int64_t kJacobiOrder = 32;
inline bool jacobi_batched(int64_t count, int64_t order) {
  return count > 1 && count <= INT32_MAX && order <= kJacobiOrder;
}

/// Row `index` of the contiguous (count, k) tensor values set to NaN.
void fill_nan(Tensor& values, int64_t index);

/// Identities in every matrix of the contiguous tensor t.
void set_identity(Tensor& t);

/// How a buffer holds its matrices (element strides).
struct MatrixLayout {
  int64_t rows, cols, row_stride, col_stride, matrix_stride;
};
enum class Triangle { All = 0, Lower = 1, Upper = 2 };
/// Per matrix of a contiguous buffer: 0 finite, 1 holds an infinity, 2 holds a NaN, over
/// the triangle of each (rows, cols) matrix asked for (int32 on the device).
Tensor nonfinite_flags(const Tensor& buffer, int64_t count, const MatrixLayout& m,
                       Triangle triangle);
/// The same for the matrices of any tensor x (..., rows, cols).
Tensor nonfinite_flags(const Tensor& x, Triangle triangle);

/// The first matrix whose code in `info` (or in `flags`, when given; int32 device tensors)
/// is not zero, -1 when none. Waits for the stream and reads back 8 bytes.
int64_t first_nonzero(const Tensor& info, const Tensor* flags = nullptr);

/// The first matrix whose info code is positive and whose input (`triangle` of x) holds
/// no NaN, -1 when none (Note [Linalg errors on CUDA]). A negative code is CudaError.
int64_t first_failure(const Tensor& info, const Tensor& x, Triangle triangle,
                      const char* routine);

/// out = tril(in) or triu(in) (k = 0) through the op's kernel; in may be out.
void triangle_into(Tensor& out, const Tensor& in, bool lower);
/// out = conj(in) through the elementwise kernel.
void conj_into(Tensor& out, const Tensor& in);

/// out = in for the matrices of two tensors of one shape, conjugated when conj is set and
/// zero outside `triangle` (of out's matrices); in must not overlap out. Where one side
/// is row-major and the other column-major (each with one stride between its matrices:
/// the copies to and from cuSOLVER's layout) a tiled transpose kernel does it, else the
/// copy, tril/triu and conj kernels.
void copy_matrices(Tensor& out, const Tensor& in, Triangle triangle = Triangle::All,
                   bool conj = false);

/// The small kernels of cpp/kernels/xrt/linalg.cuh.
enum class Helper {
  PointerArray, Identity, NonfiniteFlags, Det, LogDet, ScaleRows, Rank, RealEigenvectors,
  FirstNonzero, Transpose
};
/// Launches a helper for dtype (pivots64: int64 pivots, Det/LogDet) with `threads` work
/// items over grid.x (grid_y blocks in y), args in the order of linalg.cuh's function.
void launch_helper(const Context& ctx, Helper helper, DType dtype, bool pivots64,
                   int64_t threads, std::vector<void*> args, unsigned grid_y = 1);

/// Launches Helper::Transpose for dtype: blocks of 32 x 8 threads over grid (column tiles,
/// row tiles, matrices), args in the order of linalg.cuh's transpose.
void launch_transpose(const Context& ctx, DType dtype, Dim3 grid, std::vector<void*> args);

/// Registers a cuSOLVER-backed kernel (named "cusolver" unless name is given) for op,
/// supporting the solver dtypes.
void add_solver_kernel(KernelRegistry& registry, const char* op, KernelFn run,
                       const char* description, CallPredicate accepts = {}, int priority = 0,
                       const char* name = "cusolver");

/// Registers the helper sources with kernel_check.h (CI compiles them).
void register_helper_samples();

}  // namespace xrt::cuda::solver

namespace xrt::cuda {
/// The other kernel files of linalg; register_linalg_kernels (kernels.h) calls them.
void register_linalg_spectral_kernels(KernelRegistry& registry);
void register_linalg_svd_kernels(KernelRegistry& registry);
void register_linalg_vector_kernels(KernelRegistry& registry);
}  // namespace xrt::cuda

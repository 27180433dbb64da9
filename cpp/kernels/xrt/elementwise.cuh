// cpp/kernels/xrt/elementwise.cuh: the elementwise kernels, generic in the function applied
// (a Fn: its operand types and `call`) and specialised by layout. The host
// (cuda/elementwise_kernel.cpp) generates one small source per (op, dtype, layout) that
// instantiates one of these as an extern "C" kernel.
//
// Layouts:
//  - dense: every operand one contiguous run, or (inputs only) one value broadcast to all
//    (SCALARS: a bit per input). VEC elements per thread and step, loaded and stored as
//    one aligned vector of up to 16 bytes; UNROLL such steps issued together; the grid
//    loops over the array.
//  - strided: any byte strides (broadcast, transposed, negative), over ND dimensions
//    collapsed by the host; I is the index type (32-bit where everything fits).
//
// Note [Grid-stride loops stay rolled]: the host sizes the grid to cover the array (Note
// [Elementwise launches]), so a thread's loop runs once unless the array passes 2^31 blocks.
// Left to itself, the compiler unrolls the loop four times with a remainder, which tripled
// the dense add's machine code (7,680 bytes against 2,304 rolled) for iterations that never
// come. Code size is time on the GPU when kernels are tiny: the multiprocessor fetches it
// first. In a CUDA graph of 100 adds of 16 floats (H200), the unrolled kernel took 1.16 us a
// launch and the rolled one 0.91 (torch's add 0.90; an add of one `if` and no loop 0.81).
#pragma once
#include "xrt/elementwise_ops.cuh"

namespace xrt::ew {

/// The absent operand of a function with fewer than three inputs: never loaded.
struct None {};

/// Operand types and the function of a unary op on stored type T.
template <class Op, class T> struct UnaryFn {
  using In0 = T;
  using In1 = None;
  using In2 = None;
  using Out = decltype(unary_value<Op>(T{}));
  XRT_FN static Out call(T a, None, None) { return unary_value<Op>(a); }
};

template <class Op, class T> struct BinaryFn {
  using In0 = T;
  using In1 = T;
  using In2 = None;
  using Out = decltype(binary_value<Op>(T{}, T{}));
  XRT_FN static Out call(T a, T b, None) { return binary_value<Op>(a, b); }
};

/// where(condition, x, y) on any stored type of T's size (it copies bytes).
template <class T> struct WhereFn {
  using In0 = bool;
  using In1 = T;
  using In2 = T;
  using Out = T;
  XRT_FN static Out call(bool c, T x, T y) { return c ? x : y; }
};

template <class T> inline constexpr int size_of = sizeof(T);
template <> inline constexpr int size_of<None> = 0;

template <int A, int B> inline constexpr int max_of = A > B ? A : B;

/// Elements per vector: 16 bytes of the widest operand.
template <class Fn> inline constexpr int widest_operand =
    max_of<max_of<size_of<typename Fn::Out>, size_of<typename Fn::In0>>,
           max_of<size_of<typename Fn::In1>, size_of<typename Fn::In2>>>;
template <class Fn> inline constexpr int vector_width =
    widest_operand<Fn> >= 16 ? 1 : 16 / widest_operand<Fn>;

template <class T, int N> struct alignas(sizeof(T) * N) Vector {
  T v[N];
};
template <int N> struct Vector<None, N> {
  None v[N];
};

/// A Python scalar's value, passed in the kernel's arguments (Note [Host scalars] in
/// cuda/elementwise_kernel.cpp): input k reads it when its address is null.
struct HostValues {
  alignas(16) u64 bits[3][2];
};

/// Input k's host value as T, read from the arguments by value: taking the address of a
/// kernel argument would make the compiler copy the arguments to local memory.
template <class T> __device__ __forceinline__ T host_value(const HostValues& v, int k) {
  T r{};
  if constexpr (!is_same<T, None>) memcpy(&r, &v.bits[k][0], sizeof(T));
  return r;
}

/// Arguments of a dense kernel: operand addresses (output first), the element count and
/// the values of host scalars.
template <int NARGS> struct DenseArgs {
  char* ptr[NARGS];
  i64 n;
  HostValues values;
};

/// Input k of a dense kernel: a run of T, or one T broadcast to all (SCALAR).
template <class T, int N, bool SCALAR> struct DenseInput {
  const T* base;
  T value;
  /// A scalar input with a null address is a host scalar, whose value is `host`.
  __device__ __forceinline__ DenseInput(const char* p, T host)
      : base(reinterpret_cast<const T*>(p)) {
    if constexpr (SCALAR) value = base ? *base : host;
  }
  __device__ __forceinline__ Vector<T, N> load(i64 step) const {
    Vector<T, N> r;
    if constexpr (SCALAR) {
#pragma unroll
      for (int j = 0; j < N; ++j) r.v[j] = value;
    } else {
      r = reinterpret_cast<const Vector<T, N>*>(base)[step];
    }
    return r;
  }
  __device__ __forceinline__ T load_one(i64 i) const {
    if constexpr (SCALAR) return value;
    else return base[i];
  }
};
template <int N, bool SCALAR> struct DenseInput<None, N, SCALAR> {
  __device__ __forceinline__ DenseInput(const char*, None) {}
  __device__ __forceinline__ Vector<None, N> load(i64) const { return {}; }
  __device__ __forceinline__ None load_one(i64) const { return {}; }
};

template <class Fn, int VEC, int UNROLL, unsigned SCALARS>
__device__ __forceinline__ void dense_kernel(const DenseArgs<4>& a) {
  using Out = typename Fn::Out;
  // A scalar input's value may be a host scalar's, in the arguments (its address null).
  using In0 = typename Fn::In0;
  using In1 = typename Fn::In1;
  using In2 = typename Fn::In2;
  const DenseInput<In0, VEC, (SCALARS & 1u) != 0> x0(a.ptr[1], host_value<In0>(a.values, 0));
  const DenseInput<In1, VEC, (SCALARS & 2u) != 0> x1(a.ptr[2], host_value<In1>(a.values, 1));
  const DenseInput<In2, VEC, (SCALARS & 4u) != 0> x2(a.ptr[3], host_value<In2>(a.values, 2));
  Vector<Out, VEC>* out = reinterpret_cast<Vector<Out, VEC>*>(a.ptr[0]);
  const i64 steps = a.n / VEC;
  const i64 block_steps = i64(blockDim.x) * UNROLL;
  // Note [Grid-stride loops stay rolled].
#pragma unroll 1
  for (i64 first = i64(blockIdx.x) * block_steps + threadIdx.x; first < steps;
       first += i64(gridDim.x) * block_steps) {
    // All loads first, then all stores: UNROLL vectors in flight per operand.
    Vector<typename Fn::In0, VEC> v0[UNROLL];
    Vector<typename Fn::In1, VEC> v1[UNROLL];
    Vector<typename Fn::In2, VEC> v2[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      i64 step = first + i64(u) * blockDim.x;
      if (step < steps) {
        v0[u] = x0.load(step);
        v1[u] = x1.load(step);
        v2[u] = x2.load(step);
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      i64 step = first + i64(u) * blockDim.x;
      if (step < steps) {
        Vector<Out, VEC> r;
#pragma unroll
        for (int j = 0; j < VEC; ++j) r.v[j] = Fn::call(v0[u].v[j], v1[u].v[j], v2[u].v[j]);
        out[step] = r;
      }
    }
  }
  // The last n % VEC elements, one per thread of block 0.
  if (VEC > 1 && blockIdx.x == 0) {
    i64 i = steps * VEC + threadIdx.x;
    if (i < a.n) {
      reinterpret_cast<Out*>(a.ptr[0])[i] =
          Fn::call(x0.load_one(i), x1.load_one(i), x2.load_one(i));
    }
  }
}

/// Arguments of a strided kernel: operand addresses (output first), the collapsed shape
/// (innermost last), each operand's byte strides, and the values of host scalars (whose
/// address is null and strides zero).
template <int ND> struct StridedArgs {
  char* ptr[4];
  i64 size[ND];
  i64 stride[4][ND];
  i64 n;
  HostValues values;
};

/// The element at p + offset, or the host value when p is null (a host scalar).
template <class T, class S>
__device__ __forceinline__ T load_at(const char* p, S offset, const HostValues& v, int k) {
  if constexpr (is_same<T, None>) return {};
  else return p ? *reinterpret_cast<const T*>(p + offset) : host_value<T>(v, k);
}

/// Input k's VEC elements at row r, vector c of a rows layout: one value repeated when
/// SCALAR (the input is broadcast along the row), VEC loads a row stride apart when GATHER
/// (a step slice), one vector load otherwise.
template <class T, int VEC, bool SCALAR, bool GATHER, class I, class S>
__device__ __forceinline__ Vector<T, VEC> row_vector(const StridedArgs<2>& a, int k, I r, S c) {
  Vector<T, VEC> v;
  if constexpr (!is_same<T, None>) {
    const char* p = a.ptr[k];
    const S offset = S(r) * S(a.stride[k][0]);
    if constexpr (SCALAR) {
      const T x = load_at<T>(p, offset, a.values, k - 1);
#pragma unroll
      for (int j = 0; j < VEC; ++j) v.v[j] = x;
    } else if constexpr (GATHER) {
      const S step = S(a.stride[k][1]);
      const char* q = p + offset + c * S(VEC) * step;
#pragma unroll
      for (int j = 0; j < VEC; ++j) v.v[j] = *reinterpret_cast<const T*>(q + S(j) * step);
    } else {
      v = *reinterpret_cast<const Vector<T, VEC>*>(p + offset + c * S(VEC * sizeof(T)));
    }
  }
  return v;
}

template <class Fn, int ND, class I>
__device__ __forceinline__ void strided_kernel(const StridedArgs<ND>& a) {
  using S = conditional_t<sizeof(I) == 4, int, i64>;  // signed offsets (strides may be < 0)
  const I n = I(a.n);
#pragma unroll 1  // Note [Grid-stride loops stay rolled]
  for (I linear = I(blockIdx.x) * blockDim.x + threadIdx.x; linear < n;
       linear += I(gridDim.x) * blockDim.x) {
    S offset[4] = {0, 0, 0, 0};
    I rest = linear;
#pragma unroll
    for (int d = ND - 1; d >= 0; --d) {
      I size = I(a.size[d]);
      I quotient = d > 0 ? rest / size : I(0);
      S coordinate = S(rest - quotient * size);
      rest = quotient;
#pragma unroll
      for (int k = 0; k < 4; ++k) offset[k] += coordinate * S(a.stride[k][d]);
    }
    *reinterpret_cast<typename Fn::Out*>(a.ptr[0] + offset[0]) =
        Fn::call(load_at<typename Fn::In0>(a.ptr[1], offset[1], a.values, 0),
                 load_at<typename Fn::In1>(a.ptr[2], offset[2], a.values, 1),
                 load_at<typename Fn::In2>(a.ptr[3], offset[3], a.values, 2));
  }
}

/// Rows of a two-dimensional layout whose inner dimension is contiguous for the output and
/// for every input but those of SCALARS (bit k: input k is one value per row, a bias column
/// or a host scalar) and GATHERS (bit k: input k steps through its row a few elements at a
/// time): each thread stores VEC elements of a row as one vector, one division per vector
/// (Note [Rows layout]).
template <class Fn, int VEC, unsigned SCALARS, unsigned GATHERS, class I>
__device__ __forceinline__ void rows_kernel(const StridedArgs<2>& a) {
  using S = conditional_t<sizeof(I) == 4, int, i64>;
  using Out = typename Fn::Out;
  using In0 = typename Fn::In0;
  using In1 = typename Fn::In1;
  using In2 = typename Fn::In2;
  const I cols = I(a.size[1] / VEC);
  const I total = I(a.size[0]) * cols;
#pragma unroll 1  // Note [Grid-stride loops stay rolled]
  for (I t = I(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += I(gridDim.x) * blockDim.x) {
    const I r = t / cols;
    const S c = S(t - r * cols);
    Vector<In0, VEC> v0 = row_vector<In0, VEC, (SCALARS & 1u) != 0, (GATHERS & 1u) != 0>(
        a, 1, r, c);
    Vector<In1, VEC> v1 = row_vector<In1, VEC, (SCALARS & 2u) != 0, (GATHERS & 2u) != 0>(
        a, 2, r, c);
    Vector<In2, VEC> v2 = row_vector<In2, VEC, (SCALARS & 4u) != 0, (GATHERS & 4u) != 0>(
        a, 3, r, c);
    Vector<Out, VEC> out;
#pragma unroll
    for (int j = 0; j < VEC; ++j) out.v[j] = Fn::call(v0.v[j], v1.v[j], v2.v[j]);
    *reinterpret_cast<Vector<Out, VEC>*>(a.ptr[0] + S(r) * S(a.stride[0][0]) +
                                         c * S(VEC * sizeof(Out))) = out;
  }
}

}  // namespace xrt::ew

// cpp/kernels/xrt/index.cuh: creation (arange, linspace, tril, triu) and integer-array
// indexing (gather, scatter, take_along_axis); cuda/index_kernels.cpp generates the kernels.
//
// Elements of the triangles and of indexing move as units of their size (bytes types), so
// one kernel serves every dtype of a size. Indices are checked on the device: a bad one
// records its row-major position with atomicMin, and the host reads the flag once.
#pragma once
#include "xrt/cast.cuh"

namespace xrt {

#define XRT_GRID_LOOP(U, i, n) \
  for (U i = U(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += U(gridDim.x) * blockDim.x)

/// 16 bytes moved as one (complex128).
struct alignas(16) index_bytes16 {
  uint64_t word[2];
};

// ---- creation ---------------------------------------------------------------------------

/// out[i] = first + i * delta in wrapping 64-bit arithmetic, truncated to T (integer ranges).
template <class T, class U>
__device__ __forceinline__ void arange_integer(T* out, uint64_t first, uint64_t delta, U n) {
  XRT_GRID_LOOP(U, i, n) out[i] = static_cast<T>(first + uint64_t(i) * delta);
}

/// out[i] = cast(first + i * delta), in double.
template <class T, class U>
__device__ __forceinline__ void arange_double(T* out, double first, double delta, U n) {
  XRT_GRID_LOOP(U, i, n) out[i] = cast_value<T>(first + static_cast<double>(i) * delta);
}

/// out[i] = start + i * step in double; integer dtypes take the floor (NumPy's rule).
template <class T, bool Integer, class U>
__device__ __forceinline__ void linspace_real(T* out, double start, double step, U n) {
  XRT_GRID_LOOP(U, i, n) {
    double v = start + static_cast<double>(i) * step;
    if (Integer) v = floor(v);
    out[i] = cast_value<T>(v);
  }
}

/// The complex twin: start + step * i, componentwise (a complex times a real).
template <class T, class U>
__device__ __forceinline__ void linspace_complex(T* out, double start_re, double start_im,
                                                 double step_re, double step_im, U n) {
  XRT_GRID_LOOP(U, i, n) {
    double d = static_cast<double>(i);
    out[i] = cast_value<T>(complex128(start_re + step_re * d, start_im + step_im * d));
  }
}

/// tril (Lower) or triu of matrices of rows x cols: out (contiguous) and in share the
/// layout's shape; the element at column c of matrix row r is kept when c <= r + k (tril)
/// or c >= r + k (triu), else zero (all-zero bytes for every dtype).
template <class T, bool Lower, int ND, class U>
__device__ __forceinline__ void triangle(char* out, const char* in,
                                         const StridedLayout<ND, 2>& layout, U n, U rows,
                                         U cols, int64_t k) {
  XRT_GRID_LOOP(U, i, n) {
    index_t offset[2];
    layout.offsets(i, offset);
    U line = i / cols;
    int64_t c = int64_t(i - line * cols), r = int64_t(line % rows);
    bool keep = Lower ? c <= r + k : c >= r + k;
    T zero = {};
    *at<T>(out, offset[0]) = keep ? *at<T>(in, offset[1]) : zero;
  }
}

// ---- integer arrays ---------------------------------------------------------------------

/// j = raw counted from the end when negative; false when outside [0, size).
template <class I>
__device__ __forceinline__ bool normalize_index(I raw, int64_t size, int64_t& j) {
  if (I(-1) < I(0)) {
    j = raw < I(0) ? int64_t(raw) + size : int64_t(raw);
    return uint64_t(j) < uint64_t(size);
  }
  j = int64_t(raw);
  return uint64_t(raw) < uint64_t(size);
}

/// For one index array (contiguous, n positions) of an axis of `size` elements: adds
/// j * stride to offset[b] and j * scale to linear[b] (when given), or sets them (first).
/// A bad index counts as 0 and records its position in *bad (the smallest wins).
template <class I, class U>
__device__ __forceinline__ void index_offsets(int64_t* offset, int64_t* linear, const I* idx, U n,
                                              int64_t size, int64_t stride, int64_t scale,
                                              int first, uint64_t* bad) {
  XRT_GRID_LOOP(U, b, n) {
    int64_t j;
    if (!normalize_index(idx[b], size, j)) {
      atomicMin(reinterpret_cast<unsigned long long*>(bad), (unsigned long long)b);
      j = 0;
    }
    offset[b] = (first ? 0 : offset[b]) + j * stride;
    if (linear) linear[b] = (first ? 0 : linear[b]) + j * scale;
  }
}

/// Element u = (p, b, q) of the selection (p outer, b index position, q inner): its byte
/// offset in v.
template <int NO, int NI, class U>
__device__ __forceinline__ index_t selected(U u, U bn, U qn, const int64_t* offset,
                                            const StridedLayout<NO, 1>& outer,
                                            const StridedLayout<NI, 1>& inner, U& b) {
  U t = u / qn, q = u - t * qn;
  U p = t / bn;
  b = t - p * bn;
  index_t po[1], qo[1];
  outer.offsets(p, po);
  inner.offsets(q, qo);
  return po[0] + offset[b] + qo[0];
}

/// out[p, b, q] = v[p, offset[b], q]; out contiguous.
template <class T, int NO, int NI, class U>
__device__ __forceinline__ void gather(T* __restrict__ out, const char* __restrict__ v,
                                       const int64_t* __restrict__ offset,
                                       StridedLayout<NO, 1> outer, StridedLayout<NI, 1> inner,
                                       U bn, U qn, U n) {
  XRT_GRID_LOOP(U, u, n) {
    U b;
    out[u] = *at<T>(v, selected(u, bn, qn, offset, outer, inner, b));
  }
}

/// winner[linear[b]] = the largest b + 1 that writes there (scatter's last write wins).
template <class W, class U>
__device__ __forceinline__ void scatter_winners(W* winner, const int64_t* linear, U bn) {
  XRT_GRID_LOOP(U, b, bn) atomicMax(winner + linear[b], W(b) + W(1));
}

/// v[p, offset[b], q] = values[p, b, q] (values contiguous, or one element when Repeated),
/// where b is the last position naming its element (winner non-null) or every position.
template <class T, bool Repeated, class W, int NO, int NI, class U>
__device__ __forceinline__ void scatter(char* __restrict__ v, const T* __restrict__ values,
                                        const int64_t* __restrict__ offset,
                                        const int64_t* __restrict__ linear,
                                        const W* __restrict__ winner, StridedLayout<NO, 1> outer,
                                        StridedLayout<NI, 1> inner, U bn, U qn, U n) {
  XRT_GRID_LOOP(U, u, n) {
    U b;
    index_t o = selected(u, bn, qn, offset, outer, inner, b);
    if (winner && winner[linear[b]] != W(b) + W(1)) continue;
    *at<T>(v, o) = values[Repeated ? 0 : u];
  }
}

/// out[i] = start[i + j * along], j = indices[i] normalised; operands out, indices, start
/// (x with a stride of 0 along the axis). A bad index records its position in *bad.
template <class T, class I, int ND, class U>
__device__ __forceinline__ void take_along_axis(char* out, const char* indices, const char* x,
                                                const StridedLayout<ND, 3>& layout, U n,
                                                int64_t size, int64_t along, uint64_t* bad) {
  XRT_GRID_LOOP(U, i, n) {
    index_t offset[3];
    layout.offsets(i, offset);
    int64_t j;
    if (!normalize_index(*at<I>(indices, offset[1]), size, j)) {
      atomicMin(reinterpret_cast<unsigned long long*>(bad), (unsigned long long)i);
      continue;
    }
    *at<T>(out, offset[0]) = *at<T>(x, offset[2] + j * along);
  }
}

#undef XRT_GRID_LOOP

}  // namespace xrt

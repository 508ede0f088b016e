#pragma once
//! \file reduce.hpp
//! reducelab's production reductions: sum, min, max, dot, argmin, argmax over device arrays of
//! float, double, __half, __nv_bfloat16, int32_t, int64_t, uint32_t and uint64_t.
//!
//! Two forms of every call:
//! - synchronous: `float s = reducelab::sum(d_in, n, stream);` returns the result on the host
//!   after synchronising `stream` (only that stream).
//! - stream-ordered: `reducelab::sum(d_in, n, d_out, stream);` writes the result to device
//!   memory `d_out` and returns at once. It never synchronises the host, allocates nothing on
//!   the hot path, and may be captured into a CUDA graph.
//!
//! Result and accumulation types: see sum_t in types.hpp. f16 and bf16 accumulate in f32;
//! 32-bit integer sums and dots return 64-bit integers; integer sums wrap modulo 2^64.
//! min and max return the input type; argmin and argmax return ArgResult<T> {value, index}.
//!
//! Empty input (n == 0): sum and dot give 0. min, max, argmin and argmax throw
//! reducelab::Error, since an empty input has no extremum.
//!
//! NaN: min, max, argmin and argmax propagate NaN as PyTorch does: if any element is NaN the
//! result is NaN, and argmin/argmax return the index of the first NaN. Otherwise argmin/argmax
//! return the first index of the extremum. sum and dot follow IEEE arithmetic (NaN in, NaN out).
//!
//! Determinism: one kernel per call whose grid depends only on n and the GPU model, and whose
//! partial results are combined in a fixed order. The same input on the same GPU gives a bitwise
//! identical result on every call, on any stream, from any thread.
//!
//! Streams and threads: no temporary storage is passed. The library owns a small workspace per
//! (device, stream), created on first use and kept for the life of the process (132 KB of device
//! memory and a page of pinned host memory, so a program that uses many short-lived streams
//! keeps one per stream it has used); calls on different streams and from different host
//! threads may run at the same time. A call captured into a CUDA graph gets a workspace of its
//! own that lives as long as the graph.
//!
//! Errors: reducelab::Error (error.hpp), thrown before anything is launched, for a null pointer
//! with n > 0, a pointer to host memory or to another device, a pointer not aligned to its
//! element type, and an empty min/max/argmin/argmax; CUDA failures carry the failing call and
//! its text. After an error the CUDA context remains usable.
//!
//! Alignment and size: any element-aligned pointer (16-byte alignment is not required) and any
//! n that fits in memory, including n >= 2^31.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "reducelab/dtype.hpp"
#include "reducelab/error.hpp"
#include "reducelab/op.hpp"
#include "reducelab/types.hpp"

namespace reducelab {

namespace detail {
//! Type-erased entry points behind the typed functions below.
//! `d_out` is device memory: sum_t<T> for sum and dot, T for min and max, ArgResult<T> for
//! argmin and argmax. `h_out` is host memory of the same layout.
void reduce_async(Op op, DType dtype, const void* d_x, const void* d_y, std::size_t n,
                  void* d_out, cudaStream_t stream);
void reduce_sync(Op op, DType dtype, const void* d_x, const void* d_y, std::size_t n,
                 void* h_out, cudaStream_t stream);

template <class T>
constexpr void require_supported() {
  static_assert(is_supported_v<T>,
                "reducelab reduces float, double, __half, __nv_bfloat16, int32_t, int64_t, "
                "uint32_t and uint64_t");
}

template <class T>
struct same_type {
  using type = T;
};

// d_y is not deduced (it may be nullptr): T comes from d_x.
template <class R, class T>
R reduce_to_host(Op op, const T* d_x, const typename same_type<T>::type* d_y, std::size_t n,
                 cudaStream_t stream) {
  require_supported<T>();
  R result{};
  reduce_sync(op, dtype_of<T>::value, d_x, d_y, n, &result, stream);
  return result;
}
}  // namespace detail

//! Sum of d_in[0..n). Synchronous: returns on the host.
template <class T>
sum_t<T> sum(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<sum_t<T>>(Op::sum, d_in, nullptr, n, stream);
}
//! Sum of d_in[0..n) into *d_out (device memory), stream-ordered.
template <class T>
void sum(const T* d_in, std::size_t n, sum_t<T>* d_out, cudaStream_t stream) {
  detail::require_supported<T>();
  detail::reduce_async(Op::sum, dtype_of<T>::value, d_in, nullptr, n, d_out, stream);
}

//! Smallest element (NaN if any element is NaN). Throws reducelab::Error for n == 0.
template <class T>
T min(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<T>(Op::min, d_in, nullptr, n, stream);
}
template <class T>
void min(const T* d_in, std::size_t n, T* d_out, cudaStream_t stream) {
  detail::require_supported<T>();
  detail::reduce_async(Op::min, dtype_of<T>::value, d_in, nullptr, n, d_out, stream);
}

//! Largest element (NaN if any element is NaN). Throws reducelab::Error for n == 0.
template <class T>
T max(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<T>(Op::max, d_in, nullptr, n, stream);
}
template <class T>
void max(const T* d_in, std::size_t n, T* d_out, cudaStream_t stream) {
  detail::require_supported<T>();
  detail::reduce_async(Op::max, dtype_of<T>::value, d_in, nullptr, n, d_out, stream);
}

//! Sum of d_x[i] * d_y[i], products and sum in sum_t<T>.
template <class T>
sum_t<T> dot(const T* d_x, const T* d_y, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<sum_t<T>>(Op::dot, d_x, d_y, n, stream);
}
template <class T>
void dot(const T* d_x, const T* d_y, std::size_t n, sum_t<T>* d_out, cudaStream_t stream) {
  detail::require_supported<T>();
  detail::reduce_async(Op::dot, dtype_of<T>::value, d_x, d_y, n, d_out, stream);
}

//! Smallest element and the index of its first occurrence (of the first NaN, if any).
//! Throws reducelab::Error for n == 0.
template <class T>
ArgResult<T> argmin(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<ArgResult<T>>(Op::argmin, d_in, nullptr, n, stream);
}
template <class T>
void argmin(const T* d_in, std::size_t n, ArgResult<T>* d_out, cudaStream_t stream) {
  detail::require_supported<T>();
  detail::reduce_async(Op::argmin, dtype_of<T>::value, d_in, nullptr, n, d_out, stream);
}

//! Largest element and the index of its first occurrence (of the first NaN, if any).
//! Throws reducelab::Error for n == 0.
template <class T>
ArgResult<T> argmax(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<ArgResult<T>>(Op::argmax, d_in, nullptr, n, stream);
}
template <class T>
void argmax(const T* d_in, std::size_t n, ArgResult<T>* d_out, cudaStream_t stream) {
  detail::require_supported<T>();
  detail::reduce_async(Op::argmax, dtype_of<T>::value, d_in, nullptr, n, d_out, stream);
}

}  // namespace reducelab

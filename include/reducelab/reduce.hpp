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
//! Determinism: one kernel per call whose grid and order of additions depend only on n, the
//! input's offset inside a 16-byte line and the GPU model (its SM count and the kernel's
//! occupancy), with partial results combined in a fixed order. The same input at the same offset
//! on the same GPU model gives a bitwise identical result on every call, on any stream, from any
//! thread. Integer results and min/max do not depend on the order at all.
//!
//! Streams and threads: no temporary storage is passed. The library owns a small workspace per
//! (device, stream), created on first use and kept until release_workspace(stream) or
//! release_workspaces() frees it (164 KB of device memory and 16 bytes of pinned host memory
//! each, so a program that creates many short-lived streams should release each before
//! destroying it). Calls on different streams and from different host threads may run at the
//! same time; calls on one stream share its workspace, in stream order.
//!
//! CUDA graphs: a stream-ordered call made while its stream is captured gets a workspace of its
//! own, owned by the graph and freed with it (the graph also resets the workspace's counter at
//! the start of every replay). Every instantiation of that graph (each cudaGraphExec_t made from
//! it) uses that same workspace: replays of one instantiation are ordered and safe, but two
//! instantiations of one captured graph must not run at the same time (the second would race
//! with the first on the block counter and the partials and give wrong results). Capture the
//! work once per instantiation you need to run concurrently. The synchronous form cannot be
//! captured (it throws).
//!
//! Errors: reducelab::Error (error.hpp), thrown before anything is launched, for a null pointer
//! with n > 0, a pointer to host memory or to another device, a pointer not aligned to its
//! element type, an invalid Op or DType value, a second array given to an op that reads one, and
//! an empty min/max/argmin/argmax; CUDA failures carry the failing call and its text. After an
//! error the CUDA context remains usable.
//!
//! Alignment and size: any element-aligned pointer (16-byte alignment is not required) and any
//! n that fits in memory, including n >= 2^31.
//!
//! Signed zeros: sum and dot start from -0.0 (the IEEE additive identity), so a sum of only -0.0
//! gives -0.0 and any +0.0 makes it +0.0, as IEEE addition of the elements alone does
//! (-0 + -0 = -0, -0 + +0 = +0); an empty sum gives +0, as torch.sum does.
//! argmin and argmax return the value stored at the index they return, bit for bit (with +0 and
//! -0 tied, the first of them).

#include <cuda_runtime_api.h>

#include <cstddef>

#include "reducelab/dtype.hpp"
#include "reducelab/error.hpp"
#include "reducelab/op.hpp"
#include "reducelab/types.hpp"

namespace reducelab {

//! The runtime-typed form of every reduction, stream-ordered: reads d_x[0..n) (and d_y[0..n)
//! for ops with two inputs, else d_y must be null) of element type `dtype` and writes
//! result_size(op, dtype) bytes to device memory d_out: sum_t<T> for sum and dot, T for min and
//! max, ArgResult<T> for argmin and argmax (types.hpp). The typed functions below, the benchmark,
//! the tests and the bindings all go through it.
void reduce(Op op, DType dtype, const void* d_x, const void* d_y, std::size_t n, void* d_out,
            cudaStream_t stream);

//! The same, synchronous: writes result_size(op, dtype) bytes to host memory h_out after
//! synchronising `stream` (only that stream).
void reduce_to_host(Op op, DType dtype, const void* d_x, const void* d_y, std::size_t n,
                    void* h_out, cudaStream_t stream = nullptr);

//! Waits for the work queued on `stream`, then frees the workspace the library keeps for it on
//! the current device (nothing if it has none). Call it before destroying a stream that
//! reducelab used, from a point where no other thread queues reducelab calls on that stream.
//! A later call on the stream creates a new workspace.
void release_workspace(cudaStream_t stream);

//! Waits for every device that has workspaces, then frees them all. No reducelab call may run
//! concurrently, on any stream or thread. Graph-owned workspaces are not affected.
void release_workspaces();

namespace detail {
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
  reducelab::reduce_to_host(op, dtype_of<T>::value, d_x, d_y, n, &result, stream);
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
  reducelab::reduce(Op::sum, dtype_of<T>::value, d_in, nullptr, n, d_out, stream);
}

//! Smallest element (NaN if any element is NaN). Throws reducelab::Error for n == 0.
template <class T>
T min(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<T>(Op::min, d_in, nullptr, n, stream);
}
template <class T>
void min(const T* d_in, std::size_t n, T* d_out, cudaStream_t stream) {
  detail::require_supported<T>();
  reducelab::reduce(Op::min, dtype_of<T>::value, d_in, nullptr, n, d_out, stream);
}

//! Largest element (NaN if any element is NaN). Throws reducelab::Error for n == 0.
template <class T>
T max(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<T>(Op::max, d_in, nullptr, n, stream);
}
template <class T>
void max(const T* d_in, std::size_t n, T* d_out, cudaStream_t stream) {
  detail::require_supported<T>();
  reducelab::reduce(Op::max, dtype_of<T>::value, d_in, nullptr, n, d_out, stream);
}

//! Sum of d_x[i] * d_y[i], products and sum in sum_t<T>.
template <class T>
sum_t<T> dot(const T* d_x, const T* d_y, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<sum_t<T>>(Op::dot, d_x, d_y, n, stream);
}
template <class T>
void dot(const T* d_x, const T* d_y, std::size_t n, sum_t<T>* d_out, cudaStream_t stream) {
  detail::require_supported<T>();
  reducelab::reduce(Op::dot, dtype_of<T>::value, d_x, d_y, n, d_out, stream);
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
  reducelab::reduce(Op::argmin, dtype_of<T>::value, d_in, nullptr, n, d_out, stream);
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
  reducelab::reduce(Op::argmax, dtype_of<T>::value, d_in, nullptr, n, d_out, stream);
}

}  // namespace reducelab

#pragma once
//! \file reduce.hpp
//! reducelab's production reductions: sum, min, max, dot, argmin, argmax over device arrays of
//! float, double, __half, __nv_bfloat16, int32_t, int64_t, uint32_t and uint64_t; and the
//! statistics mean, var, std, var_mean, std_mean, norm, logsumexp (floating types), count_nonzero,
//! any, all and aminmax (every type). op.hpp lists them; each one runs as one kernel over the data,
//! whole arrays here, along axes in axis.hpp and over segments in segmented.hpp.
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
//! Statistics: results are stat_t<T> (types.hpp: float for f32, f16, bf16; double for f64),
//! var_mean/std_mean a StatPair {var or std, mean}, count_nonzero an int64_t, any/all a bool,
//! aminmax a MinMax<T> {min, max}.
//! - mean = sum / n, in the accumulation type of sum.
//! - var = sum (x - mean)^2 / max(0, n - correction), std = sqrt(var), torch's `correction`
//!   (default 1; Reduction::var(0) for the population variance), computed in one pass with
//!   Welford/Chan merges, never as a sum of squares: accurate when the mean is large against the
//!   spread (stats_reference.hpp's bound, tested on 1e6 + N(0, 1) in f32). n <= correction gives
//!   NaN (all elements equal) or +inf, as torch.
//! - norm: ord 2 (default) never overflows or underflows where the result is representable: f32
//!   and bf16 sum their squares in double, f16 in float, f64 with Blue's scaled sums; ord 1 sums |x|;
//!   ord inf and -inf are max |x| and min |x|; ord 0 counts nonzeros. Other ords throw.
//! - logsumexp = max + log(sum exp(x - max)) in one pass: NaN if any element is NaN, else +inf if
//!   any is +inf, else -inf if all are -inf.
//! - count_nonzero, any, all: NaN is nonzero (true), -0.0 is zero.
//! - aminmax: min and max in one pass; both NaN if any element is NaN.
//!
//! Empty input (n == 0): sum and dot give 0. min, max, argmin, argmax and aminmax throw
//! reducelab::Error, since an empty input has no extremum, and so does norm with ord inf or
//! -inf. mean, var, std give NaN, norm 0, logsumexp -inf, count_nonzero 0, any false, all true.
//!
//! NaN: min, max, argmin and argmax propagate NaN as PyTorch does: if any element is NaN the
//! result is NaN, and argmin/argmax return the index of the first NaN. Otherwise argmin/argmax
//! return the first index of the extremum. sum and dot follow IEEE arithmetic (NaN in, NaN out).
//!
//! Determinism: one kernel per call whose grid and order of additions depend only on n, the
//! input's offset inside a 16-byte line and the GPU model (its SM count and the kernel's
//! occupancy), with partial results combined in a fixed order. The same input at the same offset
//! on the same GPU model gives a bitwise identical result on every call, on any stream, from any
//! thread. Integer results and min/max do not depend on the order at all. For the same bits on
//! any GPU, grid and offset, pass a Reduction in the gpu_to_gpu mode
//! (`Reduction(Op::sum).reproducible()`; reproducible.hpp says what it guarantees and which ops
//! and forms take it).
//!
//! Streams and threads: no temporary storage is passed. The library owns a small workspace per
//! (device, stream), created on first use and kept until release_workspace(stream) or
//! release_workspaces() frees it (about 2.1 MB of device memory and 16 bytes of pinned host memory
//! each, so a program that creates many short-lived streams should release each before
//! destroying it). Calls on different streams and from different host threads may run at the
//! same time; calls on one stream share its workspace, in stream order. The gpu_to_gpu mode's
//! strided axis reductions (columns, a middle axis) also take stream-ordered scratch from a
//! memory pool of the library's own per device, which keeps up to 528 MB mapped between calls;
//! release_workspaces() gives that back too.
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
void reduce(Reduction r, DType dtype, const void* d_x, const void* d_y, std::size_t n,
            void* d_out, cudaStream_t stream);

//! The same, synchronous: writes result_size(op, dtype) bytes to host memory h_out after
//! synchronising `stream` (only that stream).
void reduce_to_host(Reduction r, DType dtype, const void* d_x, const void* d_y, std::size_t n,
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
R reduce_to_host(Reduction r, const T* d_x, const typename same_type<T>::type* d_y, std::size_t n,
                 cudaStream_t stream) {
  require_supported<T>();
  R result{};
  reducelab::reduce_to_host(r, dtype_of<T>::value, d_x, d_y, n, &result, stream);
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

// ---- the statistics: synchronous forms (a stream-ordered form is reduce() with a Reduction) ----

//! sum / n in sum_t<T> (NaN for n == 0).
template <class T>
stat_t<T> mean(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<stat_t<T>>(Op::mean, d_in, nullptr, n, stream);
}
//! sum (x - mean)^2 / max(0, n - correction), one pass.
template <class T>
stat_t<T> var(const T* d_in, std::size_t n, double correction = 1, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<stat_t<T>>(Reduction::var(correction), d_in, nullptr, n, stream);
}
//! sqrt(var).
template <class T>
stat_t<T> stddev(const T* d_in, std::size_t n, double correction = 1,
                 cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<stat_t<T>>(Reduction::stddev(correction), d_in, nullptr, n,
                                            stream);
}
//! {var, mean} in one pass.
template <class T>
StatPair<stat_t<T>> var_mean(const T* d_in, std::size_t n, double correction = 1,
                             cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<StatPair<stat_t<T>>>(Reduction::var_mean(correction), d_in,
                                                     nullptr, n, stream);
}
//! {std, mean} in one pass.
template <class T>
StatPair<stat_t<T>> std_mean(const T* d_in, std::size_t n, double correction = 1,
                             cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<StatPair<stat_t<T>>>(Reduction::std_mean(correction), d_in,
                                                     nullptr, n, stream);
}
//! The vector norm of order ord: 0, 1, 2, inf or -inf.
template <class T>
stat_t<T> norm(const T* d_in, std::size_t n, double ord = 2, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<stat_t<T>>(Reduction::norm(ord), d_in, nullptr, n, stream);
}
//! log(sum exp(x)), one pass.
template <class T>
stat_t<T> logsumexp(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<stat_t<T>>(Op::logsumexp, d_in, nullptr, n, stream);
}
//! Elements != 0 (NaN counts, -0.0 does not).
template <class T>
std::int64_t count_nonzero(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<std::int64_t>(Op::count_nonzero, d_in, nullptr, n, stream);
}
//! Some element != 0.
template <class T>
bool any(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<bool>(Op::any, d_in, nullptr, n, stream);
}
//! Every element != 0.
template <class T>
bool all(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<bool>(Op::all, d_in, nullptr, n, stream);
}
//! {min, max} in one pass. Throws reducelab::Error for n == 0.
template <class T>
MinMax<T> aminmax(const T* d_in, std::size_t n, cudaStream_t stream = nullptr) {
  return detail::reduce_to_host<MinMax<T>>(Op::aminmax, d_in, nullptr, n, stream);
}

}  // namespace reducelab

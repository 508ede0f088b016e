#pragma once
//! \file segmented.hpp
//! Segmented reductions: one result per segment of a device array, for every op (sum, min, max,
//! dot, argmin, argmax) and every element type of reduce.hpp. Segments are either
//! - fixed-size: num_segments rows of segment_size elements, segment s = x[s x segment_size,
//!   (s + 1) x segment_size), or
//! - ragged (CSR): num_segments + 1 offsets in device memory, int32 or int64, segment
//!   s = x[offsets[s], offsets[s + 1]). offsets[0] need not be 0; empty segments are allowed.
//!
//! Every call is stream-ordered: it writes num_segments results to device memory d_out and
//! returns at once. It never synchronises the host, takes no temporary storage from the user and
//! allocates nothing after the stream's first call, and may be captured into a CUDA graph (with
//! the same workspace rules as reduce.hpp: one workspace per (device, stream), a graph's own for
//! a captured call).
//!
//! Results: d_out holds num_segments results of result_size(op, dtype) bytes each, contiguous,
//! aligned to result_alignment(op, dtype): sum_t<T> for sum and dot, T for min and max,
//! ArgResult<T> for argmin and argmax, whose index is the position WITHIN the segment (0 is the
//! segment's first element), as torch's argmin/argmax along a dimension give. Types, rounding
//! and wrapping are those of reduce.hpp.
//!
//! Empty segments (segment_size == 0, or offsets[s] == offsets[s + 1]) never throw, since other
//! segments of the same call may not be empty; each gets a defined result:
//! - sum, dot: 0 (+0 for the floating types: all-zero bits);
//! - min: the op's identity, +inf for the floating types (f16/bf16 too) and the largest value of
//!   the integer types; max: -inf, or the lowest integer value (0 for the unsigned types);
//! - argmin, argmax: value as min/max above and index -1, a sentinel no element has;
//! - aminmax: {min, max} as min and max above;
//! - mean, var, std, var_mean, std_mean: NaN (as torch); logsumexp: -inf; count_nonzero: 0;
//!   any: false; all: true; norm: 0, but +inf for ord -inf (the identity of min |x|).
//! (The scalar reduce() throws for an empty min/max/argmin/argmax/aminmax, and a norm with ord
//! inf or -inf, instead.)
//!
//! num_segments == 0: nothing is written and nothing is launched; the pointers may be null.
//!
//! NaN: per segment, as reduce.hpp: a segment with a NaN has min/max NaN and argmin/argmax the
//! index of its first NaN; other segments are unaffected. sum and dot follow IEEE arithmetic.
//!
//! Determinism: a segment's order of additions depends only on its length, its offset inside a
//! 16-byte line, the shape of the call (num_segments and segment_size; for ragged segments also
//! offsets[0] and offsets[num_segments], where the work on long segments is cut) and the GPU
//! model. The same call on the same GPU model gives bitwise identical results, on any stream.
//! Integer results and min/max/argmin/argmax do not depend on the order at all. In the gpu_to_gpu
//! mode (Reduction::reproducible(); sum, dot, mean, var, std, var_mean, std_mean, logsumexp and
//! norm of ord 1 and 2 of the floating types) each segment's result has the bits of the
//! whole-array gpu_to_gpu result of that segment alone, on every GPU (reproducible.hpp).
//!
//! Ragged offsets: they must be nondecreasing and lie within the input (every segment inside the
//! array d_x points to). They are in device memory, so the library cannot check them on the host
//! without a synchronisation; it checks what it can on the device: a decreasing pair
//! (offsets[s + 1] < offsets[s]) is read as an empty segment s and never crashes or hangs, and
//! the other segments' results are still their reductions (the call then takes a slower path for
//! long segments). Offsets outside the input are out-of-bounds reads, as a wrong n is for reduce().
//!
//! Errors: reducelab::Error (error.hpp), thrown before anything is launched, for an invalid Op or
//! DType value, a second array given to an op that reads one, num_segments x segment_size that
//! overflows, a null pointer where something is read or written (for ragged segments d_x, and d_y
//! for dot, must be valid whenever num_segments > 0, since the lengths are on the device), a
//! pointer to host memory or another device (the offsets included), and a pointer not aligned to
//! its element (offsets: to 4 or 8 bytes; d_out: to result_alignment). CUDA failures carry the
//! failing call and its text. After an error the CUDA context remains usable.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"
#include "reducelab/reduce.hpp"
#include "reducelab/types.hpp"

namespace reducelab {

//! Fixed-size segments: reduces each of the num_segments rows of segment_size elements of d_x
//! (and d_y for dot, else d_y must be null) of element type `dtype` into d_out[s].
void reduce_segments(Reduction r, DType dtype, const void* d_x, const void* d_y, std::size_t num_segments,
                     std::size_t segment_size, void* d_out, cudaStream_t stream);

//! Ragged segments: reduces x[d_offsets[s], d_offsets[s + 1]) into d_out[s] for s in
//! [0, num_segments); d_offsets holds num_segments + 1 int64 offsets in device memory.
void reduce_segments(Reduction r, DType dtype, const void* d_x, const void* d_y, std::size_t num_segments,
                     const std::int64_t* d_offsets, void* d_out, cudaStream_t stream);

//! The same with int32 offsets.
void reduce_segments(Reduction r, DType dtype, const void* d_x, const void* d_y, std::size_t num_segments,
                     const std::int32_t* d_offsets, void* d_out, cudaStream_t stream);

// Typed forms. `segments` is either segment_size (an integer: fixed-size segments) or the device
// offsets (const std::int32_t* or const std::int64_t*, num_segments + 1 of them).

namespace detail {
template <class T, class Segments>
void reduce_segments(Reduction r, const T* d_x, const typename same_type<T>::type* d_y,
                     std::size_t num_segments, Segments segments, void* d_out,
                     cudaStream_t stream) {
  require_supported<T>();
  reducelab::reduce_segments(r, dtype_of<T>::value, d_x, d_y, num_segments, segments, d_out,
                             stream);
}
}  // namespace detail

//! Sum of each segment into d_out[s] (sum_t<T>, 0 for an empty segment).
template <class T, class Segments>
void sum_segments(const T* d_x, std::size_t num_segments, Segments segments, sum_t<T>* d_out,
                  cudaStream_t stream) {
  detail::reduce_segments(Op::sum, d_x, nullptr, num_segments, segments, d_out, stream);
}

//! Smallest element of each segment (NaN if it has one; +inf or the type's maximum if empty).
template <class T, class Segments>
void min_segments(const T* d_x, std::size_t num_segments, Segments segments, T* d_out,
                  cudaStream_t stream) {
  detail::reduce_segments(Op::min, d_x, nullptr, num_segments, segments, d_out, stream);
}

//! Largest element of each segment (NaN if it has one; -inf or the type's lowest if empty).
template <class T, class Segments>
void max_segments(const T* d_x, std::size_t num_segments, Segments segments, T* d_out,
                  cudaStream_t stream) {
  detail::reduce_segments(Op::max, d_x, nullptr, num_segments, segments, d_out, stream);
}

//! Sum of d_x[i] * d_y[i] over each segment (the same segments of both arrays).
template <class T, class Segments>
void dot_segments(const T* d_x, const T* d_y, std::size_t num_segments, Segments segments,
                  sum_t<T>* d_out, cudaStream_t stream) {
  detail::reduce_segments(Op::dot, d_x, d_y, num_segments, segments, d_out, stream);
}

//! Smallest element of each segment and its first index within the segment (-1 if empty).
template <class T, class Segments>
void argmin_segments(const T* d_x, std::size_t num_segments, Segments segments, ArgResult<T>* d_out,
                     cudaStream_t stream) {
  detail::reduce_segments(Op::argmin, d_x, nullptr, num_segments, segments, d_out, stream);
}

//! Largest element of each segment and its first index within the segment (-1 if empty).
template <class T, class Segments>
void argmax_segments(const T* d_x, std::size_t num_segments, Segments segments, ArgResult<T>* d_out,
                     cudaStream_t stream) {
  detail::reduce_segments(Op::argmax, d_x, nullptr, num_segments, segments, d_out, stream);
}

}  // namespace reducelab

#pragma once
//! \file axis.hpp
//! Reductions along axes of a strided N-d view: row sums of a matrix, column means, the last
//! axis or a middle axis of a 3-D tensor, any set of axes of a view of rank up to 8, for every
//! op (sum, min, max, dot, argmin, argmax) and every element type of reduce.hpp.
//!
//! The view: `Layout` gives the sizes and the strides (in ELEMENTS, not bytes) of each axis,
//! axis 0 outermost as in torch and NumPy; element (i0, .., i{r-1}) is d_x[sum of ik x
//! stride[k]]. Strides are any non-negative integers: a transposed or sliced view, a broadcast
//! (stride 0) axis, overlapping rows. Sizes may be 0 or 1. dot reads d_y through the same layout.
//!
//! `axes` is a bit mask (axis k reduced when bit k is set; `axis_mask({0, 2})` builds one): the
//! result has one element per index of the kept axes. It is written
//! - contiguous, in row-major order of the kept axes (keepdim does not change these bytes), or
//! - through `out`, a Layout in RESULTS (result_size(op, dtype) bytes each) whose rank is either
//!   the number of kept axes (reduced axes dropped) or the rank of x (keepdim: each reduced axis
//!   has size 1, its stride is ignored), and whose other sizes are those of the kept axes.
//!   Output strides must not make two results share an element (not checked beyond what is
//!   cheap: a zero stride on an axis of size > 1 is an error).
//!
//! Results: sum_t<T> for sum and dot, T for min and max, ArgResult<T> for argmin and argmax,
//! whose index is the position WITHIN THE REDUCED AXES: the row-major flat index over the
//! reduced axes in their order in the view (for one axis, the index along it, as torch's
//! argmin(dim) gives; for every axis, the flat index of the view, as torch's argmin() gives).
//! The element at that position is the first (lowest index) extremum, or the first NaN.
//!
//! Zero-size axes: a kept axis of size 0 means no results (nothing is written or launched); a
//! reduced axis of size 0 means every result reduces nothing and gets the empty result of
//! segmented.hpp (sum, dot: 0; min/max: the identity; argmin/argmax: the identity and index -1).
//! Reducing no axes (mask 0) copies each element through the op's result type (argmin/argmax:
//! index 0).
//!
//! The planner picks the kernel from the layout after dropping size-1 axes and merging axes that
//! are contiguous in memory: everything reduced over one contiguous range is the scalar reduce;
//! one contiguous reduced range per result, with the results' ranges a fixed stride apart
//! (rows, also sliced ones), is the segmented reduce of segmented.hpp; everything else, column
//! reductions in particular, is a strided kernel that reads coalesced along the innermost kept
//! axis and splits the reduced axes across blocks when there are few results. The thresholds and
//! their measurements are in src/reduce/axis_plan.hpp.
//!
//! Calls are stream-ordered, take no temporary storage from the user, allocate nothing after a
//! stream's first call, and may be captured into a CUDA graph, as reduce.hpp and segmented.hpp.
//! NaN rules, rounding and determinism (the same call on the same GPU model gives the same bits)
//! are theirs too.
//!
//! Errors: reducelab::Error before anything is launched, for an invalid Op or DType, a second
//! array given to an op that reads one (or none given to dot), a rank above kMaxRank or below 0,
//! a negative size or stride, a mask bit at or above the rank, an `out` layout of the wrong rank
//! or sizes, a view whose last element's offset overflows, a null pointer where something is read
//! or written, a pointer to host memory or another device, and a pointer not aligned to its
//! element (d_out: to result_alignment). CUDA failures carry the failing call and its text.
//! After an error the CUDA context remains usable.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"
#include "reducelab/reduce.hpp"
#include "reducelab/types.hpp"

namespace reducelab {

//! The largest rank of a view.
inline constexpr int kMaxRank = 8;

//! Sizes and strides (in elements) of a strided view, axis 0 outermost.
struct Layout {
  int rank = 0;
  std::int64_t sizes[kMaxRank] = {};
  std::int64_t strides[kMaxRank] = {};

  //! Row-major (C-contiguous) strides for `sizes`. Throws reducelab::Error past kMaxRank or for
  //! a negative size.
  static Layout contiguous(std::initializer_list<std::int64_t> sizes);
  //! Explicit sizes and strides, of the same length.
  static Layout strided(std::initializer_list<std::int64_t> sizes,
                        std::initializer_list<std::int64_t> strides);
  //! Elements of the view (product of the sizes; 1 for rank 0).
  std::int64_t count() const;
};

//! Bit k set: axis k is reduced.
using AxisMask = std::uint32_t;

//! The mask of the listed axes (each in [0, kMaxRank); a negative axis counts from the end only
//! with a rank: see the overload).
AxisMask axis_mask(std::initializer_list<int> axes);
//! The same, where axis -1 is the last of `rank` axes (as torch's dim=-1).
AxisMask axis_mask(std::initializer_list<int> axes, int rank);

//! The contiguous layout of the result of reducing `axes` of `x` (in results), keeping each
//! reduced axis as size 1 when `keepdim`.
Layout reduced_layout(const Layout& x, AxisMask axes, bool keepdim);

//! Reduces the axes in `axes` of the view (d_x, x) (and d_y for dot, else d_y must be null)
//! into d_out: contiguous when `out` is null, else through *out (see above).
void reduce_axes(Reduction r, DType dtype, const void* d_x, const void* d_y, const Layout& x,
                 AxisMask axes, void* d_out, const Layout* out, cudaStream_t stream);

//! Typed form: T is the element type (the results are of the type result_size() describes).
template <class T>
void reduce_axes(Reduction r, const T* d_x, const typename detail::same_type<T>::type* d_y,
                 const Layout& x, AxisMask axes, void* d_out, cudaStream_t stream,
                 const Layout* out = nullptr) {
  detail::require_supported<T>();
  reduce_axes(r, dtype_of<T>::value, d_x, d_y, x, axes, d_out, out, stream);
}

}  // namespace reducelab

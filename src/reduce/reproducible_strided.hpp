#pragma once
// The gpu_to_gpu mode's strided axis reductions (columns, a middle axis, a transposed view:
// every view whose results' reduced elements are not one contiguous run in memory). Each
// result's bits are those of the whole-array gpu_to_gpu result of its reduced elements in
// row-major order of the reduced axes (reproducible.hpp), so the launcher
// (reproducible_strided.cu) gathers a chunk of results into contiguous rows, a tiled transpose
// through shared memory, and hands the rows to the fixed-order segments (the bits of rows,
// reproducible_segments.cuh). What this header holds is the index arithmetic of that gather,
// host and device code, so the CPU tests check it against the axis reference's walk.

#include <cstdint>

#include "reduce/axis_plan.hpp"

#if defined(__CUDACC__)
#define REDUCELAB_STRIDED_HD __host__ __device__ __forceinline__
#else
#define REDUCELAB_STRIDED_HD inline
#endif

namespace reducelab::detail {

//! Results gathered per chunk at most, in bytes of input (both arrays for dot): the scratch is
//! one chunk of rows (a stream-ordered allocation), so a column reduction of any size needs at
//! most this much memory besides its input, or one result's row when a row is larger.
inline constexpr std::uint64_t kStridedGatherBytes = std::uint64_t{256} << 20;

//! Where result r's elements and its result lie, for a canonical view (axis_plan.hpp): result r
//! is the r-th index of the kept axes in row-major order of the view's kept axes (the canonical
//! order: any order serves, since each result knows its own place in the output), reduced index
//! k the k-th index of the reduced axes in row-major order of the reduced axes (the order of the
//! result's elements, which the gpu_to_gpu mode fixes).
struct StridedMap {
  AxisView view;  // a plain aggregate: the kernels take it by value

  static StridedMap of(const AxisView& view) { return {view}; }

  //! The offset of index i (below the product of the sizes) of the row-major walk over axes of
  //! `sizes` with `strides` (rank of them, the last one fastest). The outermost axis takes what is
  //! left of i whole, so one axis (a column reduction's) costs no division.
  REDUCELAB_STRIDED_HD static std::int64_t offset(std::uint64_t i, const std::int64_t* sizes,
                                                  const std::int64_t* strides, int rank) {
    if (rank == 0) return 0;
    std::int64_t at = 0;
    for (int d = rank - 1; d > 0; --d) {
      const auto size = static_cast<std::uint64_t>(sizes[d]);
      at += static_cast<std::int64_t>(i % size) * strides[d];
      i /= size;
    }
    return at + static_cast<std::int64_t>(i) * strides[0];
  }
  //! Offset in x (elements) of result r's first element.
  REDUCELAB_STRIDED_HD std::int64_t result_in(std::uint64_t r) const {
    return offset(r, view.kept_sizes, view.kept_in, view.kept_rank);
  }
  //! Offset in the output (results) of result r.
  REDUCELAB_STRIDED_HD std::int64_t result_out(std::uint64_t r) const {
    return offset(r, view.kept_sizes, view.kept_out, view.kept_rank);
  }
  //! Offset in x (elements), from its result's first element, of reduced index k.
  REDUCELAB_STRIDED_HD std::int64_t reduced_at(std::uint64_t k) const {
    return offset(k, view.reduced_sizes, view.reduced_in, view.reduced_rank);
  }
  //! s > 0 when result r lies at r x s in the output for every r (the kept axes are one
  //! row-major chain there, as in a contiguous output), else 0. One result: 1.
  std::int64_t out_step() const {
    const int rank = view.kept_rank;
    if (rank == 0) return 1;
    const std::int64_t step = view.kept_out[rank - 1];
    for (int d = rank - 2; d >= 0; --d)
      if (view.kept_out[d] != view.kept_out[d + 1] * view.kept_sizes[d + 1]) return 0;
    return step > 0 ? step : (view.kept_sizes[rank - 1] == 1 ? 1 : 0);
  }
  //! Whether consecutive results lie closer in x than consecutive reduced indices: the gather
  //! then reads along the results (a column reduction reads rows of columns).
  bool reads_along_results() const {
    if (view.kept_rank == 0) return false;
    if (view.reduced_rank == 0) return true;
    return view.kept_in[view.kept_rank - 1] < view.reduced_in[view.reduced_rank - 1];
  }
};

}  // namespace reducelab::detail

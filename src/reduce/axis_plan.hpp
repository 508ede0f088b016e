#pragma once
// The axis reduce's planner (include/reducelab/axis.hpp): the view in canonical form and the
// kernel that reads it, decided on the host from the layout alone. Host-only code, so the CPU
// tests check every decision.
//
// Canonical form (canonicalize_axes):
//   1. size-1 axes are dropped: they change neither which elements a result reads nor the flat
//      index within the reduced axes;
//   2. the kept axes are ordered by input stride, largest first (any op: a kept axis only says
//      where a result goes), and the reduced axes too when the op ignores positions (sum, min,
//      max, dot); argmin/argmax keep the reduced axes in view order, since their index is the
//      row-major flat index over them;
//   3. neighbours that are one contiguous run are merged: stride[i] == stride[i + 1] x
//      size[i + 1] (for kept axes also in the output).
// A contiguous tensor's rows, columns and batches become rank 1 or 2 this way; a transposed
// one's full reduction becomes one contiguous range.
//
// Paths (plan_path):
//   - nothing: a kept axis of size 0 (no results);
//   - scalar: no kept axis and one contiguous reduced range: the scalar reduce (launch.cuh);
//   - rows: one contiguous reduced range per result and at most one kept axis: results `pitch`
//     elements apart in x and `out_stride` apart in the output: the fixed-size segmented reduce
//     (segmented.cuh; its thresholds are in segment_plan.hpp);
//   - strided: anything else, column reductions in particular: axis_kernel (axis.cuh).
//
// The strided kernel (plan_strided): a block of kAxisBlock threads computes `columns` results,
// `lanes` threads each (columns x lanes == kAxisBlock); a thread reads every lanes-th reduced
// index of its result. Threads are laid out so that a warp's loads are contiguous where the
// memory allows: consecutive threads take consecutive results when the innermost kept axis has
// stride 1 (kept-major: a column reduction reads whole rows of columns), consecutive reduced
// indices when the innermost reduced axis has stride 1 (reduced-major). When there are fewer
// result blocks than the GPU holds, `splits` blocks share each block's results along the reduced
// axes (gridDim.y): each writes a partial per result and the last of them folds them in order.
//
// THE THRESHOLDS below are first settings, to be swept on the H200 (issue 11); what each trades
// is said beside it and the measurements are recorded here when taken.

#include <cstddef>
#include <cstdint>

#include "reducelab/axis.hpp"

namespace reducelab::detail {

// ---- thresholds ------------------------------------------------------------------------------

//! Threads per block of axis_kernel.
inline constexpr unsigned kAxisBlock = 256;
//! Results per block when the innermost kept axis is contiguous: 32 x 4-byte elements are one
//! 128-byte line per warp row, so every line fetched is used whole.
inline constexpr unsigned kAxisColumns = 32;
//! A split along the reduced axes must leave every thread at least this many elements: below,
//! the partials' store, ticket and fold cost more than the loads they spread.
inline constexpr std::uint64_t kAxisMinPerThread = 16;
//! Bytes of partials a thread of the last split block folds, at most (the team of a result is
//! kAxisBlock / its block's results): the fold issues 8 loads at a time, each batch an L2 round
//! trip after the last, and wider accumulators cost more per merge. 128 columns (one block of
//! 128 results, 2 threads each) measured on the H200 (session 15): var's 20-byte partials took
//! 257 us at 528 splits (264 per thread), 199..202 at 256, 208 at 204; f32 sum 157 us at 660
//! splits (330 per thread) but 165 at 256. 2,048 bytes allows both their faster settings.
inline constexpr std::uint64_t kAxisMaxFoldBytes = 2048;

// ---- canonical form -------------------------------------------------------------------------

//! The view after canonicalize_axes: kept axes (outer to inner) with their input and output
//! strides, reduced axes (outer to inner, the flat index's order) with their input strides.
struct AxisView {
  int kept_rank = 0;
  std::int64_t kept_sizes[kMaxRank] = {};
  std::int64_t kept_in[kMaxRank] = {};
  std::int64_t kept_out[kMaxRank] = {};
  int reduced_rank = 0;
  std::int64_t reduced_sizes[kMaxRank] = {};
  std::int64_t reduced_in[kMaxRank] = {};
  std::uint64_t outputs = 1;  //!< results (product of the kept sizes)
  std::uint64_t reduced = 1;  //!< elements per result (product of the reduced sizes)
  std::uint64_t x_extent = 0;    //!< elements from d_x to one past the last one read; 0: none
  std::uint64_t out_extent = 0;  //!< results from d_out to one past the last one written
};

//! Validates (x, axes, out) and returns the canonical view. `positions_matter`: the op's result
//! depends on the order of the reduced axes (argmin, argmax). Throws reducelab::Error
//! (invalid_argument) naming what is wrong.
AxisView canonicalize_axes(const Layout& x, AxisMask axes, const Layout* out,
                           bool positions_matter);

// ---- paths ------------------------------------------------------------------------------------

enum class AxisPath { nothing, scalar, rows, strided };

AxisPath plan_path(const AxisView& view);

//! The rows path's segments: `rows` results of `length` contiguous elements, row r at
//! x + r x pitch, its result at out + r x out_stride.
struct AxisRows {
  std::uint64_t rows;
  std::uint64_t length;
  std::uint64_t pitch;
  std::uint64_t out_stride;
};
AxisRows rows_of(const AxisView& view);

// ---- the strided kernel's shape ----------------------------------------------------------------

struct AxisKernelShape {
  bool reduced_major = false;  //!< consecutive threads take consecutive reduced indices
  unsigned columns = 1;        //!< threads along the results per block
  //! Neighbouring results per thread: 1, or a 16-byte vector's elements (vector columns: one
  //! 16-byte load reads `width` results' elements of one reduced index).
  unsigned width = 1;
  unsigned lanes = kAxisBlock;  //!< threads per result
  unsigned splits = 1;          //!< blocks along the reduced axes (gridDim.y)
  //! Reduced elements per load along the reduced axes: 1, or a 16-byte vector's elements when a
  //! reduced-major view's runs are aligned (vector runs, reduced_vector_width): a thread's
  //! positions are then vectors of `reduced_width` neighbouring reduced indices.
  unsigned reduced_width = 1;
  std::uint64_t steps = 0;      //!< reduced positions per result: view.reduced / reduced_width
  std::uint64_t chunk = 0;      //!< reduced positions per split (the last may have fewer)
  unsigned grid = 1;            //!< gridDim.x: result blocks (a grid-stride loop past it)
};

//! Whether the strided kernel reads `view` reduced-major: the innermost reduced axis is
//! contiguous and the innermost kept axis is not (rows that do not merge into one fixed pitch,
//! non-adjacent reduced axes such as 0 and 2 of a 3-D tensor, BatchNorm's N, H, W of NCHW).
bool reads_reduced_major(const AxisView& view);

//! `resident_blocks`: blocks of axis_kernel the GPU holds at once; `partial_capacity`: partials
//! (of the op's accumulator) the workspace holds; `max_groups`: its group counters. `vector_width`:
//! results one 16-byte load may cover (16 / element size) when the view allows it
//! (vector_columns_width), else 1; `reduced_width`: reduced elements one load may cover
//! (reduced_vector_width), else 1, used when the view is read reduced-major; `acc_bytes`: the
//! size of a partial (the op's accumulator), for the fold's bound (kAxisMaxFoldBytes).
AxisKernelShape plan_strided(const AxisView& view, unsigned resident_blocks,
                             std::uint64_t partial_capacity, unsigned max_groups,
                             unsigned vector_width = 1, unsigned reduced_width = 1,
                             std::size_t acc_bytes = 4);

//! 16 / element_bytes when every group of that many neighbouring results starts on a 16-byte
//! boundary of x (and y) and the innermost kept axis is contiguous and a multiple of it long, so
//! axis_kernel may read `width` columns with one load; else 1. `x_aligned`: the base pointers
//! (x, and y for dot) are 16-byte aligned.
unsigned vector_columns_width(const AxisView& view, std::size_t element_bytes, bool x_aligned);

//! 16 / element_bytes when a result's reduced elements are runs of whole aligned 16-byte
//! vectors: the innermost reduced axis is contiguous and a multiple of that many long, and every
//! other stride (reduced and kept) is a multiple of it, so every run of every result starts on a
//! 16-byte boundary of x (and y); else 1. `x_aligned` as for vector_columns_width.
unsigned reduced_vector_width(const AxisView& view, std::size_t element_bytes, bool x_aligned);

//! The view axis_kernel walks when a load covers `reduced_width` reduced elements: the innermost
//! reduced axis counted in vectors (its size divided by reduced_width, its stride reduced_width
//! elements), everything else, `reduced` included, as in `view`.
AxisView vector_runs_view(const AxisView& view, unsigned reduced_width);

}  // namespace reducelab::detail

#pragma once
// The segmented reduce's planner: which kernel reads which segments, decided from the shape alone
// (segmented.cuh has the kernels). Every threshold is here, in one place.
//
// THE THRESHOLDS ARE FIRST GUESSES. None has been measured yet: they are to be swept on the H200
// in the tuning pass (issue 11, phase 2) and the figures recorded here, as config.cuh does for
// the scalar reduce. What each one trades is said beside it.
//
// Fixed-size segments (num_segments x segment_size), by segment_size:
//   - one segment of at least one element: the scalar reduce itself (launch.cuh), the whole GPU
//     on one range;
//   - fewer than kThreadSegmentMax elements: one thread per segment, 32 segments per warp, each
//     thread reading its segment alone (16-byte loads where its row is aligned). The starting
//     point for short rows: correct, coalesced on the output, not yet tuned;
//   - fewer than kBlockSegmentMin: one warp per segment;
//   - more: one block per segment, or `blocks_per_segment` blocks per segment when one per
//     segment would leave resident blocks idle (fewer segments than the GPU holds blocks); the
//     blocks of a segment publish partials and the last of them folds (grid_step.cuh).
//
// Ragged (CSR) segments: the lengths are on the device, so the host cannot sort them; instead
// ragged_slices_kernel cuts the element range [offsets[0], offsets[num_segments]) into equal
// slices of 16-byte vectors, one per block and, inside it, one per warp (RaggedSlicing below), so
// every warp reads the same number of bytes with coalesced 16-byte loads whatever the lengths:
// ten thousand 3-element segments or one of 2^30 cost the same per byte. Each warp walks the
// segment offsets alongside its elements; the pieces of a segment that crosses warps are merged
// in the block, and across blocks by a group ticket (SliceGroup). Empty segments are written by
// the warp whose slice holds their position. Offsets that decrease somewhere make the slices
// meaningless: the kernel flags them and ragged_fallback_kernel then reads every segment with a
// block (decreasing pairs give the empty result).
//
// The integer helpers below are host-and-device so the CPU tests check the slicing that the
// kernel uses.

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define REDUCELAB_HOST_DEVICE __host__ __device__
#else
#define REDUCELAB_HOST_DEVICE
#endif

namespace reducelab::detail {

// ---- thresholds (first guesses, not measured: see above) -------------------------------------

//! Segments shorter than this are read by one thread each. A warp per segment would leave most
//! lanes idle below 32 elements; a thread alone on a longer row issues many dependent loads.
inline constexpr std::size_t kThreadSegmentMax = 32;
//! Segments of at least this many elements are read by whole blocks; shorter ones by one warp.
//! 4096 4-byte elements are 1,024 16-byte vectors: 32 per lane of a warp, 2 per thread of a
//! 512-thread block.
inline constexpr std::size_t kBlockSegmentMin = 4096;
//! Rows up to this long still go to a warp each when there are enough rows to fill every
//! resident warp (plan_fixed_segments): a warp then reads at most 4 MB of f32 per row.
inline constexpr std::size_t kWarpSegmentMax = std::size_t{1} << 20;
//! Segments a warp takes at once when it reads them a thread each: one per lane.
inline constexpr unsigned kLaneGroup = 32;
//! Fixed-size rows of whole 16-byte vectors, each row starting on a 16-byte boundary, with a
//! power-of-two count of vectors up to this many, are read by vector_rows_kernel: a team of up to
//! 32 lanes per row, four 16-byte loads in flight per lane (several rows per lane when the row is
//! shorter than four vectors per lane), so a warp's load covers 512 contiguous bytes. 128 vectors
//! are 512 f32 elements (4 per lane of a warp).
inline constexpr std::size_t kVectorRowsMax = 128;
//! Threads per block of segment_teams_kernel and vector_rows_kernel.
inline constexpr unsigned kTeamThreads = 256;
//! 16-byte loads in flight per lane of vector_rows_kernel.
inline constexpr unsigned kVectorRowLoads = 4;
//! 16-byte loads in flight per lane of ragged_slices_kernel: a warp reads 4 x 512 contiguous
//! bytes at a time.
inline constexpr unsigned kRaggedLoads = 4;

// ---- the plan ---------------------------------------------------------------------------------

enum class SegmentPath {
  scalar,  //!< the scalar reduce on the one segment
  teams,   //!< segment_teams_kernel: a thread or a warp per segment
  vector_rows,  //!< vector_rows_kernel: a team of lanes per aligned row of whole vectors
  blocks,  //!< segment_blocks_kernel: one block, or a group of blocks, per segment
};

//! What the GPU holds at once of each kernel (SMs x resident blocks, from the occupancy API).
struct SegmentCapacity {
  unsigned team_blocks = 1;            //!< resident blocks of segment_teams_kernel
  unsigned team_block_warps = 1;       //!< warps per block of it
  unsigned blocks = 1;                 //!< resident blocks of segment_blocks_kernel
  std::size_t block_tile_vectors = 1;  //!< 16-byte vectors one block of it loads in one batch
  unsigned ragged_blocks = 1;          //!< resident blocks of ragged_slices_kernel
  unsigned fallback_blocks = 1;        //!< resident blocks of ragged_fallback_kernel
};

struct FixedSegmentPlan {
  SegmentPath path = SegmentPath::teams;
  unsigned group = 1;               //!< teams: segments a warp takes at once (kLaneGroup or 1)
  unsigned blocks_per_segment = 1;  //!< blocks: the blocks that share one segment
  unsigned grid = 1;                //!< blocks to launch (teams, blocks, vector_rows)
  unsigned team_log2 = 0;           //!< vector_rows: log2 of the lanes per row (0..5)
  unsigned per_thread_log2 = 0;     //!< vector_rows: log2 of the vectors per lane per row (0..2)
};

struct RaggedSegmentPlan {
  unsigned grid = 1;           //!< blocks of ragged_slices_kernel: at most max_partials / 2
  unsigned fallback_grid = 1;  //!< blocks of ragged_fallback_kernel (exits at once unless flagged)
};

//! True where fixed-size segments take the scalar reduce: one segment of at least one element.
constexpr bool takes_scalar_path(std::size_t num_segments, std::size_t segment_size) {
  return num_segments == 1 && segment_size > 0;
}

//! The plan for num_segments >= 1 segments of segment_size elements of element_bytes bytes.
//! `max_partials`: partials (and group counters) the workspace holds. `aligned_rows`: every
//! segment (of x, and of y for dot) starts on a 16-byte boundary.
FixedSegmentPlan plan_fixed_segments(std::size_t num_segments, std::size_t segment_size,
                                     std::size_t element_bytes, const SegmentCapacity& capacity,
                                     unsigned max_partials, bool aligned_rows = false);

//! The plan for num_segments >= 1 ragged segments. The slices kernel keeps two partials and one
//! group counter per block, so its grid is at most max_partials / 2.
RaggedSegmentPlan plan_ragged_segments(std::size_t num_segments, const SegmentCapacity& capacity,
                                       unsigned max_partials);

// ---- slices of the ragged kernel ----------------------------------------------------------------

//! `count` slices of the element range [base, base + total): slice b is [begin(b), begin(b + 1)),
//! floor(b x total / count) elements from base, so slices differ in length by at most one and
//! empty ones occur only when total < count. Indices stay below 2^52 (any input that fits in
//! memory), so b x total and (d + 1) x count fit in 64 bits.
struct Slices {
  std::int64_t base;
  std::uint64_t total;
  unsigned count;

  REDUCELAB_HOST_DEVICE std::int64_t begin(unsigned b) const {
    const std::uint64_t q = total / count;
    const std::uint64_t r = total % count;
    return base + static_cast<std::int64_t>(q * b + r * b / count);
  }
  //! The slice that holds element e (base <= e < base + total): the last b with begin(b) <= e,
  //! which is never an empty slice.
  REDUCELAB_HOST_DEVICE unsigned of(std::int64_t e) const {
    const std::uint64_t d = static_cast<std::uint64_t>(e - base);
    // floor(b x total / count) <= d  <=>  b <= ((d + 1) x count - 1) / total
    const std::uint64_t b = ((d + 1) * count - 1) / total;
    return b < count ? static_cast<unsigned>(b) : count - 1;
  }
};

//! The blocks that share a long segment [begin, end) which crosses slice boundaries: blocks
//! first..last, the first reading from `begin` to its slice's end, the others from their slice's
//! start. Block b keeps two partial slots: 2b + 1 for the piece of a segment that starts in its
//! slice and goes on, 2b for the piece of one that started before. So the group's pieces lie in
//! slots 2 first + 1 .. 2 last, in order, and the odd slots between them belong to blocks inside
//! the segment, which hold no other piece and keep the identity there. The group's counter is
//! the first block's.
struct SliceGroup {
  unsigned first;
  unsigned last;

  REDUCELAB_HOST_DEVICE static SliceGroup of(const Slices& slices, std::int64_t begin,
                                             std::int64_t end) {
    return {slices.of(begin), slices.of(end - 1)};
  }
  //! One block reads the whole segment: no partials, no ticket.
  REDUCELAB_HOST_DEVICE bool whole() const { return first == last; }
  REDUCELAB_HOST_DEVICE unsigned members() const { return last - first + 1; }
  REDUCELAB_HOST_DEVICE unsigned slot(unsigned block) const {
    return block == first ? 2 * block + 1 : 2 * block;
  }
  REDUCELAB_HOST_DEVICE unsigned fold_first() const { return 2 * first + 1; }
  REDUCELAB_HOST_DEVICE unsigned fold_count() const { return 2 * (last - first); }
};

//! How ragged_slices_kernel cuts the elements [begin, end) of x among `blocks` blocks of `warps`
//! warps. The unit is the 16-byte vector of x's own alignment (vector v holds the elements
//! [v x width - shift, (v + 1) x width - shift), shift being x's offset in its 16-byte line, in
//! elements), so every load is whole and aligned; a slice's element range is its vectors' elements
//! clipped to [begin, end). Block b gets the vectors of block_slices() slice b, and its warp w slice
//! w of those.
struct RaggedSlicing {
  std::int64_t begin;  //!< offsets[0]
  std::int64_t end;    //!< offsets[num_segments], >= begin
  int shift;           //!< x's offset in its 16-byte line, in elements
  int width;           //!< elements per 16-byte vector
  unsigned blocks;
  unsigned warps;  //!< per block

  REDUCELAB_HOST_DEVICE std::int64_t vector_of(std::int64_t e) const { return (e + shift) / width; }
  REDUCELAB_HOST_DEVICE std::int64_t element_at(std::int64_t v) const {
    const std::int64_t e = v * width - shift;
    return e < begin ? begin : (e > end ? end : e);
  }
  REDUCELAB_HOST_DEVICE Slices block_slices() const {
    const std::int64_t first = vector_of(begin);
    const std::int64_t total = end > begin ? vector_of(end - 1) + 1 - first : 0;
    return {first, static_cast<std::uint64_t>(total), blocks};
  }
  REDUCELAB_HOST_DEVICE Slices warp_slices(unsigned block) const {
    const Slices outer = block_slices();
    const std::int64_t first = outer.begin(block);
    return {first, static_cast<std::uint64_t>(outer.begin(block + 1) - first), warps};
  }
  //! The blocks that share segment [seg_begin, seg_end) (non-empty, within [begin, end)).
  REDUCELAB_HOST_DEVICE SliceGroup group(std::int64_t seg_begin, std::int64_t seg_end) const {
    const Slices outer = block_slices();
    return {outer.of(vector_of(seg_begin)), outer.of(vector_of(seg_end - 1))};
  }
  //! Whether the warp with element slice [lo, hi) writes the empty segment at position p (begin
  //! <= p <= end): p in (lo, hi], or p == begin for the grid's first warp. The right-closed
  //! slices of the non-empty warps tile (begin, end] exactly, so each empty segment has one writer.
  REDUCELAB_HOST_DEVICE static bool owns_empty(std::int64_t lo, std::int64_t hi, bool first_warp,
                                               std::int64_t p) {
    return (lo < p && p <= hi) || (first_warp && p == lo);
  }
};

}  // namespace reducelab::detail

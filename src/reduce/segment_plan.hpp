#pragma once
// The segmented reduce's planner: which kernel reads which segments, decided from the shape alone
// (segmented.cuh has the kernels). Every threshold is here, in one place.
//
// Each threshold says beside it what it trades and, where it was measured on the H200, what the
// measurement read; the ones without a figure are still first guesses.
//
// Fixed-size segments (num_segments x segment_size), by segment_size:
//   - one segment of at least one element: the scalar reduce itself (launch.cuh), the whole GPU
//     on one range;
//   - rows of whole 16-byte vectors, 16-byte aligned, up to kVectorRowsMax of them: a team of
//     lanes per row, vector_rows_kernel;
//   - other rows under kOctetSegmentBytes that lie one after another (pitch == length, and dot's
//     y at x's offset in a 16-byte line): tile_rows_kernel, which reads tiles of whole rows with
//     the whole-array kernel's coalesced 16-byte loads whatever the row's length or alignment,
//     stages them in shared memory, and folds each row there with a team of lanes; for the
//     statistics that fold tiles only rows under kLongFoldTileRowBytes (longer ones go to the
//     octets below);
//   - fewer than kThreadSegmentMax elements: one thread per segment, 32 segments per warp, each
//     thread reading its segment alone (16-byte loads where its row is aligned). The starting
//     point for short rows: correct, coalesced on the output, not yet tuned;
//   - under kOctetSegmentBytes: a team of kOctet lanes per row, four rows per warp at once
//     (segment_teams_kernel's octets);
//   - fewer than kBlockSegmentMin (or up to kWarpSegmentMax when the rows fill every resident
//     warp in whole rounds): one warp per segment, warp_rows_kernel;
//   - more: one block per segment, or `blocks_per_segment` blocks per segment when one per
//     segment would leave resident blocks idle (fewer segments than the GPU holds blocks); the
//     blocks of a segment publish partials and the last of them folds (grid_step.cuh).
//
// Ragged (CSR) segments: the lengths are on the device, so the host plans only from
// num_segments; the kernels sort the segments out as they read the offsets:
//   - segment_teams_kernel reads every segment shorter than kBlockSegmentMin: a thread each below
//     kThreadSegmentMax, a warp each above; warps take 32 segments at once when there are enough
//     segments to give every resident warp a group of 32, else one at a time;
//   - segment_runs_kernel reads them instead when there are groups of 32, x (and y) is 16-byte
//     aligned (not for lists of tensors) and the op is one it serves (kRunsServe: dot, and the
//     sum-like ops of 2-byte types, where it measured faster): each group's short segments,
//     which lie one after another, as one range of whole vectors (segmented.cuh);
//   - long_segments_kernel reads the segments of at least kBlockSegmentMin elements: the element
//     range [offsets[0], offsets[num_segments]) is cut into one slice per block (Slices below),
//     each block reads the long segments' pieces in its slice, and the blocks that share a
//     segment fold their partials as a group (SliceGroup). So one huge segment among tiny ones
//     is read by the whole GPU, and heavy-tailed lengths spread evenly.
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

// ---- thresholds -----------------------------------------------------------------------------

//! Segments shorter than this are read by one thread each. A warp per segment would leave most
//! lanes idle below 32 elements; a thread alone on a longer row issues many dependent loads.
inline constexpr std::size_t kThreadSegmentMax = 32;
//! Ragged segments (and fixed-size rows that are neither vector rows nor tile rows: a strided
//! view's rows, or dot's y at another offset in its line than x) of kThreadSegmentMax elements up
//! to (not including) this many bytes are read by a team of kOctet lanes each, four segments of a
//! warp's group at once (segment_teams_kernel),
//! where a whole warp would read them one after another: 1,024 bytes are 64 16-byte vectors, 8 per
//! lane of the team (two batches of loads), and a warp reads four such segments in as many rounds
//! of loads as it reads one alone. Measured on the H200 (session 12, against a warp for every
//! segment of 32 elements or more): heavy-tailed ragged f32 sum, 2,097,152 segments of mean 64,
//! 292.0 -> 227.4 us (the teams kernel 284.6 -> 177.7 us under Nsight Compute); uniform 0..256
//! 258.6 -> 163.8 us; f16 sum -36%, f64 sum -13%.
inline constexpr std::size_t kOctetSegmentBytes = 1024;
//! Lanes per team of the segments above.
inline constexpr unsigned kOctet = 8;
//! Segments of at least this many elements are read by whole blocks; shorter ones by one warp.
//! 4096 4-byte elements are 1,024 16-byte vectors: 32 per lane of a warp, 2 per thread of a
//! 512-thread block.
inline constexpr std::size_t kBlockSegmentMin = 4096;
//! Rows up to this long still go to a warp each when there are enough rows to fill every
//! resident warp (plan_fixed_segments): a warp then reads at most 4 MB of f32 per row.
inline constexpr std::size_t kWarpSegmentMax = std::size_t{1} << 20;
//! Segments a warp takes at once when it reads them a thread each: one per lane.
inline constexpr unsigned kLaneGroup = 32;
//! Fixed-size rows of whole 16-byte vectors, each row starting on a 16-byte boundary, up to this
//! many vectors, are read by vector_rows_kernel: a team of up to 32 lanes per row, four 16-byte
//! loads in flight per lane (several rows per lane when the row is shorter than four vectors per
//! lane), so a warp's load covers 512 contiguous bytes. 128 vectors are 512 f32 elements (4 per
//! lane of a warp). A row of a count of vectors that is not a power of two gets the slots of the
//! next power of two, and the slots past its end idle (until session 19 such rows went to a warp
//! each: 2,796,202 rows of 48 floats read at 550 GB/s).
inline constexpr std::size_t kVectorRowsMax = 128;
//! Threads per block of segment_teams_kernel and vector_rows_kernel.
inline constexpr unsigned kTeamThreads = 256;
//! 16-byte loads in flight per lane of vector_rows_kernel.
inline constexpr unsigned kVectorRowLoads = 4;
//! 16-byte loads per thread of tile_rows_kernel for one tile: 256 threads x 4 = 16 KB of x per
//! tile (and as much of y for dot), staged in shared memory.
inline constexpr unsigned kTileRowLoads = 4;
//! Bytes of one array a tile of tile_rows_kernel holds.
inline constexpr std::size_t kTileRowBytes = std::size_t{kTeamThreads} * kTileRowLoads * 16;
//! Contiguous rows from this many bytes up to kOctetSegmentBytes of the ops that fold whole
//! tiles (folds_tiles: var/std and their means, f32/f16 logsumexp) go to the teams kernel's
//! octets instead of tile_rows_kernel. The octets fold whole 16-byte vectors from registers; a
//! tile's team gathers its elements from shared memory, `team` apart, and folds fewer of them
//! per Chan merge, which costs more as rows grow. H200, session 22 (2^27 elements, GB/s, tiles
//! against octets, mean of two runs): f32 var along 101 2,863 / 2,134, 130 2,744 / 2,713, 161
//! 2,641 / 2,660, 199 2,820 / 2,934, 250 2,526 / 3,241; f32 logsumexp along 101 3,110 / 2,516,
//! 130 2,967 / 3,028, 199 3,071 / 3,411, 250 2,770 / 3,768; f16 var along 201 2,176 / 1,658,
//! 401 2,071 / 2,112; f64 var along 33 2,519 / 1,403, 101 2,522 / 2,910. The crossover is at
//! ~512-640 bytes for all three types. (argmin/argmax keep tiles up to kOctetSegmentBytes: with
//! their kCount-element fold, f32 argmax along 250 reads 2,435 on tiles, 2,340 on the octets;
//! f16 along 401 1,834 and 1,826.) f64 var, which folds a tile row in two passes since session
//! 26, takes tiles of rows under kTwoPassF64TileRowBytes (832; segmented.cuh).
inline constexpr std::size_t kLongFoldTileRowBytes = 512;

// ---- the plan ---------------------------------------------------------------------------------

enum class SegmentPath {
  scalar,  //!< the scalar reduce on the one segment
  teams,   //!< segment_teams_kernel: a thread or a warp per segment
  warp_rows,  //!< a warp per fixed-size row: warp_rows_kernel (or, for the traits it does not
              //!< serve, segment_teams_kernel with groups of one)
  vector_rows,  //!< vector_rows_kernel: a team of lanes per aligned row of whole vectors
  tile_rows,  //!< tile_rows_kernel: contiguous short rows staged a tile at a time in shared memory
  blocks,  //!< segment_blocks_kernel: one block, or a group of blocks, per segment
};

//! What the GPU holds at once of each kernel (SMs x resident blocks, from the occupancy API).
struct SegmentCapacity {
  unsigned team_blocks = 1;            //!< resident blocks of segment_teams_kernel
  unsigned team_block_warps = 1;       //!< warps per block of it
  //! Resident blocks of vector_rows_kernel (blocks of kTeamThreads). Until session 11 its grid
  //! was capped at team_blocks: 396 blocks (the teams kernel's 3 per SM) where it holds 660 (5
  //! per SM at 47 registers), 35% of the warps active and 57-65% of the DRAM's bandwidth for
  //! rows of 32..128 floats (Nsight Compute).
  unsigned vector_row_blocks = 1;
  //! The same for rows that do not fill their slots (vector_rows_kernel<..., true>).
  unsigned partial_vector_row_blocks = 1;
  //! Resident blocks of warp_rows_kernel (blocks of kTeamThreads): the teams kernel's warp
  //! path alone, which holds more blocks where the other paths' registers held fewer.
  unsigned warp_row_blocks = 1;
  //! Resident blocks of tile_rows_kernel (blocks of kTeamThreads, 16 or 32 KB of shared memory).
  unsigned tile_row_blocks = 1;
  unsigned blocks = 1;                 //!< resident blocks of segment_blocks_kernel
  std::size_t block_tile_vectors = 1;  //!< 16-byte vectors one block of it loads in one batch
  unsigned long_blocks = 1;            //!< resident blocks of long_segments_kernel
};

struct FixedSegmentPlan {
  SegmentPath path = SegmentPath::teams;
  unsigned group = 1;               //!< teams: segments a warp takes at once (kLaneGroup; 1: warp_rows)
  unsigned blocks_per_segment = 1;  //!< blocks: the blocks that share one segment
  unsigned grid = 1;                //!< blocks to launch (every path but scalar)
  unsigned team_log2 = 0;           //!< vector_rows, tile_rows: log2 of the lanes per row (0..5)
  unsigned per_thread_log2 = 0;     //!< vector_rows: log2 of the vectors per lane per row (0..2)
  bool partial_rows = false;  //!< vector_rows: the row has fewer vectors than team x per_thread
  std::size_t tile_rows = 0;  //!< tile_rows: rows per tile
  //! tile_rows: log2 of the rows between a warp's teams (0..3; tile_team_stride_log2), for the ops
  //! that interleave them (kTileInterleaves, segmented.cuh); the others take consecutive rows.
  unsigned team_stride_log2 = 0;
};

struct RaggedSegmentPlan {
  unsigned group = 1;      //!< segments a warp of segment_teams_kernel takes at once
  unsigned team_grid = 1;  //!< blocks of segment_teams_kernel
  unsigned long_grid = 1;  //!< blocks of long_segments_kernel (slices), at most kMaxGrid / 2
};

//! True where fixed-size segments take the scalar reduce: one segment of at least one element.
constexpr bool takes_scalar_path(std::size_t num_segments, std::size_t segment_size) {
  return num_segments == 1 && segment_size > 0;
}

//! The plan for num_segments >= 1 segments of segment_size elements of element_bytes bytes.
//! `max_partials`: partials (and group counters) the workspace holds. `aligned_rows`: every
//! segment (of x, and of y for dot) starts on a 16-byte boundary. `per_thread_log2`: on vector
//! rows, each lane takes at least 1 << per_thread_log2 of a row's vectors (at most the row's, and
//! at most kVectorRowLoads); with 0 the team grows to 32 lanes first. `contiguous_rows`: the
//! rows lie one after another (pitch == segment_size) and dot's y sits at x's offset in a 16-byte
//! line, so that tile_rows_kernel may read them; it takes such rows of fewer than
//! `tile_row_bytes_max` bytes (kOctetSegmentBytes, or kLongFoldTileRowBytes for the statistics
//! that fold tiles), and the octets the longer ones.
FixedSegmentPlan plan_fixed_segments(std::size_t num_segments, std::size_t segment_size,
                                     std::size_t element_bytes, const SegmentCapacity& capacity,
                                     unsigned max_partials, bool aligned_rows = false,
                                     unsigned per_thread_log2 = 0, bool contiguous_rows = false,
                                     std::size_t tile_row_bytes_max = kOctetSegmentBytes);

//! Shared-memory wavefronts of one load by a warp of tile_rows_kernel: lane r of the warp's
//! team g reads element r of the tile's row g << stride_log2 (rows segment_size elements of
//! element_bytes bytes apart; 32 >> team_log2 teams per warp), counted as the most distinct
//! 4-byte words that fall in one of the 32 banks. Every warp and every load of the fold sees the
//! same pattern shifted by a constant, which leaves the count as it is.
unsigned tile_bank_wavefronts(std::size_t segment_size, std::size_t element_bytes,
                              unsigned team_log2, unsigned stride_log2);

//! Consecutive rows' wavefronts from which tile_rows_kernel interleaves a warp's teams. Along
//! rows of 101 f32 (2 wavefronts on consecutive rows, 1 two rows apart) the interleaved rounds
//! read f32 sum at 4,150 / 4,085 GB/s and var at 2,750 / 2,706 against 4,175 / 4,205 and 2,820 /
//! 2,858 on consecutive rows (session 25); along 65, 130 and 161 (4 wavefronts) sum gained 10-13%
//! (session 26).
inline constexpr unsigned kTileStrideMinWavefronts = 3;

//! The rows between a warp's teams in tile_rows_kernel (log2, 0..3): 0 (consecutive rows) under
//! kTileStrideMinWavefronts, else the stride with the fewest wavefronts (tile_bank_wavefronts),
//! the smallest among equals. With teams on consecutive rows, a row length near a multiple of 32
//! banks puts them on the same banks: rows of 65 f32 in teams of 4 lanes read 3.82 wavefronts
//! per load, rows of 130 and 161 in teams of 8 3.71 and 3.45, against 1.00 along 50 (H200,
//! Nsight Compute, session 22); f32 sum along them read 3,664-3,700 GB/s against 4,102-4,194
//! along 50, 101, 199 and 250. Which team folds a row does not change the order of its fold, so
//! the stride changes no result.
unsigned tile_team_stride_log2(std::size_t segment_size, std::size_t element_bytes,
                               unsigned team_log2);

//! The row (0 .. 256 >> team_log2 - 1) that team `in_warp` of warp `warp` (of 8) of
//! tile_rows_kernel folds in a round whose first `valid` rows lie in the tile (a row at or past
//! `valid` is not folded). The warps take the rows in groups, in warp order: a group of 1 << k
//! warps takes the next (32 >> team_log2) << k rows, its warps' teams 1 << k rows apart (warp w of
//! the group rows w, w + (1 << k), ...), where k is stride_log2 while the group's rows are all
//! valid or the rows left need all of its warps anyway, and is lowered for the round's last rows
//! until they do (k = 0 at worst: one warp, consecutive rows). So a round's valid rows are folded
//! by as many warps as with consecutive rows (the fewest), and a full round, or one that needs
//! every warp (62 rows of 65 f32 in teams of 4), is interleaved throughout. 409161a (session 23)
//! interleaved every round in groups of 1 << stride_log2 warps: the 40 rows of 101 f32 in a tile
//! of 64 teams went to 8 warps instead of 5, and f32 sum along 101 fell 4,092 -> 3,872 GB/s
//! (6.91 M shared loads against 4.32 M, though without bank conflicts; session 24).
REDUCELAB_HOST_DEVICE inline unsigned tile_round_slot(unsigned warp, unsigned in_warp,
                                                      unsigned valid, unsigned team_log2,
                                                      unsigned stride_log2) {
  const unsigned per_warp_log2 = 5 - team_log2;
  unsigned k = stride_log2;
  unsigned first_warp = 0;
  unsigned first_row = 0;
  while (first_row < valid) {
    const unsigned left = valid - first_row;
    // The warps the rows left take one after another: a partial group keeps k when it needs all.
    const unsigned needs = (left + (1u << per_warp_log2) - 1) >> per_warp_log2;
    while (k > 0 && (1u << (per_warp_log2 + k)) > left && needs != (1u << k)) --k;
    if (warp < first_warp + (1u << k)) return first_row + ((in_warp << k) | (warp - first_warp));
    first_warp += 1u << k;
    first_row += 1u << (per_warp_log2 + k);
  }
  return first_row;  // a warp past the round's valid rows: not folded
}

//! The plan for num_segments >= 1 ragged segments. The long kernel keeps two partials per block,
//! so its grid is at most max_partials / 2.
RaggedSegmentPlan plan_ragged_segments(std::size_t num_segments, const SegmentCapacity& capacity,
                                       unsigned max_partials);

// ---- slices of the ragged long-segment kernel -------------------------------------------------

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

//! Whether a long kernel's block with slice [lo, hi) reads a piece of segment [begin, end): the
//! segment is long and overlaps the slice. An empty slice inside a long segment (lo == hi, only
//! when there are fewer elements than blocks) reads an empty piece, so its group still counts
//! every member.
REDUCELAB_HOST_DEVICE inline bool reads_piece(std::int64_t begin, std::int64_t end, std::int64_t lo,
                                              std::int64_t hi, std::size_t long_min) {
  return end - begin >= static_cast<std::int64_t>(long_min) && begin < hi && end > lo;
}

}  // namespace reducelab::detail

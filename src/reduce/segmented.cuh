#pragma once
// The segmented reduce: one result per segment of x, for fixed-size segments (rows) and ragged
// ones (CSR offsets), from the scalar reduce's pieces: the range agent (agent.cuh) reads each
// segment, or a team's share of it, at any alignment; warp and block reductions
// (device/*.cuh) combine a team's threads; the group ticket (grid_step.cuh) folds the partials
// of blocks that share a segment. The planner (segment_plan.hpp) picks the kernel.
//
// Fixed-size segments (rows), by the planner's choice:
//   - vector_rows_kernel: a team of lanes per short aligned row of whole 16-byte vectors;
//   - segment_teams_kernel: a thread or a warp per segment;
//   - segment_blocks_kernel: a block, or a group of blocks, per segment.
// Ragged segments (CSR offsets):
//   - ragged_slices_kernel: the element range cut into equal slices, a warp each, whatever the
//     lengths; the pieces of segments that cross slices are merged in order;
//   - ragged_fallback_kernel, launched after it: returns at once unless the offsets decreased
//     somewhere, and then reads every segment again with a block each.
//
// Order of operations (bitwise repeatability): a segment's reduction order depends only on its
// length, its offset in a 16-byte line and the plan, which depends on the shape and the GPU model
// (its resident blocks); for ragged segments on the offsets, x's offset in a 16-byte line and the
// grid, which fix where the slice boundaries fall. Groups fold in a fixed order.

#include <cstddef>
#include <cstdint>
#include <cuda/atomic>
#include <type_traits>

#include "common/kernel_launch.cuh"
#include "common/resident_grid.cuh"
#include "device/block_reduce.cuh"
#include "device/warp_reduce.cuh"
#include "reduce/agent.cuh"
#include "reduce/config.cuh"
#include "reduce/grid_step.cuh"
#include "reduce/launch.cuh"
#include "reduce/segment_plan.hpp"
#include "reduce/traits.cuh"
#include "reduce/workspace.hpp"

namespace reducelab::detail {

// The scalar reduce's launcher, which a single fixed-size segment takes, is compiled once per
// type in instantiate_*.cu: the files that include this one call it without compiling the scalar
// kernels again.
#define REDUCELAB_EXTERN_LAUNCH_TYPED(T)                                           \
  extern template void launch_typed<T>(Op, const T*, const T*, std::size_t, void*, \
                                       const WorkspaceView&, cudaStream_t);
REDUCELAB_EXTERN_LAUNCH_TYPED(float)
REDUCELAB_EXTERN_LAUNCH_TYPED(double)
REDUCELAB_EXTERN_LAUNCH_TYPED(__half)
REDUCELAB_EXTERN_LAUNCH_TYPED(__nv_bfloat16)
REDUCELAB_EXTERN_LAUNCH_TYPED(std::int32_t)
REDUCELAB_EXTERN_LAUNCH_TYPED(std::int64_t)
REDUCELAB_EXTERN_LAUNCH_TYPED(std::uint32_t)
REDUCELAB_EXTERN_LAUNCH_TYPED(std::uint64_t)
#undef REDUCELAB_EXTERN_LAUNCH_TYPED

//! The workspace's segment flags word: set by ragged_slices_kernel when the offsets decrease
//! somewhere, cleared by the last block of ragged_fallback_kernel.
inline constexpr unsigned kSawDecreasingPair = 1;  //!< offsets[s + 1] < offsets[s] somewhere

//! Threads per block of segment_teams_kernel, and vectors in flight per thread of its teams.
inline constexpr int kTeamBlock = static_cast<int>(kTeamThreads);
using TeamConfig = Config<kTeamBlock, 4>;

//! Where segment s lies in x: [begin, begin + count).
struct SegmentRange {
  std::size_t begin;
  std::size_t count;
  bool decreasing;  //!< its offsets decrease: read as an empty segment
};

//! The segments of a call: fixed-size (offsets null: segment s is [s x size, (s + 1) x size))
//! or CSR (segment s is [offsets[s], offsets[s + 1]), int32 or int64 offsets). One type for
//! both, so each op and type compiles one teams kernel; the branch is uniform.
struct SegmentRows {
  const void* offsets;
  bool wide_offsets;  //!< int64 offsets, else int32
  std::size_t size;   //!< fixed-size segments' length
  std::size_t pitch;  //!< fixed-size segments: elements from one segment's start to the next's

  __device__ __forceinline__ std::int64_t offset(std::size_t i) const {
    return wide_offsets ? static_cast<const std::int64_t*>(offsets)[i]
                        : static_cast<const std::int32_t*>(offsets)[i];
  }
  __device__ __forceinline__ SegmentRange operator()(std::size_t s) const {
    if (offsets == nullptr) return {s * pitch, size, false};
    const std::int64_t begin = offset(s);
    const std::int64_t end = offset(s + 1);
    if (end < begin) return {static_cast<std::size_t>(begin), 0, true};
    return {static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin), false};
  }
};

template <class Traits>
__device__ __forceinline__ const typename Traits::Elem* y_at(const typename Traits::Elem* y,
                                                             std::size_t i) {
  return Traits::kArrays == 2 ? y + i : nullptr;
}

//! Result number s, at out + s x out_stride (results).
template <class Traits>
__device__ __forceinline__ void store_result(void* out, std::size_t s,
                                             const typename Traits::Acc& acc,
                                             std::size_t out_stride = 1) {
  Traits::store(static_cast<typename Traits::Out*>(out) + s * out_stride, acc);
}

//! Team `block` of `blocks` teams (of Agent's team size; this thread has `rank` in it) reads its
//! share of x[begin, begin + count) and returns this thread's accumulator, with indices relative
//! to x + begin.
template <class Traits, class Agent>
__device__ __forceinline__ typename Traits::Acc read_range(const typename Traits::Elem* x,
                                                           const typename Traits::Elem* y,
                                                           std::size_t begin, std::size_t count,
                                                           unsigned rank, unsigned block,
                                                           unsigned blocks) {
  typename Traits::State state = Traits::start();
  const typename Traits::Elem* xs = x + begin;
  Agent::consume(state, xs, y_at<Traits>(y, begin), count, split_range(xs, count), rank, block,
                 blocks);
  return Traits::finish(state, xs);
}

//! The block reads its share of x[begin, begin + count); the result is valid in thread 0.
template <class Traits, class Config, bool kYVector>
__device__ __forceinline__ typename Traits::Acc block_reads_range(
    const typename Traits::Elem* x, const typename Traits::Elem* y, std::size_t begin,
    std::size_t count, unsigned block, unsigned blocks, typename Traits::Acc* warp_slots) {
  using Acc = typename Traits::Acc;
  using Agent = RangeAgent<Traits, Config::kBlock, Config::kUnroll, Config::kHint, kYVector>;
  const Acc acc = read_range<Traits, Agent>(x, y, begin, count, threadIdx.x, block, blocks);
  auto combine = [](Acc p, Acc q) { return Traits::combine(p, q); };
  return device::block_reduce<Config::kBlock>(acc, combine, Traits::identity(), warp_slots);
}

// ---- a thread or a warp per segment ---------------------------------------------------------

template <class T>
struct TeamArgs {
  const T* x;
  const T* y;  // dot only
  std::size_t num_segments;
  SegmentRows rows;
  void* out;               // num_segments x Traits::Out, out_stride apart
  std::size_t out_stride;  // results from one segment's result to the next's (1: contiguous)
  unsigned group;          // segments a warp takes at once: kLaneGroup (one per lane) or 1
};

//! Warps take `group` segments at a time. Each lane looks at its own: shorter than
//! kThreadSegmentMax, the lane reads it alone and writes its result (empty ones included);
//! longer, the whole warp reads it afterwards, one such segment after another.
template <class Traits, bool kYVector>
__global__ void __launch_bounds__(kTeamBlock)
    segment_teams_kernel(TeamArgs<typename Traits::Elem> a) {
  using Acc = typename Traits::Acc;
  using ThreadAgent = RangeAgent<Traits, 1, TeamConfig::kUnroll, TeamConfig::kHint, kYVector>;
  using WarpAgent =
      RangeAgent<Traits, device::kWarpSize, TeamConfig::kUnroll, TeamConfig::kHint, kYVector>;
  const unsigned lane = threadIdx.x % device::kWarpSize;
  const std::size_t warp =
      (static_cast<std::size_t>(blockIdx.x) * kTeamBlock + threadIdx.x) / device::kWarpSize;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (kTeamBlock / device::kWarpSize);
  const std::size_t stride = warps * a.group;
  // Warp-uniform bounds: every lane stays in the loop for the warp's ballots and shuffles.
  for (std::size_t first = warp * a.group; first < a.num_segments; first += stride) {
    const std::size_t s = first + lane;
    SegmentRange range{0, 0, false};
    bool by_warp = false;
    if (lane < a.group && s < a.num_segments) {
      range = a.rows(s);
      if (range.count >= kThreadSegmentMax) {
        by_warp = true;
      } else {
        const Acc acc = range.count == 0 ? Traits::empty()
                                         : read_range<Traits, ThreadAgent>(a.x, a.y, range.begin,
                                                                           range.count, 0, 0, 1);
        store_result<Traits>(a.out, s, acc, a.out_stride);
      }
    }
    for (unsigned pending = __ballot_sync(device::kFullWarpMask, by_warp); pending != 0;
         pending &= pending - 1) {
      const int from = __ffs(pending) - 1;
      const std::size_t begin =
          __shfl_sync(device::kFullWarpMask, static_cast<unsigned long long>(range.begin), from);
      const std::size_t count =
          __shfl_sync(device::kFullWarpMask, static_cast<unsigned long long>(range.count), from);
      Acc acc = read_range<Traits, WarpAgent>(a.x, a.y, begin, count, lane, 0, 1);
      acc = device::warp_reduce(acc, [](Acc p, Acc q) { return Traits::combine(p, q); });
      if (lane == 0) store_result<Traits>(a.out, first + from, acc, a.out_stride);
    }
  }
}

// ---- a team of lanes per short aligned row of whole vectors --------------------------------

template <class T>
struct VectorRowArgs {
  const T* x;
  const T* y;  // dot only, aligned like x
  std::size_t rows;
  std::size_t pitch;         // elements from one row's start to the next's (16-byte multiple)
  unsigned team_log2;        // lanes per row: 1 << team_log2 (1..32)
  unsigned per_thread_log2;  // vectors per lane per row: 1 << per_thread_log2 (1, 2 or 4)
  void* out;
  std::size_t out_stride;
};

//! Rows of (team x per_thread) whole 16-byte vectors, each on a 16-byte boundary. A pass gives
//! every team kVectorRowLoads / per_thread rows, `teams` apart, so that one load instruction of a
//! warp reads neighbouring rows: 512 contiguous bytes. Each lane issues its kVectorRowLoads loads
//! before it uses the first; then each row's lanes fold their vectors and meet in a butterfly.
template <class Traits>
__global__ void __launch_bounds__(kTeamBlock)
    vector_rows_kernel(VectorRowArgs<typename Traits::Elem> a) {
  using T = typename Traits::Elem;
  using Acc = typename Traits::Acc;
  using Vec = device::Vec16<T>;
  constexpr int kLoads = static_cast<int>(kVectorRowLoads);
  constexpr bool kDot = Traits::kArrays == 2;
  const unsigned team = 1u << a.team_log2;
  const unsigned rank = threadIdx.x & (team - 1);
  const std::size_t team_id =
      (static_cast<std::size_t>(blockIdx.x) * kTeamBlock + threadIdx.x) >> a.team_log2;
  const std::size_t teams = (static_cast<std::size_t>(gridDim.x) * kTeamBlock) >> a.team_log2;
  const unsigned per_thread_mask = (1u << a.per_thread_log2) - 1;
  const unsigned rows_per_pass = static_cast<unsigned>(kLoads) >> a.per_thread_log2;
  // Load k reads vector (rank + (k % per_thread) x team) of the pass's row k / per_thread.
  auto vector_of = [&](int k) { return rank + ((k & per_thread_mask) << a.team_log2); };
  // Grid-uniform bounds: every lane reaches the butterflies.
  for (std::size_t base = 0; base < a.rows; base += rows_per_pass * teams) {
    uint4 rx[kLoads];
    uint4 ry[kDot ? kLoads : 1];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const std::size_t row = base + (k >> a.per_thread_log2) * teams + team_id;
      if (row < a.rows) {
        const std::size_t at = row * a.pitch + vector_of(k) * Vec::kCount;
        rx[k] = device::load16<TeamConfig::kHint>(a.x + at);
        if constexpr (kDot) ry[k] = device::load16<TeamConfig::kHint>(a.y + at);
      }
    }
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      if (static_cast<unsigned>(j) >= rows_per_pass) break;  // uniform
      const std::size_t row = base + j * teams + team_id;
      const bool valid = row < a.rows;
      typename Traits::State state = Traits::start();
#pragma unroll
      for (int k = 0; k < kLoads; ++k) {
        if ((k >> a.per_thread_log2) != j || !valid) continue;
        const Vec vx = Vec::from(rx[k]);
        const Vec vy = kDot ? Vec::from(ry[kDot ? k : 0]) : Vec{};
        Traits::update_vector(state, vx.element, vy.element, vector_of(k) * Vec::kCount);
      }
      Acc acc = valid ? Traits::finish(state, a.x + row * a.pitch) : Traits::identity();
      acc = device::team_reduce(acc, team, [](Acc p, Acc q) { return Traits::combine(p, q); });
      if (valid && rank == 0) store_result<Traits>(a.out, row, acc, a.out_stride);
    }
  }
}

// ---- a block or a group of blocks per fixed-size segment --------------------------------------

template <class T>
struct BlockArgs {
  const T* x;
  const T* y;  // dot only
  std::size_t num_segments;
  std::size_t size;             // elements per segment, > 0
  std::size_t pitch;            // elements from one segment's start to the next's
  unsigned blocks_per_segment;  // 1, or a group per segment
  void* out;                    // num_segments x Traits::Out, out_stride apart
  std::size_t out_stride;
  void* partials;               // groups: num_segments x blocks_per_segment Traits::Acc
  unsigned int* counters;       // groups: num_segments group counters, zero on entry and exit
};

//! Block-sized work units (segment, member) in turn; a group's last member folds its partials.
template <class Traits, class Config, bool kYVector>
__global__ void __launch_bounds__(Config::kBlock)
    segment_blocks_kernel(BlockArgs<typename Traits::Elem> a) {
  using Acc = typename Traits::Acc;
  __shared__ Acc warp_slots[Config::kBlock / device::kWarpSize];
  const unsigned members = a.blocks_per_segment;
  const std::size_t units = a.num_segments * members;
  for (std::size_t unit = blockIdx.x; unit < units; unit += gridDim.x) {
    const std::size_t s = unit / members;
    const unsigned member = static_cast<unsigned>(unit % members);
    Acc acc = block_reads_range<Traits, Config, kYVector>(a.x, a.y, s * a.pitch, a.size, member,
                                                          members, warp_slots);
    bool last = members == 1;
    if (!last) {
      Acc* group = static_cast<Acc*>(a.partials) + s * members;
      if (threadIdx.x == 0) store_partial(group + member, acc);
      last = last_member_folds<Traits, Config::kBlock>(acc, group, members, a.counters + s, members,
                                                       warp_slots);
    }
    if (last && threadIdx.x == 0) store_result<Traits>(a.out, s, acc, a.out_stride);
    __syncthreads();  // warp_slots and the ticket's flag serve the next unit
  }
}

// ---- ragged segments: the element range cut evenly across warps -------------------------------

template <class T>
struct RaggedArgs {
  const T* x;
  const T* y;  // dot only
  std::size_t num_segments;
  SegmentRows rows;        // CSR
  void* out;               // num_segments x Traits::Out
  void* partials;          // 2 x gridDim.x Traits::Acc (SliceGroup over blocks)
  unsigned int* counters;  // gridDim.x group counters, zero on entry and exit
  unsigned int* flags;     // the workspace's segment flags: kSawDecreasingPair
};

//! The last s in [0, num_segments) with offsets[s] <= value, for nondecreasing offsets with
//! offsets[0] <= value: 32-way steps (each lane probes one offset), so about log32(num_segments)
//! rounds of loads. With offsets that decrease somewhere the answer is some s in range.
__device__ __forceinline__ std::size_t warp_last_at_or_below(const SegmentRows& rows,
                                                             std::size_t num_segments,
                                                             std::int64_t value, unsigned lane) {
  std::size_t low = 0;
  std::size_t high = num_segments;
  while (high - low > 1) {
    const std::size_t step = (high - low + device::kWarpSize - 1) / device::kWarpSize;
    const std::size_t probe = low + lane * step;
    const bool at_or_below = probe < high && rows.offset(probe) <= value;
    const unsigned count = __popc(__ballot_sync(device::kFullWarpMask, at_or_below));
    low += (count > 0 ? count - 1 : 0) * step;
    high = low + step < high ? low + step : high;
  }
  return low;
}

//! A warp's piece of a segment that crosses the warp's slice boundaries (kept in shared memory
//! for the block's merge).
template <class Acc>
struct RaggedPiece {
  Acc acc;
  std::int64_t begin;  // the segment's offsets
  std::int64_t end;
  std::size_t segment;
  bool valid;
  bool began_before;  // the segment starts before the slice (of the warp, or of the block)
};

//! Ragged segments over [offsets[0], offsets[num_segments]), cut into equal slices of 16-byte
//! vectors (RaggedSlicing): a block per slice, a warp per slice of that. A warp reads its slice
//! kRaggedLoads vectors per lane at a time, 32 x 16 bytes contiguous per load instruction, and
//! walks the offsets alongside: a window of 32 segment ends in shared memory, lane i holding the
//! end of segment s + i. Per chunk of 32 vectors:
//!   - all in the open segment (the one the last element read belongs to, the common case in long
//!     segments): each lane folds its elements into its own state, nothing else;
//!   - else each lane splits its elements into runs of one segment: the open segment's go to the
//!     lane's state, a run between two boundaries is a whole segment (written at once), and the
//!     lanes' first and last runs meet their neighbours' in a segmented scan over the lanes; the
//!     open segment, when it ends, is folded over the lanes (warp_reduce).
//! A segment that starts before the warp's slice or goes on after it leaves a piece; the block
//! merges its warps' pieces in order, and a segment that crosses blocks is folded by the last of
//! its blocks to take the group's ticket (SliceGroup, as in grid_step.cuh). Each segment's order
//! of operations depends on its offsets, x's offset in a 16-byte line and the grid (the GPU
//! model), never on timing.
template <class Traits, bool kYVector>
__global__ void __launch_bounds__(kTeamBlock)
    ragged_slices_kernel(RaggedArgs<typename Traits::Elem> a) {
  using T = typename Traits::Elem;
  using Acc = typename Traits::Acc;
  using State = typename Traits::State;
  using Vec = device::Vec16<T>;
  using Piece = RaggedPiece<Acc>;
  constexpr int kWidth = Vec::kCount;
  constexpr int kWarps = kTeamBlock / device::kWarpSize;
  constexpr int kLoads = static_cast<int>(kRaggedLoads);
  constexpr bool kDot = Traits::kArrays == 2;
  constexpr std::int64_t kPastEnd = cuda::std::numeric_limits<std::int64_t>::max();
  constexpr unsigned kReset = 1u << 8;   // scan flags, above the window index (0..31)
  constexpr unsigned kNoRun = 1u << 9;
  __shared__ std::int64_t ends_of[kWarps][device::kWarpSize];
  __shared__ Piece heads[kWarps];
  __shared__ Piece tails[kWarps];
  __shared__ Acc warp_slots[kWarps];
  __shared__ Piece block_pieces[2];  // the block's head piece and tail piece

  const unsigned lane = threadIdx.x % device::kWarpSize;
  const unsigned warp = threadIdx.x / device::kWarpSize;
  const std::size_t n = a.num_segments;
  const std::int64_t first_offset = a.rows.offset(0);
  const std::int64_t last_offset = a.rows.offset(n);
  if (last_offset < first_offset) {  // a decreasing pair somewhere: every block sees it
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicOr(a.flags, kSawDecreasingPair);
    return;
  }
  const int shift = static_cast<int>((reinterpret_cast<std::uintptr_t>(a.x) & 15) / sizeof(T));
  const RaggedSlicing slicing{first_offset, last_offset, shift, kWidth, gridDim.x, kWarps};
  const Slices warp_slices = slicing.warp_slices(blockIdx.x);
  const std::int64_t v_first = warp_slices.begin(warp);  // this warp's vectors
  const std::int64_t v_end = warp_slices.begin(warp + 1);
  const std::int64_t lo = slicing.element_at(v_first);  // and its elements
  const std::int64_t hi = slicing.element_at(v_end);
  const bool first_warp = blockIdx.x == 0 && warp == 0;
  const T* __restrict__ x_lines = a.x - shift;  // vector v is x_lines[v x kWidth, ...)
  const T* __restrict__ y_lines = kDot ? a.y - shift : nullptr;
  Acc* partials = static_cast<Acc*>(a.partials);
  if (threadIdx.x == 0) {  // overwritten by the block's pieces, if it has any (SliceGroup)
    store_partial(partials + 2 * blockIdx.x, Traits::identity());
    store_partial(partials + 2 * blockIdx.x + 1, Traits::identity());
  }
  if (lane == 0) {
    heads[warp].valid = false;
    tails[warp].valid = false;
  }
  std::int64_t* ends = ends_of[warp];
  // Every result goes through here: with offsets that decrease somewhere the window can point
  // past the last segment, and nothing may be written there (the fallback rewrites every result).
  auto write = [&](std::size_t segment, const Acc& acc) {
    if (segment < n) store_result<Traits>(a.out, segment, acc);
  };
  bool bad = false;  // this lane saw offsets that decrease

  // The window: segments s .. s + 31; lane i holds the end of segment s + i (kPastEnd past the
  // last segment) and checks it: an empty segment this warp owns gets its result, a decreasing
  // pair is flagged.
  std::size_t s = first_warp ? 0 : warp_last_at_or_below(a.rows, n, lo, lane);
  std::int64_t s_begin = a.rows.offset(s);
  std::int64_t my_end = 0;
  auto load_window = [&]() {
    const std::size_t id = s + 1 + lane;
    my_end = id <= n ? a.rows.offset(id) : kPastEnd;
    std::int64_t my_begin = __shfl_up_sync(device::kFullWarpMask, my_end, 1);
    if (lane == 0) my_begin = s_begin;
    if (id <= n) {
      if (my_end < my_begin || my_end > last_offset || my_begin < first_offset) {
        bad = true;
      } else if (my_end == my_begin && RaggedSlicing::owns_empty(lo, hi, first_warp, my_begin)) {
        write(s + lane, Traits::empty());
      }
    }
    __syncwarp();  // every lane has read the previous window
    ends[lane] = my_end;
    __syncwarp();
  };
  auto last_end = [&]() { return __shfl_sync(device::kFullWarpMask, my_end, 31); };
  auto advance = [&]() {
    s_begin = last_end();
    s += device::kWarpSize;
    load_window();
  };
  auto begin_of = [&](int r) { return r == 0 ? s_begin : ends[r - 1]; };

  // The open segment (window index open_r, or -1): every lane folds its elements of it into
  // `open`; `carry` holds what the lanes read of it before it became open.
  int open_r = -1;
  std::int64_t open_begin = 0;
  std::int64_t open_end = 0;
  bool open_before = false;  // it starts before lo: its first piece is another warp's
  bool has_carry = false;
  Acc carry = Traits::identity();
  State open = Traits::start();
  auto fold_open = [&]() {  // lane 0: carry, then every lane's state, in a fixed order
    Acc acc = device::warp_reduce(Traits::finish(open, a.x),
                                  [](Acc p, Acc q) { return Traits::combine(p, q); });
    if (has_carry) acc = Traits::combine(carry, acc);
    open = Traits::start();
    has_carry = false;
    return acc;
  };

  // The open segment has ended (within the round, or exactly with the chunk): fold it into its
  // result, or into the warp's head piece when it began before the slice.
  auto close_open = [&]() {
    const Acc acc = fold_open();
    if (lane == 0) {
      if (open_before) {
        heads[warp] = Piece{acc, open_begin, open_end, s + open_r, true, true};
      } else {
        write(s + open_r, acc);
      }
    }
    open_r = -1;
  };

  const bool walks = lo < hi || first_warp;  // a warp with no elements only reports its piece
  if (lo < last_offset) {
    load_window();
    while (last_end() <= lo) advance();
    open_r = __popc(__ballot_sync(device::kFullWarpMask, my_end <= lo));
    open_begin = begin_of(open_r);
    open_end = ends[open_r];
    open_before = open_begin < lo;
  } else if (walks) {
    load_window();
  }

  for (std::int64_t pass = v_first; pass < v_end; pass += kLoads * device::kWarpSize) {
    uint4 rx[kLoads];
    uint4 ry[kDot && kYVector ? kLoads : 1];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const std::int64_t v = pass + k * device::kWarpSize + lane;
      if (v < v_end) {
        rx[k] = device::load16<TeamConfig::kHint>(x_lines + v * kWidth);
        if constexpr (kDot && kYVector) ry[k] = device::load16<TeamConfig::kHint>(y_lines + v * kWidth);
      }
    }
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const std::int64_t chunk_vector = pass + k * device::kWarpSize;
      if (chunk_vector >= v_end) break;  // uniform
      const std::int64_t chunk_lo = slicing.element_at(chunk_vector) > lo
                                        ? slicing.element_at(chunk_vector) : lo;
      const std::int64_t chunk_hi = slicing.element_at(chunk_vector + device::kWarpSize) < hi
                                        ? slicing.element_at(chunk_vector + device::kWarpSize) : hi;
      const std::int64_t e0 = (chunk_vector + lane) * kWidth - shift;  // this lane's first
      const Vec vx = Vec::from(rx[k]);
      Vec vy{};
      if constexpr (kDot && kYVector) vy = Vec::from(ry[k]);
      auto y_of = [&](int j, std::int64_t e) -> T {
        if constexpr (!kDot) return T{};
        else if constexpr (kYVector) return vy.element[j];
        else return a.y[e];
      };
      if (open_r >= 0 && chunk_hi <= open_end) {  // the whole chunk in the open segment
#pragma unroll
        for (int j = 0; j < kWidth; ++j) {
          const std::int64_t e = e0 + j;
          if (e >= chunk_lo && e < chunk_hi)
            Traits::update(open, vx.element[j], y_of(j, e),
                           static_cast<std::size_t>(e - open_begin));
        }
        if (chunk_hi == open_end) close_open();  // it ends with the chunk
        continue;
      }
      // Rounds: the elements of the chunk the window covers, then the window moves on.
      for (std::int64_t round_lo = chunk_lo;;) {
        const std::int64_t window_end = last_end();
        const std::int64_t round_hi = chunk_hi < window_end ? chunk_hi : window_end;
        // This lane's runs: `first` (the first run other than the open segment's, whole here
        // when another run follows it), then `run` (the last one). Runs between them are whole
        // segments, written at once.
        int r = -1;
        std::int64_t next_end = 0;
        int run_r = -1;
        State run = Traits::start();
        std::int64_t run_begin = 0;
        int first_r = -1;
        Acc first = Traits::identity();
        bool first_continues = false;  // `first` began in an earlier lane
        const std::int64_t lane_lo = e0 > round_lo ? e0 : round_lo;
        const std::int64_t lane_hi = e0 + kWidth < round_hi ? e0 + kWidth : round_hi;
#pragma unroll
        for (int j = 0; j < kWidth; ++j) {
          const std::int64_t e = e0 + j;
          if (e < lane_lo || e >= lane_hi) continue;
          if (r < 0) {  // segment of e: the number of window ends at or below it
            r = 0;
#pragma unroll
            for (int step = device::kWarpSize / 2; step > 0; step /= 2)
              if (ends[r + step - 1] <= e) r += step;
            next_end = ends[r];
          }
          while (e >= next_end) next_end = ends[++r];
          if (r == open_r) {
            Traits::update(open, vx.element[j], y_of(j, e),
                           static_cast<std::size_t>(e - open_begin));
            continue;
          }
          if (r != run_r) {
            if (run_r >= 0) {
              if (first_r < 0) {
                first_r = run_r;
                first = Traits::finish(run, a.x);
                first_continues = run_begin < lane_lo;
              } else {
                write(s + run_r, Traits::finish(run, a.x));
              }
            }
            run_r = r;
            run = Traits::start();
            run_begin = begin_of(r);
          }
          Traits::update(run, vx.element[j], y_of(j, e), static_cast<std::size_t>(e - run_begin));
        }
        // Segmented inclusive scan of the lanes' last runs (a run that began in its lane resets).
        Acc scan = run_r >= 0 ? Traits::finish(run, a.x) : Traits::identity();
        unsigned tag = run_r >= 0 ? static_cast<unsigned>(run_r) : kNoRun;
        if (run_r >= 0 && (first_r >= 0 || run_begin >= lane_lo)) tag |= kReset;
#pragma unroll
        for (int d = 1; d < device::kWarpSize; d *= 2) {
          const Acc other = device::shfl_up(scan, d);
          const unsigned other_tag = __shfl_up_sync(device::kFullWarpMask, tag, d);
          if (lane >= static_cast<unsigned>(d) && (tag & kReset) == 0 && (other_tag & kNoRun) == 0) {
            if ((tag & kNoRun) != 0) {
              scan = other;
              tag = other_tag;
            } else {
              scan = Traits::combine(other, scan);
              tag = (tag & 0xffu) | (other_tag & kReset);
            }
          }
        }
        const Acc before = device::shfl_up(scan, 1);  // the lanes before this one, scanned
        if (first_r >= 0)
          write(s + first_r, first_continues && lane > 0 ? Traits::combine(before, first) : first);
        if (run_r >= 0 && ends[run_r] <= lane_hi) write(s + run_r, scan);
        // The open segment ends in this round: fold it.
        if (open_r >= 0 && open_end <= round_hi) close_open();
        // The last run of the round goes on: it becomes the open segment.
        const unsigned last_tag = __shfl_sync(device::kFullWarpMask, tag, 31);
        if ((last_tag & kNoRun) == 0 && ends[last_tag & 0xffu] > round_hi) {
          open_r = static_cast<int>(last_tag & 0xffu);
          open_begin = begin_of(open_r);
          open_end = ends[open_r];
          open_before = false;
          carry = device::shfl_from(scan, device::kWarpSize - 1);
          has_carry = true;
        }
        if (round_hi == chunk_hi) break;
        advance();  // every segment of the window has ended
        round_lo = round_hi;
      }
    }
  }

  if (walks) {
    // The segments ending up to hi: empty ones this warp writes, and the check of every pair.
    while (last_end() <= hi) advance();
    if (hi < last_offset) {  // the pairs between this warp's last window and the next warp's
      const std::size_t next = warp_last_at_or_below(a.rows, n, hi, lane);
      for (std::size_t t = s + device::kWarpSize + lane; t < next; t += device::kWarpSize)
        if (a.rows.offset(t + 1) < a.rows.offset(t)) bad = true;
    }
  }
  if (__any_sync(device::kFullWarpMask, bad) && lane == 0) atomicOr(a.flags, kSawDecreasingPair);
  // The open segment goes on past the slice: the warp's tail piece (a warp with no elements
  // reports one only when its position lies inside a segment, which it then spans).
  if (open_r >= 0) {
    const Acc acc = fold_open();
    if (lane == 0 && (lo < hi || open_before))
      tails[warp] = Piece{acc, open_begin, open_end, s + open_r, true, open_before};
  }
  __syncthreads();

  // The block's merge, in warp order: pieces of one segment from consecutive warps fold into a
  // result, or into the block's head piece (the segment started before the block) or tail piece
  // (it goes on after the block).
  if (threadIdx.x == 0) {
    Piece running{};
    running.valid = false;
    Piece head{};
    head.valid = false;
    for (int w = 0; w < kWarps; ++w) {
      if (heads[w].valid) {
        if (!running.valid) {
          head = heads[w];
        } else {
          running.acc = Traits::combine(running.acc, heads[w].acc);
          if (running.began_before) {
            head = running;
          } else {
            write(running.segment, running.acc);
          }
          running.valid = false;
        }
      }
      if (tails[w].valid) {
        if (tails[w].began_before && running.valid) {
          running.acc = Traits::combine(running.acc, tails[w].acc);
        } else {
          running = tails[w];
        }
      }
    }
    block_pieces[0] = head;
    block_pieces[1] = running;
  }
  __syncthreads();
  // Each piece goes to its group's slot; the group's last block to take the ticket folds.
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const Piece piece = block_pieces[i];
    if (!piece.valid || piece.end <= piece.begin) continue;  // uniform; the second: bad offsets
    const SliceGroup group = slicing.group(piece.begin, piece.end);
    if (group.last < group.first) continue;  // bad offsets only (the fallback resets counters)
    Acc acc = piece.acc;
    if (threadIdx.x == 0) store_partial(partials + group.slot(blockIdx.x), acc);
    const bool last = last_member_folds<Traits, kTeamBlock>(
        acc, partials + group.fold_first(), group.fold_count(), a.counters + group.first,
        group.members(), warp_slots);
    if (last && threadIdx.x == 0) write(piece.segment, acc);
    __syncthreads();  // warp_slots and the ticket's flag serve the next piece
  }
}

//! After ragged_slices_kernel: if it flagged offsets that decrease, every segment again, a block
//! each (a decreasing pair gives the empty result), and the group counters the slices kernel may
//! have left unbalanced are zeroed. Otherwise every block reads the flags and returns.
template <class Traits, class Config, bool kYVector>
__global__ void __launch_bounds__(Config::kBlock)
    ragged_fallback_kernel(RaggedArgs<typename Traits::Elem> a, unsigned* grid_counter,
                           unsigned slices_grid) {
  using Acc = typename Traits::Acc;
  __shared__ Acc warp_slots[Config::kBlock / device::kWarpSize];
  __shared__ unsigned flags;
  if (threadIdx.x == 0)
    flags = cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*a.flags).load(
        cuda::memory_order_relaxed);
  __syncthreads();
  if (flags == 0) return;  // every block read the same zero: nothing to redo, nothing to reset
  for (unsigned i = blockIdx.x * Config::kBlock + threadIdx.x; i < slices_grid;
       i += gridDim.x * Config::kBlock)
    a.counters[i] = 0;
  for (std::size_t s = blockIdx.x; s < a.num_segments; s += gridDim.x) {
    const SegmentRange range = a.rows(s);
    Acc acc = Traits::empty();
    if (range.count > 0)
      acc = block_reads_range<Traits, Config, kYVector>(a.x, a.y, range.begin, range.count, 0, 1,
                                                        warp_slots);
    if (threadIdx.x == 0) store_result<Traits>(a.out, s, acc);
    __syncthreads();  // warp_slots serve the next segment
  }
  // Every block has read the flags (thread 0, first thing): the last block to get here clears
  // them for the next call.
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*grid_counter);
    if (counter.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1) {
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*a.flags).store(
          0u, cuda::memory_order_relaxed);
      counter.store(0u, cuda::memory_order_relaxed);
    }
  }
}

// ---- launchers ----------------------------------------------------------------------------------

template <class Traits, bool kYVector>
struct SegmentTeamsTag {};
template <class Traits, bool kYVector>
struct SegmentBlocksTag {};
template <class Traits, bool kYVector>
struct RaggedSlicesTag {};
template <class Traits, bool kYVector>
struct RaggedFallbackTag {};
template <class Traits>
struct VectorRowsTag {};

//! The kernels of Traits (y read as vectors or not) and what the GPU holds of each.
template <class Traits, bool kYVector>
struct SegmentKernels {
  using BlockConfig = typename ConfigFor<Traits>::type;
  static constexpr auto teams = segment_teams_kernel<Traits, kYVector>;
  static constexpr auto blocks = segment_blocks_kernel<Traits, BlockConfig, kYVector>;
  static constexpr auto ragged_slices = ragged_slices_kernel<Traits, kYVector>;
  static constexpr auto ragged_fallback = ragged_fallback_kernel<Traits, BlockConfig, kYVector>;

  static SegmentCapacity capacity(int device) {
    SegmentCapacity c;
    c.team_blocks = resident_grid<SegmentTeamsTag<Traits, kYVector>>(teams, kTeamBlock, device);
    c.team_block_warps = kTeamBlock / device::kWarpSize;
    c.blocks =
        resident_grid<SegmentBlocksTag<Traits, kYVector>>(blocks, BlockConfig::kBlock, device);
    c.block_tile_vectors = BlockConfig::kTile;
    c.ragged_blocks = resident_grid<RaggedSlicesTag<Traits, kYVector>>(ragged_slices, kTeamBlock,
                                                                       device);
    c.fallback_blocks = resident_grid<RaggedFallbackTag<Traits, kYVector>>(
        ragged_fallback, BlockConfig::kBlock, device);
    return c;
  }

  static void fixed(const typename Traits::Elem* x, const typename Traits::Elem* y,
                    std::size_t num_segments, std::size_t size, std::size_t pitch, void* out,
                    std::size_t out_stride, const WorkspaceView& ws, cudaStream_t stream) {
    using T = typename Traits::Elem;
    auto aligned = [](const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; };
    // Only the kernels that read y as vectors take the vector rows (x and y both aligned).
    const bool aligned_rows = kYVector && aligned(x) && (Traits::kArrays == 1 || aligned(y)) &&
                              pitch * sizeof(T) % 16 == 0;
    const FixedSegmentPlan plan = plan_fixed_segments(num_segments, size, sizeof(T),
                                                      capacity(ws.device), kMaxGrid, aligned_rows);
    if constexpr (kYVector) {
      if (plan.path == SegmentPath::vector_rows) {
        const VectorRowArgs<T> args{
            x, y, num_segments, pitch, plan.team_log2, plan.per_thread_log2, out, out_stride};
        launch_kernel<VectorRowsTag<Traits>>(vector_rows_kernel<Traits>, plan.grid, kTeamBlock,
                                             stream, ws.device,
                                             "launch of reducelab vector_rows_kernel", args);
        return;
      }
    }
    if (plan.path == SegmentPath::teams) {
      const SegmentRows rows{nullptr, false, size, pitch};
      const TeamArgs<typename Traits::Elem> args{x,   y,          num_segments,
                                                 rows, out, out_stride, plan.group};
      launch_kernel<SegmentTeamsTag<Traits, kYVector>>(
          teams, plan.grid, kTeamBlock, stream, ws.device,
          "launch of reducelab segment_teams_kernel", args);
    } else {
      const BlockArgs<typename Traits::Elem> args{
          x,   y,          num_segments,  size,
          pitch, plan.blocks_per_segment, out, out_stride,
          ws.d_partials, ws.d_group_counters};
      launch_kernel<SegmentBlocksTag<Traits, kYVector>>(
          blocks, plan.grid, BlockConfig::kBlock, stream, ws.device,
          "launch of reducelab segment_blocks_kernel", args);
    }
  }

  static void ragged(const typename Traits::Elem* x, const typename Traits::Elem* y,
                     std::size_t num_segments, SegmentRows rows, void* out, const WorkspaceView& ws,
                     cudaStream_t stream) {
    const RaggedSegmentPlan plan =
        plan_ragged_segments(num_segments, capacity(ws.device), kMaxGrid);
    const RaggedArgs<typename Traits::Elem> args{x,  y, num_segments, rows, out, ws.d_partials,
                                                 ws.d_group_counters, ws.d_segment_flags};
    launch_kernel<RaggedSlicesTag<Traits, kYVector>>(ragged_slices, plan.grid, kTeamBlock, stream,
                                                     ws.device,
                                                     "launch of reducelab ragged_slices_kernel",
                                                     args);
    launch_kernel<RaggedFallbackTag<Traits, kYVector>>(
        ragged_fallback, plan.fallback_grid, BlockConfig::kBlock, stream, ws.device,
        "launch of reducelab ragged_fallback_kernel", args, ws.d_counter, plan.grid);
  }
};

//! Calls f(SegmentKernels<TraitsFor<op, T>, y read as vectors>) for the run-time op: dot's y is
//! read as vectors only when it shares x's offset in a 16-byte line (as in launch_with).
template <class T, class F>
void with_segment_kernels(Op op, const T* x, const T* y, F&& f) {
  dispatch_op(op, [&](auto op_constant) {
    using Traits = TraitsFor<decltype(op_constant)::value, T>;
    if (Traits::kArrays == 1 || same_offset_in_line(x, y)) {
      f(SegmentKernels<Traits, true>{});
    } else if constexpr (Traits::kArrays == 2) {
      f(SegmentKernels<Traits, false>{});
    }
  });
}

//! Fixed-size segments: segment s is x[s x pitch, s x pitch + segment_size) (pitch ==
//! segment_size for a contiguous batch of rows; larger for a sliced view, any for the axis
//! reduce), its result goes to d_out + s x out_stride results.
template <class T>
void launch_fixed_segments(Op op, const T* x, const T* y, std::size_t num_segments,
                           std::size_t segment_size, std::size_t pitch, void* d_out,
                           std::size_t out_stride, const WorkspaceView& ws, cudaStream_t stream) {
  if (takes_scalar_path(num_segments, segment_size)) {
    launch_typed<T>(op, x, y, segment_size, d_out, ws, stream);  // the scalar reduce, instantiated
    return;                                                      // in instantiate_*.cu
  }
  with_segment_kernels(op, x, y, [&](auto kernels) {
    kernels.fixed(x, y, num_segments, segment_size, pitch, d_out, out_stride, ws, stream);
  });
}

template <class T, class Offset>
void launch_ragged_segments(Op op, const T* x, const T* y, std::size_t num_segments,
                            const Offset* offsets, void* d_out, const WorkspaceView& ws,
                            cudaStream_t stream) {
  static_assert(std::is_same_v<Offset, std::int32_t> || std::is_same_v<Offset, std::int64_t>);
  const SegmentRows rows{offsets, std::is_same_v<Offset, std::int64_t>, 0, 0};
  with_segment_kernels(
      op, x, y, [&](auto kernels) { kernels.ragged(x, y, num_segments, rows, d_out, ws, stream); });
}

}  // namespace reducelab::detail

//! The explicit instantiations of the segmented launchers for T (instantiate_segmented_*.cu,
//! inside namespace reducelab::detail).
#define REDUCELAB_INSTANTIATE_SEGMENTED(T)                                                        \
  template void launch_fixed_segments<T>(Op, const T*, const T*, std::size_t, std::size_t,        \
                                         std::size_t, void*, std::size_t, const WorkspaceView&,   \
                                         cudaStream_t);                                           \
  template void launch_ragged_segments<T, std::int32_t>(Op, const T*, const T*, std::size_t,      \
                                                        const std::int32_t*, void*,               \
                                                        const WorkspaceView&, cudaStream_t);      \
  template void launch_ragged_segments<T, std::int64_t>(Op, const T*, const T*, std::size_t,      \
                                                        const std::int64_t*, void*,               \
                                                        const WorkspaceView&, cudaStream_t);

#pragma once
// The segmented reduce: one result per segment of x, for fixed-size segments (rows) and ragged
// ones (CSR offsets), from the scalar reduce's pieces: the range agent (agent.cuh) reads each
// segment, or a team's share of it, at any alignment; warp and block reductions
// (device/*.cuh) combine a team's threads; the group ticket (grid_step.cuh) folds the partials
// of blocks that share a segment. The planner (segment_plan.hpp) picks the kernel.
//
// The kernels:
//   - segment_teams_kernel: a thread or a warp per segment (short and medium segments, fixed or
//     ragged);
//   - warp_rows_kernel: a warp per fixed-size row (the teams kernel's warp path alone);
//   - segment_runs_kernel: ragged segments shorter than kBlockSegmentMin in groups of 32, each
//     group's elements read as one range (runs), when x is 16-byte aligned and there are enough
//     segments for groups;
//   - vector_rows_kernel: a team of lanes per short aligned fixed-size row;
//   - tile_rows_kernel: other short fixed-size rows that lie one after another, a tile of them
//     at a time staged in shared memory;
//   - segment_blocks_kernel: a block, or a group of blocks, per fixed-size segment;
//   - long_segments_kernel: ragged segments of at least kBlockSegmentMin elements, read in
//     slices of the element range so that every block gets the same number of elements.
// A ragged call launches the teams or the runs kernel and then the long kernel; the first tells
// the long kernel, through the workspace's flags word, whether it saw a long segment at all and
// whether the offsets decrease anywhere (the slices assume they do not; then every long segment
// is read by one block).
//
// Order of operations (bitwise repeatability): a segment's reduction order depends only on its
// length, its offset in a 16-byte line and the plan, which depends on the shape and the GPU model
// (its resident blocks); for ragged long segments also on where the slice boundaries fall, that
// is on offsets[0], offsets[num_segments] and the GPU model; for the runs kernel on where the
// segment lies in its group's rounds. Groups fold in a fixed order.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cuda/atomic>
#include <type_traits>
#include <utility>

#include "common/kernel_launch.cuh"
#include "common/resident_grid.cuh"
#include "device/async_copy.cuh"
#include "device/block_reduce.cuh"
#include "device/warp_reduce.cuh"
#include "reduce/agent.cuh"
#include "reduce/config.cuh"
#include "reduce/grid_step.cuh"
#include "reduce/launch.cuh"
#include "reduce/reproducible.hpp"
#include "reduce/segment_plan.hpp"
#include "reduce/stats_traits.cuh"
#include "reduce/tensor_table.hpp"
#include "reduce/workspace.hpp"

namespace reducelab::detail {

// The scalar reduce's launcher, which a single fixed-size segment takes, is compiled once per
// type in instantiate_*.cu: the files that include this one call it without compiling the scalar
// kernels again.
#define REDUCELAB_EXTERN_LAUNCH_TYPED(T)                                           \
  extern template void launch_typed<T>(const Reduction&, const T*, const T*, std::size_t, void*, \
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

//! Bits of the workspace's segment flags word, set by segment_teams_kernel on ragged segments
//! and cleared by the last block of long_segments_kernel.
inline constexpr unsigned kSawDecreasingPair = 1;  //!< offsets[s + 1] < offsets[s] somewhere
inline constexpr unsigned kSawLongSegment = 2;     //!< a segment of >= kBlockSegmentMin elements
//! In LongArgs::known_flags: the host knows the flags (a list of tensors, whose lengths it has),
//! so no teams kernel needs to find them.
inline constexpr unsigned kFlagsKnown = 0x80000000u;

//! Threads per block of segment_teams_kernel, and vectors in flight per thread of its teams.
inline constexpr int kTeamBlock = static_cast<int>(kTeamThreads);
using TeamConfig = Config<kTeamBlock, 4>;

//! Resident blocks per SM that segment_teams_kernel (`teams`, blocks of kTeamBlock) and
//! segment_blocks_kernel (`blocks`, of the op's Config) must allow (__launch_bounds__' second
//! argument; 0: no bound). sum, min and max of 1-, 2- and 4-byte elements are bound to 4 of
//! each: by session 11 the allocator had taken 66 registers for the teams kernel of f32 sum
//! (3 blocks of 256 per SM, 64 allow 4) and 34 for the blocks kernel (3 blocks of 512, 32 allow
//! 4). With 3 blocks the plans change: 16,384 rows of 8,192 floats left the warp-per-row path
//! (5.2 rounds of resident warps) for a block per row at 3,407 GB/s, and 512 rows of 2^18 took
//! 1.29 rounds of blocks (3,387 GB/s); 94d1e4d had read both at 4,297 and 4,301.
template <class Traits>
struct SegmentMinBlocks {
  static constexpr int teams = 0;
  static constexpr int blocks = 0;
};
template <class T>
struct SegmentMinBlocks<SumTraits<T, 1>> {
  static constexpr int teams = sizeof(T) <= 4 ? 4 : 0;
  static constexpr int blocks = sizeof(T) <= 4 ? 4 : 0;
};
template <class T, class Extremum>
struct SegmentMinBlocks<ExtremumTraits<T, Extremum>> : SegmentMinBlocks<SumTraits<T, 1>> {};

//! Which ops fold a tile row in two passes over shared memory (MomentsTraits::team_row) rather
//! than through update_vector and reduce_team: var, std, var_mean, std_mean of f32 and f64.
//! H200, session 26, var against the update_vector fold (GB/s, two runs each, teams interleaved
//! where the planner picks a stride): f32 along 50 2,783 / 2,749 -> 2,906 / 2,890, along 65
//! 2,784 / 2,813 -> 2,835 / 2,866, along 101 2,826 / 2,821 -> 2,953 / 2,888; f64 along 33
//! 2,504 / 2,512 -> 3,076 / 3,057, along 65 2,549 / 2,579 -> 2,900 / 2,847. The prediction
//! (fewer instructions by a fifth, ~3,400 GB/s along 50) was wrong: 139.3 M warp instructions
//! against 149.0 M, and 59 registers against 48.
//! f16 and bf16 keep update_vector, which merges 8 elements at once: two passes read f16 along
//! 65 at 2,087 / 2,011 against 2,222 / 2,204.
template <class Traits>
inline constexpr bool kTileRowsTwoPass = false;
template <class T>
inline constexpr bool kTileRowsTwoPass<MomentsTraits<T>> = sizeof(T) >= 4;

//! Which ops fold tile rows with a warp's teams interleaved (tile_round_slot) where the planner
//! picks a stride: the plain folds, bound by memory, whose bank conflicts cost them (session 26,
//! against 3b92455: f32 sum along 65, 130, 161 +10-13%, norm +8-13%, count_nonzero +2-7%, f16
//! sum along 65 +16%), and the two-pass var, which reads each row twice (f32 along 65: 2,446 /
//! 2,443 GB/s on consecutive rows, 2,801 / 2,876 interleaved; session 26). The other statistics
//! and argmin/argmax keep consecutive rows: with the slot values live their folds ran 1-5%
//! slower on every row length (session 25; f32 var's vector fold 51 instructions against 48),
//! and in their own instantiation they run as before (logsumexp within 1%) or faster (f32
//! argmax +2-4%).
template <class Traits>
inline constexpr bool kTileInterleaves =
    (!folds_tiles<Traits>::value && !is_arg_traits<Traits>::value) || kTileRowsTwoPass<Traits>;
template <class T>
inline constexpr bool kTileInterleaves<LogSumExpTraits<T>> = false;  // f64 folds one at a time

//! f64's two-pass var takes tiles of rows shorter than this many bytes (others of the ops that
//! fold tiles: kLongFoldTileRowBytes). H200, session 26, var GB/s on the tiles against the
//! octets (two runs each): rows of 65 doubles 2,900 / 2,847 against 2,549 / 2,579, of 101
//! 2,930 / 2,940 against 2,919 / 2,921 (std_mean 2,947 / 2,911 against 2,767 / 2,767; an
//! earlier call read var there at 3,099 / 3,165), of 127 3,051 / 3,065 against 3,294 / 3,271.
//! The crossover lies between 808 and 1,016 bytes; not measured in between.
inline constexpr std::size_t kTwoPassF64TileRowBytes = 832;

//! The longest contiguous rows, in bytes, that tile_rows_kernel takes for Traits (shorter than
//! kOctetSegmentBytes; longer ones go to the teams kernel's octets).
template <class Traits>
inline constexpr std::size_t kTileRowBytesMax =
    !folds_tiles<Traits>::value ? kOctetSegmentBytes
    : kTileRowsTwoPass<Traits> && sizeof(typename Traits::Elem) == 8 ? kTwoPassF64TileRowBytes
                                                                      : kLongFoldTileRowBytes;

//! Where segment s lies in x: [begin, begin + count).
struct SegmentRange {
  std::size_t begin;
  std::size_t count;
  bool decreasing;  //!< its offsets decrease: read as an empty segment
};

//! The segments of a call: fixed-size (offsets null: segment s is [s x size, (s + 1) x size))
//! or CSR (segment s is [offsets[s], offsets[s + 1]), int32 or int64 offsets). One type for
//! both, so each op and type compiles one teams kernel; the branch is uniform.
//! A list of tensors (tensors.hpp) is CSR segments whose elements are not in x: `pointers[s]` is
//! tensor s's own first element, and the int64 offsets place it in the concatenation of the list
//! (where the long kernel cuts its slices and the total counts its indices).
struct SegmentRows {
  const void* offsets;
  bool wide_offsets;  //!< int64 offsets, else int32
  std::size_t size;   //!< fixed-size segments' length
  std::size_t pitch;  //!< fixed-size segments: elements from one segment's start to the next's
  const void* const* pointers = nullptr;  //!< a list of tensors: where each one is

  //! Segment s's first element, `begin` being where it starts (range.begin).
  template <class T>
  __device__ __forceinline__ const T* data(const T* x, std::size_t s, std::size_t begin) const {
    return pointers == nullptr ? x + begin : static_cast<const T*>(pointers[s]);
  }

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

//! Result number s, of `count` elements, at out + s x out_stride (results).
template <class Traits>
__device__ __forceinline__ void store_result(void* out, std::size_t s,
                                             const typename Traits::Acc& acc, std::size_t count,
                                             const Finish& finish, std::size_t out_stride = 1) {
  Traits::store(out, static_cast<std::int64_t>(s * out_stride), acc, count, finish);
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

//! Traits with their own merge of a team's accumulators (var's Moments: one centre and plain sums
//! instead of a tree of Chan merges; logsumexp: one max, then plain sums of rescaled terms).
template <class Traits, class = void>
struct has_team_reduce : std::false_type {};
template <class Traits>
struct has_team_reduce<Traits, std::void_t<decltype(Traits::team_reduce(
                                   std::declval<typename Traits::Acc>(), 1u))>>
    : std::true_type {};

//! The accumulators of aligned teams of `team` lanes merged (all 32 lanes call); each team's
//! first lane holds its result.
template <class Traits>
__device__ __forceinline__ typename Traits::Acc reduce_team(typename Traits::Acc acc,
                                                            unsigned team) {
  using Acc = typename Traits::Acc;
  if constexpr (has_team_reduce<Traits>::value) {
    return Traits::team_reduce(acc, team);
  } else {
    return device::team_reduce(acc, team, [](Acc p, Acc q) { return Traits::combine(p, q); });
  }
}

//! The warp's accumulators merged; lane 0 holds the result.
template <class Traits>
__device__ __forceinline__ typename Traits::Acc reduce_warp(typename Traits::Acc acc) {
  using Acc = typename Traits::Acc;
  if constexpr (has_team_reduce<Traits>::value) {
    return Traits::team_reduce(acc, device::kWarpSize);
  } else {
    return device::warp_reduce(acc, [](Acc p, Acc q) { return Traits::combine(p, q); });
  }
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
  std::size_t long_min;  // segments at least this long are long_segments_kernel's (ragged)
  unsigned group;        // segments a warp takes at once: kLaneGroup (one per lane) or 1
  unsigned int* flags;   // ragged: the workspace's segment flags; null for fixed-size segments
  Finish finish;
  void* accs = nullptr;  // a list's total: each segment's Traits::Acc, indices from offsets[0]
  //! segment_runs_kernel: its group ticket and its count of warps done, zero on entry and exit.
  unsigned int* tickets = nullptr;
};

//! Where segment_runs_kernel's two counters live: the flags word's 128-byte line of the
//! workspace header (zero between calls), 64 bytes after the flags word.
inline constexpr std::size_t kRunTicketsAfterFlags = 16;

//! A list's total needs every segment's accumulator: stored with indices counted from the start
//! of the concatenation (the identity for an empty segment, which adds nothing to the total).
template <class Traits>
__device__ __forceinline__ void store_segment_acc(void* accs, std::size_t s,
                                                  const typename Traits::Acc& acc,
                                                  std::size_t begin, std::size_t count) {
  if (accs == nullptr) return;
  store_partial(static_cast<typename Traits::Acc*>(accs) + s,
                count == 0 ? Traits::identity()
                           : Traits::shifted(acc, static_cast<std::int64_t>(begin)));
}

//! The segments of the lanes in `pending` (of the group that starts at segment `first`), one
//! after another by the whole warp (all 32 lanes call): each lane's `range` is its own segment's,
//! shuffled from it in turn. kOneRange: the segments lie in x (not a list of tensors) and no
//! list's total wants their accumulators, as in segment_runs_kernel, whose registers grew from 96
//! to 134 (f64 dot) with the general form's pointer and accumulator code.
template <class Traits, bool kYVector, bool kOneRange = false>
__device__ __forceinline__ void read_segments_by_warp(const TeamArgs<typename Traits::Elem>& a,
                                                      std::size_t first, unsigned pending,
                                                      const SegmentRange& range, unsigned lane) {
  using WarpAgent =
      RangeAgent<Traits, device::kWarpSize, TeamConfig::kUnroll, TeamConfig::kHint, kYVector>;
  for (; pending != 0; pending &= pending - 1) {
    const int from = __ffs(pending) - 1;
    const std::size_t begin = __shfl_sync(device::kFullWarpMask,
                                          static_cast<unsigned long long>(range.begin), from);
    const std::size_t count = __shfl_sync(device::kFullWarpMask,
                                          static_cast<unsigned long long>(range.count), from);
    const typename Traits::Elem* x = kOneRange ? a.x + begin : a.rows.data(a.x, first + from, begin);
    typename Traits::Acc acc =
        read_range<Traits, WarpAgent>(x, y_at<Traits>(a.y, begin), 0, count, lane, 0, 1);
    acc = reduce_warp<Traits>(acc);
    if (lane == 0) {
      store_result<Traits>(a.out, first + from, acc, count, a.finish, a.out_stride);
      if constexpr (!kOneRange) store_segment_acc<Traits>(a.accs, first + from, acc, begin, count);
    }
  }
}

//! Warps take `group` segments at a time. Each lane looks at its own: shorter than
//! kThreadSegmentMax, the lane reads it alone and writes its result (empty and decreasing ones
//! included); in a group of kLaneGroup, shorter than kOctetSegmentBytes, a team of kOctet lanes
//! reads it afterwards, four teams four segments at once; up to long_min, the whole warp reads it
//! afterwards, one such segment after another; longer ones are left to long_segments_kernel, and
//! flagged.
template <class Traits, bool kYVector>
__global__ void __launch_bounds__(kTeamBlock, SegmentMinBlocks<Traits>::teams)
    segment_teams_kernel(TeamArgs<typename Traits::Elem> a) {
  using Acc = typename Traits::Acc;
  using ThreadAgent = RangeAgent<Traits, 1, TeamConfig::kUnroll, TeamConfig::kHint, kYVector>;
  using OctetAgent =
      RangeAgent<Traits, static_cast<int>(kOctet), TeamConfig::kUnroll, TeamConfig::kHint, kYVector>;
  constexpr unsigned kOctets = device::kWarpSize / kOctet;
  // Octet teams only in groups of one segment per lane (uniform): a group of one leaves the
  // warp's other lanes nothing to share.
  const std::size_t octet_max =
      a.group == kLaneGroup ? kOctetSegmentBytes / sizeof(typename Traits::Elem) : 0;
  const unsigned lane = threadIdx.x % device::kWarpSize;
  const std::size_t warp =
      (static_cast<std::size_t>(blockIdx.x) * kTeamBlock + threadIdx.x) / device::kWarpSize;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (kTeamBlock / device::kWarpSize);
  const std::size_t stride = warps * a.group;
  // Warp-uniform bounds: every lane stays in the loop for the warp's ballots and shuffles.
  for (std::size_t first = warp * a.group; first < a.num_segments; first += stride) {
    const std::size_t s = first + lane;
    SegmentRange range{0, 0, false};
    bool by_octet = false;
    bool by_warp = false;
    unsigned seen = 0;
    if (lane < a.group && s < a.num_segments) {
      range = a.rows(s);
      if (range.decreasing) seen |= kSawDecreasingPair;
      if (range.count >= a.long_min) {
        seen |= kSawLongSegment;
      } else if (range.count >= kThreadSegmentMax) {
        by_octet = range.count < octet_max;
        by_warp = !by_octet;
      } else {
        const Acc acc =
            range.count == 0
                ? Traits::empty()
                : read_range<Traits, ThreadAgent>(a.rows.data(a.x, s, range.begin),
                                                  y_at<Traits>(a.y, range.begin), 0, range.count,
                                                  0, 0, 1);
        store_result<Traits>(a.out, s, acc, range.count, a.finish, a.out_stride);
        store_segment_acc<Traits>(a.accs, s, acc, range.begin, range.count);
      }
    }
    if (a.flags != nullptr) {
      seen = __reduce_or_sync(device::kFullWarpMask, seen);
      if (lane == 0 && seen != 0) atomicOr(a.flags, seen);
    }
    // Octet t takes the t-th lowest pending segment of each round.
    for (unsigned pending = __ballot_sync(device::kFullWarpMask, by_octet); pending != 0;) {
      const unsigned octet = lane / kOctet;
      unsigned mine = pending;
      for (unsigned t = 0; t < octet; ++t) mine &= mine - 1;
      for (unsigned t = 0; t < kOctets; ++t) pending &= pending - 1;
      const int from = mine != 0 ? __ffs(mine) - 1 : 0;
      const std::size_t begin =
          __shfl_sync(device::kFullWarpMask, static_cast<unsigned long long>(range.begin), from);
      const std::size_t count =
          __shfl_sync(device::kFullWarpMask, static_cast<unsigned long long>(range.count), from);
      Acc acc = Traits::identity();
      if (mine != 0) {
        acc = read_range<Traits, OctetAgent>(a.rows.data(a.x, first + from, begin),
                                             y_at<Traits>(a.y, begin), 0, count, lane % kOctet,
                                             0, 1);
      }
      acc = reduce_team<Traits>(acc, kOctet);
      if (mine != 0 && lane % kOctet == 0) {
        store_result<Traits>(a.out, first + from, acc, count, a.finish, a.out_stride);
        store_segment_acc<Traits>(a.accs, first + from, acc, begin, count);
      }
    }
    read_segments_by_warp<Traits, kYVector>(a, first, __ballot_sync(device::kFullWarpMask, by_warp),
                                            range, lane);
  }
}

// ---- a warp per fixed-size row ---------------------------------------------------------------

//! Resident blocks per SM that warp_rows_kernel is bound to. Measured on the H200 (session 19,
//! 131,072 rows of 1,024 f32 against segment_teams_kernel's warp path, two runs each): bound to 3
//! (up to 80 registers, no spills for 4-byte types), var 138.8 / 139.6 -> 134.1 / 132.3 us, dot
//! 320.9 / 324.5 -> 245.1 / 244.8, norm 133.8 / 133.4 -> 131.4 / 130.9, logsumexp 132.6 / 133.1
//! -> 131.0 / 130.6; 32,768 rows of 4,096: sum 134.2 / 134.8 -> 127.6 / 127.6, dot 306.4 / 302.8
//! -> 250.2 / 249.2. Bound to 4 (64 registers), the spills cost more than the warps gained: var
//! 169.7 / 167.6 us (40 bytes of spills), dot along 4,096 261.6 / 260.0 (120 bytes).
inline constexpr int kWarpRowMinBlocks = 3;

//! Whether warp_rows_kernel reads Traits' rows; else segment_teams_kernel's warp path does.
//! Not for the 8-byte traits with their own team merge (var's Moments and logsumexp of f64),
//! which spill under the bound (28 and 100 bytes) where the teams kernel does not: 131,072 x
//! 1,024 f64 var 253.9 / 254.0 us with the teams kernel, 258.3 / 257.9 with this one; logsumexp
//! 519.9 / 519.2 against 536.0 / 530.5 (session 19).
template <class Traits>
inline constexpr bool kWarpRowsServe =
    !(has_team_reduce<Traits>::value && sizeof(typename Traits::Elem) == 8);

//! Fixed-size rows of at least kThreadSegmentMax elements, a warp per row, rows `warps` apart:
//! segment_teams_kernel's warp path (the same agent, so the same order of operations) without
//! its per-lane and octet paths. Unbound, ptxas gives it about as many registers as the teams
//! kernel (80 for f32 var's Moments, 98 for f32 dot); the bound (kWarpRowMinBlocks) is its own.
template <class Traits, bool kYVector>
__global__ void __launch_bounds__(kTeamBlock, kWarpRowMinBlocks)
    warp_rows_kernel(TeamArgs<typename Traits::Elem> a) {
  using WarpAgent =
      RangeAgent<Traits, device::kWarpSize, TeamConfig::kUnroll, TeamConfig::kHint, kYVector>;
  const unsigned lane = threadIdx.x % device::kWarpSize;
  const std::size_t warp =
      (static_cast<std::size_t>(blockIdx.x) * kTeamBlock + threadIdx.x) / device::kWarpSize;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (kTeamBlock / device::kWarpSize);
  const std::size_t size = a.rows.size;
  for (std::size_t s = warp; s < a.num_segments; s += warps) {  // warp-uniform
    const std::size_t begin = s * a.rows.pitch;
    typename Traits::Acc acc =
        read_range<Traits, WarpAgent>(a.x, a.y, begin, size, lane, 0, 1);
    acc = reduce_warp<Traits>(acc);
    if (lane == 0) store_result<Traits>(a.out, s, acc, size, a.finish, a.out_stride);
  }
}

// ---- ragged segments read as runs of elements ------------------------------------------------

//! Threads per block of segment_runs_kernel: 4 warps, whose shared memory (6.3 KB each for f32
//! sum) stays within the 48 KB a block may hold statically.
inline constexpr int kRunBlock = 128;

//! 16-byte vectors per lane and array in one round of segment_runs_kernel: 4 (a warp's round is
//! 2 KB of x), fewer where the round's running accumulators would pass 2 KB (argmin/argmax,
//! var and 16-bit elements), at least 1.
template <class Traits>
inline constexpr unsigned kRunVectors = [] {
  constexpr std::size_t per_vector = 32 * (16 / sizeof(typename Traits::Elem)) *
                                     sizeof(typename Traits::Acc);  // a vector per lane
  constexpr std::size_t fit = 2048 / per_vector;
  return static_cast<unsigned>(fit >= 4 ? 4 : fit >= 2 ? 2 : 1);
}();

//! Whether segment_runs_kernel serves Traits, measured against segment_teams_kernel on the H200
//! (session 16, ragged f32/f16/f64 over 2,097,152 heavy-tailed segments of mean 64 and
//! 1,048,576 uniform ones of 0..256, 2^27 elements):
//!   - dot, every type: 497.6 -> 372.0 us (f32), 371.3 -> 235.2 (f16), 1,072.8 -> 706.6 (f64):
//!     the teams kernel waits on two arrays' loads per segment;
//!   - 1-array ops of 2-byte elements whose rounds hold two vectors per lane: f16 sum 198.7 ->
//!     173.4 us (heavy), 134.1 -> 114.8 (uniform);
//!   - not f32 sum (226.8 -> 230.0 heavy, 164.9 -> 189.9 uniform: for 4-byte elements the teams
//!     kernel's loads already fill the memory pipes as well as the runs' rounds, which wait on
//!     each group's first round), nor f64 sum (411.7 -> 390.1 heavy, the uniform case not
//!     measured), nor where a round is one vector per lane (argmin/argmax's 16-byte and var's
//!     20-byte running accumulators: 536 and 532 us against 490 and 388 for f32, call 3).
template <class Traits>
inline constexpr bool kRunsServe =
    kRunVectors<Traits> >= 2 && (Traits::kArrays == 2 || sizeof(typename Traits::Elem) == 2);

//! Where vector v of a warp's round (0 .. 32 x vectors - 1) lies in its shared buffer. The
//! round is stored in load order (lane l's k-th copy is vector 32 k + l: each instruction reads
//! 512 contiguous bytes) and read in element order (lane l takes its `vectors` consecutive ones);
//! rotating each group of 8 vectors by v / 8 keeps both free of bank conflicts (the 8 lanes of a
//! quarter warp on 8 different 16-byte bank groups).
__device__ __forceinline__ unsigned run_slot(unsigned v) {
  return (v & ~7u) | ((v + (v >> 3)) & 7u);
}

//! One warp's shared memory in segment_runs_kernel.
template <class Traits>
struct RunShared {
  using T = typename Traits::Elem;
  using Acc = typename Traits::Acc;
  static constexpr unsigned kVectors = kRunVectors<Traits>;
  static constexpr unsigned kPerLane = kVectors * (16 / sizeof(T));  //!< elements per lane
  uint4 x[2][32 * kVectors];                                  //!< two rounds of x
  uint4 y[2][Traits::kArrays == 2 ? 32 * kVectors : 1];       //!< and of y (dot)
  unsigned heads[32];  //!< lane l's word: which of its kPerLane elements start a segment
  alignas(8) unsigned char offsets[33][8];  //!< the next group's offsets (int32 or int64)
  //! The round's running accumulators: element e of lane l (restarted at each head) at
  //! e x 32 + l, so that a lane's stores and a warp's meet no bank conflicts.
  alignas(16) unsigned char run_bytes[32 * kPerLane * sizeof(Acc)];
  //! What reaches each lane's first element from the last head before it.
  alignas(16) unsigned char reach_bytes[32 * sizeof(Acc)];
  __device__ Acc* run() { return reinterpret_cast<Acc*>(run_bytes); }
  __device__ Acc* reach() { return reinterpret_cast<Acc*>(reach_bytes); }
};

//! Ragged segments in groups of 32, read as runs: a warp takes 32 consecutive segments, and the
//! elements of those shorter than long_min (empty ones included), which lie one after another in
//! x, are read as one range in rounds of whole 16-byte vectors, copied to shared memory
//! (cp.async) while the round before is folded. So a group costs its bytes' worth of rounds, where
//! segment_teams_kernel waits on ~11 round trips of its teams (session 12: 2,485 GB/s on
//! heavy-tailed lengths of mean 64).
//!
//! Each lane folds kPerLane consecutive elements of a round in order, restarting at each head
//! (a segment's first element: each segment's lane marks it in `heads`), and keeps every running
//! accumulator in `run`: no branch per element. A segmented scan over the lanes (a lane with a
//! head starts anew) gives each lane what reaches its first element from the last head before
//! it (`reach`, with the rounds before). Then each segment's own lane, in the round where the
//! segment ends, takes the running accumulator at its last element, after what reached that
//! element's lane if the segment began before it, and at the group's end writes its result:
//! one coalesced store per group. Elements before the run's first head and after its end are
//! folded too (a vector's other elements, or stale shared memory) but reach no result.
//!
//! A group with long segments reads the runs between them (long_segments_kernel reads the long
//! ones). A group whose offsets decrease (invalid input; such a segment reads as empty, as in
//! segment_teams_kernel) is read a segment at a time by the whole warp. Groups differ in bytes
//! by orders of magnitude (heavy-tailed lengths): after its first group a warp takes the next one
//! not yet taken (a ticket), not a fixed share.
//!
//! Indices (argmin, argmax) count from the group's first offset while folding and are shifted to
//! each segment's start when written. Order of operations: fixed by where the segments lie in x
//! (the round and lane of each element), so every call gives the same bits.
//!
//! x (and y) must be 16-byte aligned: a vector that holds an element of the run lies in the
//! allocation that holds the element; the last one is cut at the run's end. The host takes
//! segment_teams_kernel otherwise, and for a list of tensors (whose segments are not one range).
template <class Traits>
__global__ void __launch_bounds__(kRunBlock, SegmentMinBlocks<Traits>::teams * 2)
    segment_runs_kernel(TeamArgs<typename Traits::Elem> a) {
  using T = typename Traits::Elem;
  using Acc = typename Traits::Acc;
  using Shared = RunShared<Traits>;
  using Vec = device::Vec16<T>;
  constexpr bool kDot = Traits::kArrays == 2;
  constexpr int kCount = Vec::kCount;
  constexpr unsigned kVectors = Shared::kVectors;
  constexpr int kPerLane = static_cast<int>(Shared::kPerLane);
  constexpr int kRound = 32 * kPerLane;
  constexpr unsigned kFull = device::kFullWarpMask;
  __shared__ Shared shared[kRunBlock / device::kWarpSize];
  Shared& sh = shared[threadIdx.x / device::kWarpSize];
  const unsigned lane = threadIdx.x % device::kWarpSize;
  const unsigned below = (1u << lane) - 1;  // the lanes before this one
  const std::size_t warp =
      (static_cast<std::size_t>(blockIdx.x) * kRunBlock + threadIdx.x) / device::kWarpSize;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (kRunBlock / device::kWarpSize);
  const std::size_t groups = (a.num_segments + kLaneGroup - 1) / kLaneGroup;
  sh.heads[lane] = 0;  // each round's readers clear their word again
  __syncwarp();

  // Warp-uniform bounds: every lane stays in the loop for the warp's ballots and shuffles.
  // A group's 33 offsets are copied to shared memory (cp.async, no registers) while the group
  // before is read, and its number is asked for (the ticket) one group earlier still, so a group
  // starts with its offsets at hand.
  const unsigned offset_bytes = a.rows.wide_offsets ? 8u : 4u;
  auto copy_offsets = [&](std::size_t g) {
    const std::size_t i = g * kLaneGroup + lane;
    if (g < groups && i <= a.num_segments) {
      const char* from = static_cast<const char*>(a.rows.offsets) + i * offset_bytes;
      auto copy = [&](unsigned slot, const char* source) {
        const auto to = static_cast<unsigned>(__cvta_generic_to_shared(sh.offsets[slot]));
        if (offset_bytes == 8) {
          device::copy_async<8>(to, source);
        } else {
          device::copy_async<4>(to, source);
        }
      };
      copy(lane, from);
      if (lane == 0 && i + kLaneGroup <= a.num_segments) copy(kLaneGroup, from + kLaneGroup * offset_bytes);
    }
    device::copies_commit();
  };
  auto offset_at = [&](unsigned slot) -> std::int64_t {
    return a.rows.wide_offsets ? *reinterpret_cast<const std::int64_t*>(sh.offsets[slot])
                               : *reinterpret_cast<const std::int32_t*>(sh.offsets[slot]);
  };
  std::size_t group = warp;
  copy_offsets(group);
  unsigned ticket = 0;  // the number of the group after the next one, once it is known
  if (lane == 0 && group < groups) ticket = atomicAdd(a.tickets, 1u);
  while (group < groups) {
    device::copies_wait<0>();
    __syncwarp();
    const std::size_t first = group * kLaneGroup;
    const std::size_t s = first + lane;
    const bool valid = s < a.num_segments;
    SegmentRange range{0, 0, false};
    if (valid) {
      const std::int64_t begin = offset_at(lane);
      const std::int64_t end = offset_at(lane + 1);
      range = end < begin ? SegmentRange{static_cast<std::size_t>(begin), 0, true}
                          : SegmentRange{static_cast<std::size_t>(begin),
                                         static_cast<std::size_t>(end - begin), false};
    }
    __syncwarp();
    const std::size_t next = warps + __shfl_sync(kFull, ticket, 0);
    copy_offsets(next);  // in flight while this group is read
    if (lane == 0 && next < groups) ticket = atomicAdd(a.tickets, 1u);
    const bool is_long = valid && range.count >= a.long_min;
    unsigned seen = (range.decreasing ? kSawDecreasingPair : 0u) | (is_long ? kSawLongSegment : 0u);
    seen = __reduce_or_sync(kFull, seen);
    if (lane == 0 && seen != 0 && a.flags != nullptr) atomicOr(a.flags, seen);
    const bool read_here = valid && !is_long;  // this kernel writes the result
    if (read_here && range.count == 0) {
      store_result<Traits>(a.out, s, Traits::empty(), 0, a.finish, a.out_stride);
    }

    if ((seen & kSawDecreasingPair) != 0) {  // uniform: the offsets are not one range
      read_segments_by_warp<Traits, true, true>(
          a, first, __ballot_sync(kFull, read_here && range.count > 0), range, lane);
      group = next;
      continue;
    }

    // Runs: the segments between two long ones (or the group's ends), their elements one range.
    const unsigned long_lanes = __ballot_sync(kFull, is_long);
    const unsigned filled = __ballot_sync(kFull, read_here && range.count > 0);
    const auto base = static_cast<std::int64_t>(
        __shfl_sync(kFull, static_cast<unsigned long long>(range.begin), 0));
    Acc result = Traits::identity();  // this lane's segment's, from the round where it ends
    for (unsigned rest = filled; rest != 0;) {
      const unsigned opening = __ffs(rest) - 1;  // the run's first segment with elements
      const unsigned after = long_lanes & ~((2u << opening) - 1);
      const unsigned run_lanes = (after != 0 ? (1u << (__ffs(after) - 1)) - 1 : ~0u) &
                                 ~((1u << opening) - 1);
      const unsigned run_filled = filled & run_lanes;
      rest &= ~run_lanes;
      const unsigned closing = 31 - __clz(run_filled);  // the run's last segment with elements
      const auto run_begin = static_cast<std::int64_t>(
          __shfl_sync(kFull, static_cast<unsigned long long>(range.begin), opening));
      const auto run_end = static_cast<std::int64_t>(__shfl_sync(
          kFull, static_cast<unsigned long long>(range.begin + range.count), closing));
      // Positions from `start`, the run's first 16-byte boundary: below 32 x long_min + kCount.
      const std::int64_t start = run_begin / kCount * kCount;
      const T* const x_run = a.x + start;
      const T* const y_run = kDot ? a.y + start : nullptr;
      const int hi = static_cast<int>(run_end - start);
      const bool mine = ((run_filled >> lane) & 1u) != 0;  // this lane's segment is in the run
      const int head_at = static_cast<int>(static_cast<std::int64_t>(range.begin) - start);
      const int last_at = head_at + static_cast<int>(range.count) - 1;

      // Round `round` (its first position) into buffer `buffer`: lane l's k-th copy is the
      // round's vector 32 k + l, cut at the run's end. Whole rounds take the short way: one
      // copy per vector from addresses set once per run.
      const T* const x_lane = x_run + lane * kCount;
      unsigned to[kVectors];  // this lane's vectors in buffer 0 (shared addresses)
#pragma unroll
      for (unsigned k = 0; k < kVectors; ++k)
        to[k] = static_cast<unsigned>(__cvta_generic_to_shared(&sh.x[0][run_slot(32 * k + lane)]));
      constexpr unsigned kBufferBytes = sizeof(sh.x[0]);
      const unsigned y_from_x = static_cast<unsigned>(reinterpret_cast<const char*>(&sh.y[0][0]) -
                                                      reinterpret_cast<const char*>(&sh.x[0][0]));
      auto copy_round = [&](int round, int buffer) {
        const unsigned shift = buffer != 0 ? kBufferBytes : 0u;
        if (round + kRound <= hi) {  // uniform
#pragma unroll
          for (unsigned k = 0; k < kVectors; ++k) {
            const std::ptrdiff_t at = round + static_cast<int>(32 * k * kCount);
            device::copy16_async(to[k] + shift, x_lane + at, 16);
            if constexpr (kDot) device::copy16_async(to[k] + shift + y_from_x, y_run + (x_lane - x_run) + at, 16);
          }
        } else {
#pragma unroll
          for (unsigned k = 0; k < kVectors; ++k) {
            const int at = round + static_cast<int>((32 * k + lane) * kCount);
            if (at < hi) {
              const unsigned bytes =
                  static_cast<unsigned>(min(hi - at, kCount)) * static_cast<unsigned>(sizeof(T));
              device::copy16_async(to[k] + shift, x_run + at, bytes);
              if constexpr (kDot) device::copy16_async(to[k] + shift + y_from_x, y_run + at, bytes);
            }
          }
        }
        device::copies_commit();
      };

      Acc carry = Traits::identity();  // what the rounds so far carry into the next
      copy_round(0, 0);
      int buffer = 0;
      for (int round = 0; round < hi; round += kRound, buffer ^= 1) {  // uniform
        const bool more = round + kRound < hi;
        if (more) copy_round(round + kRound, buffer ^ 1);  // in flight while this one folds
        if (mine && head_at >= round && head_at < round + kRound) {
          const int at = head_at - round;
          atomicOr(&sh.heads[at / kPerLane], 1u << (at % kPerLane));
        }
        if (more) {
          device::copies_wait<1>();
        } else {
          device::copies_wait<0>();
        }
        __syncwarp();
        const unsigned heads = sh.heads[lane];
        sh.heads[lane] = 0;
        const auto index = static_cast<std::size_t>(start - base + round + lane * kPerLane);

        // This lane's elements in order, restarting at each head; every running value kept.
        typename Traits::State state = Traits::start();
#pragma unroll
        for (unsigned j = 0; j < kVectors; ++j) {
          const Vec vx = Vec::from(sh.x[buffer][run_slot(lane * kVectors + j)]);
          Vec vy;
          if constexpr (kDot) vy = Vec::from(sh.y[buffer][run_slot(lane * kVectors + j)]);
#pragma unroll
          for (int c = 0; c < kCount; ++c) {
            const int e = static_cast<int>(j) * kCount + c;
            if (((heads >> e) & 1u) != 0) state = Traits::start();
            if constexpr (kDot) {
              Traits::update(state, vx.element[c], vy.element[c], index + e);
            } else {
              Traits::update(state, vx.element[c], vx.element[c], index + e);
            }
            sh.run()[e * 32 + lane] = Traits::finish(state, a.x);
          }
        }
        // Segmented inclusive scan over the lanes: a lane with a head starts anew.
        const unsigned head_lanes = __ballot_sync(kFull, heads != 0);
        const unsigned upto = head_lanes & (below | (1u << lane));
        const unsigned segment_start = upto != 0 ? 31 - __clz(upto) : 0u;
        Acc inclusive = Traits::finish(state, a.x);
#pragma unroll
        for (unsigned d = 1; d < device::kWarpSize; d *= 2) {
          const Acc earlier = device::shfl_up(inclusive, static_cast<int>(d));
          if (lane >= d && lane - d >= segment_start) inclusive = Traits::combine(earlier, inclusive);
        }
        // What reaches this lane's first element from the lanes and rounds before it.
        const Acc before = device::shfl_up(inclusive, 1);
        Acc reaching = before;
        if ((head_lanes & below) == 0) reaching = lane == 0 ? carry : Traits::combine(carry, before);
        sh.reach()[lane] = reaching;
        const Acc last = device::shfl_from(inclusive, device::kWarpSize - 1);
        carry = head_lanes != 0 ? last : Traits::combine(carry, last);
        __syncwarp();
        // A segment that ends in this round: the running value at its last element, after what
        // reached that element's lane when the segment began in an earlier lane or round.
        if (mine && last_at >= round && last_at < round + kRound) {
          const int at = last_at - round;
          const int holder = at / kPerLane;
          result = sh.run()[(at % kPerLane) * 32 + holder];
          if (head_at < round + holder * kPerLane) result = Traits::combine(sh.reach()[holder], result);
        }
        __syncwarp();  // the buffer, heads, running values and reach serve the next rounds
      }
    }
    if (((filled >> lane) & 1u) != 0) {
      const Acc acc = Traits::shifted(result, base - static_cast<std::int64_t>(range.begin));
      store_result<Traits>(a.out, s, acc, range.count, a.finish, a.out_stride);
    }
    group = next;
  }
  device::copies_wait<0>();  // the last copy of offsets (of no group) has landed before the warp leaves
  // The last warp to finish (every other one has taken its last ticket) zeroes the counters.
  if (lane == 0) {
    if (atomicAdd(a.tickets + 1, 1u) == warps - 1) {
      atomicExch(a.tickets, 0u);
      atomicExch(a.tickets + 1, 0u);
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
  unsigned vectors;          // vectors per row: at most team x per_thread (fewer: some unread)
  void* out;
  std::size_t out_stride;
  Finish finish;
};

//! Rows of `vectors` whole 16-byte vectors, each on a 16-byte boundary, read by teams of `team`
//! lanes with `per_thread` vector slots each (team x per_thread the power of two at or above
//! `vectors`; slots past the row's end are not read). A pass gives every team
//! kVectorRowLoads / per_thread rows, `teams` apart, so that one load instruction of a warp reads
//! neighbouring rows: 512 contiguous bytes when the row fills its slots. Each lane issues its
//! kVectorRowLoads loads before it uses the first; then each row's lanes fold their vectors and
//! meet in a butterfly. kPartial: rows that do not fill their slots, whose lanes check each slot
//! and fold vector by vector; rows that do (kPartial false) fold a lane's vectors as one tile
//! (traits that fold tiles), with no check. Two kernels, not one: the checks cost rows of 128
//! floats 7% (sum 139.0 / 135.4 -> 147.5 / 147.7 us) and argmax along rows of 32 9% (6 resident
//! blocks per SM -> 5), session 19.
template <class Traits, bool kPartial>
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
  auto in_row = [&](int k) { return !kPartial || vector_of(k) < a.vectors; };
  // Grid-uniform bounds: every lane reaches the butterflies.
  for (std::size_t base = 0; base < a.rows; base += rows_per_pass * teams) {
    uint4 rx[kLoads];
    uint4 ry[kDot ? kLoads : 1];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const std::size_t row = base + (k >> a.per_thread_log2) * teams + team_id;
      if (row < a.rows && in_row(k)) {
        const std::size_t at = row * a.pitch + vector_of(k) * Vec::kCount;
        rx[k] = device::load16<TeamConfig::kHint>(a.x + at);
        if constexpr (kDot) ry[k] = device::load16<TeamConfig::kHint>(a.y + at);
      }
    }
    // Row j of the pass: its lane's vectors folded into `state` by `fold`, then the team meets.
    auto finish_row = [&](int j, auto fold) {
      const std::size_t row = base + j * teams + team_id;
      const bool valid = row < a.rows;
      typename Traits::State state = Traits::start();
      if (valid) fold(state);
      Acc acc = valid ? Traits::finish(state, a.x + row * a.pitch) : Traits::identity();
      acc = reduce_team<Traits>(acc, team);
      if (valid && rank == 0) {
        const std::size_t slots = kPartial ? a.vectors : team << a.per_thread_log2;
        const std::size_t count = slots * Vec::kCount;
        store_result<Traits>(a.out, row, acc, count, a.finish, a.out_stride);
      }
    };
    // A lane's vectors of row j one at a time (those in the row).
    auto rows_by_vector = [&] {
#pragma unroll
      for (int j = 0; j < kLoads; ++j) {
        if (static_cast<unsigned>(j) >= rows_per_pass) break;  // uniform
        finish_row(j, [&](typename Traits::State& state) {
#pragma unroll
          for (int k = 0; k < kLoads; ++k) {
            if ((k >> a.per_thread_log2) != j || !in_row(k)) continue;
            const Vec vx = Vec::from(rx[k]);
            const Vec vy = kDot ? Vec::from(ry[kDot ? k : 0]) : Vec{};
            Traits::update_vector(state, vx.element, vy.element, vector_of(k) * Vec::kCount);
          }
        });
      }
    };
    if constexpr (folds_tiles<Traits>::value && !kPartial) {
      // A lane's vectors of a row in one update_vectors call (the plan gives each lane up to
      // four): a template per vectors-per-lane count, so the registers are indexed by constants.
      auto rows_of = [&](auto per_thread) {
        constexpr int kPer = decltype(per_thread)::value;
#pragma unroll
        for (int j = 0; j < kLoads / kPer; ++j) {
          finish_row(j, [&](typename Traits::State& state) {
            T elements[kPer][Vec::kCount];
#pragma unroll
            for (int u = 0; u < kPer; ++u) {
              const Vec vx = Vec::from(rx[j * kPer + u]);
#pragma unroll
              for (int e = 0; e < Vec::kCount; ++e) elements[u][e] = vx.element[e];
            }
            Traits::update_vectors(state, elements);
          });
        }
      };
      static_assert(kLoads == 4, "per_thread_log2 is 0, 1 or 2");
      if (a.per_thread_log2 == 0) {
        rows_of(std::integral_constant<int, 1>{});
      } else if (a.per_thread_log2 == 1) {
        rows_of(std::integral_constant<int, 2>{});
      } else {
        rows_of(std::integral_constant<int, 4>{});
      }
    } else {
      rows_by_vector();
    }
  }
}

// ---- tiles of contiguous short rows, staged in shared memory ---------------------------------

template <class T>
struct TileRowArgs {
  const T* x;
  const T* y;  // dot only, at x's offset in a 16-byte line
  std::size_t rows;
  std::size_t size;       // elements per row, 1 .. kOctetSegmentBytes / sizeof(T); rows contiguous
  std::size_t tile_rows;  // rows per tile (FixedSegmentPlan::tile_rows)
  unsigned team_log2;     // lanes per row: 1 << team_log2
  unsigned team_stride_log2;  // rows between a warp's teams: 1 << team_stride_log2 (0..3)
  void* out;
  std::size_t out_stride;
  Finish finish;
};

//! Contiguous rows shorter than kOctetSegmentBytes that are not vector rows (a length that is
//! not a whole number of 16-byte vectors, or a base that is not on a 16-byte boundary): rows of
//! 50 floats read 733 GB/s a warp each and 2,513 by the teams kernel's octets, whose lanes load
//! whatever the row's alignment leaves them, and 4,084-4,164 here (H200, session 20; rows of 33
//! 3,963-4,023, of 7 3,606-3,704). Here the rows are what they are in memory, one range: a
//! block takes `tile_rows` whole rows at a time and loads the 16-byte lines
//! that hold them with the whole-array kernel's pattern (each thread kTileRowLoads vectors,
//! kTeamThreads apart, all issued before the first is stored), the partial lines at the tile's
//! two ends element by element (so no byte outside the rows is read), into shared memory in the
//! lines' own layout. Then a team of lanes per row folds the row there, lane r taking elements
//! r, r + team, ... in order, and the team meets in a butterfly (reduce_team). The next tile's
//! loads are issued before this tile is folded, so the fold hides behind them, and every op folds
//! kCount elements at a time (update_vector; argmin/argmax update_vector_found): along rows of 50
//! f32, var 2,150 -> 2,780 GB/s, logsumexp 2,300 -> 3,050, sum 4,010 -> 4,084-4,164 (session 20).
//! The octets, which fold whole vectors from registers, are faster for the long folds along longer
//! rows (f32 var along 250: 2,526 here, 3,241 there; session 22), so the planner sends the
//! statistics that fold tiles here only under kLongFoldTileRowBytes (segment_plan.hpp).
//! argmin/argmax, which folded one element at a time until session 22, now find the winner among
//! kCount elements in registers: f32 argmax along 65 2,328 -> 2,913 GB/s, along 250 2,199 -> 2,435
//! (octets 2,340), f16 along 201 1,025 -> 1,922 (session 22), so they take tiles up to
//! kOctetSegmentBytes. f32 and f64 var and its kin fold a row in two passes over the tile instead
//! (kTileRowsTwoPass, MomentsTraits::team_row; session 26).
//!
//! Order of operations: fixed by the row's length and the plan (team size from the tile's rows),
//! not by the row's alignment or the grid.
template <class Traits, bool kInterleave>
__global__ void __launch_bounds__(kTeamBlock) tile_rows_kernel(TileRowArgs<typename Traits::Elem> a) {
  using T = typename Traits::Elem;
  using Acc = typename Traits::Acc;
  using Vec = device::Vec16<T>;
  constexpr bool kDot = Traits::kArrays == 2;
  constexpr int kCount = Vec::kCount;
  constexpr int kLoads = static_cast<int>(kTileRowLoads);
  constexpr int kVectors = kTeamBlock * kLoads;  // 16-byte lines per tile and array
  __shared__ uint4 tile_x[kVectors];
  __shared__ uint4 tile_y[kDot ? kVectors : 1];
  const T* const sx = reinterpret_cast<const T*>(tile_x);
  const T* const sy = reinterpret_cast<const T*>(tile_y);
  const unsigned team = 1u << a.team_log2;
  const unsigned rank = threadIdx.x & (team - 1);
  const unsigned team_id = threadIdx.x >> a.team_log2;
  const unsigned teams = kTeamBlock >> a.team_log2;
  // kInterleave: the team's row in each round of `teams` rows, where a warp's teams take rows
  // 1 << stride apart, so that a row length near a multiple of the 32 banks does not put them on
  // the same banks (tile_team_stride_log2), and a round's valid rows go to the fewest warps
  // (tile_round_slot, segment_plan.hpp). Worked out once for a full round and for the last round
  // of a whole tile (every tile but perhaps the last): a tile is often one round (rows of 50 f32:
  // 81 rows for 128 teams), and the walk in tile_round_slot per tile cost f32 sum along 50
  // 4,179 -> 3,608 GB/s (session 24).
  unsigned full_slot = team_id;
  unsigned tail_slot = team_id;
  unsigned tail_rows = 0;
  if constexpr (kInterleave) {
    const unsigned warp = threadIdx.x >> 5;
    const unsigned in_warp = (threadIdx.x & 31) >> a.team_log2;
    full_slot = tile_round_slot(warp, in_warp, teams, a.team_log2, a.team_stride_log2);
    tail_rows = static_cast<unsigned>(a.tile_rows % teams);
    if (tail_rows != 0)
      tail_slot = tile_round_slot(warp, in_warp, tail_rows, a.team_log2, a.team_stride_log2);
    else
      tail_slot = full_slot;
  }
  const std::size_t tiles = (a.rows + a.tile_rows - 1) / a.tile_rows;
  // Tile t: its first row, its rows, and `lead`, how many elements before its first one the
  // 16-byte line that holds it starts. Positions in the tile count from that line: the tile's
  // elements are at [lead, lead + rows x size).
  struct Tile {
    std::size_t first_row;
    std::size_t rows;
    int lead;
    int stop;
    int lines;
  };
  auto tile_at = [&](std::size_t t) {
    Tile tile;
    tile.first_row = t * a.tile_rows;
    tile.rows = a.rows - tile.first_row < a.tile_rows ? a.rows - tile.first_row : a.tile_rows;
    tile.lead = static_cast<int>(
        (reinterpret_cast<std::uintptr_t>(a.x + tile.first_row * a.size) % 16) / sizeof(T));
    tile.stop = tile.lead + static_cast<int>(tile.rows * a.size);
    tile.lines = (tile.stop + kCount - 1) / kCount;
    return tile;
  };
  uint4 rx[kLoads];
  uint4 ry[kDot ? kLoads : 1];
  // Thread's lines of tile t into registers: whole lines as 16-byte loads, the lines cut by the
  // tile's ends element by element.
  auto load = [&](const Tile& tile) {
    const T* const x0 = a.x + tile.first_row * a.size;
    const T* const y0 = kDot ? a.y + tile.first_row * a.size : nullptr;
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const int v = static_cast<int>(threadIdx.x) + k * kTeamBlock;
      const int p = v * kCount - tile.lead;  // the line's first element, from x0
      if (v < tile.lines) {
        if (p >= 0 && p + tile.lead + kCount <= tile.stop) {
          rx[k] = device::load16<TeamConfig::kHint>(x0 + p);
          if constexpr (kDot) ry[k] = device::load16<TeamConfig::kHint>(y0 + p);
        } else {
          Vec vx{};
          Vec vy{};
#pragma unroll
          for (int c = 0; c < kCount; ++c) {
            if (p + c >= 0 && p + c + tile.lead < tile.stop) {
              vx.element[c] = x0[p + c];
              if constexpr (kDot) vy.element[c] = y0[p + c];
            }
          }
          memcpy(&rx[k], &vx, 16);
          if constexpr (kDot) memcpy(&ry[k], &vy, 16);
        }
      }
    }
  };
  const auto size = static_cast<unsigned>(a.size);
  // A lane's elements of the row at `from`: rank, rank + team, ..., kCount at a time through
  // update_vector (one merge of Moments, one rescale of logsumexp per kCount elements, where
  // one at a time each element's update waits on the one before), then the rest one at a time.
  // argmin/argmax through update_vector_found, which finds the winner among the kCount
  // elements, `team` apart, at once (their update_vector keeps a vector for finish() to read
  // again at x + index, which is not where these elements are).
  auto fold_row = [&](typename Traits::State& state, unsigned from) {
    unsigned i = rank;
    for (; i + (kCount - 1) * team < size; i += kCount * team) {
      T xs[kCount];
      T ys[kCount];
#pragma unroll
      for (int c = 0; c < kCount; ++c) {
        xs[c] = sx[from + i + c * team];
        ys[c] = kDot ? sy[from + i + c * team] : xs[c];
      }
      if constexpr (is_arg_traits<Traits>::value) {
        Traits::update_vector_found(state, xs, i, team);
      } else {
        Traits::update_vector(state, xs, ys, i);
      }
    }
    for (; i < size; i += team) {
      const T xi = sx[from + i];
      const T yi = kDot ? sy[from + i] : xi;
      Traits::update(state, xi, yi, i);
    }
  };
  std::size_t t = blockIdx.x;
  if (t < tiles) load(tile_at(t));
  while (t < tiles) {  // block-uniform
    const Tile tile = tile_at(t);
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const int v = static_cast<int>(threadIdx.x) + k * kTeamBlock;
      if (v < tile.lines) {
        tile_x[v] = rx[k];
        if constexpr (kDot) tile_y[v] = ry[k];
      }
    }
    __syncthreads();
    // The next tile's loads are in flight while this one is folded.
    const std::size_t next = t + gridDim.x;
    if (next < tiles) load(tile_at(next));
    // Each team its rows, in warp-uniform rounds: every lane reaches the butterfly.
    for (std::size_t round = 0; round < tile.rows; round += teams) {
      std::size_t j = round + team_id;  // the row in the tile
      if constexpr (kInterleave) {
        const std::size_t left = tile.rows - round;
        j = round + (left >= teams       ? full_slot
                     : left == tail_rows ? tail_slot
                                         : tile_round_slot(threadIdx.x >> 5,
                                                           (threadIdx.x & 31) >> a.team_log2,
                                                           static_cast<unsigned>(left),
                                                           a.team_log2, a.team_stride_log2));
      }
      const bool valid = j < tile.rows;
      const unsigned from = static_cast<unsigned>(tile.lead) + static_cast<unsigned>(j) * size;
      const std::size_t row = tile.first_row + j;
      Acc acc;
      if constexpr (kTileRowsTwoPass<Traits>) {
        acc = Traits::template team_row<kCount>(sx + from, valid ? size : 0u, rank, team);
      } else {
        typename Traits::State state = Traits::start();
        if (valid) fold_row(state, from);
        acc = valid ? Traits::finish(state, a.x + row * a.size) : Traits::identity();
        acc = reduce_team<Traits>(acc, team);
      }
      if (valid && rank == 0) store_result<Traits>(a.out, row, acc, a.size, a.finish, a.out_stride);
    }
    __syncthreads();  // the tile's shared memory serves the next tile
    t = next;
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
  Finish finish;
};

//! Block-sized work units (segment, member) in turn; a group's last member folds its partials.
template <class Traits, class Config, bool kYVector>
__global__ void __launch_bounds__(Config::kBlock, SegmentMinBlocks<Traits>::blocks)
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
    if (last && threadIdx.x == 0) store_result<Traits>(a.out, s, acc, a.size, a.finish, a.out_stride);
    __syncthreads();  // warp_slots and the ticket's flag serve the next unit
  }
}

// ---- ragged segments of at least kBlockSegmentMin elements -----------------------------------

template <class T>
struct LongArgs {
  const T* x;
  const T* y;  // dot only
  std::size_t num_segments;
  SegmentRows rows;            // CSR
  void* out;                   // num_segments x Traits::Out
  std::size_t long_min;        // the segments this kernel reads: at least this long
  void* partials;              // 2 x gridDim.x Traits::Acc (SliceGroup)
  unsigned int* counters;      // gridDim.x group counters, zero on entry and exit
  unsigned int* grid_counter;  // the workspace's block counter, zero on entry and exit
  unsigned int* flags;         // set by segment_teams_kernel; zero on exit
  Finish finish;
  unsigned known_flags = 0;     // a list: kFlagsKnown | the flags, which the host knows; else 0
  void* accs = nullptr;         // a list's total: each segment's Traits::Acc (TeamArgs)
  void* total = nullptr;        // a list's total: its one result, folded from accs by the last block
  std::uint64_t total_count = 0;  // elements in the list
};

//! The last s in [0, num_segments) with offsets[s] <= value, for nondecreasing offsets with
//! offsets[0] <= value: a search of kBlock-way steps (each thread probes one offset), so a few
//! rounds of loads instead of log2(num_segments) dependent ones.
template <int kBlock>
__device__ __forceinline__ std::size_t block_last_at_or_below(const SegmentRows& rows,
                                                              std::size_t num_segments,
                                                              std::int64_t value) {
  std::size_t low = 0;              // offsets[low] <= value
  std::size_t high = num_segments;  // the answer is below high
  while (high - low > 1) {
    const std::size_t step = (high - low + kBlock - 1) / kBlock;
    const std::size_t probe = low + threadIdx.x * step;
    const bool at_or_below = probe < high && rows.offset(probe) <= value;
    // Nondecreasing offsets: the probes at or below value are a prefix, thread 0's among them.
    const unsigned count = static_cast<unsigned>(__syncthreads_count(at_or_below));
    low += (count - 1) * step;
    high = low + step < high ? low + step : high;
  }
  return low;
}

//! Block b reads the pieces of long segments in its slice of [offsets[0], offsets[num_segments]):
//! a segment within the slice whole, written at once; a piece of one that crosses the slice's
//! boundaries as a partial of the segment's SliceGroup, whose last member folds and writes.
//! If the offsets decrease somewhere, the slices mean nothing: each block then reads whole long
//! segments, num_segments / gridDim.x of them.
//! At least two blocks per SM: left to itself ptxas gave the f32 sum 81 registers, one 512-thread
//! block per SM, and 1,000 ragged segments of 2^17 f32 read at 2,584 GB/s on the H200 (2bd2c02),
//! against 3,824 for the same rows as fixed-size segments (34 registers, 3 blocks per SM).
inline constexpr int kLongMinBlocks = 2;
//! Segments each thread of long_segments_kernel looks at per round of its scan of a slice's
//! offsets (their loads in flight together). Measured on the H200 (session 17), the heavy-tailed
//! ragged case (2,097,152 segments of mean 64, ~7,900 per slice, 30% of 2^27 f32 elements in
//! long segments): with one, 16 dependent rounds per block and the kernel 72.4 us (DRAM 52%);
//! with four, 66.3 us and the whole f32 sum 228.5 -> 223 us. (More slices per block, to even out
//! the blocks' loads, made it slower: each slice's search and partial rounds cost ~7 us.)
//! The order a block reads its pieces in matters: listed as shared-memory atomics came (session
//! 17), f64 dot on the same case took 780-785 us (the long kernel 295.7 us, DRAM 47%, with
//! kLongScan 4 or 1); listed in segment order, 709-711 us, e271c6c's figure (session 18; f16 sum
//! lost 3%).
inline constexpr int kLongScan = 4;

template <class Traits, class Config, bool kYVector>
__global__ void __launch_bounds__(Config::kBlock, kLongMinBlocks)
    long_segments_kernel(LongArgs<typename Traits::Elem> a) {
  using Acc = typename Traits::Acc;
  constexpr int kBlock = Config::kBlock;
  __shared__ Acc warp_slots[kBlock / device::kWarpSize];
  __shared__ unsigned flags;
  __shared__ std::size_t listed[kLongScan * kBlock];
  __shared__ unsigned listed_count;
  if (threadIdx.x == 0)
    flags = (a.known_flags & kFlagsKnown) != 0
                ? a.known_flags & ~kFlagsKnown
                : cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*a.flags).load(
                      cuda::memory_order_relaxed);
  __syncthreads();
  // Every block read the same zero: nothing to read, nothing to reset, unless a list's total
  // is still to be folded.
  if (flags == 0 && a.total == nullptr) return;

  if ((flags & kSawDecreasingPair) != 0) {
    for (std::size_t s = blockIdx.x; s < a.num_segments; s += gridDim.x) {
      const SegmentRange range = a.rows(s);
      if (range.count < a.long_min) continue;
      const Acc acc = block_reads_range<Traits, Config, kYVector>(
          a.rows.data(a.x, s, range.begin), y_at<Traits>(a.y, range.begin), 0, range.count, 0, 1,
          warp_slots);
      if (threadIdx.x == 0) {
        store_result<Traits>(a.out, s, acc, range.count, a.finish);
        store_segment_acc<Traits>(a.accs, s, acc, range.begin, range.count);
      }
      __syncthreads();  // warp_slots serve the next segment
    }
  } else if ((flags & kSawLongSegment) != 0) {
    const std::int64_t base = a.rows.offset(0);
    const Slices slices{base, static_cast<std::uint64_t>(a.rows.offset(a.num_segments) - base),
                        gridDim.x};
    const unsigned block = blockIdx.x;
    const std::int64_t lo = slices.begin(block);
    const std::int64_t hi = slices.begin(block + 1);
    Acc* partials = static_cast<Acc*>(a.partials);
    if (threadIdx.x == 0) {  // overwritten by this block's pieces, if it has any (SliceGroup)
      store_partial(partials + 2 * block, Traits::identity());
      store_partial(partials + 2 * block + 1, Traits::identity());
    }
    // The segments that overlap [lo, hi), from the one that holds lo on, kLongScan x kBlock at
    // a time: each thread's kLongScan offset pairs are loaded at once.
    for (std::size_t chunk = block_last_at_or_below<kBlock>(a.rows, a.num_segments, lo);;
         chunk += kLongScan * kBlock) {
      std::int64_t begins[kLongScan];
      std::int64_t ends[kLongScan];
#pragma unroll
      for (int j = 0; j < kLongScan; ++j) {
        const std::size_t s = chunk + j * kBlock + threadIdx.x;
        begins[j] = s < a.num_segments ? a.rows.offset(s) : hi;
        ends[j] = s < a.num_segments ? a.rows.offset(s + 1) : hi;
      }
      // The pieces are listed in segment order (j, then the thread), so that the block reads
      // them from low addresses to high: a warp's ballot per j, then one warp's exclusive scan
      // of the kLongScan x kWarps counts (at most 64, two per lane).
      constexpr unsigned kWarps = kBlock / device::kWarpSize;
      static_assert(kLongScan * kWarps <= 64, "two counts per lane of the scan");
      __shared__ unsigned list_base[kLongScan * kWarps];
      const unsigned lane = threadIdx.x % device::kWarpSize;
      const unsigned warp = threadIdx.x / device::kWarpSize;
      unsigned takes[kLongScan];
      bool more = true;  // every segment here starts before hi, so the next one may too
#pragma unroll
      for (int j = 0; j < kLongScan; ++j) {
        const std::size_t s = chunk + j * kBlock + threadIdx.x;
        const bool inside = s < a.num_segments;
        takes[j] = __ballot_sync(device::kFullWarpMask,
                                 inside && reads_piece(begins[j], ends[j], lo, hi, a.long_min));
        if (lane == 0) list_base[j * kWarps + warp] = static_cast<unsigned>(__popc(takes[j]));
        more = more && inside && begins[j] < hi;
      }
      __syncthreads();
      if (warp == 0) {
        const unsigned first = 2 * lane;
        const unsigned c0 = first < kLongScan * kWarps ? list_base[first] : 0u;
        const unsigned c1 = first + 1 < kLongScan * kWarps ? list_base[first + 1] : 0u;
        unsigned sum = c0 + c1;
#pragma unroll
        for (int d = 1; d < device::kWarpSize; d *= 2) {
          const unsigned other = device::shfl_up(sum, d);
          if (lane >= static_cast<unsigned>(d)) sum += other;
        }
        if (first < kLongScan * kWarps) list_base[first] = sum - c0 - c1;
        if (first + 1 < kLongScan * kWarps) list_base[first + 1] = sum - c1;
        if (lane == device::kWarpSize - 1) listed_count = sum;
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kLongScan; ++j) {
        if ((takes[j] >> lane) & 1u)
          listed[list_base[j * kWarps + warp] + __popc(takes[j] & ((1u << lane) - 1u))] =
              chunk + j * kBlock + threadIdx.x;
      }
      more = __syncthreads_and(more);
      const unsigned count = listed_count;
      for (unsigned i = 0; i < count; ++i) {
        const std::size_t segment = listed[i];
        const std::int64_t begin = a.rows.offset(segment);
        const std::int64_t end = a.rows.offset(segment + 1);
        const std::int64_t from = begin > lo ? begin : lo;
        const std::int64_t to = end < hi ? end : hi;
        Acc acc = block_reads_range<Traits, Config, kYVector>(
            a.rows.data(a.x, segment, static_cast<std::size_t>(begin)),
            y_at<Traits>(a.y, static_cast<std::size_t>(begin)),
            static_cast<std::size_t>(from - begin), static_cast<std::size_t>(to - from), 0, 1,
            warp_slots);
        acc = Traits::shifted(acc, from - begin);  // indices relative to the segment
        const SliceGroup group = SliceGroup::of(slices, begin, end);
        bool last = group.whole();
        if (!last) {
          if (threadIdx.x == 0) store_partial(partials + group.slot(block), acc);
          last = last_member_folds<Traits, kBlock>(acc, partials + group.fold_first(),
                                                   group.fold_count(), a.counters + group.first,
                                                   group.members(), warp_slots);
        }
        if (last && threadIdx.x == 0) {
          store_result<Traits>(a.out, segment, acc, static_cast<std::size_t>(end - begin), a.finish);
          store_segment_acc<Traits>(a.accs, segment, acc, static_cast<std::size_t>(begin),
                                    static_cast<std::size_t>(end - begin));
        }
        __syncthreads();  // warp_slots and the ticket's flag serve the next piece
      }
      __syncthreads();  // every thread has read listed_count and `listed` before the next chunk
      if (!more) break;
    }
  }

  // Every block has read the flags (thread 0, first thing): the last block to get here clears
  // them for the next call, and folds a list's total. Its ticket's acquire follows every other
  // block's release, which follows the accumulators that block's thread 0 stored; the teams
  // kernel's were stored before this kernel began.
  __shared__ bool last_block;
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*a.grid_counter);
    last_block = counter.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
    if (last_block) {
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*a.flags).store(
          0u, cuda::memory_order_relaxed);
      counter.store(0u, cuda::memory_order_relaxed);
    }
  }
  if (a.total == nullptr) return;  // uniform
  __syncthreads();
  if (!last_block) return;
  const Acc total = fold_partials<Traits, kBlock>(static_cast<const Acc*>(a.accs),
                                                  static_cast<unsigned>(a.num_segments),
                                                  warp_slots);
  if (threadIdx.x == 0)
    Traits::store(a.total, 0, a.total_count == 0 ? Traits::empty() : total, a.total_count,
                  a.finish);
}

// ---- launchers ----------------------------------------------------------------------------------

template <class Traits, bool kYVector>
struct SegmentTeamsTag {};
template <class Traits, bool kYVector>
struct SegmentBlocksTag {};
template <class Traits, bool kYVector>
struct LongSegmentsTag {};
template <class Traits, bool kPartial>
struct VectorRowsTag {};
template <class Traits, bool kInterleave>
struct TileRowsTag {};
template <class Traits, bool kYVector>
struct WarpRowsTag {};
template <class Traits>
struct SegmentRunsTag {};

//! The kernels of Traits (y read as vectors or not) and what the GPU holds of each.
template <class Traits, bool kYVector>
struct SegmentKernels {
  using BlockConfig = typename ConfigFor<Traits>::type;
  static constexpr auto teams = segment_teams_kernel<Traits, kYVector>;
  static constexpr auto warp_rows = warp_rows_kernel<Traits, kYVector>;
  static constexpr auto blocks = segment_blocks_kernel<Traits, BlockConfig, kYVector>;
  static constexpr auto long_segments = long_segments_kernel<Traits, BlockConfig, kYVector>;

  static SegmentCapacity capacity(int device) {
    SegmentCapacity c;
    c.team_blocks = resident_grid<SegmentTeamsTag<Traits, kYVector>>(teams, kTeamBlock, device);
    c.team_block_warps = kTeamBlock / device::kWarpSize;
    c.warp_row_blocks =
        kWarpRowsServe<Traits>
            ? resident_grid<WarpRowsTag<Traits, kYVector>>(warp_rows, kTeamBlock, device)
            : c.team_blocks;
    if constexpr (kYVector) {
      c.vector_row_blocks = resident_grid<VectorRowsTag<Traits, false>>(
          vector_rows_kernel<Traits, false>, kTeamBlock, device);
      c.partial_vector_row_blocks = resident_grid<VectorRowsTag<Traits, true>>(
          vector_rows_kernel<Traits, true>, kTeamBlock, device);
      c.tile_row_blocks =
          resident_grid<TileRowsTag<Traits, false>>(tile_rows_kernel<Traits, false>, kTeamBlock,
                                                     device);
    }
    c.blocks =
        resident_grid<SegmentBlocksTag<Traits, kYVector>>(blocks, BlockConfig::kBlock, device);
    c.block_tile_vectors = BlockConfig::kTile;
    c.long_blocks = resident_grid<LongSegmentsTag<Traits, kYVector>>(long_segments,
                                                                     BlockConfig::kBlock, device);
    return c;
  }

  static void fixed(const typename Traits::Elem* x, const typename Traits::Elem* y,
                    std::size_t num_segments, std::size_t size, std::size_t pitch, void* out,
                    std::size_t out_stride, const WorkspaceView& ws, cudaStream_t stream,
                    Finish finish) {
    using T = typename Traits::Elem;
    // Only the kernels that read y as vectors take the vector rows (x and y both aligned).
    const bool aligned_rows = kYVector && operands_aligned<Traits>(x, y) &&
                              pitch * sizeof(T) % 16 == 0;
    // Traits that fold tiles (Moments, logsumexp) merge fewer lanes when each lane holds
    // four vectors of a row: one update_vectors and a team of vectors / 4 lanes per row.
    const unsigned per_thread_log2 = folds_tiles<Traits>::value ? 2 : 0;
    // Only they take tiles of rows, too (one offset in a line for x and y).
    const bool contiguous_rows = kYVector && pitch == size;
    // Longer such rows go to the teams kernel's octets (kTileRowBytesMax).
    const FixedSegmentPlan plan =
        plan_fixed_segments(num_segments, size, sizeof(T), capacity(ws.device), kMaxGrid,
                            aligned_rows, per_thread_log2, contiguous_rows,
                            kTileRowBytesMax<Traits>);
    if constexpr (kYVector) {
      if (plan.path == SegmentPath::tile_rows) {
        TileRowArgs<T> args{x,   y,   num_segments, size, plan.tile_rows, plan.team_log2,
                            0,   out, out_stride,   finish};
        // The planner's stride serves the ops that interleave (kTileInterleaves), with their
        // own instantiation's resident grid; the others fold consecutive rows.
        if constexpr (kTileInterleaves<Traits>) {
          if (plan.team_stride_log2 > 0) {
            args.team_stride_log2 = plan.team_stride_log2;
            const unsigned resident = resident_grid<TileRowsTag<Traits, true>>(
                tile_rows_kernel<Traits, true>, kTeamBlock, ws.device);
            const std::size_t tiles = (num_segments + plan.tile_rows - 1) / plan.tile_rows;
            const auto grid = static_cast<unsigned>(
                std::max<std::size_t>(1, std::min<std::size_t>(tiles, resident)));
            launch_kernel<TileRowsTag<Traits, true>>(tile_rows_kernel<Traits, true>, grid,
                                                     kTeamBlock, stream, ws.device,
                                                     "launch of reducelab tile_rows_kernel", args);
            return;
          }
        }
        launch_kernel<TileRowsTag<Traits, false>>(tile_rows_kernel<Traits, false>, plan.grid,
                                                  kTeamBlock, stream, ws.device,
                                                  "launch of reducelab tile_rows_kernel", args);
        return;
      }
      if (plan.path == SegmentPath::vector_rows) {
        const VectorRowArgs<T> args{x,
                                    y,
                                    num_segments,
                                    pitch,
                                    plan.team_log2,
                                    plan.per_thread_log2,
                                    static_cast<unsigned>(size * sizeof(T) / 16),
                                    out,
                                    out_stride,
                                    finish};
        if (plan.partial_rows) {
          launch_kernel<VectorRowsTag<Traits, true>>(vector_rows_kernel<Traits, true>, plan.grid,
                                                     kTeamBlock, stream, ws.device,
                                                     "launch of reducelab vector_rows_kernel",
                                                     args);
        } else {
          launch_kernel<VectorRowsTag<Traits, false>>(vector_rows_kernel<Traits, false>,
                                                      plan.grid, kTeamBlock, stream, ws.device,
                                                      "launch of reducelab vector_rows_kernel",
                                                      args);
        }
        return;
      }
    }
    if (plan.path == SegmentPath::teams || plan.path == SegmentPath::warp_rows) {
      const SegmentRows rows{nullptr, false, size, pitch};
      const TeamArgs<typename Traits::Elem> args{
          x,          y,      num_segments, rows, out, out_stride, ~std::size_t{0}, plan.group,
          nullptr, finish};
      if (plan.path == SegmentPath::warp_rows && kWarpRowsServe<Traits>) {
        launch_kernel<WarpRowsTag<Traits, kYVector>>(warp_rows, plan.grid, kTeamBlock, stream,
                                                     ws.device,
                                                     "launch of reducelab warp_rows_kernel", args);
      } else {
        launch_kernel<SegmentTeamsTag<Traits, kYVector>>(
            teams, plan.grid, kTeamBlock, stream, ws.device,
            "launch of reducelab segment_teams_kernel", args);
      }
    } else {
      const BlockArgs<typename Traits::Elem> args{
          x,   y,          num_segments,  size,
          pitch, plan.blocks_per_segment, out, out_stride,
          ws.d_partials, ws.d_group_counters, finish};
      launch_kernel<SegmentBlocksTag<Traits, kYVector>>(
          blocks, plan.grid, BlockConfig::kBlock, stream, ws.device,
          "launch of reducelab segment_blocks_kernel", args);
    }
  }

  //! A list's total: each segment's accumulator goes to `accs` (num_segments of them), their
  //! fold to `total`, a result of `total_count` elements.
  struct Total {
    void* accs = nullptr;
    void* total = nullptr;
    std::uint64_t total_count = 0;
    // A list, whose lengths the host knows: which kernels have work, and the long kernel's flags.
    bool teams = true;
    bool long_segments = true;
    unsigned known_flags = 0;
  };

  static void ragged(const typename Traits::Elem* x, const typename Traits::Elem* y,
                     std::size_t num_segments, SegmentRows rows, void* out, const WorkspaceView& ws,
                     cudaStream_t stream, Finish finish, const RaggedSegmentPlan& plan,
                     const Total& total = {}) {
    const bool known = (total.known_flags & kFlagsKnown) != 0;
    if (total.teams && runs_apply(x, y, num_segments, rows, plan, total)) {
      if constexpr (kYVector && kRunsServe<Traits>) {
        TeamArgs<typename Traits::Elem> args{
            x,          y, num_segments, rows, out, 1, kBlockSegmentMin, kLaneGroup,
            ws.d_segment_flags, finish};
        args.tickets = ws.d_segment_flags + kRunTicketsAfterFlags;
        const std::size_t groups = (num_segments + kLaneGroup - 1) / kLaneGroup;
        const std::size_t wanted = (groups + kRunBlock / device::kWarpSize - 1) /
                                   (kRunBlock / device::kWarpSize);
        const unsigned resident = resident_grid<SegmentRunsTag<Traits>>(
            segment_runs_kernel<Traits>, kRunBlock, ws.device);
        const unsigned grid = static_cast<unsigned>(std::min<std::size_t>(wanted, resident));
        launch_kernel<SegmentRunsTag<Traits>>(segment_runs_kernel<Traits>, grid, kRunBlock,
                                              stream, ws.device,
                                              "launch of reducelab segment_runs_kernel", args);
      }
    } else if (total.teams) {
      TeamArgs<typename Traits::Elem> team_args{
          x,          y, num_segments, rows, out, 1, kBlockSegmentMin, plan.group,
          known ? nullptr : ws.d_segment_flags, finish};
      team_args.accs = total.accs;
      launch_kernel<SegmentTeamsTag<Traits, kYVector>>(
          teams, plan.team_grid, kTeamBlock, stream, ws.device,
          "launch of reducelab segment_teams_kernel", team_args);
    }
    if (total.long_segments) {
      LongArgs<typename Traits::Elem> long_args{
          x, y, num_segments, rows, out, kBlockSegmentMin, ws.d_partials, ws.d_group_counters,
          ws.d_counter, ws.d_segment_flags, finish};
      long_args.accs = total.accs;
      long_args.total = total.total;
      long_args.total_count = total.total_count;
      long_args.known_flags = total.known_flags;
      launch_kernel<LongSegmentsTag<Traits, kYVector>>(
          long_segments, plan.long_grid, BlockConfig::kBlock, stream, ws.device,
          "launch of reducelab long_segments_kernel", long_args);
    }
  }

  //! Whether segment_runs_kernel reads the short segments of a ragged call: one range of x (not
  //! a list of tensors), groups of 32 segments, x (and y) 16-byte aligned.
  static bool runs_apply(const typename Traits::Elem* x, const typename Traits::Elem* y,
                         std::size_t num_segments, const SegmentRows& rows,
                         const RaggedSegmentPlan& plan, const Total& total) {
    return kYVector && kRunsServe<Traits> && rows.pointers == nullptr && total.accs == nullptr &&
           plan.group == kLaneGroup && operands_aligned<Traits>(x, y) &&
           num_segments / kLaneGroup < (std::size_t{1} << 31);  // the tickets count in 32 bits
  }

  static RaggedSegmentPlan ragged_plan(std::size_t num_segments, int device) {
    return plan_ragged_segments(num_segments, capacity(device), kMaxGrid);
  }

  //! A list of count >= 1 tensors (tensors.hpp), its table built on the host (tensor_table.hpp):
  //! the table goes to the workspace's partials, after the long kernel's slots, when it fits
  //! there, else to memory from the stream-ordered allocator, freed on the stream after the
  //! kernels.
  static void tensors(HostTable& host, std::uint64_t total_count, const ListShape& shape,
                      void* out, void* d_total, const WorkspaceView& ws, cudaStream_t stream,
                      Finish finish) {
    using Acc = typename Traits::Acc;
    const std::size_t count = host.count();
    const RaggedSegmentPlan plan = ragged_plan(count, ws.device);
    const std::size_t table = table_bytes(count);
    const std::size_t accs = d_total == nullptr ? 0 : (count * sizeof(Acc) + 15) / 16 * 16;
    const std::size_t reserved = (2 * std::size_t{plan.long_grid} * sizeof(Acc) + 255) / 256 * 256;
    const std::size_t capacity = kPartialSlots * kPartialBytes;
    char* base = nullptr;
    const bool allocated = reserved + table + accs > capacity;
    if (allocated) {
      REDUCELAB_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&base), table + accs, stream));
    } else {
      base = static_cast<char*>(ws.d_partials) + reserved;
    }
    const DeviceTable device_table = table_at(base, count);
    send_table(host, device_table, ws, stream);
    SegmentRows rows{device_table.offsets, true, 0, 0};
    rows.pointers = device_table.pointers;
    Total total{d_total == nullptr ? nullptr : base + table, d_total, total_count};
    total.teams = shape.any_short;
    total.long_segments = shape.any_long || d_total != nullptr;
    total.known_flags = kFlagsKnown | (shape.any_long ? kSawLongSegment : 0u);
    ragged(nullptr, nullptr, count, rows, out, ws, stream, finish, plan, total);
    if (allocated) REDUCELAB_CUDA_CHECK(cudaFreeAsync(base, stream));
  }
};

//! Calls f(SegmentKernels<the traits of r on T, y read as vectors>) for the run-time r: dot's y
//! is read as vectors only when it shares x's offset in a 16-byte line (as in launch_with).
template <class T, class F>
void with_segment_kernels(const Reduction& r, const T* x, const T* y, F&& f) {
  dispatch_traits<T>(r, [&](auto traits) {
    using Traits = typename decltype(traits)::type;
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
void launch_fixed_segments(const Reduction& r, const T* x, const T* y, std::size_t num_segments,
                           std::size_t segment_size, std::size_t pitch, void* d_out,
                           std::size_t out_stride, const WorkspaceView& ws, cudaStream_t stream) {
  if constexpr (is_floating_v<T>) {
    if (takes_fixed_order(r, dtype_of<T>::value)) {  // gpu_to_gpu (reproducible_segments.cuh)
      launch_reproducible_segments<T>(r, x, y, num_segments, segment_size, pitch, nullptr, false,
                                      d_out, out_stride, ws, stream);
      return;
    }
  }
  if (takes_scalar_path(num_segments, segment_size)) {
    launch_typed<T>(r, x, y, segment_size, d_out, ws, stream);  // the scalar reduce, instantiated
    return;                                                     // in instantiate_*.cu
  }
  with_segment_kernels(r, x, y, [&](auto kernels) {
    kernels.fixed(x, y, num_segments, segment_size, pitch, d_out, out_stride, ws, stream,
                  finish_of(r));
  });
}

template <class T, class Offset>
void launch_ragged_segments(const Reduction& r, const T* x, const T* y, std::size_t num_segments,
                            const Offset* offsets, void* d_out, const WorkspaceView& ws,
                            cudaStream_t stream) {
  static_assert(std::is_same_v<Offset, std::int32_t> || std::is_same_v<Offset, std::int64_t>);
  if constexpr (is_floating_v<T>) {
    if (takes_fixed_order(r, dtype_of<T>::value)) {  // gpu_to_gpu (reproducible_segments.cuh)
      launch_reproducible_segments<T>(r, x, y, num_segments, 0, 0, offsets,
                                      std::is_same_v<Offset, std::int64_t>, d_out, 1, ws, stream);
      return;
    }
  }
  const SegmentRows rows{offsets, std::is_same_v<Offset, std::int64_t>, 0, 0};
  with_segment_kernels(r, x, y, [&](auto kernels) {
    kernels.ragged(x, y, num_segments, rows, d_out, ws, stream, finish_of(r),
                   kernels.ragged_plan(num_segments, ws.device));
  });
}

//! A list of count >= 1 tensors of one-array ops (tensors.hpp), results to d_out and, when
//! d_total is not null, the list's total there.
template <class T>
void launch_tensors(const Reduction& r, HostTable& table, std::uint64_t total_count,
                    const ListShape& shape, void* d_out, void* d_total, const WorkspaceView& ws,
                    cudaStream_t stream) {
  with_segment_kernels(r, static_cast<const T*>(nullptr), static_cast<const T*>(nullptr),
                       [&](auto kernels) {
                         kernels.tensors(table, total_count, shape, d_out, d_total, ws, stream,
                                         finish_of(r));
                       });
}

}  // namespace reducelab::detail

//! The explicit instantiations of the segmented launchers for T (instantiate_segmented_*.cu,
//! inside namespace reducelab::detail).
#define REDUCELAB_INSTANTIATE_SEGMENTED(T)                                                        \
  template void launch_fixed_segments<T>(const Reduction&, const T*, const T*, std::size_t, std::size_t,        \
                                         std::size_t, void*, std::size_t, const WorkspaceView&,   \
                                         cudaStream_t);                                           \
  template void launch_ragged_segments<T, std::int32_t>(const Reduction&, const T*, const T*, std::size_t,      \
                                                        const std::int32_t*, void*,               \
                                                        const WorkspaceView&, cudaStream_t);      \
  template void launch_ragged_segments<T, std::int64_t>(const Reduction&, const T*, const T*, std::size_t,      \
                                                        const std::int64_t*, void*,               \
                                                        const WorkspaceView&, cudaStream_t);      \
  template void launch_tensors<T>(const Reduction&, HostTable&, std::uint64_t, const ListShape&,  \
                                  void*, void*, const WorkspaceView&, cudaStream_t);

#pragma once
// The gpu_to_gpu (reproducible) mode over segments: fixed-size rows (reduce_segments, and the
// rows of reduce_axes) and ragged CSR segments. Each segment's result is the whole-array
// gpu_to_gpu result of that segment alone (reproducible_plan.hpp: its own plan, lanes, tiles
// and tree, from its own length), so the CPU function of one segment gives its bits, and where a
// segment starts in memory, which warp or block reads it and how many segments share the call
// change nothing.
//
// Who reads what (none of it changes the bits):
// - segment_short_kernel (one kernel per path, ShortPath, so each has its own registers): the
//   segments of at most kWarpTiles tiles. A fixed-size row of at most one tile (E = 4 P
//   elements; P = 128 f32) is read by a team of g lanes (g a power of two, g x kC >= the row,
//   up to 32; 32 / g rows per warp, four row groups in flight): lane r holds elements
//   [k P + r kC, k P + r kC + kC) of steps k = 0 .. 3, which are lanes r kC .. of the order,
//   sums them sequentially, then the thread's tree and the team's (__shfl_xor over 1 .. g / 2):
//   the segment's tree, padded with -0. Longer rows are read by a warp each, tile by tile
//   (tile_partial of reproducible.cuh; each tile's partial waits in a lane, 32 of them fold in
//   the warp's tree). A warp takes ragged segments 32 at a time: one of at most kThreadMax
//   elements is read by one lane alone (its tree in registers), a longer one by a whole warp as
//   a row is; the var and logsumexp states read those of at most P elements in team rounds
//   instead (a team of g lanes each, as a fixed row's, the warp's teams of one size at a time;
//   kTeamRoundsFor). With fewer segments than 32 per resident warp, every segment gets a warp.
// - segment_long_kernel: longer segments, cut into chunks of a power of two of tiles, aligned
//   in the segment: a chunk's partial is a subtree of the segment's tree. A warp reads a chunk
//   and stores its partial in the workspace. Fixed-size rows: the chunks are numbered row by row
//   and dealt to the warps. Ragged: segment_short_kernel lists the long segments' chunks as it
//   skips them (kChunkBits), and the warps of one resident wave take the listed chunks in turn
//   (so one huge segment among small ones is read by the whole GPU, and a list without a long
//   segment costs a launch); a chunk's slot is computed from its position (ChunkSlots).
// - segment_fold_kernel: a warp per long segment folds its chunk partials in the tree and
//   writes the result (ragged: the segments whose chunk 0 is listed).
// A ragged call whose offsets decrease somewhere (a decreasing pair is an empty segment, as in
// the default mode) cannot give each chunk its own slot: segment_short_kernel flags it in the
// workspace, segment_long_kernel then reads nothing, and segment_fold_kernel looks at every
// segment and gives each long one to one warp, whole.
//
// The term f(x) (sum, dot, |x|, x x; logsumexp and var hold the elements, in batches) binds per
// segment (at(s)), the epilogue writes segment s's result from its total (reproducible_stats.cuh
// has the terms).

#include <cstddef>
#include <cstdint>
#include <cuda/atomic>
#include <type_traits>

#include "reduce/reproducible.cuh"
#include "reduce/reproducible_stats.cuh"
#include "reduce/segment_plan.hpp"
#include "reduce/workspace.hpp"

namespace reducelab::detail::repro {

//! Threads per block of the three segment kernels.
inline constexpr unsigned kSegmentBlock = 256;
//! Segments of at most this many tiles are read by one warp, whole (segment_short_kernel); a
//! tile is 512 f32 elements at K = 4, so 8,192 f32 elements. Longer ones are cut into chunks.
inline constexpr std::uint64_t kWarpTiles = 16;
//! Chunks of a long segment hold at least this many tiles (a power of two): fewer would spend
//! more on the partial's store and fold than on the loads.
inline constexpr std::uint64_t kChunkMinTiles = 8;
//! Ragged segments of at most this many elements are read by one lane each (the plain sums).
inline constexpr std::uint64_t kThreadMax = 32;
//! Whether the ragged lane kernel reads segments of at most P elements in team rounds instead:
//! the var and logsumexp states, whose lane path held 32 states per lane. Measured on one H100
//! (session 50, gpu_to_gpu, heavy 2^21 x 64 and uniform 1M x 0..256 lengths): team rounds ran
//! var, var_mean and logsumexp 1.11-2.45x as fast in every cell, but the plain sums lost (f32
//! sum heavy 312 -> 348 us, f32 norm 509 -> 746 us): their lane path issues 32 loads per lane
//! before any add, one round trip, where the rounds take one per team size, and ncu showed 0.75
//! eligible warps per scheduler against 2.37.
template <class A>
inline constexpr bool kTeamRoundsFor = is_var_state<A>::value || is_lse_state<A>::value;
//! Bits of the workspace's segment flags word that these kernels use.
inline constexpr unsigned kReproDecreasing = 1u << 4;
//! The list of long ragged segments' chunks: segment_short_kernel appends one entry per chunk
//! of each long segment it skips, (segment << kChunkBits) | chunk, at a ticket from a 64-bit
//! counter; segment_long_kernel deals the entries to its warps and segment_fold_kernel folds
//! the segments whose chunk 0 it finds there. The order of the entries follows the atomics, but
//! where a chunk's partial goes (ChunkSlots) and how a segment's partials are folded do not, so
//! the bits do not either. The entries lie in the workspace's partials region after the chunk
//! partials (kPartialSlots x kPartialBytes), up to kAxisPartialBytes (workspace.hpp).
inline constexpr unsigned kChunkBits = 20;
inline constexpr std::size_t kChunkEntriesAt = kPartialSlots * kPartialBytes;
inline constexpr std::uint64_t kChunkEntries =
    (kAxisPartialBytes - kChunkEntriesAt) / sizeof(unsigned long long);
// Offsets that never decrease give a segment at most capacity / 2 chunks and the call at most
// capacity chunks (ChunkSlots), and capacity is at most kChunkEntriesAt / 4 (4-byte partials).
static_assert(kChunkEntriesAt / 4 <= (std::uint64_t{1} << kChunkBits) &&
                  kChunkEntriesAt / 4 <= kChunkEntries,
              "every chunk of a call has an entry, and its number fits kChunkBits");
//! The chunk list's counter: a 64-bit word in the flags word's line of the workspace header,
//! 8 bytes after the flags word (zero between calls: segment_fold_kernel's last block resets
//! it).
inline constexpr std::size_t kChunkCountAfterFlags = 2;  // in unsigned words

// ---- the tree, leaf by leaf -----------------------------------------------------------------

//! The complete tree of adjacent pairs over values pushed one by one, padded with -0 (adding -0
//! changes nothing): a binary counter of subtree sums, each level the sum of an aligned block of
//! 2^l leaves; total() adds what is left from the smallest block up, each as the right operand.
//! Holds up to 2^kLevels - 1 values.
template <class A, int kLevels = 18>
struct TreeStack {
  A level[kLevels];
  std::uint64_t count = 0;

  __device__ __forceinline__ void push(A v) {
    std::uint64_t c = count;
    int l = 0;
    while (c & 1) {
      v = add(level[l], v);
      c >>= 1;
      ++l;
    }
    level[l] = v;
    ++count;
  }
  __device__ __forceinline__ A total() const {
    A r = identity<A>();
    bool have = false;
    for (int l = 0; l < kLevels; ++l) {
      if ((count >> l) & 1) {
        r = have ? add(level[l], r) : level[l];
        have = true;
      }
    }
    return r;
  }
};

// ---- the segments ------------------------------------------------------------------------------

//! Fixed-size rows (offsets null: row s is [s pitch, s pitch + size)) or ragged segments
//! (offsets[s], offsets[s + 1]; int64 when wide, else int32).
struct SegmentList {
  const void* offsets;
  bool wide;
  std::uint64_t count;
  std::uint64_t size;
  std::uint64_t pitch;

  __device__ __forceinline__ std::int64_t offset(std::uint64_t i) const {
    return wide ? static_cast<const std::int64_t*>(offsets)[i]
                : static_cast<const std::int32_t*>(offsets)[i];
  }
  struct Range {
    std::int64_t begin;
    std::uint64_t length;
    bool decreasing;  //!< ragged offsets[s + 1] < offsets[s]: an empty segment
  };
  __device__ __forceinline__ Range operator()(std::uint64_t s) const {
    if (offsets == nullptr) return {static_cast<std::int64_t>(s * pitch), size, false};
    const std::int64_t begin = offset(s);
    const std::int64_t end = offset(s + 1);
    if (end < begin) return {begin, 0, true};
    return {begin, static_cast<std::uint64_t>(end - begin), false};
  }
};

//! Where the chunk partials of ragged long segments go. The element range [base, base + total)
//! is cut into windows of Q elements (a power of two); every chunk spans at least Q elements, and
//! a segment is long only when it is longer than Q. Chunk j of a segment starting at p (relative
//! to base) starts at p + j span; its slot is 2 floor(start / Q) for j = 0 and 2 floor(start / Q)
//! + 1 after: starts of one segment are >= Q apart, the next long segment starts more than Q
//! after this one's start, so no two chunks share a slot, and slots stay below 2 total / Q + 2.
struct ChunkSlots {
  std::int64_t base;
  std::uint64_t total;
  std::uint64_t window;  // Q

  //! Q for a range of `total` elements: the smallest power of two >= min_window that keeps the
  //! slots under `capacity`.
  __host__ __device__ static std::uint64_t window_for(std::uint64_t total, std::uint64_t capacity,
                                                      std::uint64_t min_window) {
    std::uint64_t q = min_window;
    while (2 * (total / q) + 2 > capacity) q *= 2;
    return q;
  }
  __device__ __forceinline__ std::uint64_t slot(std::int64_t begin, std::uint64_t j,
                                                std::uint64_t span) const {
    const std::uint64_t start = static_cast<std::uint64_t>(begin - base) + j * span;
    return 2 * (start / window) + (j == 0 ? 0 : 1);
  }
};

//! The plan of one segment's order (reproducible_plan.hpp) as the kernels use it.
struct SegmentOrder {
  std::uint64_t steps;  // K
  std::uint64_t tile;   // E
  std::uint64_t tiles;
  __device__ __forceinline__ static SegmentOrder of(std::size_t element_size, std::uint64_t n) {
    const Plan p = plan_for(element_size, n);
    return {p.steps, p.tile, p.tiles};
  }
};

//! The tiles of a chunk of a long ragged segment: the smallest power of two >= kChunkMinTiles
//! whose tiles span at least Q elements.
__device__ __forceinline__ std::uint64_t chunk_tiles_for(std::uint64_t tile, std::uint64_t window) {
  std::uint64_t c = kChunkMinTiles;
  while (c * tile < window) c *= 2;
  return c;
}

template <class T>
struct SegmentArgs {
  const T* x;
  const T* y;            // dot only
  SegmentList segments;
  std::uint64_t total;   // fixed: rows x pitch elements in the range; ragged: set on the device
  void* partials;        // chunk partials (A), `capacity` of them
  std::uint64_t capacity;
  unsigned* flags;       // ragged: the workspace's segment flags word; null for fixed rows
  unsigned* counter;     // zero on entry and exit (segment_fold_kernel's ticket)
  // fixed rows:
  unsigned team_log2;    // short kernel: rows no longer than P take 2^team_log2 lanes each
  bool aligned;          // every row of x (and y) starts on a 16-byte boundary
  std::uint64_t chunk_tiles;  // long kernel: tiles per chunk (a power of two)
  std::uint64_t chunks;       // long kernel: chunks per row
  // ragged: how many of a warp's pending segments ahead of the one it reads it asks L2 for
  unsigned prefetch;
};

//! Ragged: the chunk list's entries (kChunkEntries of them, after the chunk partials) and its
//! counter (in the flags word's line), from the workspace pointers the arguments hold already.
template <class T>
__device__ __forceinline__ unsigned long long* chunk_entries_of(const SegmentArgs<T>& a) {
  return reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(a.partials) +
                                               kChunkEntriesAt);
}
template <class T>
__device__ __forceinline__ unsigned long long* chunk_count_of(const SegmentArgs<T>& a) {
  return reinterpret_cast<unsigned long long*>(a.flags + kChunkCountAfterFlags);
}

//! The ReproArgs of one segment [begin, begin + length) for tile_partial.
template <class T>
__device__ __forceinline__ ReproArgs<T> segment_args(const SegmentArgs<T>& a, std::int64_t begin,
                                                     std::uint64_t length,
                                                     const SegmentOrder& order) {
  ReproArgs<T> r{};
  r.x = a.x + begin;
  r.y = a.y != nullptr ? a.y + begin : nullptr;
  r.n = length;
  r.steps = order.steps;
  r.tiles = order.tiles;
  r.offset = static_cast<unsigned>((reinterpret_cast<std::uintptr_t>(r.x) & 15) / sizeof(T));
  return r;
}

//! Whether a ragged segment of `length` elements and `tiles` tiles is long (chunked).
__device__ __forceinline__ bool is_long(std::uint64_t length, std::uint64_t tiles,
                                        std::uint64_t window) {
  return tiles > kWarpTiles && length > window;
}

//! Appends the chunks of long segment s (`length` elements) to the chunk list, with the whole
//! warp (a huge segment has up to capacity / 2 chunks). Offsets that decrease somewhere can
//! list more chunks than there are entries: the ones past the end are not written, and the long
//! and fold kernels do not read the list then.
template <class T>
__device__ __forceinline__ void list_chunks(const SegmentArgs<T>& a, std::uint64_t s,
                                            std::uint64_t length, std::uint64_t window,
                                            unsigned lane) {
  const SegmentOrder order = SegmentOrder::of(sizeof(T), length);
  const std::uint64_t per = chunk_tiles_for(order.tile, window);
  const std::uint64_t chunks = (order.tiles + per - 1) / per;
  unsigned long long first = 0;
  if (lane == 0) first = atomicAdd(chunk_count_of(a), static_cast<unsigned long long>(chunks));
  first = __shfl_sync(kFullMask, first, 0);
  for (std::uint64_t j = lane; j < chunks && first + j < kChunkEntries; j += 32)
    chunk_entries_of(a)[first + j] = (s << kChunkBits) | j;
}

//! The number of entries in the chunk list (at most kChunkEntries), in every thread.
__device__ __forceinline__ std::uint64_t listed_chunks(const unsigned long long* count) {
  const unsigned long long n =
      cuda::atomic_ref<const unsigned long long, cuda::thread_scope_device>(*count).load(
          cuda::memory_order_relaxed);
  return n < kChunkEntries ? n : kChunkEntries;
}

//! What the segment kernels hold per element before they sum: the term f(x) in A, or, for
//! logsumexp, the element widened (its batch's max comes first). An absent element (past the
//! segment's end, or the padding of a short segment) is the sum's identity -0, or -inf for
//! logsumexp: its term exp(-inf - max) is +0, which can change only the sign of a lane's zero sum,
//! and that never reaches the result (the segment's sum is at least 1, its max's own term, when
//! the max is finite; the max alone gives the result when it is not). So the bits are those of
//! the order, where an absent element is no element.
//! var holds its elements widened too (centred on the segment's first, batch by batch); an
//! absent element is 0 there, and the kernels count the present ones (var_team_partial).
template <class A>
struct ValueOf { using type = A; };
template <class S>
struct ValueOf<LseState<S>> { using type = S; };
template <class S>
struct ValueOf<VarState<S>> { using type = S; };
template <class A>
using value_t = typename ValueOf<A>::type;

template <class A, class T, class F>
__device__ __forceinline__ value_t<A> element_value(const F& f, T x, T y) {
  if constexpr (is_lse_state<A>::value || is_var_state<A>::value) {
    return widen<value_t<A>>(x);
  } else {
    return f.template apply<A>(x, y);
  }
}

template <class A>
__device__ __forceinline__ value_t<A> absent_value() {
  if constexpr (is_lse_state<A>::value) {
    return -portable::infinity<value_t<A>>();
  } else if constexpr (is_var_state<A>::value) {
    return value_t<A>(0);
  } else {
    return identity<A>();
  }
}

//! Whether var's bound term (VarTerm, const or not) keeps the plain sum (var_mean, std_mean).
template <class F>
struct VarSumOf : std::false_type {};
template <bool kSum>
struct VarSumOf<VarTerm<kSum>> : std::bool_constant<kSum> {};
template <class F>
inline constexpr bool var_sum_of = VarSumOf<std::remove_cv_t<std::remove_reference_t<F>>>::value;
static_assert(var_sum_of<const VarTerm<true>> && var_sum_of<VarTerm<true>&> &&
              !var_sum_of<VarTerm<false>> && !var_sum_of<PlainTerm<1>>);

//! var's group of a segment of one batch (reproducible_stats.hpp): v[u][j] is the element of step
//! u of lane j of the thread's part of the order, present for u < present[j] (the present steps
//! are the first ones); `team` lanes share the segment, whose first element is `shift`. Each
//! lane's batch, the thread's tree and the team's (the lanes' merge is symmetric): the segment's
//! group, in every lane of the team.
template <bool kSum, int kB, int kC, class S>
__device__ __forceinline__ VarState<S> var_team_partial(const S (&v)[kB][kC],
                                                        const int (&present)[kC], S shift,
                                                        unsigned team) {
  static_assert(kB <= kVarBatch, "one batch");
  VarState<S> lanes[kC];
#pragma unroll
  for (int j = 0; j < kC; ++j) {
    S c[kVarBatch];
    S sum = -S(0);
#pragma unroll
    for (int u = 0; u < kVarBatch; ++u) {
      c[u] = S(0);
      if (u < kB && u < present[j]) {
        c[u] = portable::sub(v[u][j], shift);
        if constexpr (kSum) sum = add(sum, v[u][j]);
      }
    }
    lanes[j] = present[j] > 0 ? var_batch(c, present[j]) : var_identity<S>();
    lanes[j].sum = sum;
  }
#pragma unroll
  for (int w = 1; w < kC; w *= 2) {
#pragma unroll
    for (int j = 0; j < kC; j += 2 * w) lanes[j] = var_merge_lanes(lanes[j], lanes[j + w]);
  }
  VarState<S> s = lanes[0];
  for (unsigned m = 1; m < team; m *= 2) s = var_merge_lanes(s, shfl_xor(s, static_cast<int>(m)));
  s.shift = shift;
  return s;
}

//! The values (element_value) of elements [first, first + kC) of a segment of `length` elements
//! at xs (and ys), absent_value past its end: one 16-byte load per array when the segment starts
//! on a 16-byte boundary (`aligned`, for both arrays) and the kC elements are all inside, else
//! element by element.
template <class T, class A, int kInputs, int kC, class F>
__device__ __forceinline__ void load_terms(value_t<A> (&v)[kC], const T* xs, const T* ys,
                                           std::uint64_t first, std::uint64_t length, bool aligned,
                                           const F& f) {
  if (aligned && first + kC <= length) {
    const device::Vec16<T> vx =
        device::Vec16<T>::from(device::load16<device::LoadHint::no_alloc>(xs + first));
    device::Vec16<T> vy{};
    if constexpr (kInputs == 2)
      vy = device::Vec16<T>::from(device::load16<device::LoadHint::no_alloc>(ys + first));
#pragma unroll
    for (int j = 0; j < kC; ++j) v[j] = element_value<A>(f, vx.element[j], vy.element[j]);
  } else {
#pragma unroll
    for (int j = 0; j < kC; ++j) {
      const std::uint64_t i = first + j;
      v[j] = i < length ? element_value<A>(f, xs[i], kInputs == 2 ? ys[i] : T{})
                        : absent_value<A>();
    }
  }
}

//! The tree over a team's values (one per lane, teams of `team` lanes aligned in the warp): the
//! complete tree of adjacent pairs, in every lane of the team. Every lane of the warp calls it.
template <class A>
__device__ __forceinline__ A team_tree(A s, unsigned team) {
  for (unsigned m = 1; m < team; m *= 2) s = add(s, shfl_xor(s, static_cast<int>(m)));
  return s;
}

//! logsumexp's pair of a segment that is one batch (reproducible_stats.hpp): v[u][j] is the
//! element of step u of lane j of the thread's part of the order (absent_value where there is
//! none); `team` lanes share the segment. The max over the team, then each lane's sum of the terms
//! step by step, the thread's tree and the team's: (max, sum), in every lane of the team.
template <int kB, int kC, class S>
__device__ __forceinline__ LseState<S> lse_batch_partial(const S (&v)[kB][kC], unsigned team) {
  S batch = -portable::infinity<S>();
#pragma unroll
  for (int u = 0; u < kB; ++u)
#pragma unroll
    for (int j = 0; j < kC; ++j) batch = lse_max(batch, v[u][j]);
  for (unsigned m = 1; m < team; m *= 2)
    batch = lse_max(batch, __shfl_xor_sync(kFullMask, batch, static_cast<int>(m)));
  S s[kC];
#pragma unroll
  for (int j = 0; j < kC; ++j) s[j] = -S(0);
  if (lse_finite(batch)) {
#pragma unroll
    for (int j = 0; j < kC; ++j)
#pragma unroll
      for (int u = 0; u < kB; ++u) s[j] = add(s[j], lse_term(v[u][j], batch));
  } else {
#pragma unroll
    for (int j = 0; j < kC; ++j)
#pragma unroll
      for (int u = 0; u < kB; ++u) s[j] = add(s[j], lse_nan_term(v[u][j]));
  }
  return {batch, team_tree(thread_tree(s), team)};
}

//! The partial of a segment held in v (one value per lane of the order in the thread; `team`
//! lanes share it): the tree of the terms, or logsumexp's batch.
template <class A, int kN>
__device__ __forceinline__ A row_partial(value_t<A> (&v)[kN], unsigned team) {
  if constexpr (is_lse_state<A>::value) {
    return lse_batch_partial(reinterpret_cast<const value_t<A>(&)[1][kN]>(v), team);
  } else {
    return team_tree(thread_tree(v), team);
  }
}

//! A segment of at most one tile at K = 4 (length <= E = 4 P) read by a team of `team` lanes
//! (rank r in the team; team = 32 when length > P): lane r sums the elements [k P + r kC,
//! k P + r kC + kC) of steps k = 0 .. 3 sequentially, as lanes r kC .. of the order, then the
//! thread's tree and the team's: the segment's tree, in every lane of the team.
template <class T, class A, int kInputs, class F>
__device__ __forceinline__ A team_partial(const T* xs, const T* ys, std::uint64_t length,
                                          unsigned rank, unsigned team, bool aligned, const F& f) {
  constexpr int kC = 16 / static_cast<int>(sizeof(T));
  constexpr std::uint64_t kP = 32 * kC;
  value_t<A> v[kMinSteps][kC];
#pragma unroll
  for (int k = 0; k < static_cast<int>(kMinSteps); ++k) {
    if (k == 0 || k * kP < length) {
      load_terms<T, A, kInputs>(v[k], xs, ys, k * kP + rank * kC, length, aligned, f);
    } else {
#pragma unroll
      for (int j = 0; j < kC; ++j) v[k][j] = absent_value<A>();
    }
  }
  if constexpr (is_lse_state<A>::value) {
    return lse_batch_partial(v, team);  // one batch
  } else if constexpr (is_var_state<A>::value) {
    int present[kC];
#pragma unroll
    for (int j = 0; j < kC; ++j) {
      present[j] = 0;
#pragma unroll
      for (int k = 0; k < static_cast<int>(kMinSteps); ++k)
        if (k * kP + rank * kC + j < length) ++present[j];
    }
    const unsigned leader = (threadIdx.x & 31) & ~(team - 1);  // rank 0: element 0
    const value_t<A> shift = __shfl_sync(kFullMask, v[0][0], leader);
    if (team == 32 && length >= kMinSteps * kP) {
      // A whole tile: every lane holds 4 elements, so the merges are var_lane_tree_uniform's
      // (the same operations as var_team_partial's, with the weights known and the counts not
      // shuffled; the same bits).
      using S = value_t<A>;
      S mean[kC], m2[kC], sum[kC];
#pragma unroll
      for (int j = 0; j < kC; ++j) sum[j] = -S(0);
      var_add_batch<var_sum_of<F>>(mean, m2, sum, v, shift, 0.0);
      VarState<S> s = var_lane_tree_uniform<var_sum_of<F>>(mean, m2, sum, double(kMinSteps));
      s.shift = shift;
      return s;
    }
    return var_team_partial<var_sum_of<F>>(v, present, shift, team);
  } else {
    A acc[kC];
#pragma unroll
    for (int j = 0; j < kC; ++j) {
      acc[j] = v[0][j];  // -0 + v = v
#pragma unroll
      for (int k = 1; k < static_cast<int>(kMinSteps); ++k) acc[j] = add(acc[j], v[k][j]);
    }
    return team_tree(thread_tree(acc), team);
  }
}

//! Whether a segment starting at element `begin` of x (and y) lies on a 16-byte boundary in both.
template <class T>
__device__ __forceinline__ bool starts_aligned(const T* x, const T* y, std::int64_t begin) {
  const std::uintptr_t line = reinterpret_cast<std::uintptr_t>(x + begin) |
                              (y != nullptr ? reinterpret_cast<std::uintptr_t>(y + begin) : 0);
  return (line & 15) == 0;
}

//! The sum of tiles [first, end) of a segment in the tree (a subtree when first is aligned to a
//! power of two >= end - first), in lane 0 of the warp. Tile first + i's partial waits in lane
//! i % 32; each 32 of them (an aligned subtree) fold in the warp's tree (padded with the identity
//! when fewer remain) and go on a TreeStack, so the stack, in local memory, is touched once per 32
//! tiles, not per tile. Up to 32 tiles need no stack, and the warp's tree stops at the smallest
//! power of two of lanes that holds them: the levels above add the identity, which changes
//! nothing (for logsumexp's pairs at most the sign of a zero sum beside an infinite max, which
//! the result does not show). (Two tiles at a time, all eight vectors of a lane loaded before the
//! first add, measured slower on the H200: its registers cost more occupancy than the loads in
//! flight gained, +14% over the default instead of +3% on 128 rows of 2^20 f32.)
template <class T, class A, int kInputs, bool kYVector, class F>
__device__ __forceinline__ A tiles_partial(const ReproArgs<T>& r, std::uint64_t first,
                                           std::uint64_t end, unsigned lane, const F& f) {
  if (end - first <= 32) {
    A mine = identity<A>();
    for (std::uint64_t t = first; t < end; ++t) {
      const A partial = tile_partial<T, A, kInputs, kYVector>(r, t, lane, f);
      if (lane == static_cast<unsigned>(t - first)) mine = partial;
    }
    for (std::uint64_t m = 1; m < end - first; m *= 2) mine = tree_level(mine, static_cast<int>(m));
    return mine;
  }
  TreeStack<A> stack;
  A mine = identity<A>();
  for (std::uint64_t t = first; t < end; ++t) {
    const A partial = tile_partial<T, A, kInputs, kYVector>(r, t, lane, f);
    const unsigned slot = static_cast<unsigned>((t - first) & 31);
    if (lane == slot) mine = partial;
    if (slot == 31) {
      stack.push(warp_tree(mine));
      mine = identity<A>();
    }
  }
  if (((end - first) & 31) != 0) stack.push(warp_tree(mine));
  return stack.total();
}

//! Asks L2 for the lines of elements [begin, begin + length) of x (and y), up to 32 lines of
//! 128 bytes, one per lane (every lane calls): a later load of them waits for L2, not DRAM.
//! Moves no data into registers and changes no result.
template <class T>
__device__ __forceinline__ void prefetch_lines(const T* x, const T* y, std::int64_t begin,
                                               std::uint64_t length, unsigned lane) {
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(x + begin) & ~std::uintptr_t{127};
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(x + begin + length);
  const std::uintptr_t at = first + 128 * static_cast<std::uintptr_t>(lane);
  if (length == 0 || at >= end) return;
  asm volatile("prefetch.global.L2 [%0];" ::"l"(at));
  if (y != nullptr) {
    const std::uintptr_t y_at =
        (reinterpret_cast<std::uintptr_t>(y + begin) & ~std::uintptr_t{127}) + 128 * lane;
    if (y_at < reinterpret_cast<std::uintptr_t>(y + begin + length))
      asm volatile("prefetch.global.L2 [%0];" ::"l"(y_at));
  }
}

// ---- the kernels -------------------------------------------------------------------------------

//! Short segments (see the top of the file). Fixed rows no longer than P: teams; other fixed
//! rows of at most kWarpTiles tiles: a warp each; ragged: a lane each up to kThreadMax elements
//! (teams up to P for the var and logsumexp states), a warp each up to the long rule, long ones
//! listed (and a decreasing pair flagged).
//! The path is a template parameter, so each path's kernel has its own registers: in one kernel
//! the heaviest path set every path's occupancy (measured: f64 rows of 32 cost +83% over the
//! default that way).
enum ShortPath : int {
  kTeamRows,    //!< fixed rows of one vector per lane of a team of g lanes
  kTileRows,    //!< fixed rows of at most one tile: a warp each, team_partial
  kTilesRows,   //!< longer fixed rows: a warp each, tile by tile
  kLaneRagged,  //!< ragged, 32 segments per warp: a lane (or team) each when short, then warps
  kWarpRagged,  //!< ragged, a warp per segment (few segments)
};

template <class T, class A, int kInputs, bool kYVector, class Term, class Epilogue, int kPath>
__device__ __forceinline__ void segment_short(const SegmentArgs<T>& a, const Term& term,
                                              const Epilogue& epilogue) {
  const unsigned lane = threadIdx.x & 31;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * (kSegmentBlock / 32);
  const std::uint64_t warp = static_cast<std::uint64_t>(blockIdx.x) * (kSegmentBlock / 32) +
                             threadIdx.x / 32;
  const SegmentList& list = a.segments;

  if constexpr (kPath == kTeamRows || kPath == kTileRows || kPath == kTilesRows) {
    constexpr int kC = 16 / static_cast<int>(sizeof(T));
    const SegmentOrder order = SegmentOrder::of(sizeof(T), list.size);
    const unsigned team = 1u << a.team_log2;
    const unsigned per_warp = 32u >> a.team_log2;
    const unsigned rank = lane & (team - 1);
    if constexpr (kPath == kTeamRows) {
      // One vector per lane and row: kRowBatch groups of 32 / g rows per warp at once, every
      // load of the batch issued before the first add.
      // 64 bytes in flight per lane. (f64 measured +43..51% over the default with 4 on 8- and
      // 32-wide rows, and worse with 8: +78..90%; f64 dot is 13-27% faster than the default
      // there. With a kernel per path, f64 sum over rows of 32 costs +20%
      // (H100, session 53): Nsight Compute shows the kernel waiting on memory, four blocks per
      // SM at 52 registers, 0.69 eligible warps per scheduler, DRAM at 72% where f32 reaches 90%.)
      constexpr int kRowBatch = 4;
      for (std::uint64_t group = warp * kRowBatch; group * per_warp < list.count;
           group += warps * kRowBatch) {
        value_t<A> v[kRowBatch][kC];
#pragma unroll
        for (int u = 0; u < kRowBatch; ++u) {
          const std::uint64_t s = (group + u) * per_warp + (lane >> a.team_log2);
          const bool mine = s < list.count;
          const std::uint64_t at = mine ? s * list.pitch : 0;
          load_terms<T, A, kInputs>(v[u], a.x + at, a.y != nullptr ? a.y + at : nullptr,
                                    static_cast<std::uint64_t>(rank) * kC, mine ? list.size : 0,
                                    a.aligned, term.at(mine ? s : 0));
        }
#pragma unroll
        for (int u = 0; u < kRowBatch; ++u) {
          const std::uint64_t s = (group + u) * per_warp + (lane >> a.team_log2);
          A partial;
          if constexpr (is_var_state<A>::value) {
            int present[kC];
#pragma unroll
            for (int j = 0; j < kC; ++j)
              present[j] = s < list.count && rank * kC + j < list.size ? 1 : 0;
            const value_t<A> shift = __shfl_sync(kFullMask, v[u][0], lane & ~(team - 1));
            partial = var_team_partial<var_sum_of<decltype(term.at(0))>>(
                reinterpret_cast<const value_t<A>(&)[1][kC]>(v[u]), present, shift, team);
          } else {
            partial = row_partial<A>(v[u], team);
          }
          if (s < list.count && rank == 0) epilogue(s, list.size, partial);
        }
      }
    } else if constexpr (kPath == kTileRows) {
      // One tile: a warp per row, up to four vectors per lane.
      for (std::uint64_t s = warp; s < list.count; s += warps) {
        const std::uint64_t at = s * list.pitch;
        const A total = team_partial<T, A, kInputs>(a.x + at, a.y != nullptr ? a.y + at : nullptr,
                                                    list.size, lane, 32, a.aligned, term.at(s));
        if (lane == 0) epilogue(s, list.size, total);
      }
    } else {
      for (std::uint64_t s = warp; s < list.count; s += warps) {
        const std::int64_t begin = static_cast<std::int64_t>(s * list.pitch);
        const ReproArgs<T> r = segment_args(a, begin, list.size, order);
        const A total = tiles_partial<T, A, kInputs, kYVector>(r, 0, order.tiles, lane,
                                                                term.at(s));
        if (lane == 0) epilogue(s, list.size, total);
      }
    }
    return;
  } else {

  // Ragged. Q (ChunkSlots) from the range, as the long and fold kernels compute it.
  const std::int64_t base = list.offset(0);
  const std::int64_t end = list.offset(list.count);
  const std::uint64_t total = end > base ? static_cast<std::uint64_t>(end - base) : 0;
  const std::uint64_t window =
      ChunkSlots::window_for(total, a.capacity, kChunkMinTiles * lanes_for(sizeof(T)) * kMinSteps);
  if constexpr (kPath == kWarpRagged) {
    // Fewer segments than 32 per resident warp: a warp each, so every warp has work.
    for (std::uint64_t s = warp; s < list.count; s += warps) {
      const SegmentList::Range range = list(s);
      if (range.decreasing && lane == 0) atomicOr(a.flags, kReproDecreasing);
      const SegmentOrder order = SegmentOrder::of(sizeof(T), range.length);
      if (is_long(range.length, order.tiles, window)) {
        list_chunks(a, s, range.length, window, lane);
        continue;
      }
      A total_s;
      if (range.length <= order.tile) {
        total_s = team_partial<T, A, kInputs>(
            a.x + range.begin, a.y != nullptr ? a.y + range.begin : nullptr, range.length, lane,
            32, starts_aligned(a.x, a.y, range.begin), term.at(s));
      } else {
        const ReproArgs<T> r = segment_args(a, range.begin, range.length, order);
        total_s = tiles_partial<T, A, kInputs, kYVector>(r, 0, order.tiles, lane, term.at(s));
      }
      if (lane == 0) epilogue(s, range.length, total_s);
    }
    return;
  } else {
  // The var and logsumexp states read their short segments in team rounds; the plain sums keep a
  // lane per segment of at most kThreadMax elements (see kTeamRoundsFor).
  constexpr bool kTeams = kTeamRoundsFor<A>;
  constexpr int kC = 16 / static_cast<int>(sizeof(T));
  constexpr std::uint64_t kP = 32 * kC;  // one vector per lane of a warp
  constexpr std::uint64_t kAlone = kTeams ? kP : kThreadMax;  // read before the warp's loop
  for (std::uint64_t first = warp * 32; first < list.count; first += warps * 32) {
    const std::uint64_t s = first + lane;
    SegmentList::Range range{0, 0, false};
    if (s < list.count) range = list(s);
    if (__any_sync(kFullMask, range.decreasing) && lane == 0) atomicOr(a.flags, kReproDecreasing);
    if constexpr (kTeams) {
      // Segments of at most P elements (empty ones too) in team rounds: a segment of n elements
      // takes a team of g lanes, g the smallest power of two with g kC >= n, and lane r of the
      // team reads elements [r kC, r kC + kC): the order's lanes r kC .. (one batch: P elements
      // are one step), summed by the thread's tree and the team's, as the fixed rows' teams do
      // (kTeamRows). The warp takes the segments of one team size at a time, 32 / g of them per
      // round, so every shuffle of a round has one team size.
      __shared__ unsigned char team_owner[kSegmentBlock / 32][32];
      unsigned char* const owner = team_owner[threadIdx.x / 32];
      const bool teamed = s < list.count && range.length <= kP;
      const unsigned vectors =
          teamed ? static_cast<unsigned>((range.length + kC - 1) / kC) : 0u;  // 0 .. 32
      const unsigned size_log2 = vectors <= 1 ? 0u : 32u - __clz(vectors - 1);
      for (unsigned c = 0; c <= 5; ++c) {
        const unsigned members = __ballot_sync(kFullMask, teamed && size_log2 == c);
        if (members == 0) continue;
        if (teamed && size_log2 == c) owner[__popc(members & ((1u << lane) - 1))] = lane;
        __syncwarp();
        const unsigned team = 1u << c;
        const unsigned rank = lane & (team - 1);
        const unsigned n = __popc(members);
        for (unsigned q = lane >> c; q - (lane >> c) < n; q += 32u >> c) {
          const bool mine = q < n;
          const unsigned who = owner[mine ? q : 0];
          const std::int64_t begin = __shfl_sync(kFullMask, range.begin, who);
          const unsigned got = __shfl_sync(kFullMask, static_cast<unsigned>(range.length), who);
          const std::uint64_t length = mine ? got : 0;
          const std::uint64_t seg = first + who;
          const auto f = term.at(mine ? seg : first);
          value_t<A> v[kC];
          load_terms<T, A, kInputs>(v, a.x + begin, a.y != nullptr ? a.y + begin : nullptr,
                                    static_cast<std::uint64_t>(rank) * kC, length, false, f);
          A partial;
          if constexpr (is_var_state<A>::value) {
            int present[kC];
#pragma unroll
            for (int j = 0; j < kC; ++j) present[j] = rank * kC + j < length ? 1 : 0;
            const value_t<A> shift = __shfl_sync(kFullMask, v[0], lane & ~(team - 1));
            partial = var_team_partial<var_sum_of<decltype(f)>>(
                reinterpret_cast<const value_t<A>(&)[1][kC]>(v), present, shift, team);
          } else {
            partial = row_partial<A>(v, team);
          }
          if (mine && rank == 0) epilogue(seg, length, partial);
        }
        __syncwarp();  // owner is written again for the next size
      }
    } else if (s < list.count && range.length <= kThreadMax) {
      // Lane by lane: each lane one segment of 32; the short ones read by their lane alone.
      // Every load issued before the first add; the tree over kThreadMax padded with -0 is the
      // tree over the segment.
      const auto f = term.at(s);
      const T* xs = a.x + range.begin;
      const T* ys = a.y != nullptr ? a.y + range.begin : nullptr;
      value_t<A> v[kThreadMax];
#pragma unroll
      for (int i = 0; i < static_cast<int>(kThreadMax); ++i)
        v[i] = static_cast<std::uint64_t>(i) < range.length
                   ? element_value<A>(f, xs[i], kInputs == 2 ? ys[i] : T{})
                   : absent_value<A>();
      if constexpr (is_var_state<A>::value) {
        int present[kThreadMax];
#pragma unroll
        for (int i = 0; i < static_cast<int>(kThreadMax); ++i)
          present[i] = static_cast<std::uint64_t>(i) < range.length ? 1 : 0;
        epilogue(s, range.length,
                 var_team_partial<var_sum_of<decltype(f)>>(
                     reinterpret_cast<const value_t<A>(&)[1][kThreadMax]>(v), present, v[0], 1));
      } else {
        epilogue(s, range.length, row_partial<A>(v, 1));
      }
    }
    // The rest by the whole warp, one at a time.
    // Not the long ones (the long kernel's). Each segment is a load round trip of the warp:
    // while it reads one, L2 fetches the next a.prefetch ones' first lines.
    unsigned pending = __ballot_sync(
        kFullMask, s < list.count && range.length > kAlone &&
                       !is_long(range.length, SegmentOrder::of(sizeof(T), range.length).tiles,
                                window));
    unsigned ahead = pending;  // not yet asked for
    auto ask = [&]() {
      const int who = __ffs(ahead) - 1;
      ahead &= ahead - 1;
      prefetch_lines(a.x, a.y, __shfl_sync(kFullMask, range.begin, who),
                     __shfl_sync(kFullMask, range.length, who), lane);
    };
    for (unsigned d = 0; d < a.prefetch && ahead != 0; ++d) ask();
    while (pending != 0) {
      const int who = __ffs(pending) - 1;
      pending &= pending - 1;
      if (ahead != 0 && a.prefetch != 0) ask();
      const std::int64_t begin = __shfl_sync(kFullMask, range.begin, who);
      const std::uint64_t length = __shfl_sync(kFullMask, range.length, who);
      const SegmentOrder order = SegmentOrder::of(sizeof(T), length);
      A total_s;
      if (length <= order.tile) {
        total_s = team_partial<T, A, kInputs>(a.x + begin, a.y != nullptr ? a.y + begin : nullptr,
                                              length, lane, 32, starts_aligned(a.x, a.y, begin),
                                              term.at(first + who));
      } else {
        const ReproArgs<T> r = segment_args(a, begin, length, order);
        total_s = tiles_partial<T, A, kInputs, kYVector>(r, 0, order.tiles, lane,
                                                         term.at(first + who));
      }
      if (lane == 0) epilogue(first + who, length, total_s);
    }
    // The long ones (few: each holds more than a window of elements) go to the chunk list,
    // asked for here, after the loop, so that nothing more is live through it.
    unsigned longs = __ballot_sync(
        kFullMask, s < list.count && range.length > kAlone &&
                       is_long(range.length, SegmentOrder::of(sizeof(T), range.length).tiles,
                               window));
    while (longs != 0) {
      const int who = __ffs(longs) - 1;
      longs &= longs - 1;
      list_chunks(a, first + who, __shfl_sync(kFullMask, range.length, who), window, lane);
    }
  }
  }  // kLaneRagged
  }  // ragged
}

template <class T, class A, int kInputs, bool kYVector, class Term, class Epilogue, int kPath>
__global__ void __launch_bounds__(kSegmentBlock)
    segment_short_kernel(SegmentArgs<T> a, Term term, Epilogue epilogue) {
  segment_short<T, A, kInputs, kYVector, Term, Epilogue, kPath>(a, term, epilogue);
}

//! The same, held to three blocks per SM: the short kernels of the states read in team rounds
//! (kTeamRoundsFor: var, var_mean and logsumexp) that the launcher's kThreeBlocks names (the
//! ragged lane kernel, kLaneRagged, for every type; the other paths where measured faster).
//! Before the team rounds ptxas gave f64's var 220 registers unbounded, and two blocks at 128
//! ran uniform 0..256 lengths 1.56 times as fast (session 48, H100). With them, three blocks (80
//! registers) against two (var's 96-128 registers; logsumexp bound-free: 116-127, f32's 80) ran
//! var and std_mean 7-21% and logsumexp 2-26% faster (f32 2%) in all 24 ragged cells of f32,
//! f64, f16 and bf16 (sessions 50 and 51, H100). (`__launch_bounds__(256, 1)` is not the bound-free form: ptxas gave every
//! other segment kernel more registers with it.)
template <class T, class A, int kInputs, bool kYVector, class Term, class Epilogue, int kPath>
__global__ void __launch_bounds__(kSegmentBlock, 3)
    segment_short_three_blocks_kernel(SegmentArgs<T> a, Term term, Epilogue epilogue) {
  segment_short<T, A, kInputs, kYVector, Term, Epilogue, kPath>(a, term, epilogue);
}

//! Long segments' chunks (see the top of the file).
template <class T, class A, int kInputs, bool kYVector, class Term>
__global__ void __launch_bounds__(kSegmentBlock)
    segment_long_kernel(SegmentArgs<T> a, Term term) {
  const unsigned lane = threadIdx.x & 31;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * (kSegmentBlock / 32);
  const std::uint64_t warp = static_cast<std::uint64_t>(blockIdx.x) * (kSegmentBlock / 32) +
                             threadIdx.x / 32;
  const SegmentList& list = a.segments;
  A* slots = static_cast<A*>(a.partials);

  if (list.offsets == nullptr) {
    const SegmentOrder order = SegmentOrder::of(sizeof(T), list.size);
    const std::uint64_t items = list.count * a.chunks;
    for (std::uint64_t item = warp; item < items; item += warps) {
      const std::uint64_t s = item / a.chunks;
      const std::uint64_t j = item - s * a.chunks;
      const ReproArgs<T> r =
          segment_args(a, static_cast<std::int64_t>(s * list.pitch), list.size, order);
      const std::uint64_t first = j * a.chunk_tiles;
      const std::uint64_t last = first + a.chunk_tiles < order.tiles ? first + a.chunk_tiles
                                                                     : order.tiles;
      const A partial = tiles_partial<T, A, kInputs, kYVector>(r, first, last, lane, term.at(s));
      if (lane == 0) slots[item] = partial;
    }
    return;
  }

  const std::int64_t base = list.offset(0);
  const std::int64_t end = list.offset(list.count);
  const std::uint64_t total = end > base ? static_cast<std::uint64_t>(end - base) : 0;
  const ChunkSlots chunk_slots{
      base, total,
      ChunkSlots::window_for(total, a.capacity, kChunkMinTiles * lanes_for(sizeof(T)) * kMinSteps)};
  const bool decreasing =
      (cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*a.flags).load(
           cuda::memory_order_relaxed) &
       kReproDecreasing) != 0;
  if (decreasing) {
    // Offsets that decrease somewhere cannot give each chunk its own slot: segment_fold_kernel
    // then reads each long segment whole, with one warp.
    return;
  }
  // The chunks segment_short_kernel listed, dealt to the warps in turn (none: the warps return
  // at once). Chunks of one segment are listed together, so neighbouring warps read neighbouring
  // chunks.
  const std::uint64_t listed = listed_chunks(chunk_count_of(a));
  for (std::uint64_t e = warp; e < listed; e += warps) {
    const unsigned long long code = chunk_entries_of(a)[e];
    const std::uint64_t s = code >> kChunkBits;
    const std::uint64_t j = code & ((std::uint64_t{1} << kChunkBits) - 1);
    const SegmentList::Range range = list(s);
    const SegmentOrder order = SegmentOrder::of(sizeof(T), range.length);
    const std::uint64_t per = chunk_tiles_for(order.tile, chunk_slots.window);
    const std::uint64_t span = per * order.tile;
    const ReproArgs<T> r = segment_args(a, range.begin, range.length, order);
    const std::uint64_t last = (j + 1) * per < order.tiles ? (j + 1) * per : order.tiles;
    const A partial = tiles_partial<T, A, kInputs, kYVector>(r, j * per, last, lane, term.at(s));
    if (lane == 0) slots[chunk_slots.slot(range.begin, j, span)] = partial;
  }
}

//! Folds each long segment's chunk partials in the tree and writes its result; for ragged
//! offsets that decrease somewhere, reads each long segment whole instead. The last block
//! resets the flags word.
template <class T, class A, int kInputs, bool kYVector, class Term, class Epilogue>
__global__ void __launch_bounds__(kSegmentBlock)
    segment_fold_kernel(SegmentArgs<T> a, Term term, Epilogue epilogue) {
  const unsigned lane = threadIdx.x & 31;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * (kSegmentBlock / 32);
  const std::uint64_t warp = static_cast<std::uint64_t>(blockIdx.x) * (kSegmentBlock / 32) +
                             threadIdx.x / 32;
  const SegmentList& list = a.segments;
  const A* slots = static_cast<const A*>(a.partials);

  // The fold of `count` values value(i), i < count, in the tree: lane r the aligned block of
  // `per` (a power of two) values from r per, then the warp's tree. In every lane.
  // The values are loaded kBatch at a time, all before the first push: a lane's block of a huge
  // segment (per = 128 values for 2^24 f32 elements in chunks of 4,096) is then per / kBatch
  // round trips to L2, not per.
  auto fold_values = [&](std::uint64_t count, auto value) {
    constexpr int kBatch = 8;
    std::uint64_t per = 1;
    while (per * 32 < count) per *= 2;
    TreeStack<A> stack;
    const std::uint64_t first = lane * per;
    const std::uint64_t stop = first + per < count ? first + per : count;
    for (std::uint64_t i = first; i < stop; i += kBatch) {
      A v[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) v[u] = i + u < stop ? value(i + u) : identity<A>();
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        if (i + u < stop) stack.push(v[u]);
    }
    return warp_tree(stack.total());
  };

  if (list.offsets == nullptr) {
    for (std::uint64_t s = warp; s < list.count; s += warps) {
      const A total = fold_values(a.chunks, [&](std::uint64_t j) {
        return load_partial(slots + s * a.chunks + j);
      });
      if (lane == 0) epilogue(s, list.size, total);
    }
    return;
  }

  const std::int64_t base = list.offset(0);
  const std::int64_t end = list.offset(list.count);
  const std::uint64_t total = end > base ? static_cast<std::uint64_t>(end - base) : 0;
  const ChunkSlots chunk_slots{
      base, total,
      ChunkSlots::window_for(total, a.capacity, kChunkMinTiles * lanes_for(sizeof(T)) * kMinSteps)};
  __shared__ bool decreasing;
  if (threadIdx.x == 0)
    decreasing = (cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*a.flags).load(
                      cuda::memory_order_relaxed) &
                  kReproDecreasing) != 0;
  __syncthreads();
  // The fold of long segment s, which starts at `begin`; for decreasing offsets its read, whole.
  auto finish = [&](std::uint64_t s, std::int64_t begin, std::uint64_t length) {
    const SegmentOrder order = SegmentOrder::of(sizeof(T), length);
    A result;
    if (decreasing) {
      const ReproArgs<T> r = segment_args(a, begin, length, order);
      result = tiles_partial<T, A, kInputs, kYVector>(r, 0, order.tiles, lane, term.at(s));
    } else {
      const std::uint64_t per = chunk_tiles_for(order.tile, chunk_slots.window);
      const std::uint64_t span = per * order.tile;
      const std::uint64_t chunks = (order.tiles + per - 1) / per;
      result = fold_values(chunks, [&](std::uint64_t j) {
        return load_partial(slots + chunk_slots.slot(begin, j, span));
      });
    }
    if (lane == 0) epilogue(s, length, result);
  };
  if (!decreasing) {
    // The long segments are those whose chunk 0 is in the chunk list.
    const std::uint64_t listed = listed_chunks(chunk_count_of(a));
    for (std::uint64_t first = warp * 32; first < listed; first += warps * 32) {
      const std::uint64_t e = first + lane;
      const unsigned long long code = e < listed ? chunk_entries_of(a)[e] : 1;
      const bool head = (code & ((std::uint64_t{1} << kChunkBits) - 1)) == 0;
      // A segment of at most 32 chunks is folded by the lane that found its chunk 0, alone: the
      // tree over its partials padded with -0 is the warp's tree over one partial per lane
      // (fold_values), and a warp folds up to 32 such segments at once.
      const std::uint64_t s = code >> kChunkBits;
      SegmentList::Range range{0, 0, false};
      std::uint64_t chunks = 0, span = 0;
      if (head) {
        range = list(s);
        const SegmentOrder order = SegmentOrder::of(sizeof(T), range.length);
        const std::uint64_t per = chunk_tiles_for(order.tile, chunk_slots.window);
        span = per * order.tile;
        chunks = (order.tiles + per - 1) / per;
      }
      if (head && chunks <= 32) {
        constexpr int kBatch = 8;
        TreeStack<A, 6> stack;
        for (std::uint64_t j = 0; j < chunks; j += kBatch) {
          A v[kBatch];
#pragma unroll
          for (int u = 0; u < kBatch; ++u)
            v[u] = j + u < chunks
                       ? load_partial(slots + chunk_slots.slot(range.begin, j + u, span))
                       : identity<A>();
#pragma unroll
          for (int u = 0; u < kBatch; ++u)
            if (j + u < chunks) stack.push(v[u]);
        }
        epilogue(s, range.length, stack.total());
      }
      // Longer ones by the whole warp, one at a time.
      unsigned heads = __ballot_sync(kFullMask, head && chunks > 32);
      while (heads != 0) {
        const int who = __ffs(heads) - 1;
        heads &= heads - 1;
        finish(__shfl_sync(kFullMask, s, who), __shfl_sync(kFullMask, range.begin, who),
               __shfl_sync(kFullMask, range.length, who));
      }
    }
  } else {
    // The list may have overflowed: every segment is looked at.
    for (std::uint64_t first = warp * 32; first < list.count; first += warps * 32) {
      const std::uint64_t s = first + lane;
      SegmentList::Range range{0, 0, false};
      if (s < list.count) range = list(s);
      const bool wanted = s < list.count &&
                          is_long(range.length, SegmentOrder::of(sizeof(T), range.length).tiles,
                                  chunk_slots.window);
      unsigned pending = __ballot_sync(kFullMask, wanted);
      while (pending != 0) {
        const int who = __ffs(pending) - 1;
        pending &= pending - 1;
        finish(first + who, __shfl_sync(kFullMask, range.begin, who),
               __shfl_sync(kFullMask, range.length, who));
      }
    }
  }
  // The last block to finish clears the flags word for the next call.
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*a.counter);
    if (counter.fetch_add(1u, cuda::memory_order_acq_rel) + 1 == gridDim.x) {
      counter.store(0u, cuda::memory_order_relaxed);
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*a.flags).fetch_and(
          ~kReproDecreasing, cuda::memory_order_relaxed);
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*chunk_count_of(a)).store(
          0u, cuda::memory_order_relaxed);
    }
  }
}

// ---- terms bound per segment, and the epilogues ---------------------------------------------

//! A term that does not depend on the segment.
template <class Term>
struct SameTerm {
  Term term;
  __device__ __forceinline__ Term at(std::uint64_t) const { return term; }
};

// The first pass's per-segment scalars lie `stride` elements apart (in the output itself where
// they fit: each segment reads its own before its result overwrites it, in the same thread or,
// for chunked segments, in an earlier kernel).
struct SegmentScaledSquare {  // f64 norm ord 2: (s x)^2 with s from max |x| of the segment
  const double* max_abs;
  std::uint64_t stride;
  __device__ __forceinline__ ScaledSquareTerm at(std::uint64_t s) const {
    return {norm2_scale(load_partial(max_abs + s * stride))};
  }
};

//! What a segment's result is, from its total: every op of the mode. `kind` picks the finish.
template <class A, class T>
struct SegmentEpilogue {
  enum Kind : int { plain, norm1, norm2 };
  void* out;
  std::uint64_t out_stride;  // results
  Kind kind;
  Op op;
  double correction;
  bool to_float;           // norm2 of f32 and bf16 (summed in double): the root as float
  const void* first_pass;  // f64 norm2: double max |x|
  std::uint64_t first_stride;  // elements of the first pass's type from one segment's to the next

  __device__ __forceinline__ void operator()(std::uint64_t s, std::uint64_t n, A total) const {
    const std::uint64_t at = s * out_stride;
    if (n == 0) total = A(0);  // the default mode's empty results follow from +0
    switch (kind) {
      case plain: {
        if (op == Op::mean) total = divide(total, static_cast<A>(n));
        put<A>(out, at, canonical(total));
        return;
      }
      case norm1: put<A>(out, at, canonical(total)); return;
      case norm2: {
        A value = portable::sqrt_rn(total);
        if constexpr (std::is_same_v<A, double>) {
          if (first_pass != nullptr)
            value = mul(value, norm2_unscale(norm2_scale(
                                   load_partial(static_cast<const double*>(first_pass) + s * first_stride))));
        }
        if (to_float) {
          put<float>(out, at, canonical(static_cast<float>(value)));
        } else {
          put<A>(out, at, canonical(value));
        }
        return;
      }
    }
  }
};

//! var, std, var_mean and std_mean from a segment's group (one pass): m2 over max(0, n -
//! correction), and for the pairs the plain sum over n (the gpu_to_gpu mean's bits); an empty
//! segment gives 0 / 0, NaN, as the default mode.
template <class A>
struct SegmentVarEpilogue {
  void* out;
  std::uint64_t out_stride;
  Op op;
  double correction;
  __device__ __forceinline__ void operator()(std::uint64_t s, std::uint64_t n,
                                             const VarState<A>& total) const {
    const std::uint64_t at = s * out_stride;
    const double d = static_cast<double>(n) - correction;
    A value = finish_var(n == 0 ? A(0) : total.m2, static_cast<A>(d > 0 ? d : 0.0));
    if (op == Op::std || op == Op::std_mean) value = portable::sqrt_rn(value);
    value = canonical(value);
    if (op == Op::var_mean || op == Op::std_mean) {
      const A mean = canonical(divide(n == 0 ? A(0) : total.sum, static_cast<A>(n)));
      put(out, at, StatPair<A>{value, mean});
    } else {
      put<A>(out, at, value);
    }
  }
};

//! logsumexp's result from a segment's merged pair (the identity's -inf for an empty segment).
template <class A>
struct SegmentLseEpilogue {
  void* out;
  std::uint64_t out_stride;
  __device__ __forceinline__ void operator()(std::uint64_t s, std::uint64_t,
                                             const LseState<A>& total) const {
    put<A>(out, s * out_stride, finish_logsumexp(total));
  }
};

// ---- the op table the segment and column launches share ---------------------------------------

//! An accumulator type and a count of input arrays, as a value for the table's visitors.
template <class A, int kInputs>
struct Accumulate {
  using type = A;
  static constexpr int inputs = kInputs;
};

//! The mode's op -> (accumulator, input arrays, term, epilogue) for every op whose term needs no
//! first pass: sum, mean, dot, the 1-norm, the 2-norm but f64's (a first pass of max |x| scales
//! it, so each launcher handles it), the var family and logsumexp. Calls
//! visit(Accumulate<A, k>{}, term, epilogue) and returns what it returns; false for the others.
//! Results go to out, out_stride results apart.
template <class T, class Visit>
bool visit_op(const Reduction& r, void* out, std::uint64_t out_stride, Visit&& visit) {
  using S = sum_t<T>;
  using Epi = SegmentEpilogue<S, T>;
  switch (r.op) {
    case Op::sum: case Op::mean:
      return visit(Accumulate<S, 1>{}, SameTerm<PlainTerm<1>>{},
                   Epi{out, out_stride, Epi::plain, r.op, 0, false, nullptr, 0});
    case Op::dot:
      return visit(Accumulate<S, 2>{}, SameTerm<PlainTerm<2>>{},
                   Epi{out, out_stride, Epi::plain, r.op, 0, false, nullptr, 0});
    case Op::norm:
      if (r.ord == 1) {
        return visit(Accumulate<S, 1>{}, SameTerm<AbsTerm>{},
                     Epi{out, out_stride, Epi::norm1, r.op, 0, false, nullptr, 0});
      }
      if constexpr (!std::is_same_v<T, double>) {
        if (r.ord == 2) {
          using A = norm2_acc_t<T>;
          using E = SegmentEpilogue<A, T>;
          return visit(Accumulate<A, 1>{}, SameTerm<SquareTerm>{},
                       E{out, out_stride, E::norm2, r.op, 0, !std::is_same_v<A, S>, nullptr, 0});
        }
      }
      return false;
    case Op::var: case Op::std: case Op::var_mean: case Op::std_mean: {
      // One pass: the groups merged in the order, the plain sum beside them for the pairs' mean.
      const SegmentVarEpilogue<S> epilogue{out, out_stride, r.op, r.correction};
      if (r.op == Op::var_mean || r.op == Op::std_mean)
        return visit(Accumulate<VarState<S>, 1>{}, SameTerm<VarTerm<true>>{}, epilogue);
      return visit(Accumulate<VarState<S>, 1>{}, SameTerm<VarTerm<false>>{}, epilogue);
    }
    case Op::logsumexp:
      // One pass: the pairs (m, s) merged in the order (reproducible_stats.hpp).
      return visit(Accumulate<LseState<S>, 1>{}, SameTerm<LseTerm>{},
                   SegmentLseEpilogue<S>{out, out_stride});
    default:
      return false;
  }
}

}  // namespace reducelab::detail::repro

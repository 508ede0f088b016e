#pragma once
// The gpu_to_gpu (reproducible) sum, dot and mean of the floating types: the fixed order of
// reproducible_plan.hpp, computed by warps. Every choice below that depends on the GPU (the grid,
// the block size, which warp takes which tile, which block folds) changes who adds, never what
// is added to what, so the bits do not depend on it.
//
// - A warp reduces one tile at a time (tiles dealt round-robin over every warp of the grid): lane
//   r loads the 16-byte vectors r, r + 32, ... of the tile's aligned span, so each of its kC
//   accumulators is one lane of the order, summed sequentially; the head of a span that does not
//   start on a 16-byte boundary is the previous tile's and is masked to the identity, -0 for a sum
//   (the extra vector at
//   the end brings the lanes that were masked). Tiles whose span would read outside [0, n) (the
//   first one of an offset pointer, the last one) take the same order with scalar loads.
// - The warp moves the lanes to their places in index space (a rotation by the pointer's offset
//   in its 16-byte line, by shuffles), adds them in the complete tree of adjacent pairs (in the
//   thread, then __shfl_xor over 1, 2, 4, 8, 16), and its lane 0 stores the tile's partial.
// - Each warp takes a contiguous run of tiles, a block the runs of its warps (or, for the plain
//   sums' tiles of 32 steps or more, tile t goes to warp t mod W). The tile partials
//   fold in two levels of the same tree: the block that contributes the last tiles of a group of
//   kGroupTiles (one ticket per block and group, counting tiles) folds the group, and the block
//   that completes the last group folds the groups and writes the result. (The plain sums' runs
//   of 2 to 4 groups take one ticket over all the tiles instead, and the last block folds them
//   all: settle_flat.) A grid of one block uses barriers instead of tickets.
//
// Additions and products are __fadd_rn / __dadd_rn / __fmul_rn / __dmul_rn: never contracted
// into a fused multiply-add, so the CPU (reproducible_cpu.cpp, -ffp-contract=off) gets the same
// bits.
//
// Cost, measured on the H200 (docs/results/h200-reproducible.md, 159c936): the bytes are the
// default kernel's (each input read once, 16-byte loads, 4 vectors in flight per thread); sum
// f32 costs +4% at 2^30, +6% at 2^27, +11% (+2.8 us) at 2^24 and 0.1..1.0 us at 2^10..2^20 over
// the default. The first version's one ticket and release fence per tile cost +124% at 2^24.
// Most of what is left is the reading that the order implies (session 39): a tile is one
// contiguous span read by one warp, so about 6,300 spans are read at once, and the same bytes
// move at ~89% of DRAM throughput against the default's grid-stride 93% (+5% at 2^27 and 2^30
// in a program that only adds, docs/notebook/raw/h200-access-patterns-session39.cu). On an H100
// (session 40, Nsight Compute, f32 sum 2^27) this kernel runs 179.5 us, that program's warp runs
// 178.3 and grid-stride 170.6: the reading is the cost there too. The order need not change for
// it: the same tiles dealt tile t to warp t mod W (consecutive warps on adjacent tiles) read
// within 1% of grid-stride in that program, as a new order's best deal does. The kernel takes
// that deal, with a ticket per block and round, for tiles of kRoundRobinSteps steps or more
// (below). Spreading the runs over every block (all 396, not 342) gained the program 1.5 points
// and this kernel nothing; it is not kept.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <cuda/atomic>
#include <type_traits>
#include <utility>

#include "device/vector_load.cuh"
#include "reduce/grid_step.cuh"
#include "reduce/reproducible_plan.hpp"
#include "reduce/reproducible_stats.hpp"
#include "reduce/traits.cuh"

namespace reducelab::detail::repro {

inline constexpr unsigned kFullMask = 0xffffffffu;

// IEEE round-to-nearest operations that the compiler may not contract.
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float divide(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double divide(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float canonical_nan(float) { return __int_as_float(0x7fffffff); }
__device__ __forceinline__ double canonical_nan(double) {
  return __longlong_as_double(0x7fffffffffffffffLL);
}

// The accumulator A is a number (sum_t<T>, or double for the 2-norm), whose "addition" is add()
// above and whose identity is -0, or logsumexp's pair (LseState, reproducible_stats.hpp), whose
// addition is lse_merge and identity (-inf, +0). The kernels below use only add(), identity() and
// the shuffles, so one order serves both.
template <class A>
__device__ __forceinline__ LseState<A> add(const LseState<A>& a, const LseState<A>& b) {
  return lse_merge(a, b);
}

// var's tiles (VarState, reproducible_stats.hpp) merge with var_merge, a its left operand: the
// trees over tiles take their operands in index order (warp_tree below).
template <class A>
__device__ __forceinline__ VarState<A> add(const VarState<A>& a, const VarState<A>& b) {
  return var_merge(a, b);
}

// f64's 2-norm (Norm2State, reproducible_stats.hpp): three sums and a max, component-wise.
template <class A>
__device__ __forceinline__ Norm2State<A> add(const Norm2State<A>& a, const Norm2State<A>& b) {
  return norm2_merge(a, b);
}

template <class A>
struct is_lse_state : std::false_type {};
template <class A>
struct is_lse_state<LseState<A>> : std::true_type {};
template <class A>
struct is_var_state : std::false_type {};
template <class A>
struct is_var_state<VarState<A>> : std::true_type {};
template <class A>
struct is_norm2_state : std::false_type {};
template <class A>
struct is_norm2_state<Norm2State<A>> : std::true_type {};

template <class A>
__device__ __forceinline__ A identity() {
  if constexpr (is_lse_state<A>::value) {
    return lse_identity<typename A::value_type>();
  } else if constexpr (is_var_state<A>::value) {
    return var_identity<typename A::value_type>();
  } else if constexpr (is_norm2_state<A>::value) {
    return norm2_identity<typename A::value_type>();
  } else {
    return -A(0);  // adding -0 changes nothing
  }
}

//! `shuffle` (a warp shuffle of one number) applied to each number of the accumulator.
template <class A, class Shuffle>
__device__ __forceinline__ A shuffled(const A& v, const Shuffle& shuffle) {
  if constexpr (is_lse_state<A>::value) {
    return {shuffle(v.m), shuffle(v.s)};
  } else if constexpr (is_var_state<A>::value) {
    return {shuffle(v.count), shuffle(v.shift), shuffle(v.mean), shuffle(v.m2), shuffle(v.sum)};
  } else if constexpr (is_norm2_state<A>::value) {
    return {shuffle(v.unit), shuffle(v.down), shuffle(v.up), shuffle(v.max_abs)};
  } else {
    return shuffle(v);
  }
}

template <class A>
__device__ __forceinline__ A shfl_xor(const A& v, int mask) {
  return shuffled(v, [mask](auto x) { return __shfl_xor_sync(kFullMask, x, mask); });
}

template <class A>
__device__ __forceinline__ A shfl(const A& v, unsigned source) {
  return shuffled(v, [source](auto x) { return __shfl_sync(kFullMask, x, source); });
}

template <class T>
struct ReproArgs {
  const T* x;
  const T* y;               // dot only
  std::uint64_t n;
  std::uint64_t steps;      // K
  std::uint64_t tiles;
  unsigned groups;
  unsigned offset;          // x's element offset in its 16-byte line
  void* partials;           // kMaxTiles tile partials, then kMaxGroups group partials
  std::uint64_t run;        // tiles per warp (contiguous; 0: dealt), set by launch_deal
  unsigned* counter;        // zero on entry, zero again on exit
  unsigned* group_counters; // kMaxGroups of them, the same
  unsigned flat;            // the one-level settle's tiles per lane (settle_flat), else 0
};

// f(x): the element widened, or the rounded product (dot).
template <class A, int kInputs, class T>
__device__ __forceinline__ A term(T x, T y) {
  if constexpr (kInputs == 2) {
    return mul(widen<A>(x), widen<A>(y));
  } else {
    return widen<A>(x);
  }
}

// The term f(x, y) of the order as tile_partial takes it: term() above. The statistics
// (reproducible_stats.cuh) pass their own (|x|, x x, (x - mean)^2) through the
// same loads and the same order.
template <int kInputs>
struct PlainTerm {
  __device__ PlainTerm bind() const { return *this; }
  template <class A, class T>
  __device__ __forceinline__ A apply(T x, T y) const {
    return term<A, kInputs>(x, y);
  }
};

// Lane r holds, in acc[j], lane (kC r + j - offset) mod P of the order; afterwards acc[j] is lane
// kC r + j. kO is the offset.
template <int kO, int kC, class A>
__device__ __forceinline__ void rotate_by(A (&acc)[kC], unsigned lane) {
  A out[kC];
#pragma unroll
  for (int j = 0; j < kC; ++j) {
    if (j + kO < kC) {
      out[j] = acc[j + kO];
    } else {
      out[j] = shfl(acc[j + kO - kC], (lane + 1) & 31);
    }
  }
#pragma unroll
  for (int j = 0; j < kC; ++j) acc[j] = out[j];
}

template <int kC, class A, int... kO>
__device__ __forceinline__ void rotate(A (&acc)[kC], unsigned offset, unsigned lane,
                                       std::integer_sequence<int, kO...>) {
  ((offset == static_cast<unsigned>(kO) + 1 ? rotate_by<kO + 1>(acc, lane) : void()), ...);
}

// The complete tree of adjacent pairs over v[0, kN) in the thread.
template <int kN, class A>
__device__ __forceinline__ A thread_tree(A (&v)[kN]) {
#pragma unroll
  for (int w = 1; w < kN; w *= 2) {
#pragma unroll
    for (int j = 0; j < kN; j += 2 * w) v[j] = add(v[j], v[j + w]);
  }
  return v[0];
}

// The complete tree of adjacent pairs over the 32 lanes' values; every lane gets the result
// (lane 0 adds left + right at every level, as the order says; the others the same two values
// the other way round, the same bits). var's merge of tiles is not symmetric: there each lane
// passes the lower lane's value as the left operand, so every lane merges the same two values
// in the same order (tree_level: one level, lanes m apart).
template <class A>
__device__ __forceinline__ A tree_level(const A& s, int m) {
  const A other = shfl_xor(s, m);
  if constexpr (is_var_state<A>::value) {
    return (threadIdx.x & static_cast<unsigned>(m)) != 0 ? add(other, s) : add(s, other);
  } else {
    return add(s, other);
  }
}

template <class A>
__device__ __forceinline__ A warp_tree(A s) {
#pragma unroll
  for (int m = 1; m < 32; m *= 2) s = tree_level(s, m);
  return s;
}

template <int kN, class A>
__device__ __forceinline__ A tree(A (&v)[kN]) {
  return warp_tree(thread_tree(v));
}

// ---- logsumexp's tile (reproducible_stats.hpp: batches of 4 steps, a running max per tile) ------

//! The max of v over the warp (IEEE maxNum), in every lane.
template <class S>
__device__ __forceinline__ S warp_max(S v) {
#pragma unroll
  for (int m = 1; m < 32; m *= 2) v = lse_max(v, __shfl_xor_sync(kFullMask, v, m));
  return v;
}

//! Adds to s[j] the terms of the batch's values v[u][j] under the running max m, step by step,
//! for u > 0 or j in [from, to) (the other elements of the first vector are another batch's). m
//! is the same in every lane, so the branch is the warp's.
template <int kB, int kC, class S>
__device__ __forceinline__ void lse_add_terms(S (&s)[kC], const S (&v)[kB][kC], S m, int from,
                                              int to) {
  if (lse_finite(m)) {
#pragma unroll
    for (int u = 0; u < kB; ++u)
#pragma unroll
      for (int j = 0; j < kC; ++j)
        if (u > 0 || (j >= from && j < to)) s[j] = add(s[j], lse_term(v[u][j], m));
  } else {
#pragma unroll
    for (int u = 0; u < kB; ++u)
#pragma unroll
      for (int j = 0; j < kC; ++j)
        if (u > 0 || (j >= from && j < to)) s[j] = add(s[j], lse_nan_term(v[u][j]));
  }
}

//! The batch's new running max: where it grows, every lane sum is rescaled by exp(m - next).
template <int kC, class S>
__device__ __forceinline__ void lse_raise(S (&s)[kC], S& m, S batch_max) {
  const S next = lse_max(m, batch_max);
  if (next != m) {  // the same in every lane
    const S scale = portable::exp_rn(portable::sub(m, next));
#pragma unroll
    for (int j = 0; j < kC; ++j) s[j] = mul(s[j], scale);
    m = next;
  }
}

//! Tile t's pair (its max, the tree of its lane sums), in every lane of the warp. The aligned
//! span as tile_partial reads it, a batch (4 vectors per lane) at a time; with an offset o,
//! lane 0's first o elements of a batch are the previous batch's (added under its max, before
//! the rescaling), and lane 0 loads the next batch's first vector too, whose first o elements
//! are this batch's (its max counts them; they are added with the next batch, or at the end).
//! Tiles whose span leaves [0, n) take each batch element by element, lanes in index order.
template <class T, class S>
__device__ __forceinline__ LseState<S> lse_tile_partial(const ReproArgs<T>& a, std::uint64_t t,
                                                        unsigned lane) {
  constexpr int kC = 16 / static_cast<int>(sizeof(T));
  constexpr int kBatch = static_cast<int>(kMinSteps);  // 4 steps: one vector each per lane
  const std::uint64_t tile = a.steps * 32 * kC;
  const std::uint64_t first = t * tile;
  const unsigned o = a.offset;
  S s[kC];
#pragma unroll
  for (int j = 0; j < kC; ++j) s[j] = -S(0);
  S m = -portable::infinity<S>();
  auto widened = [](const uint4& raw, S (&v)[kC]) {
    const device::Vec16<T> vec = device::Vec16<T>::from(raw);
#pragma unroll
    for (int j = 0; j < kC; ++j) v[j] = widen<S>(vec.element[j]);
  };

  const bool interior = (o == 0 || t > 0) && first + tile + (o != 0 ? kC - o : 0) <= a.n;
  if (interior) {
    const T* xs = a.x + first - o;
    S ahead[kC];  // lane 0: the first vector of the next batch (after the last: the extra one)
    for (std::uint64_t k = 0; k < a.steps; k += kBatch) {
      uint4 raw[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        raw[u] = device::load16<device::LoadHint::no_alloc>(xs + (lane + 32 * (k + u)) * kC);
      uint4 raw_ahead{};
      if (o != 0 && lane == 0)
        raw_ahead = device::load16<device::LoadHint::no_alloc>(xs + 32 * (k + kBatch) * kC);
      S v[kBatch][kC];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) widened(raw[u], v[u]);
      const int head = lane == 0 ? static_cast<int>(o) : 0;  // lane 0's previous-batch elements
      S batch = -portable::infinity<S>();
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
#pragma unroll
        for (int j = 0; j < kC; ++j)
          if (u > 0 || j >= head) batch = lse_max(batch, v[u][j]);
      if (o != 0 && lane == 0) {
        widened(raw_ahead, ahead);
#pragma unroll
        for (int j = 0; j < kC; ++j)
          if (j < static_cast<int>(o)) batch = lse_max(batch, ahead[j]);
      }
      batch = warp_max(batch);
      if (k > 0 && head > 0) {
        // The previous batch's last elements, under its max.
        const S(&first_vector)[1][kC] = reinterpret_cast<const S(&)[1][kC]>(v[0]);
        lse_add_terms(s, first_vector, m, 0, head);
      }
      lse_raise(s, m, batch);
      lse_add_terms(s, v, m, head, kC);
    }
    if (o != 0 && lane == 0) {
      const S(&last)[1][kC] = reinterpret_cast<const S(&)[1][kC]>(ahead);
      lse_add_terms(s, last, m, 0, static_cast<int>(o));
    }
    if (o != 0) rotate<kC>(s, o, lane, std::make_integer_sequence<int, kC - 1>{});
  } else {
    // Element by element: lane r's s[j] is lane r kC + j of the order (no rotation).
    const std::uint64_t end = first + tile < a.n ? first + tile : a.n;
    for (std::uint64_t k = 0; k < a.steps && first + k * 32 * kC < end; k += kBatch) {
      S v[kBatch][kC];
      bool in[kBatch][kC];
      S batch = -portable::infinity<S>();
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
#pragma unroll
        for (int j = 0; j < kC; ++j) {
          const std::uint64_t i = first + (k + u) * 32 * kC + lane * kC + j;
          in[u][j] = i < end;
          v[u][j] = in[u][j] ? widen<S>(a.x[i]) : -portable::infinity<S>();
          batch = lse_max(batch, v[u][j]);
        }
      }
      batch = warp_max(batch);
      lse_raise(s, m, batch);
      const bool finite = lse_finite(m);
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
#pragma unroll
        for (int j = 0; j < kC; ++j)
          if (in[u][j]) s[j] = add(s[j], finite ? lse_term(v[u][j], m) : lse_nan_term(v[u][j]));
      // (-inf elements past the end count for nothing in the max; they add nothing.)
    }
  }
  return {m, tree(s)};
}

// ---- var's tile (reproducible_stats.hpp: batches of 4 steps centred on the tile's first element)

//! The tree of adjacent pairs over the thread's kC lanes, then over the warp's (__shfl_xor: the
//! lanes' merge is symmetric), in every lane.
template <int kC, class S>
__device__ __forceinline__ VarState<S> var_lane_tree(VarState<S> (&v)[kC]) {
#pragma unroll
  for (int w = 1; w < kC; w *= 2) {
#pragma unroll
    for (int j = 0; j < kC; j += 2 * w) v[j] = var_merge_lanes(v[j], v[j + w]);
  }
  VarState<S> s = v[0];
#pragma unroll
  for (int m = 1; m < 32; m *= 2) s = var_merge_lanes(s, shfl_xor(s, m));
  return s;
}

//! var_lane_tree for lanes that all hold `count` elements (interior tiles): the same merges, with
//! each level's weights computed once (count 2^l count at level l: a power of two times the
//! batch count, so no division) and only the means, the m2 and (kSum) the sums shuffled.
template <bool kSum, int kC, class S>
__device__ __forceinline__ VarState<S> var_lane_tree_uniform(S (&mean)[kC], S (&m2)[kC],
                                                             S (&sum)[kC], double count) {
#pragma unroll
  for (int w = 1; w < kC; w *= 2) {
    const VarWeights<S> weights = var_weights<S>(count, count);
#pragma unroll
    for (int j = 0; j < kC; j += 2 * w) {
      var_merge_values(mean[j], m2[j], mean[j + w], m2[j + w], weights);
      if constexpr (kSum) sum[j] = add(sum[j], sum[j + w]);
    }
    count += count;
  }
  S m = mean[0], q = m2[0], s = sum[0];
#pragma unroll
  for (int l = 1; l < 32; l *= 2) {
    const VarWeights<S> weights = var_weights<S>(count, count);
    const S m_b = __shfl_xor_sync(kFullMask, m, l);
    const S q_b = __shfl_xor_sync(kFullMask, q, l);
    if constexpr (kSum) s = add(s, __shfl_xor_sync(kFullMask, s, l));
    var_merge_values(m, q, m_b, q_b, weights);
    count += count;
  }
  return {count, S(0), m, q, s};
}

//! Merges a batch of 4 elements per lane (w[u][j]: lane j's element of step u) into the lanes'
//! running groups of `count` elements each (the same count in every lane: interior tiles), as
//! var_batch and var_merge_lanes do: the batch's mean by a product with 1/4, the weights once for
//! the thread. With kSum, each lane's plain sum adds the elements one by one.
template <bool kSum, int kC, class S>
__device__ __forceinline__ void var_add_batch(S (&mean)[kC], S (&m2)[kC], S (&sum)[kC],
                                              const S (&w)[kVarBatch][kC], S shift, double count) {
  const VarWeights<S> weights = var_weights<S>(count, kVarBatch);
#pragma unroll
  for (int j = 0; j < kC; ++j) {
    S c[kVarBatch];
#pragma unroll
    for (int u = 0; u < kVarBatch; ++u) {
      c[u] = portable::sub(w[u][j], shift);
      if constexpr (kSum) sum[j] = add(sum[j], w[u][j]);
    }
    const VarState<S> batch = var_batch(c, kVarBatch);
    if (count == 0) {  // the same in every lane
      mean[j] = batch.mean;
      m2[j] = batch.m2;
    } else {
      var_merge_values(mean[j], m2[j], batch.mean, batch.m2, weights);
    }
  }
}

//! Tile t's group (count, its first element as the centre, mean, m2, and with kSum the lanes'
//! plain sums in the sum's tree), in every lane of the warp. The aligned span as tile_partial
//! reads it, a batch (4 vectors per lane) at a time; with an offset o, lane 0's first o
//! components hold lanes P - o .. P - 1 one step late: their batch is vectors 1 .. 3 and the
//! first vector of the next batch, which lane 0 loads ahead (after the last batch: the extra
//! vector). Tiles whose span leaves [0, n) take each batch element by element, lanes in index
//! order, each lane its own count.
template <class T, class S, bool kSum>
__device__ __forceinline__ VarState<S> var_tile_partial(const ReproArgs<T>& a, std::uint64_t t,
                                                        unsigned lane) {
  constexpr int kC = 16 / static_cast<int>(sizeof(T));
  constexpr int kBatch = kVarBatch;
  static_assert(kBatch == static_cast<int>(kMinSteps), "a tile is whole batches");
  const std::uint64_t tile = a.steps * 32 * kC;
  const std::uint64_t first = t * tile;
  const unsigned o = a.offset;
  const S shift = widen<S>(a.x[first]);
  S mean[kC], m2[kC], sum[kC];
  double count[kC];
#pragma unroll
  for (int j = 0; j < kC; ++j) {
    mean[j] = S(0);
    m2[j] = S(0);
    sum[j] = -S(0);
    count[j] = 0;
  }
  auto widened = [](const uint4& raw, S (&v)[kC]) {
    const device::Vec16<T> vec = device::Vec16<T>::from(raw);
#pragma unroll
    for (int j = 0; j < kC; ++j) v[j] = widen<S>(vec.element[j]);
  };

  const bool interior = (o == 0 || t > 0) && first + tile + (o != 0 ? kC - o : 0) <= a.n;
  VarState<S> lanes[kC];
  if (interior) {
    const T* xs = a.x + first - o;
    double done = 0;  // elements of each lane so far
    for (std::uint64_t k = 0; k < a.steps; k += kBatch) {
      uint4 raw[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        raw[u] = device::load16<device::LoadHint::no_alloc>(xs + (lane + 32 * (k + u)) * kC);
      S v[kBatch][kC];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) widened(raw[u], v[u]);
      if (o != 0) {  // the same in every lane
        uint4 raw_ahead{};
        if (lane == 0)
          raw_ahead = device::load16<device::LoadHint::no_alloc>(xs + 32 * (k + kBatch) * kC);
        S ahead[kC];
        widened(raw_ahead, ahead);
        S w[kBatch][kC];
#pragma unroll
        for (int j = 0; j < kC; ++j) {
          const bool late = lane == 0 && j < static_cast<int>(o);
#pragma unroll
          for (int u = 0; u < kBatch; ++u)
            w[u][j] = late ? (u + 1 < kBatch ? v[u + 1][j] : ahead[j]) : v[u][j];
        }
        var_add_batch<kSum>(mean, m2, sum, w, shift, done);
      } else {
        var_add_batch<kSum>(mean, m2, sum, v, shift, done);
      }
      done += kBatch;
    }
    if (o != 0) {
#pragma unroll
      for (int j = 0; j < kC; ++j) lanes[j] = {done, S(0), mean[j], m2[j], sum[j]};
      rotate<kC>(lanes, o, lane, std::make_integer_sequence<int, kC - 1>{});
#pragma unroll
      for (int j = 0; j < kC; ++j) {
        mean[j] = lanes[j].mean;
        m2[j] = lanes[j].m2;
        sum[j] = lanes[j].sum;
      }
    }
    VarState<S> total = var_lane_tree_uniform<kSum>(mean, m2, sum, done);
    total.shift = shift;
    return total;
  } else {
    // Element by element: lane r's component j is lane r kC + j of the order (no rotation).
    const std::uint64_t end = first + tile < a.n ? first + tile : a.n;
    for (std::uint64_t k = 0; k < a.steps && first + k * 32 * kC < end; k += kBatch) {
#pragma unroll
      for (int j = 0; j < kC; ++j) {
        S c[kBatch];
        int present = 0;
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
          const std::uint64_t i = first + (k + u) * 32 * kC + lane * kC + j;
          c[u] = S(0);
          if (i < end) {
            const S v = widen<S>(a.x[i]);
            c[u] = portable::sub(v, shift);
            if constexpr (kSum) sum[j] = add(sum[j], v);
            ++present;  // the present elements are the first ones
          }
        }
        if (present > 0) {
          const VarState<S> batch = var_batch(c, present);
          if (count[j] == 0) {
            mean[j] = batch.mean;
            m2[j] = batch.m2;
          } else {
            var_merge_values(mean[j], m2[j], batch.mean, batch.m2,
                             var_weights<S>(count[j], static_cast<double>(present)));
          }
          count[j] += present;
        }
      }
    }
#pragma unroll
    for (int j = 0; j < kC; ++j) lanes[j] = {count[j], S(0), mean[j], m2[j], sum[j]};
  }
  VarState<S> total = var_lane_tree(lanes);
  total.shift = shift;
  return total;
}

// ---- f64's 2-norm: an interior tile without the terms that cannot count ------------------------

//! Tile t's Norm2State for an interior tile at offset 0 (f64's 2-norm of a whole array), in
//! every lane: the same three sums and max, in the same order, as tile_partial with Norm2Term,
//! but a warp computes a batch's (2^-600 x)^2 and (2^600 x)^2 only where they can change the
//! result (with all three, an element takes 10 f64 operations; without them, 3):
//! - A term (2^-600 x)^2 of |x| < 2^60 is +0 ((x 2^-600)^2 < 2^-1080 rounds to +0), and the down
//!   sum counts only when m = max |x| >= 2^450, where it is positive: +0 terms then change no
//!   partial sum that is not zero, so not the result's bits. A batch whose elements are all
//!   below 2^60 (by their exponent bits: no NaN, no infinity) skips them, and a tile where no
//!   batch took any skips their tree (-0: the tree of identities).
//! - The up sum counts only when m < 2^-450. Once the warp has read an element with |x| >=
//!   2^-450, a NaN or an infinity, m >= 2^-450 (or a NaN took the max's place, and every sum is
//!   NaN anyway), so from there its up sums are NaN and it computes no more of them.
//! unit (x x) and the max are computed for every element, as before. Measured (session 43, one
//! H100, against the committed kernel on the same machine, cost over the default, two rounds):
//! 2^26 +14.7 / +14.9% -> +12.7 / +12.7%, 2^27 +9.4 / +9.1% -> +8.1 / +8.2%, 2^28 +7.6 / +7.6%
//! -> +6.0 / +6.2%, 2^30 +3.5% -> +3.0%; 2^22-2^24 unchanged; 2^20 +4.4 / +4.9 us -> +5.9 / +6.8
//! us. The f64 work was not what held the kernel back (Nsight Compute at 2^24: the same 59-60 us
//! with 27% of the issue slots busy before): its occupancy and the tile loop's spilled counters
//! are (docs/notebook/raw/h200-session43.md).
template <class T>
__device__ __forceinline__ Norm2State<double> norm2_interior_partial(const T* xs,
                                                                     std::uint64_t steps,
                                                                     unsigned lane) {
  static_assert(std::is_same_v<T, double>, "f64's 2-norm");
  constexpr int kC = 2;
  constexpr int kUnroll = 4;
  constexpr unsigned kDownFrom = 0x43b00000u;    // the high word of 2^60 (biased exponent 1083)
  constexpr unsigned kUpDeadFrom = 0x23d00000u;  // the high word of 2^-450 (biased exponent 573)
  const double down_scale = portable::pow2<double>(-600);
  const double up_scale = portable::pow2<double>(600);
  Norm2State<double> acc[kC];
#pragma unroll
  for (int j = 0; j < kC; ++j) acc[j] = norm2_identity<double>();
  bool any_down = false;  // warp-uniform, as up_live
  bool up_live = true;
  const uint4* px = reinterpret_cast<const uint4*>(xs) + lane;
  for (std::uint64_t k = 0; k < steps; k += kUnroll) {
    uint4 raw[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      raw[u] = device::load16<device::LoadHint::no_alloc>(px + 32 * u);
    px += 32 * kUnroll;
    double v[kUnroll][kC];
    unsigned high = 0;  // the largest |x|'s high word in the lane's batch
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const device::Vec16<double> vx = device::Vec16<double>::from(raw[u]);
#pragma unroll
      for (int j = 0; j < kC; ++j) {
        v[u][j] = vx.element[j];
        const unsigned h = static_cast<unsigned>(__double2hiint(v[u][j])) & 0x7fffffffu;
        high = h > high ? h : high;
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < kC; ++j) {
        const double m = portable::magnitude(v[u][j]);
        acc[j].unit = portable::add(acc[j].unit, portable::mul(v[u][j], v[u][j]));
        acc[j].max_abs = acc[j].max_abs >= m ? acc[j].max_abs : m;
      }
    }
    if (__any_sync(kFullMask, high >= kDownFrom)) {
      any_down = true;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int j = 0; j < kC; ++j) {
          const double d = portable::mul(v[u][j], down_scale);
          acc[j].down = portable::add(acc[j].down, portable::mul(d, d));
        }
      }
    }
    if (up_live) {
      if (__any_sync(kFullMask, high >= kUpDeadFrom)) {
        up_live = false;
      } else {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
          for (int j = 0; j < kC; ++j) {
            const double w = portable::mul(v[u][j], up_scale);
            acc[j].up = portable::add(acc[j].up, portable::mul(w, w));
          }
        }
      }
    }
  }
  // tile_partial's tree (thread_tree, then warp_tree), component by component: the down sums
  // only where a batch took them, the up sums only while they can count.
  Norm2State<double> s = norm2_merge(acc[0], acc[1]);
#pragma unroll
  for (int m = 1; m < 32; m *= 2) {
    const double unit = __shfl_xor_sync(kFullMask, s.unit, m);
    const double max_abs = __shfl_xor_sync(kFullMask, s.max_abs, m);
    s.unit = portable::add(s.unit, unit);
    s.max_abs = s.max_abs >= max_abs ? s.max_abs : max_abs;
    if (any_down) s.down = portable::add(s.down, __shfl_xor_sync(kFullMask, s.down, m));
    if (up_live) s.up = portable::add(s.up, __shfl_xor_sync(kFullMask, s.up, m));
  }
  if (!up_live) s.up = portable::canonical_nan<double>();
  return s;
}

// The partial of tile t, in every lane of the warp: the fixed-order sum of f.apply(x, y).
//! kPeel: the loop with its first batch peeled off (below), which the whole-array kernel takes
//! for f16 sum and mean; the segment kernels keep the loop as it was (scripts/sass_loads.py and
//! session 37's notebook: there the peel worsens their schedules).
template <class T, class A, int kInputs, bool kYVector, bool kPeel = false,
          class Term = PlainTerm<kInputs>>
__device__ __forceinline__ A tile_partial(const ReproArgs<T>& a, std::uint64_t t, unsigned lane,
                                          const Term& f = Term{}) {
  if constexpr (is_lse_state<A>::value) {
    return lse_tile_partial<T, typename A::value_type>(a, t, lane);
  } else if constexpr (is_var_state<A>::value) {
    return var_tile_partial<T, typename A::value_type, Term::kSum>(a, t, lane);
  } else {
  constexpr int kC = 16 / static_cast<int>(sizeof(T));
  constexpr int kUnroll = 4;  // vectors in flight per thread and array, as the default kernel
  static_assert(kMinSteps % kUnroll == 0, "a tile is whole batches");
  const std::uint64_t tile = a.steps * 32 * kC;
  const std::uint64_t first = t * tile;
  const unsigned o = a.offset;
  A acc[kC];
#pragma unroll
  for (int j = 0; j < kC; ++j) acc[j] = identity<A>();

  const bool interior = (o == 0 || t > 0) && first + tile + (o != 0 ? kC - o : 0) <= a.n;
  if (interior) {
    if constexpr (is_norm2_state<A>::value) {
      if (o == 0) return norm2_interior_partial(a.x + first, a.steps, lane);
    }
    // The aligned span: lane's vector k starts at element first + (lane + 32 k) kC - o.
    const T* xs = a.x + first - o;
    const T* ys = kInputs == 2 ? a.y + first - o : nullptr;
    auto use = [&](std::uint64_t k, const uint4& raw_x, const uint4& raw_y, int from) {
      const device::Vec16<T> vx = device::Vec16<T>::from(raw_x);
      device::Vec16<T> vy{};
      if constexpr (kInputs == 2 && kYVector) {
        vy = device::Vec16<T>::from(raw_y);
      } else if constexpr (kInputs == 2) {
#pragma unroll
        for (int j = 0; j < kC; ++j)
          if (j >= from) vy.element[j] = ys[(lane + 32 * k) * kC + j];
      }
#pragma unroll
      for (int j = 0; j < kC; ++j) {
        const A value = f.template apply<A>(vx.element[j], vy.element[j]);
        acc[j] = add(acc[j], j >= from ? value : identity<A>());  // changes nothing
      }
    };
    if constexpr (kPeel) {
      // A batch of the peeled loop: kUnroll vectors loaded, then added. Only a tile's first batch
      // masks anything (the head of the span, lane 0's first o elements, is the previous tile's).
      // For 4- and 8-byte elements the lane's vectors are read through a pointer that steps by
      // a batch (px, py) instead of an address recomputed from k in 64 bits: the same loads in
      // the same order, fewer registers, so ptxas keeps more of them in flight within the 40
      // that 3 blocks of 512 allow (reproducible_kernel). The 2-byte loop stays as measured.
      const uint4* px = reinterpret_cast<const uint4*>(xs) + lane;
      const uint4* py = kInputs == 2 ? reinterpret_cast<const uint4*>(ys) + lane : nullptr;
      auto batch = [&](std::uint64_t k, auto head) {
        uint4 rx[kUnroll];
        uint4 ry[kInputs == 2 && kYVector ? kUnroll : 1];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if constexpr (sizeof(T) >= 4) {
            rx[u] = device::load16<device::LoadHint::no_alloc>(px + 32 * u);
            if constexpr (kInputs == 2 && kYVector)
              ry[u] = device::load16<device::LoadHint::no_alloc>(py + 32 * u);
          } else {
            rx[u] = device::load16<device::LoadHint::no_alloc>(xs + (lane + 32 * (k + u)) * kC);
            if constexpr (kInputs == 2 && kYVector)
              ry[u] = device::load16<device::LoadHint::no_alloc>(ys + (lane + 32 * (k + u)) * kC);
          }
        }
        if constexpr (sizeof(T) >= 4) {
          px += 32 * kUnroll;
          if constexpr (kInputs == 2) py += 32 * kUnroll;
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int from = head && u == 0 && lane == 0 ? static_cast<int>(o) : 0;
          use(k + u, rx[u], ry[kInputs == 2 && kYVector ? u : 0], from);
        }
      };
      batch(0, std::true_type{});
      if constexpr (sizeof(T) >= 4) {
        // Unrolled by ptxas: the next batch's loads go out before this one's adds.
        for (std::uint64_t k = kUnroll; k < a.steps; k += kUnroll) batch(k, std::false_type{});
      } else {
        // Rolled (f16: 81 instructions a batch instead of 102, no per-element predicates).
#pragma unroll 1
        for (std::uint64_t k = kUnroll; k < a.steps; k += kUnroll) batch(k, std::false_type{});
      }
    } else {
      // The segment kernels' loop as it was written before the peel, kept verbatim: the same
      // batches in the same order, and ptxas schedules them at the segment kernels' register
      // budgets by the shape of this code. Writing it as batch(k, ...) moved their loads in
      // flight both ways (sass_loads.py: the f64 long kernel from [5, 5, 4, ...] to [1, 1, 1,
      // ...] at 64 registers), and so did defining the batch lambda outside the peeled branch,
      // unused; as it is, their SASS is the same as before the peel. It stays as measured.
      for (std::uint64_t k = 0; k < a.steps; k += kUnroll) {
        uint4 rx[kUnroll];
        uint4 ry[kInputs == 2 && kYVector ? kUnroll : 1];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          rx[u] = device::load16<device::LoadHint::no_alloc>(xs + (lane + 32 * (k + u)) * kC);
          if constexpr (kInputs == 2 && kYVector)
            ry[u] = device::load16<device::LoadHint::no_alloc>(ys + (lane + 32 * (k + u)) * kC);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          // The head of the span (lane 0's first o elements) is the previous tile's.
          const int from = (k + u == 0 && lane == 0) ? static_cast<int>(o) : 0;
          use(k + u, rx[u], ry[kInputs == 2 && kYVector ? u : 0], from);
        }
      }
    }
    if (o != 0 && lane == 0) {
      // The vector after the span: its first o elements are the tile's last, lanes P - o ...
      const std::uint64_t k = a.steps;
      const uint4 rx = device::load16<device::LoadHint::no_alloc>(xs + 32 * k * kC);
      uint4 ry{};
      if constexpr (kInputs == 2 && kYVector)
        ry = device::load16<device::LoadHint::no_alloc>(ys + 32 * k * kC);
      const device::Vec16<T> vx = device::Vec16<T>::from(rx);
      device::Vec16<T> vy{};
      if constexpr (kInputs == 2 && kYVector) {
        vy = device::Vec16<T>::from(ry);
      }
#pragma unroll
      for (int j = 0; j < kC; ++j) {
        if (j < static_cast<int>(o)) {
          if constexpr (kInputs == 2 && !kYVector) vy.element[j] = ys[32 * k * kC + j];
          acc[j] = add(acc[j], f.template apply<A>(vx.element[j], vy.element[j]));
        }
      }
    }
  } else {
    // The same order element by element, for the tiles whose span leaves [0, n): batches of
    // 16 elements per thread, every load of a batch issued before its first add.
    constexpr int kBatch = 16 / kC;
    const std::uint64_t end = first + tile < a.n ? first + tile : a.n;
    for (std::uint64_t k = 0; k <= a.steps; k += kBatch) {
      A value[kBatch][kC];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
#pragma unroll
        for (int j = 0; j < kC; ++j) {
          const std::uint64_t shifted = first + (lane + 32 * (k + u)) * kC + j;  // i + o
          const std::uint64_t i = shifted - o;
          value[u][j] = shifted >= first + o && shifted < end + o
                            ? f.template apply<A>(a.x[i], kInputs == 2 ? a.y[i] : T{})
                            : identity<A>();
        }
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
#pragma unroll
        for (int j = 0; j < kC; ++j) acc[j] = add(acc[j], value[u][j]);
      }
    }
  }
  if (o != 0) rotate<kC>(acc, o, lane, std::make_integer_sequence<int, kC - 1>{});
  return tree(acc);
  }
}

// The fold of partials[0, count) (count <= 32 kPer) in the complete tree of adjacent pairs,
// padded with the identity: lane r takes kPer consecutive partials, loaded and added 8 at a time
// (the tree of 8-leaf subtrees is the same tree) to keep the registers of the tile loop's. In
// every lane.
template <int kPer, class A>
__device__ __forceinline__ A fold(const A* partials, unsigned count, unsigned lane) {
  constexpr int kChunk = kPer < 8 ? kPer : 8;
  A part[kPer / kChunk];
#pragma unroll
  for (int c = 0; c < kPer / kChunk; ++c) {
    A v[kChunk];
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      const unsigned index = lane * kPer + c * kChunk + j;
      v[j] = index < count ? load_partial(partials + index) : identity<A>();
    }
    part[c] = thread_tree(v);
  }
  return tree(part);
}

// What the block that folds the last partial writes: for sum, dot and mean the total (mean: over
// n, rounded once), a NaN as the canonical NaN. The statistics have their own
// (reproducible_stats.cuh).
template <class A>
struct ResultEpilogue {
  void* out;
  std::uint64_t n;
  Op op;
  __device__ void operator()(A total) const {
    if (op == Op::mean) total = divide(total, static_cast<A>(n));
    if (total != total) total = canonical_nan(total);
    put<A>(out, 0, total);
  }
};
// The block's fold of its warps' values (each warp's `part`, in its lane 0 at least): warp 0
// folds the kWarps values padded with the identity to 32 lanes. Valid in warp 0. Called by every
// thread; `slots`: kWarps values of shared memory, free on entry and on exit.
template <int kBlock, class A>
__device__ __forceinline__ A fold_warps(const A& part, A* slots, unsigned warp, unsigned lane) {
  constexpr unsigned kWarps = kBlock / 32;
  if (lane == 0) slots[warp] = part;
  __syncthreads();
  A total = identity<A>();
  if (warp == 0) total = warp_tree(lane < kWarps ? slots[lane] : identity<A>());
  __syncthreads();  // slots free again
  return total;
}

// The fold of one group's tile partials (count <= kGroupTiles) by a whole block: warp w folds the
// aligned kGroupTiles / kWarps of them (a subtree of the group's tree), then warp 0 the kWarps
// subtree results (padded with the identity to 32 lanes: the same tree). Valid in warp 0. Called by
// every thread; `slots`: kWarps values of shared memory, free on entry and on exit.
template <int kBlock, class A>
__device__ __forceinline__ A fold_group(const A* tiles, unsigned count, A* slots, unsigned warp,
                                        unsigned lane) {
  constexpr unsigned kWarps = kBlock / 32;
  constexpr unsigned kSpan = static_cast<unsigned>(kGroupTiles) / kWarps;
  static_assert(kSpan % 32 == 0 && kWarps <= 32, "a warp folds whole lanes of the group");
  const unsigned begin = warp * kSpan;
  const unsigned mine = count > begin ? (count - begin < kSpan ? count - begin : kSpan) : 0;
  return fold_warps<kBlock>(fold<kSpan / 32>(tiles + begin, mine, lane), slots, warp, lane);
}

// Each warp of the grid takes a contiguous run of a.run tiles (the block's warps adjacent runs),
// so a block covers one contiguous range of tiles and takes one ticket per group it touches,
// counting the tiles it contributes: the counters count tiles, not blocks, so a block with no
// tiles takes no ticket, and a group is complete when its counter reaches its tile count. The
// block that completes a group folds it (all its warps), and the block that completes the last
// group folds the groups. Per call that is a few atomics per group instead of one per tile (the
// first version's 1,024 same-address atomics per group and a release fence per tile cost up to
// +28 us at 2^24 f32), and the runs are even: no last round with a fifth of the warps busy.
//
// The kernel sums term(x) (or term(x, y)) into accumulators of A and hands the total to
// `epilogue`: PlainTerm and ResultEpilogue for sum, dot and mean, the statistics' own terms (|x|,
// x x, f64's three scaled squares and |x| in a Norm2State) and epilogues for the rest
// (reproducible_stats.cuh); for logsumexp and var A is their state (LseState, VarState) and
// tile_partial is their own (lse_tile_partial, var_tile_partial). The term binds once per thread.
//! The plain sums (sum, mean, dot): the terms that may take the round-robin deal, and settle in
//! one level (kFlat).
template <class Term>
inline constexpr bool kPlainTerm =
    std::is_same_v<Term, PlainTerm<1>> || std::is_same_v<Term, PlainTerm<2>>;
//! Steps per tile (K) from which the plain sums deal tile t to warp t mod W (session 40, H100,
//! one binary, cost over the default, two rounds: K = 32: f32 sum 2^27 +5.9/+5.3% -> +4.7/+5.2%,
//! f64 sum 2^26 +7.9/+8.0% -> +5.6/+6.2%, f32 dot 2^27 +5.2/+4.6% -> +3.2/+3.6%; K = 64: f64 sum
//! 2^27 +5.9/+5.8% -> +3.2/+3.6%; K = 256, 512: sum 2^30 f32 +2.8% -> +1.3%, f64 +3.3% -> +1.6%;
//! K = 16: f32 sum 2^26 +4.6/+5.4% -> +9.1/+9.0%; K = 4: f32 sum 2^24 +8% -> +27%).
inline constexpr std::uint64_t kRoundRobinSteps = 32;

//! Blocks of kBlock threads per SM the kernel is built for: 1,536 threads (40 registers), or
//! 1,024 (64) where a thread's accumulators need more: logsumexp's and var's states, f64's
//! 2-norm (four doubles a lane), and the 2-norm of f32 and bf16, whose lanes sum in double (four
//! doubles a thread for f32). Under 40 registers the last spilled 104 bytes and its tile loop
//! waited on its first load with one in flight ([1, 3, 2, 1]; bf16 [2, 1, 2, 1]); under 64 it
//! keeps [4, 3, 2, 1] and no stack (scripts/sass_loads.py, session 42). f64's 2-norm under 40
//! registers, even with norm2_interior_partial's lighter loop, spilled 792 bytes, its loops
//! included: 2^24 +22% -> +68%, 2^27 +8% -> +25% over the default (session 43, H100).
template <class T, class A>
constexpr int min_blocks(int block) {
  constexpr bool kWide = is_lse_state<A>::value || is_var_state<A>::value ||
                         is_norm2_state<A>::value || (std::is_same_v<A, double> && sizeof(T) < 8);
  return (kWide ? 1024 : 1536) / block;
}

//! Tiles in group g of a plan of `tiles` tiles: kGroupTiles, or fewer in the last group.
__device__ __forceinline__ unsigned group_tiles(std::uint64_t tiles, std::uint64_t g) {
  const std::uint64_t left = tiles - g * kGroupTiles;
  return static_cast<unsigned>(left < kGroupTiles ? left : kGroupTiles);
}

//! What a block shares while it settles its tiles (settle_tiles).
template <int kBlock, class A>
struct SettleShared {
  A slots[kBlock / 32];  //!< fold_group's warp results
  unsigned completed;    //!< bit g - first group: this block completed group g
  bool folds_groups;     //!< this block completed the last group
};

//! The tickets for the tiles [lo, hi) whose partials this block's warps have just stored (lane 0
//! each): one per group the range touches, counting its tiles there. The block that completes a
//! group folds it (fold_group), and the block that completes the last group folds the groups
//! (the same ticket over groups, counted by the groups each block completed). Called by every
//! thread of the block, lo < hi. The first barrier orders the partials before thread 0's release
//! (cumulative), and in a completing block thread 0's acquire then the barrier order the other
//! members' partials before every thread's loads (as grid_step.cuh). The runs deal settles its
//! one range at the end, the round-robin deal each round's.
template <int kBlock, class A, class T, class Epilogue>
__device__ __forceinline__ void settle_tiles(const ReproArgs<T>& a, std::uint64_t lo,
                                             std::uint64_t hi, SettleShared<kBlock, A>& shared,
                                             unsigned warp, unsigned lane,
                                             const Epilogue& epilogue) {
  A* tile_slots = static_cast<A*>(a.partials);
  A* group_slots = tile_slots + kMaxTiles;
  auto group_size = [&](std::uint64_t g) { return group_tiles(a.tiles, g); };
  const unsigned first_group = static_cast<unsigned>(lo / kGroupTiles);
  const unsigned last_group = static_cast<unsigned>((hi - 1) / kGroupTiles);
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned mask = 0;
    for (unsigned g = first_group; g <= last_group; ++g) {
      const std::uint64_t from = g * kGroupTiles > lo ? g * kGroupTiles : lo;
      const std::uint64_t to = (g + 1) * kGroupTiles < hi ? (g + 1) * kGroupTiles : hi;
      const unsigned mine = static_cast<unsigned>(to - from);
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(a.group_counters[g]);
      if (counter.fetch_add(mine, cuda::memory_order_acq_rel) + mine == group_size(g)) {
        mask |= 1u << (g - first_group);
        counter.store(0u, cuda::memory_order_relaxed);  // every member has added: ready again
      }
    }
    shared.completed = mask;
  }
  __syncthreads();
  const unsigned mask = shared.completed;
  if (mask == 0) return;
  unsigned done = 0;
  for (unsigned g = first_group; g <= last_group; ++g) {
    if (!(mask & (1u << (g - first_group)))) continue;
    const A group = fold_group<kBlock>(tile_slots + g * kGroupTiles, group_size(g), shared.slots,
                                       warp, lane);
    if (threadIdx.x == 0) {
      if (a.groups == 1) {
        epilogue(group);
      } else {
        group_slots[g] = group;
      }
    }
    ++done;
  }
  if (a.groups == 1) return;
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*a.counter);
    shared.folds_groups = counter.fetch_add(done, cuda::memory_order_acq_rel) + done == a.groups;
    if (shared.folds_groups) counter.store(0u, cuda::memory_order_relaxed);
  }
  __syncthreads();
  if (shared.folds_groups && warp == 0) {
    const A total = fold<1>(group_slots, a.groups, lane);
    if (lane == 0) epilogue(total);
  }
}

//! The whole tree of the tile partials by one block, read coalesced: warp w takes the aligned
//! 32 per_lane tiles from 32 per_lane w, as blocks of 32 V tiles (V = 16 / sizeof(A) adjacent
//! partials, one 16-byte load a lane; V = per_lane where that is smaller). Lane l folds its V
//! adjacent partials, the warp's lanes fold the block (warp_tree), the blocks fold in order
//! through a binary counter (block c merges with the pending subtrees of the levels where c has
//! a one), and warp 0 folds the warps padded to 32 lanes: each step a subtree of the order's
//! tree, and with 512 per_lane >= the tiles rounded up to a power of two, the whole of it. The
//! identity stands past `count`. Valid in warp 0; `slots` as fold_group's. Rolled and small, so
//! it takes few registers from the tile loop of the kernel it is inlined in; each block waits on
//! its load, so the launcher gives it at most two blocks a warp (settle_flat). (A lane folding
//! per_lane consecutive partials, as fold_group does, would read 4 to 8 bytes a lane at a
//! stride of per_lane partials: 32 sectors a load.)
template <int kBlock, class A>
__device__ __forceinline__ A fold_all_tiles(const A* tiles, std::uint64_t count, unsigned per_lane,
                                            A* slots, unsigned warp, unsigned lane) {
  static_assert(std::is_same_v<A, float> || std::is_same_v<A, double>, "the plain sums' partials");
  constexpr unsigned kV = 16 / sizeof(A);
  constexpr int kLevels = 8;  // blocks a warp: up to 2^7 (kMaxTiles / kBlock / kV)
  static_assert(kMaxTiles / kBlock / kV <= (1u << (kLevels - 1)), "the counter's levels");
  const unsigned v = per_lane < kV ? per_lane : kV;
  const unsigned blocks = per_lane / v;
  const std::uint64_t begin = static_cast<std::uint64_t>(warp) * 32 * per_lane;
  A pending[kLevels];
  A x = identity<A>();
#pragma unroll 1
  for (unsigned c = 0; c < blocks; ++c) {
    const std::uint64_t first = begin + static_cast<std::uint64_t>(c) * 32 * v + lane * v;
    A e[kV];
    if (v == kV && first + kV <= count) {
      const uint4 raw = __ldcg(reinterpret_cast<const uint4*>(tiles + first));
      memcpy(e, &raw, 16);
    } else {
#pragma unroll
      for (unsigned j = 0; j < kV; ++j)
        e[j] = j < v && first + j < count ? load_partial(tiles + first + j) : identity<A>();
    }
    x = warp_tree(thread_tree(e));  // e's padding past v is the identity: the same subtree
#pragma unroll
    for (int l = 0; l < kLevels; ++l) {
      if ((c >> l & 1u) == 0) {
        pending[l] = x;
        break;
      }
      x = add(pending[l], x);
    }
  }
  // After the last block (c = blocks - 1, all ones below log2 blocks) x is the warp's tree.
  return fold_warps<kBlock>(x, slots, warp, lane);
}

//! The one-level settle of the tiles [lo, hi) (the runs' one range per block): one ticket over
//! all the tiles, counting tiles, and the block that completes them folds every tile partial
//! itself (fold_all_tiles, a.flat tiles a lane). Against settle_tiles it saves the group
//! tickets' second round on the critical path (an acq_rel atomic, a fold and two barriers) at
//! the price of one block reading all the partials. The barriers and fences as settle_tiles'.
//! Measured (session 42, H100, one binary, cost over the default, two rounds; two levels -> one):
//! - one 16-byte load a lane (f32 sum 2^20, 2,048 tiles): +1.09 / +0.80 us -> +0.06 / +0.11 us;
//!   f32 dot +1.07 / +0.80 -> -0.08 / +0.03 us;
//! - two (f32 2^21, 4,096 tiles; f64 2^19, 2,048): f32 sum +0.64 / +0.88 -> +0.54 / +0.40 us,
//!   f64 dot +1.01 / +0.91 -> +0.03 / +0.06 us, f64 sum +0.43 / +0.67 -> +0.34 / +0.18 us;
//! - four (f64 2^20): f64 sum +0.66 / +0.61 -> +0.90 / +0.98 us, worse; sixteen (f32 2^24):
//!   +2.4 / +2.6 us -> +8.1 / +8.0 us, the block's loads one after the other.
//! So the launcher takes it up to two loads a lane (kFlatLoads).
template <int kBlock, class A, class T, class Epilogue>
__device__ __forceinline__ void settle_flat(const ReproArgs<T>& a, std::uint64_t lo,
                                            std::uint64_t hi, SettleShared<kBlock, A>& shared,
                                            unsigned warp, unsigned lane,
                                            const Epilogue& epilogue) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned mine = static_cast<unsigned>(hi - lo);
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*a.counter);
    shared.folds_groups = counter.fetch_add(mine, cuda::memory_order_acq_rel) + mine == a.tiles;
    if (shared.folds_groups) counter.store(0u, cuda::memory_order_relaxed);
  }
  __syncthreads();
  if (!shared.folds_groups) return;
  const A total = fold_all_tiles<kBlock>(static_cast<const A*>(a.partials), a.tiles, a.flat,
                                         shared.slots, warp, lane);
  if (threadIdx.x == 0) epilogue(total);
}

//! kDealt: the kernel also holds the deal of tile t to warp t mod W (W the grid's warps), taken
//! when a.run == 0; the kernel without it holds the runs only. Two kernels because under 40
//! registers ptxas schedules f64's tile loop by what else the kernel holds (session 41, H100s,
//! cost over the default; docs/notebook/raw/h200-session41.md):
//! - the runs in a kernel that also holds the other deal (8de2982's one kernel): f64's loop has
//!   2-3 loads in flight at its waits instead of 4, and f64 sum costs +12-14% at 2^24; in a
//!   kernel of the runs only (2abe5c8's code), +6-7.5%;
//! - the round-robin deal in a kernel of its own: f64 sum +6.5% at 2^27, +10.5% at 2^26; beside
//!   the runs, as here, +3.5-4.5% and +6-7%. f32 and dot did not move either way.
//! kFlat: the runs (only) of the plain sums, settled in one level (settle_flat) instead of two
//! (settle_tiles); the launcher takes it for two groups or more where the folding block's lanes
//! read at most two 16-byte loads of partials (1,025 to 4,096 tiles of float partials, 1,025 to
//! 2,048 of double).
template <class T, class A, int kInputs, int kBlock, bool kYVector, class Term, class Epilogue,
          bool kDealt = false, bool kFlat = false>
__global__ void __launch_bounds__(kBlock, min_blocks<T, A>(kBlock))
    reproducible_kernel(ReproArgs<T> a, Term term, Epilogue epilogue) {
  const Term f = term.bind();
  // The peeled loop (tile_partial) for the plain one-input sums (sum and mean) of f32, f64 and
  // f16: faster for f16 and f64 (at 2^22-2^24), no slower for f32, which shares f64's code;
  // bf16, dot and the statistics keep the loop as it was.
  // - f16 (session 38, H100, one binary): 2^27 +13.9% -> +8.5% over the default; bf16 gained
  //   nothing from 2^22 (session 39, H200).
  // - f32 and f64 (session 40, H100, against e5f9fe1's binary in turn on one machine): with a
  //   pointer that steps by a batch the loop is 89 (f32) and 61 (f64) instructions with
  //   [4, 3, 3, 4, 4, ...] and [4, 3, 4, 4, ...] loads in flight at its waits, instead of 167
  //   and 132 instructions that recomputed each address from the step. Cost over the default,
  //   two rounds: f64 sum 2^22 +12/+12% -> +10/+8%, 2^23 +13/+16% -> +8/+7%, 2^24 +9/+9% ->
  //   +7/+7%; f32 sum within the rounds' spread at every size; 2^27 and 2^30 unchanged for both
  //   (docs/results/h200-reproducible.md, session 40). Session 38's peel, with the addresses
  //   from the step, had made f64 worse (+5.6% -> +7.6%).
  constexpr bool kPeelTiles = (std::is_same_v<T, __half> || sizeof(T) >= 4) &&
                              std::is_same_v<Term, PlainTerm<1>>;
  static_assert(!kDealt || kPlainTerm<Term>, "the round-robin deal is the plain sums'");
  static_assert(!kFlat || (kPlainTerm<Term> && !kDealt), "the one-level settle is the runs'");
  constexpr unsigned kWarps = kBlock / 32;
  const unsigned lane = threadIdx.x & 31;
  const unsigned warp = threadIdx.x / 32;
  A* tile_slots = static_cast<A*>(a.partials);
  A* group_slots = tile_slots + kMaxTiles;
  __shared__ SettleShared<kBlock, A> shared;

  if (gridDim.x == 1) {
    // One block: barriers instead of tickets.
    for (std::uint64_t t = warp; t < a.tiles; t += kWarps) {
      const A partial = tile_partial<T, A, kInputs, kYVector, kPeelTiles>(a, t, lane, f);
      if (lane == 0) tile_slots[t] = partial;
    }
    __syncthreads();
    for (unsigned g = warp; g < a.groups; g += kWarps) {
      const A partial =
          fold<kGroupTiles / 32>(tile_slots + g * kGroupTiles, group_tiles(a.tiles, g), lane);
      if (lane == 0) {
        if (a.groups == 1) {
          epilogue(partial);
        } else {
          group_slots[g] = partial;
        }
      }
    }
    if (a.groups == 1) return;
    __syncthreads();
    if (warp == 0) {
      const A total = fold<1>(group_slots, a.groups, lane);
      if (lane == 0) epilogue(total);
    }
    return;
  }

  if constexpr (kDealt) {
    if (a.run == 0) {
      // Tile t to warp t mod W: in round r block b holds the adjacent tiles r W + kWarps b ..
      // r W + kWarps b + kWarps - 1, so at each step the grid reads one dense front instead of
      // about 6,300 separate spans (session 40: in the access-pattern program this reading is
      // within 1% of grid-stride where the runs cost +3-5%). A block settles each round's tiles
      // (the same tickets, counting tiles), so groups complete round by round and their folds
      // happen during the reading; the last round's complete at the end. The launcher takes this
      // deal for tiles of kRoundRobinSteps steps or more: with shorter tiles the rounds' barriers
      // and folds cost more than the reading gives back.
      const std::uint64_t all_warps = static_cast<std::uint64_t>(gridDim.x) * kWarps;
      for (std::uint64_t lo = static_cast<std::uint64_t>(blockIdx.x) * kWarps; lo < a.tiles;
           lo += all_warps) {
        const std::uint64_t hi = lo + kWarps < a.tiles ? lo + kWarps : a.tiles;
        const std::uint64_t t = lo + warp;
        if (t < hi) {
          const A partial = tile_partial<T, A, kInputs, kYVector, kPeelTiles>(a, t, lane, f);
          if (lane == 0) tile_slots[t] = partial;
        }
        settle_tiles<kBlock, A>(a, lo, hi, shared, warp, lane, epilogue);
      }
      return;
    }
  }
  const std::uint64_t block_first = static_cast<std::uint64_t>(blockIdx.x) * kWarps * a.run;
  if (block_first >= a.tiles) return;  // no tiles, no ticket
  const std::uint64_t block_end =
      block_first + kWarps * a.run < a.tiles ? block_first + kWarps * a.run : a.tiles;
  const std::uint64_t run_first = block_first + warp * a.run;
  const std::uint64_t run_end = run_first + a.run < block_end ? run_first + a.run : block_end;
  for (std::uint64_t t = run_first; t < run_end; ++t) {
    const A partial = tile_partial<T, A, kInputs, kYVector, kPeelTiles>(a, t, lane, f);
    if (lane == 0) tile_slots[t] = partial;
  }
  if constexpr (kFlat) {
    settle_flat<kBlock, A>(a, block_first, block_end, shared, warp, lane, epilogue);
  } else {
    settle_tiles<kBlock, A>(a, block_first, block_end, shared, warp, lane, epilogue);
  }
}

}  // namespace reducelab::detail::repro

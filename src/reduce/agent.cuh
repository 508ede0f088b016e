#pragma once
// The per-range agent: how the threads of one or more teams read a range x[0, count) (and y for
// dot) and fold it into each thread's state. A scalar head (elements before the first 16-byte
// boundary of that range), a body of 16-byte vectors, and a scalar tail make any element-aligned
// pointer and any count work; the alignment is worked out per range, so a segmented caller can
// hand each segment to the agent as it is.
//
// The body goes in tiles of kTeam x kUnroll vectors: every thread issues kUnroll independent
// 16-byte loads (two per vector for dot) before it uses the first. Tiles are dealt to the teams
// that share the range in rounds, so no team runs a round alone at the end; what is left (less
// than one round) is one batch of up to kUnroll loads per thread across all of them.
//
// Element order: each thread visits its elements in increasing index order (head, body, tail),
// so argmin/argmax update with a strict comparison inside a thread (traits.cuh).
//
// A team is whoever shares one range: a CUDA block (the production reduce), a warp or a single
// thread (the segmented reduce, segmented.cuh). kTeam is its size and `rank` a thread's place in
// it; teams smaller than a 16-byte vector's element count take the head and tail in turns.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "device/vector_load.cuh"

namespace reducelab::detail {

//! How a range splits: `head` scalar elements up to the first 16-byte boundary, then `vectors`
//! 16-byte vectors, then count - head - vectors x (16 / sizeof(T)) scalar elements.
struct RangeSplit {
  std::size_t head;
  std::size_t vectors;
};

template <class T>
__host__ __device__ __forceinline__ RangeSplit split_range(const T* x, std::size_t count) {
  constexpr std::size_t kCount = 16 / sizeof(T);
  std::size_t head = ((16 - (reinterpret_cast<std::uintptr_t>(x) & 15)) & 15) / sizeof(T);
  if (head > count) head = count;
  return {head, (count - head) / kCount};
}

//! Traits with `kFoldsTiles` (var's Moments, logsumexp) fold a thread's whole tile of kUnroll
//! vectors in one update_vectors call instead of one update_vector per vector, where the team is
//! at most a warp (segment_teams_kernel's lanes, octets and warps). Block teams keep one update
//! per vector: with tiles, ptxas gave the f32 var blocks kernel 54 registers instead of 40 (two
//! blocks of 512 per SM instead of three) and the long kernel 32 bytes of spills.
template <class Traits, class = void>
struct folds_tiles : std::false_type {};
template <class Traits>
struct folds_tiles<Traits, std::void_t<decltype(Traits::kFoldsTiles)>>
    : std::bool_constant<Traits::kFoldsTiles> {};

//! `kYVector`: y shares x's offset inside a 16-byte line, so it is read as vectors too (else y
//! is read element by element where x is read as vectors).
template <class Traits, int kTeam, int kUnroll, device::LoadHint kHint, bool kYVector>
struct RangeAgent {
  using T = typename Traits::Elem;
  using State = typename Traits::State;
  using Vec = device::Vec16<T>;
  static constexpr int kCount = Vec::kCount;
  static constexpr bool kDot = Traits::kArrays == 2;
  static constexpr bool kLoadY = kDot && kYVector;
  static constexpr std::size_t kTile = static_cast<std::size_t>(kTeam) * kUnroll;
  static constexpr bool kFoldTiles = folds_tiles<Traits>::value && kTeam <= 32;
  //! Vectors per update_vectors call: up to 16 elements (a whole f32 or f64 tile, half an f16
  //! tile; 32 f16 elements at once took the f16 teams kernel to 108 registers).
  static constexpr int kFoldVectors = kUnroll < 16 / kCount ? kUnroll : 16 / kCount;

  //! Folds x[0, count) (split as `split`) into `state`, shared by `blocks` teams of kTeam
  //! threads, of which this thread is number `rank` in team number `block`. Indices given to
  //! Traits are relative to x.
  __device__ __forceinline__ static void consume(State& state, const T* x, const T* y,
                                                 std::size_t count, RangeSplit split,
                                                 unsigned rank, unsigned block, unsigned blocks) {
    const std::size_t thread = static_cast<std::size_t>(block) * kTeam + rank;
    const std::size_t threads = static_cast<std::size_t>(blocks) * kTeam;
    // Scalar indices [from, to), fewer than kCount of them: one per thread, or in turns.
    auto scalars = [&](std::size_t from, std::size_t to) {
      if constexpr (kTeam >= kCount) {
        if (thread < to - from) {
          const std::size_t i = from + thread;
          Traits::update(state, x[i], kDot ? y[i] : T{}, i);
        }
      } else {
        for (std::size_t i = from + thread; i < to; i += threads)
          Traits::update(state, x[i], kDot ? y[i] : T{}, i);
      }
    };

    // 1. Head: indices [0, head).
    scalars(0, split.head);

    // 2. Body: vectors [0, split.vectors) after the head.
    const T* xv = x + split.head;
    const T* yv = kDot ? y + split.head : nullptr;
    auto use = [&](std::size_t v, const uint4& raw_x, const uint4& raw_y) {
      const Vec vx = Vec::from(raw_x);
      Vec vy{};
      if constexpr (kLoadY) {
        vy = Vec::from(raw_y);
      } else if constexpr (kDot) {
#pragma unroll
        for (int j = 0; j < kCount; ++j) vy.element[j] = yv[v * kCount + j];
      }
      Traits::update_vector(state, vx.element, vy.element, split.head + v * kCount);
    };
    // Whole tiles, in rounds where every block gets one.
    const std::size_t full_tiles = split.vectors / kTile / blocks * blocks;
    for (std::size_t tile = block; tile < full_tiles; tile += blocks) {
      const std::size_t first = tile * kTile + rank;
      uint4 rx[kUnroll];
      uint4 ry[kLoadY ? kUnroll : 1];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        rx[u] = device::load16<kHint>(xv + (first + u * kTeam) * kCount);
        if constexpr (kLoadY) ry[u] = device::load16<kHint>(yv + (first + u * kTeam) * kCount);
      }
      if constexpr (kFoldTiles) {
        static_assert(!kDot, "tiles are folded for one-array traits");
        static_assert(kUnroll % kFoldVectors == 0, "a tile is whole groups of vectors");
#pragma unroll
        for (int g = 0; g < kUnroll; g += kFoldVectors) {
          T elements[kFoldVectors][kCount];
#pragma unroll
          for (int u = 0; u < kFoldVectors; ++u) {
            const Vec vx = Vec::from(rx[g + u]);
#pragma unroll
            for (int j = 0; j < kCount; ++j) elements[u][j] = vx.element[j];
          }
          Traits::update_vectors(state, elements);
        }
      } else {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) use(first + u * kTeam, rx[u], ry[kLoadY ? u : 0]);
      }
    }
    // The rest, fewer than one round: one batch of up to kUnroll loads per thread across all
    // the blocks, in increasing index order per thread.
    {
      const std::size_t first = full_tiles * kTile + thread;
      uint4 rx[kUnroll];
      uint4 ry[kLoadY ? kUnroll : 1];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::size_t v = first + u * threads;
        if (v < split.vectors) {
          rx[u] = device::load16<kHint>(xv + v * kCount);
          if constexpr (kLoadY) ry[u] = device::load16<kHint>(yv + v * kCount);
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::size_t v = first + u * threads;
        if (v < split.vectors) use(v, rx[u], ry[kLoadY ? u : 0]);
      }
    }

    // 3. Tail: indices [head + vectors x kCount, count).
    scalars(split.head + split.vectors * kCount, count);
  }

  //! The same where the team is the CUDA block (kTeam == blockDim.x): rank = threadIdx.x.
  __device__ __forceinline__ static void consume(State& state, const T* x, const T* y,
                                                 std::size_t count, RangeSplit split,
                                                 unsigned block, unsigned blocks) {
    consume(state, x, y, count, split, threadIdx.x, block, blocks);
  }
};

}  // namespace reducelab::detail

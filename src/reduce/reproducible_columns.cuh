#pragma once
// The gpu_to_gpu mode's column reductions read where the columns lie (reproducible_strided.cu
// picks it): the results whose reduced elements are one arithmetic progression (a single reduced
// axis: the columns of a matrix, a middle axis) and lie closer to each other in memory than
// their elements do, for the plain terms (sum, mean, dot, the 1-norm, the 2-norm but f64's, whose
// scale needs a first pass). Each result gets the bits of the whole-array gpu_to_gpu result of
// its elements (reproducible_plan.hpp), as the gather into rows gives them, with the input read
// once instead of three times (read, written as rows, read again).
//
// Who reads what (none of it changes the bits): a block of 32 x 8 threads takes 32 results
// (threadIdx.x: consecutive results, so a warp's load is one row of 32 neighbouring columns)
// and a chunk of at most kColumnChunk tiles of each, a power of two aligned in the tiles: a
// subtree of the result's tree. Thread y of the block holds lanes [y L, y L + L) of the order
// (L = P / 8: 16 for f32, 8 for f64, 32 for f16 and bf16), sums each lane's K elements of a
// tile sequentially, then their tree; the 8 threads' values of a tile fold in the tile's tree,
// the chunk's tiles in the tiles' tree (padded with -0). One chunk per result: the block writes
// the result; else the chunk partials go to the workspace and column_fold_kernel folds them.

#include <cstdint>

#include "reduce/reproducible_segments.cuh"
#include "reduce/reproducible_strided.hpp"

namespace reducelab::detail::repro {

inline constexpr unsigned kColumnsX = 32;  //!< results per block
inline constexpr unsigned kColumnsY = 8;   //!< lane groups per result: P / 8 lanes each
//! Tiles per chunk at most (a block's tiles of one result): the chunk's tile values wait in
//! shared memory (16 x 8 x 32 accumulators: 16 KB of float, 32 KB of double).
inline constexpr std::uint64_t kColumnChunk = 16;

template <class T>
struct ColumnArgs {
  const T* x;
  const T* y;              // dot only
  StridedMap map;
  std::uint64_t r0;        // the launch's first result
  std::uint64_t count;     // its results
  std::int64_t stride;     // reduced index k lies at k x stride from its result's first element
  std::uint64_t n;         // reduced elements per result
  std::uint64_t steps;     // K
  std::uint64_t tile;      // E = P x K
  std::uint64_t tiles;
  std::uint64_t chunk_tiles;  // a power of two <= kColumnChunk
  std::uint64_t chunks;       // ceil(tiles / chunk_tiles)
  void* partials;          // chunks x count accumulators, chunk-major (chunks > 1)
};

//! Blocks per SM the column kernel is built for: 4 (64 registers) where a thread's lanes fit,
//! 2 where they take more than 128 bytes (bf16's 2-norm: 32 lanes of double), which would spill.
template <class T, class A>
constexpr int column_min_blocks() {
  return (32 * (16 / static_cast<int>(sizeof(T))) / static_cast<int>(kColumnsY)) *
                     static_cast<int>(sizeof(A)) > 128 ? 2 : 4;
}

//! Results [blockIdx.x 32, + 32) of the launch, tiles [blockIdx.y chunk_tiles, + chunk_tiles).
template <class T, class A, int kInputs, class Term, class Epilogue>
__global__ void __launch_bounds__(kColumnsX * kColumnsY, column_min_blocks<T, A>())
    column_kernel(ColumnArgs<T> a, Term term, Epilogue epilogue) {
  constexpr int kC = 16 / static_cast<int>(sizeof(T));
  constexpr int kP = 32 * kC;                   // lanes of the order
  constexpr int kL = kP / static_cast<int>(kColumnsY);  // lanes per thread
  __shared__ A values[kColumnChunk][kColumnsY][kColumnsX];
  const unsigned tx = threadIdx.x;
  const unsigned ty = threadIdx.y;
  const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * kColumnsX + tx;
  const bool live = i < a.count;
  const T* xs = a.x + (live ? a.map.result_in(a.r0 + i) : 0);
  const T* ys = kInputs == 2 ? a.y + (xs - a.x) : nullptr;
  const auto f = term.at(i);
  const std::uint64_t t0 = static_cast<std::uint64_t>(blockIdx.y) * a.chunk_tiles;
  const std::uint64_t t_end = t0 + a.chunk_tiles < a.tiles ? t0 + a.chunk_tiles : a.tiles;
  for (std::uint64_t t = t0; t < t_end; ++t) {
    A acc[kL];
#pragma unroll
    for (int j = 0; j < kL; ++j) acc[j] = identity<A>();
    if (live) {
      for (std::uint64_t m = 0; m < a.steps; ++m) {
        const std::uint64_t k0 = t * a.tile + m * kP + ty * kL;  // lane ty L's element of step m
        const std::int64_t at = static_cast<std::int64_t>(k0) * a.stride;
        if (k0 + kL <= a.n) {
          T vx[kL];
          T vy[kL];
#pragma unroll
          for (int j = 0; j < kL; ++j) {
            vx[j] = xs[at + j * a.stride];
            if constexpr (kInputs == 2) vy[j] = ys[at + j * a.stride];
          }
#pragma unroll
          for (int j = 0; j < kL; ++j)
            acc[j] = add(acc[j], f.template apply<A>(vx[j], kInputs == 2 ? vy[j] : T{}));
        } else {
#pragma unroll
          for (int j = 0; j < kL; ++j) {
            if (k0 + j < a.n) {
              const std::int64_t o = at + j * a.stride;
              acc[j] = add(acc[j], f.template apply<A>(xs[o], kInputs == 2 ? ys[o] : T{}));
            }
          }
        }
      }
    }
    values[t - t0][ty][tx] = thread_tree(acc);
  }
  __syncthreads();
  if (ty != 0 || !live) return;
  // Tile c's 8 subtrees, then the chunk's tiles, padded with -0 (absent tiles add nothing).
  A chunk[kColumnChunk];
#pragma unroll
  for (int c = 0; c < static_cast<int>(kColumnChunk); ++c) {
    if (t0 + c < t_end) {
      A lanes[kColumnsY];
#pragma unroll
      for (int g = 0; g < static_cast<int>(kColumnsY); ++g) lanes[g] = values[c][g][tx];
      chunk[c] = thread_tree(lanes);
    } else {
      chunk[c] = identity<A>();
    }
  }
  const A total = thread_tree(chunk);
  if (a.chunks == 1) {
    epilogue(i, a.n, total);
  } else {
    static_cast<A*>(a.partials)[blockIdx.y * a.count + i] = total;
  }
}

//! Each result's chunk partials in the tiles' tree (TreeStack: the complete tree padded with -0).
template <class A, class Epilogue>
__global__ void __launch_bounds__(256)
    column_fold_kernel(const A* partials, std::uint64_t count, std::uint64_t chunks,
                       std::uint64_t n, Epilogue epilogue) {
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    TreeStack<A> stack;
    for (std::uint64_t c = 0; c < chunks; ++c) stack.push(load_partial(partials + c * count + i));
    epilogue(i, n, stack.total());
  }
}

}  // namespace reducelab::detail::repro

#pragma once
// The gpu_to_gpu mode's column reductions read where the columns lie (reproducible_strided.cu
// picks it): the results whose reduced elements are one arithmetic progression (a single reduced
// axis: the columns of a matrix, a middle axis) and lie closer to each other in memory than
// their elements do, for every op of the mode. Each result gets the bits of the whole-array
// gpu_to_gpu result of its elements (reproducible_plan.hpp), as the gather into rows gives them,
// with the input read once instead of three times (read, written as rows, read again).
//
// Who reads what (none of it changes the bits): a block of 32 x Y threads (ColumnThread) takes
// 32 results (a warp's 32 threads: consecutive results, so its load is one row of 32
// neighbouring columns)
// and a chunk of at most kColumnChunk tiles of each (kVarColumnChunk for var), a power of two
// aligned in the tiles: a subtree of the result's tree. Thread y of the block holds lanes
// [y L, y L + L) of the order (L = P / Y).
// - column_kernel (sum, mean, dot, the norms; Y = 8, so L = 16 for f32, 8 for f64, 32 for f16 and
//   bf16) sums each lane's K elements of a tile sequentially, then their tree; the 8 threads'
//   values of a tile fold in the tile's tree, the chunk's tiles in the tiles' tree (padded
//   with -0). f64's 2-norm scales by each result's max |x|, which the default mode's strided
//   kernel writes into the output first.
// - column_var_kernel (var, std, var_mean, std_mean) and column_lse_kernel (logsumexp) hold a
//   thread's batch (4 steps of its L = 16 lanes, 8 for f64; Y = 16 for 2-byte types) in
//   registers, then merge it as var_tile_partial and lse_tile_partial do (logsumexp finds the
//   batch's max over the block's threads through shared memory first).
// One chunk per result: the block writes the result; else the chunk partials go to the
// workspace (or to scratch when they do not fit: reproducible_strided.cu) and
// column_fold_kernel folds them, a warp per result.

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

//! What a thread of every column kernel takes: result i of the launch (tx: 32 consecutive
//! results a warp, so that a warp's load is one row of neighbouring columns), lane group ty (the
//! block's warp), the result's first element, and the block's chunk of tiles [t0, t_end). Blocks
//! are one-dimensional: kColumnsX x the kernel's lane groups threads.
template <class T>
struct ColumnThread {
  unsigned tx;
  unsigned ty;
  std::uint64_t i;
  bool live;
  const T* xs;  // a.x where the thread has no result
  std::uint64_t t0;
  std::uint64_t t_end;

  __device__ explicit ColumnThread(const ColumnArgs<T>& a)
      : tx(threadIdx.x % kColumnsX),
        ty(threadIdx.x / kColumnsX),
        i(static_cast<std::uint64_t>(blockIdx.x) * kColumnsX + tx),
        live(i < a.count),
        xs(a.x + (live ? a.map.result_in(a.r0 + i) : 0)),
        t0(static_cast<std::uint64_t>(blockIdx.y) * a.chunk_tiles),
        t_end(t0 + a.chunk_tiles < a.tiles ? t0 + a.chunk_tiles : a.tiles) {}
};

//! A chunk's total: the result where the chunk is the result's only one, else the chunk's
//! partial for column_fold_kernel.
template <class A, class T, class Epilogue>
__device__ __forceinline__ void finish_chunk(const ColumnArgs<T>& a, std::uint64_t i,
                                             const A& total, const Epilogue& epilogue) {
  if (a.chunks == 1) {
    epilogue(i, a.n, total);
  } else {
    static_cast<A*>(a.partials)[blockIdx.y * a.count + i] = total;
  }
}

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
  const ColumnThread<T> me(a);
  const auto [tx, ty, i, live, xs, t0, t_end] = me;
  const T* ys = kInputs == 2 ? a.y + (xs - a.x) : nullptr;
  const auto f = term.at(live ? i : 0);  // a term may read per result (f64 2-norm's scale)
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
  finish_chunk(a, i, thread_tree(chunk), epilogue);
}

// ---- the statistics that hold the elements: var's groups and logsumexp's pairs ----------------

//! Lane groups per result of the var and logsumexp column kernels: 16 lanes a thread (8 for
//! f64), so that a thread's batch (4 steps of its lanes) waits in 64 registers; a block is 32 x
//! 16 threads for 2-byte types, 32 x 8 for the others.
template <class T>
constexpr unsigned stats_groups() {
  return sizeof(T) == 2 ? 16 : 8;
}
//! Blocks per SM they are built for: 128 registers a thread.
template <class T>
constexpr int stats_min_blocks() {
  return sizeof(T) == 2 ? 1 : 2;
}

//! Tiles per chunk at most for var: a chunk's groups wait in shared memory (4 x 16 x 32 x 16
//! bytes for float; 4 x 8 x 32 x 28 for double).
inline constexpr std::uint64_t kVarColumnChunk = 4;

//! Loads a thread's batch: raw[u][j] is lane `first`-relative j's element of step u (k = first +
//! u P + j), those < n; the others are left zero and must not be used.
template <int kL, class T>
__device__ __forceinline__ void load_column_batch(T (&raw)[kVarBatch][kL], const T* xs,
                                                  std::int64_t stride, std::uint64_t first,
                                                  std::uint64_t n, std::uint64_t lanes) {
#pragma unroll
  for (int u = 0; u < kVarBatch; ++u)
#pragma unroll
    for (int j = 0; j < kL; ++j) {
      const std::uint64_t k = first + u * lanes + j;
      raw[u][j] = k < n ? xs[static_cast<std::int64_t>(k) * stride] : T{};
    }
}

//! var's group of lanes [kJ, kJ + kN) of a thread's kL lanes over a tile of K = 4 steps (one
//! batch each, in registers): lane j's present elements (k = first + j + u P < n, the first ones)
//! centred on `shift` give var_batch's group, and the lanes merge in the tree of adjacent pairs
//! (var_merge_lanes; a lane with no elements is the empty group). The same operations as
//! var_tile_partial: there a lane's single batch is its group too.
template <int kJ, int kN, bool kSum, int kL, class T, class S>
__device__ __forceinline__ VarState<S> var_batch_subtree(const T (&raw)[kVarBatch][kL],
                                                         std::uint64_t first, std::uint64_t n,
                                                         std::uint64_t lanes, S shift) {
  if constexpr (kN == 1) {
    S c[kVarBatch];
    S sum = -S(0);
    int present = 0;
#pragma unroll
    for (int u = 0; u < kVarBatch; ++u) {
      c[u] = S(0);
      if (first + kJ + u * lanes < n) {
        const S v = widen<S>(raw[u][kJ]);
        c[u] = portable::sub(v, shift);
        if constexpr (kSum) sum = add(sum, v);
        ++present;
      }
    }
    if (present == 0) return var_identity<S>();
    const VarState<S> batch = var_batch(c, present);
    return {static_cast<double>(present), S(0), batch.mean, batch.m2, sum};
  } else {
    const VarState<S> left =
        var_batch_subtree<kJ, kN / 2, kSum>(raw, first, n, lanes, shift);
    const VarState<S> right =
        var_batch_subtree<kJ + kN / 2, kN / 2, kSum>(raw, first, n, lanes, shift);
    return var_merge_lanes(left, right);
  }
}

//! The same for K > 4 (columns of over 2^24 f32 elements, 2^23 f64, 2^25 f16): lane j's batches
//! merged into its group one after the other (var_merge_values with the weights of its count and
//! the batch's), loaded a lane at a time. Correct, not fast: such columns are rare.
template <int kN, bool kSum, class T, class S>
__device__ __forceinline__ VarState<S> column_var_lanes(const T* xs, std::int64_t stride,
                                                        std::uint64_t first, std::uint64_t n,
                                                        std::uint64_t steps, std::uint64_t lanes,
                                                        S shift) {
  if constexpr (kN == 1) {
    S mean = S(0), m2 = S(0), sum = -S(0);
    double count = 0;
    for (std::uint64_t m = 0; m < steps && first + m * lanes < n; m += kVarBatch) {
      S c[kVarBatch];
      int present = 0;
#pragma unroll
      for (int u = 0; u < kVarBatch; ++u) {
        const std::uint64_t k = first + (m + u) * lanes;
        c[u] = S(0);
        if (k < n) {  // the present elements are the first ones
          const S v = widen<S>(xs[static_cast<std::int64_t>(k) * stride]);
          c[u] = portable::sub(v, shift);
          if constexpr (kSum) sum = add(sum, v);
          ++present;
        }
      }
      const VarState<S> batch = var_batch(c, present);
      if (count == 0) {
        mean = batch.mean;
        m2 = batch.m2;
      } else {
        var_merge_values(mean, m2, batch.mean, batch.m2,
                         var_weights<S>(count, static_cast<double>(present)));
      }
      count += present;
    }
    return {count, S(0), mean, m2, sum};
  } else {
    const VarState<S> left =
        column_var_lanes<kN / 2, kSum>(xs, stride, first, n, steps, lanes, shift);
    const VarState<S> right =
        column_var_lanes<kN / 2, kSum>(xs, stride, first + kN / 2, n, steps, lanes, shift);
    return var_merge_lanes(left, right);
  }
}

//! column_kernel for var's groups: thread y's lanes of each tile in their subtree (from its
//! batch in registers when K = 4), the threads' subtrees in the tile's tree (var_merge_lanes),
//! the tile's first element as its centre, the chunk's tiles in the tiles' tree (var_merge,
//! padded with the empty group).
template <class T, class S, bool kSum, class Epilogue>
__global__ void __launch_bounds__(kColumnsX * stats_groups<T>(), stats_min_blocks<T>())
    column_var_kernel(ColumnArgs<T> a, Epilogue epilogue) {
  using V = VarState<S>;
  constexpr int kY = static_cast<int>(stats_groups<T>());
  constexpr int kC = 16 / static_cast<int>(sizeof(T));
  constexpr int kP = 32 * kC;
  constexpr int kL = kP / kY;
  // A chunk's groups (count, mean, m2, sum) and each tile's centre.
  __shared__ float counts[kVarColumnChunk][kY][kColumnsX];
  __shared__ S means[kVarColumnChunk][kY][kColumnsX];
  __shared__ S m2s[kVarColumnChunk][kY][kColumnsX];
  __shared__ S sums[kVarColumnChunk][kY][kColumnsX];
  __shared__ S shifts[kVarColumnChunk][kColumnsX];
  const ColumnThread<T> me(a);
  const auto [tx, ty, i, live, xs, t0, t_end] = me;
  for (std::uint64_t t = t0; t < t_end; ++t) {
    V group = var_identity<S>();
    S shift = S(0);
    if (live) {
      const std::uint64_t first = t * a.tile;
      const std::uint64_t mine = first + ty * kL;  // the thread's first lane, step 0
      if (a.steps == kVarBatch) {
        T raw[kVarBatch][kL];
        load_column_batch(raw, xs, a.stride, mine, a.n, kP);
        shift = widen<S>(xs[static_cast<std::int64_t>(first) * a.stride]);
        group = var_batch_subtree<0, kL, kSum>(raw, mine, a.n, kP, shift);
      } else {
        shift = widen<S>(xs[static_cast<std::int64_t>(first) * a.stride]);
        group = column_var_lanes<kL, kSum>(xs, a.stride, mine, a.n, a.steps, kP, shift);
      }
    }
    const std::uint64_t c = t - t0;
    counts[c][ty][tx] = static_cast<float>(group.count);  // at most P K / kY: exact
    means[c][ty][tx] = group.mean;
    m2s[c][ty][tx] = group.m2;
    sums[c][ty][tx] = group.sum;
    if (ty == 0) shifts[c][tx] = shift;
  }
  __syncthreads();
  if (ty != 0 || !live) return;
  V chunk[kVarColumnChunk];
#pragma unroll
  for (int c = 0; c < static_cast<int>(kVarColumnChunk); ++c) {
    if (t0 + c < t_end) {
      V g[kY];
#pragma unroll
      for (int y = 0; y < kY; ++y)
        g[y] = {static_cast<double>(counts[c][y][tx]), S(0), means[c][y][tx], m2s[c][y][tx],
                sums[c][y][tx]};
#pragma unroll
      for (int w = 1; w < kY; w *= 2) {
#pragma unroll
        for (int y = 0; y < kY; y += 2 * w) g[y] = var_merge_lanes(g[y], g[y + w]);
      }
      chunk[c] = g[0];
      chunk[c].shift = shifts[c][tx];
    } else {
      chunk[c] = var_identity<S>();
    }
  }
  finish_chunk(a, i, thread_tree(chunk), epilogue);  // var_merge, left to right
}

//! column_kernel for logsumexp's pairs (reproducible_stats.hpp): each batch of 4 steps of a tile
//! waits in registers while its max over the tile's P lanes is found (each thread's lanes, then
//! the threads' maxima through shared memory: max is order-free); then its terms are added under
//! the raised running max (lse_raise, lse_term: the same operations as lse_tile_partial). A
//! tile's lane sums fold in its tree (the thread's lanes, then the threads' subtrees), the
//! chunk's tiles in the tiles' tree (lse_merge, padded with the identity).
template <class T, class S, class Epilogue>
__global__ void __launch_bounds__(kColumnsX * stats_groups<T>(), stats_min_blocks<T>())
    column_lse_kernel(ColumnArgs<T> a, Epilogue epilogue) {
  constexpr int kY = static_cast<int>(stats_groups<T>());
  constexpr int kC = 16 / static_cast<int>(sizeof(T));
  constexpr int kP = 32 * kC;
  constexpr int kL = kP / kY;
  constexpr int kBatch = kVarBatch;
  static_assert(kBatch == static_cast<int>(kMinSteps), "a tile is whole batches");
  __shared__ S maxima[2][kY][kColumnsX];  // a batch's, alternating between batches
  __shared__ S sums[kColumnChunk][kY][kColumnsX];
  __shared__ S tile_max[kColumnChunk][kColumnsX];
  const ColumnThread<T> me(a);
  const auto [tx, ty, i, live, xs, t0, t_end] = me;
  int buffer = 0;
  for (std::uint64_t t = t0; t < t_end; ++t) {
    S s[kL];
#pragma unroll
    for (int j = 0; j < kL; ++j) s[j] = -S(0);
    S m = -portable::infinity<S>();
    const std::uint64_t first = t * a.tile;
    // The batches of the tile (the same for every thread of the block: n is every result's).
    for (std::uint64_t k = 0; k < a.steps && first + k * kP < a.n; k += kBatch) {
      const std::uint64_t mine = first + k * kP + ty * kL;  // the thread's first lane, step k
      T raw[kBatch][kL];
      S batch = -portable::infinity<S>();
      if (live) {
        load_column_batch(raw, xs, a.stride, mine, a.n, kP);
#pragma unroll
        for (int u = 0; u < kBatch; ++u)
#pragma unroll
          for (int j = 0; j < kL; ++j)
            if (mine + u * kP + j < a.n) batch = lse_max(batch, widen<S>(raw[u][j]));
      }
      maxima[buffer][ty][tx] = batch;
      __syncthreads();
      batch = maxima[buffer][0][tx];
#pragma unroll
      for (int y = 1; y < kY; ++y) batch = lse_max(batch, maxima[buffer][y][tx]);
      buffer ^= 1;  // the next batch writes the other buffer; the one after waits for this sync
      lse_raise(s, m, batch);
      if (live) {
        const bool finite = lse_finite(m);
#pragma unroll
        for (int u = 0; u < kBatch; ++u)
#pragma unroll
          for (int j = 0; j < kL; ++j) {
            if (mine + u * kP + j < a.n) {
              const S v = widen<S>(raw[u][j]);
              s[j] = add(s[j], finite ? lse_term(v, m) : lse_nan_term(v));
            }
          }
      }
    }
    sums[t - t0][ty][tx] = thread_tree(s);
    if (ty == 0) tile_max[t - t0][tx] = m;
  }
  __syncthreads();
  if (ty != 0 || !live) return;
  LseState<S> chunk[kColumnChunk];
#pragma unroll
  for (int c = 0; c < static_cast<int>(kColumnChunk); ++c) {
    if (t0 + c < t_end) {
      S lanes[kY];
#pragma unroll
      for (int y = 0; y < kY; ++y) lanes[y] = sums[c][y][tx];
      chunk[c] = {tile_max[c][tx], thread_tree(lanes)};
    } else {
      chunk[c] = lse_identity<S>();
    }
  }
  finish_chunk(a, i, thread_tree(chunk), epilogue);  // lse_merge
}

//! Each result's chunk partials in the tiles' tree, a warp per result: chunk c's partial waits
//! in lane c % 32, each 32 of them (an aligned subtree) fold in the warp's tree and go on a
//! TreeStack (the complete tree padded with -0, as tiles_partial folds tiles). Each lane loads
//! kColumnFoldBatch partials at once, so a result of 2,048 chunks takes 16 rounds of loads.
inline constexpr int kColumnFoldBatch = 4;

template <class A, class Epilogue>
__global__ void __launch_bounds__(256)
    column_fold_kernel(const A* partials, std::uint64_t count, std::uint64_t chunks,
                       std::uint64_t n, Epilogue epilogue) {
  const unsigned lane = threadIdx.x & 31;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * (blockDim.x / 32);
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * (blockDim.x / 32) +
                         threadIdx.x / 32;
       i < count; i += warps) {
    TreeStack<A> stack;
    A total = identity<A>();
    for (std::uint64_t c0 = 0; c0 < chunks; c0 += 32 * kColumnFoldBatch) {
      A v[kColumnFoldBatch];
#pragma unroll
      for (int u = 0; u < kColumnFoldBatch; ++u) {
        const std::uint64_t c = c0 + 32 * u + lane;
        v[u] = c < chunks ? load_partial(partials + c * count + i) : identity<A>();
      }
#pragma unroll
      for (int u = 0; u < kColumnFoldBatch; ++u) {
        if (c0 + 32 * u >= chunks) break;
        const A subtree = warp_tree(v[u]);
        if (chunks <= 32) {
          total = subtree;  // the tree over 32 lanes padded with -0: the whole tree
        } else {
          stack.push(subtree);
        }
      }
    }
    if (chunks > 32) total = stack.total();
    if (lane == 0) epilogue(i, n, total);
  }
}

}  // namespace reducelab::detail::repro

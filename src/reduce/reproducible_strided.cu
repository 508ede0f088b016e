// The gpu_to_gpu mode's strided axis reductions (reproducible_strided.hpp): a chunk of results
// at a time, their reduced elements gathered into contiguous rows of scratch (a tiled transpose
// through shared memory, reading along whichever of the results and the reduced axes is closer
// in memory), then the fixed-order segments over the rows: every result has the bits of the
// whole-array gpu_to_gpu result of its elements, as the rows path gives them, for every op of
// the mode. Results whose places in the output are not one stride apart go through scratch too
// and are scattered after.
//
// Cost: the gather reads the input and writes it once more, and the segments read the copy, so
// a column reduction moves about three times the input's bytes (the default mode's strided
// kernel: once). So every op over one reduced axis whose results lie closer together than their
// elements reads the columns where they lie instead (reproducible_columns.cuh: the same bits, the
// input read once); reduced axes that are not one progression, rows-like views and outputs that
// are not one stride apart take the gather.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "common/kernel_launch.cuh"
#include "reduce/launch.hpp"
#include "reduce/reproducible.hpp"
#include "reduce/reproducible_columns.cuh"
#include "reduce/reproducible_strided.hpp"
#include "reduce/scratch.hpp"
#include "reduce/validate.hpp"
#include "reduce/workspace.hpp"
#include "reducelab/types.hpp"

namespace reducelab::detail {

namespace {

//! launch_kernel's tag for the column kernels: kKind (1 var, 2 logsumexp, 3 the plain terms, 4
//! the fold) and every template argument of the kernel.
template <int kKind, class... Ts>
struct ColumnTag {};

constexpr int kGatherTile = 32;  //!< results per tile, and reduced indices per pass of a warp
constexpr int kGatherRows = 8;   //!< threads per block: 32 x 8
constexpr int kGatherPasses = 4; //!< a tile is 32 results x 128 reduced indices
constexpr int kGatherK = kGatherTile * kGatherPasses;

//! rows[i][k] = x[result r0 + i's element k] for i < rows, k < reduced (and the same for y).
//! Block (bx, by) takes the tiles of reduced indices [bx 128, bx 128 + 128) and results [by 32,
//! by 32 + 32), then by + gridDim.y, ...: each thread has 16 loads in flight per tile. A tile's
//! offsets are computed once (160 per tile), its loads go along the results when they are the
//! closer in memory (a warp reads 32 results of one reduced index), else along the reduced
//! indices, and its stores along the reduced indices (a warp writes 32 consecutive elements of
//! one row). T is an unsigned integer of the element's size: the elements' bits are copied.
template <class T>
__global__ void __launch_bounds__(kGatherTile * kGatherRows)
    gather_kernel(const T* x, const T* y, T* rows_x, T* rows_y, StridedMap map, std::uint64_t r0,
                  std::uint64_t rows, std::uint64_t reduced, bool along_results) {
  __shared__ T tile[kGatherK][kGatherTile + 1];  // [k][i]
  __shared__ std::int64_t result_at[kGatherTile];
  __shared__ std::int64_t reduced_at[kGatherK];
  const unsigned tx = threadIdx.x;
  const unsigned ty = threadIdx.y;
  const unsigned flat = ty * kGatherTile + tx;
  const std::uint64_t k0 = static_cast<std::uint64_t>(blockIdx.x) * kGatherK;
  if (flat < kGatherK) reduced_at[flat] = k0 + flat < reduced ? map.reduced_at(k0 + flat) : 0;
  const std::uint64_t tiles_i = (rows + kGatherTile - 1) / kGatherTile;
  for (std::uint64_t ti = blockIdx.y; ti < tiles_i; ti += gridDim.y) {
    const std::uint64_t i0 = ti * kGatherTile;
    if (ty == kGatherRows - 1)  // a warp that computes no reduced offset
      result_at[tx] = i0 + tx < rows ? map.result_in(r0 + i0 + tx) : 0;
    __syncthreads();
    for (int array = 0; array < (y != nullptr ? 2 : 1); ++array) {
      const T* in = array == 0 ? x : y;
      T* out = array == 0 ? rows_x : rows_y;
      if (along_results) {
#pragma unroll
        for (int j = 0; j < kGatherK; j += kGatherRows) {
          const unsigned k = ty + j;
          if (i0 + tx < rows && k0 + k < reduced) tile[k][tx] = in[result_at[tx] + reduced_at[k]];
        }
      } else {
#pragma unroll
        for (int j = 0; j < kGatherTile; j += kGatherRows) {
#pragma unroll
          for (int p = 0; p < kGatherK; p += kGatherTile) {
            const unsigned i = ty + j;
            const unsigned k = tx + p;
            if (i0 + i < rows && k0 + k < reduced) tile[k][i] = in[result_at[i] + reduced_at[k]];
          }
        }
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kGatherTile; j += kGatherRows) {
#pragma unroll
        for (int p = 0; p < kGatherK; p += kGatherTile) {
          const unsigned i = ty + j;
          const unsigned k = tx + p;
          if (i0 + i < rows && k0 + k < reduced) out[(i0 + i) * reduced + k0 + k] = tile[k][i];
        }
      }
      __syncthreads();  // the tile and the result offsets are free again
    }
  }
}

//! Result i of the chunk (`bytes` bytes at results + i x bytes) to its place in the output.
__global__ void scatter_kernel(const unsigned char* results, unsigned char* out, StridedMap map,
                               std::uint64_t r0, std::uint64_t count, unsigned bytes) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < count; i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const unsigned char* from = results + i * bytes;
    unsigned char* to = out + map.result_out(r0 + i) * static_cast<std::int64_t>(bytes);
    for (unsigned b = 0; b < bytes; b += 4) {  // results are 4, 8 or 16 bytes, 4-aligned
      std::uint32_t word;
      std::memcpy(&word, from + b, 4);
      std::memcpy(to + b, &word, 4);
    }
  }
}

//! The unsigned integer of T's size.
template <class T>
using bits_t = std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;

unsigned grid_for(std::uint64_t work, std::uint64_t per_block) {
  const std::uint64_t blocks = (work + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(blocks, 65535)));
}

//! Blocks a column launch aims at (about 16 per SM of an H100 or H200): fewer chunks per result
//! when there are enough results to keep every SM reading, more when there are few.
constexpr std::uint64_t kColumnBlocks = 2048;

//! The columns (reproducible_columns.cuh) of results [0, results) whose reduced elements are one
//! progression and whose output lies one `step` apart: accumulator A (a number, var's groups or
//! logsumexp's pairs) picks the kernel.
template <class T, class A, int kInputs, class Term, class Epilogue>
void launch_columns(const T* x, const T* y, const StridedMap& map, std::int64_t step,
                    unsigned bytes, Epilogue epilogue, Term term, const WorkspaceView& ws,
                    cudaStream_t stream) {
  using namespace repro;
  const AxisView& view = map.view;
  const std::uint64_t results = view.outputs;
  const std::uint64_t n = view.reduced;
  const Plan plan = plan_for(sizeof(T), n);
  const std::uint64_t groups = (results + kColumnsX - 1) / kColumnsX;
  auto chunks_of = [&](std::uint64_t c) { return (plan.tiles + c - 1) / c; };
  const std::uint64_t target =
      reproducible_launch().grid != 0 ? reproducible_launch().grid : kColumnBlocks;
  constexpr bool kVar = is_var_state<A>::value;
  // Fewer tiles per chunk only while one result's partials still fit the workspace (at the
  // largest chunk they do: at most kMaxTiles / 4 chunks of 40-byte partials).
  const std::uint64_t capacity = kPartialSlots * kPartialBytes / sizeof(A);
  static_assert(kMaxTiles / kVarColumnChunk * sizeof(VarState<double>) <=
                    kPartialSlots * kPartialBytes &&
                kMaxTiles / kColumnChunk * sizeof(LseState<double>) <= kPartialSlots * kPartialBytes,
                "the largest chunks' partials of one result fit the workspace");
  std::uint64_t chunk = kVar ? kVarColumnChunk : kColumnChunk;
  while (chunk > 1 && groups * chunks_of(chunk) < target && chunks_of(chunk / 2) <= capacity)
    chunk /= 2;
  const std::uint64_t chunks = chunks_of(chunk);
  // The partials of every result wait in the workspace where they fit, else in scratch from the
  // library's pool (up to kStridedGatherBytes at a time), so that one launch takes all the
  // results: a launch of fewer results than a row holds reads every row's lines again (6 launches
  // of 6 of the 32 columns of 4,194,304 x 32 f64 made var 16x the default, session 36).
  std::uint64_t per_launch = results;
  std::uint64_t scratch_bytes = 0;
  if (chunks > 1 && results > capacity / chunks) {
    per_launch = std::min(results, std::max<std::uint64_t>(
                                       kColumnsX, kStridedGatherBytes / (chunks * sizeof(A))));
    scratch_bytes = per_launch * chunks * sizeof(A);
  }
  const Scratch scratch(scratch_bytes, ws.device, stream);
  void* const partials = scratch_bytes != 0 ? scratch.get() : ws.d_partials;
  ColumnArgs<T> a{};
  a.x = x;
  a.y = y;
  a.map = map;
  a.stride = view.reduced_in[0];
  a.n = n;
  a.steps = plan.steps;
  a.tile = plan.tile;
  a.tiles = plan.tiles;
  a.chunk_tiles = chunk;
  a.chunks = chunks;
  a.partials = partials;
  unsigned char* const out = static_cast<unsigned char*>(epilogue.out);
  for (std::uint64_t r0 = 0; r0 < results; r0 += per_launch) {
    a.r0 = r0;
    a.count = std::min(per_launch, results - r0);
    epilogue.out = out + static_cast<std::uint64_t>(step) * r0 * bytes;
    if constexpr (std::is_same_v<Term, SegmentScaledSquare>) {
      // f64's 2-norm: each result's max |x| waits in its own place in the output.
      term.max_abs = static_cast<const double*>(epilogue.out);
      epilogue.first_pass = epilogue.out;
    }
    const dim3 grid(static_cast<unsigned>((a.count + kColumnsX - 1) / kColumnsX),
                    static_cast<unsigned>(chunks));
    if constexpr (kVar) {
      constexpr bool kSum = decltype(Term::term)::kSum;
      launch_kernel<ColumnTag<1, T, A, Epilogue, std::bool_constant<kSum>>>(
          column_var_kernel<T, typename A::value_type, kSum, Epilogue>, grid,
          kColumnsX * stats_groups<T>(), stream, ws.device,
          "launch of reducelab column_var_kernel", a, epilogue);
    } else if constexpr (is_lse_state<A>::value) {
      launch_kernel<ColumnTag<2, T, A, Epilogue>>(
          column_lse_kernel<T, typename A::value_type, Epilogue>, grid,
          kColumnsX * stats_groups<T>(), stream, ws.device,
          "launch of reducelab column_lse_kernel", a, epilogue);
    } else {
      launch_kernel<ColumnTag<3, T, A, Epilogue, Term, std::integral_constant<int, kInputs>>>(
          column_kernel<T, A, kInputs, Term, Epilogue>, grid, kColumnsX * kColumnsY, stream,
          ws.device, "launch of reducelab column_kernel", a, term, epilogue);
    }
    if (chunks > 1) {
      launch_kernel<ColumnTag<4, A, Epilogue>>(
          column_fold_kernel<A, Epilogue>, dim3(grid_for(a.count, 256 / 32)), 256, stream,
          ws.device, "launch of reducelab column_fold_kernel", static_cast<const A*>(partials),
          a.count, chunks, n, epilogue);
    }
  }
}

//! Reads the view's results as columns (every op of the mode: visit_op's, and f64's 2-norm after
//! its first pass) when the reduced elements are one progression, the results closer to each
//! other than their elements are, and the output one stride; false (nothing launched) otherwise,
//! and when a test set the gather's chunk size (so the tests compare both paths' bits).
template <class T>
bool reduce_columns(const Reduction& r, const T* x, const T* y, const StridedMap& map,
                    std::int64_t step, unsigned bytes, void* d_out, const WorkspaceView& ws,
                    cudaStream_t stream) {
  using namespace repro;
  const AxisView& view = map.view;
  if (view.reduced_rank != 1 || view.reduced == 0 || step == 0 || !map.reads_along_results() ||
      reproducible_launch().gather_bytes != 0)
    return false;
  const auto stride = static_cast<std::uint64_t>(step);
  if constexpr (std::is_same_v<T, double>) {
    if (r.op == Op::norm && r.ord == 2) {
      // max |x| of each result first (order-free: the default mode's strided kernel of ord inf),
      // written in the result's own place, then (s x)^2 over the columns, s from it.
      launch_axes<double>(Reduction::norm(std::numeric_limits<double>::infinity()), x, nullptr,
                          view, d_out, ws, stream);
      using Epi = SegmentEpilogue<double, double>;
      launch_columns<double, double, 1>(
          x, y, map, step, bytes, Epi{d_out, stride, Epi::norm2, r.op, 0, false, d_out, stride},
          SegmentScaledSquare{static_cast<const double*>(d_out), stride}, ws, stream);
      return true;
    }
  }
  return visit_op<T>(r, d_out, stride,
                     [&](auto acc, auto term, auto epilogue) {
                       using Acc = decltype(acc);
                       using A = typename Acc::type;
                       launch_columns<T, A, Acc::inputs>(x, y, map, step, bytes, epilogue, term,
                                                         ws, stream);
                       return true;
                     });
}

}  // namespace

template <class T>
void launch_reproducible_strided(const Reduction& r, const T* x, const T* y, const AxisView& view,
                                 void* d_out, const WorkspaceView& ws, cudaStream_t stream) {
  const StridedMap map = StridedMap::of(view);
  const std::uint64_t reduced = view.reduced;
  if (reduced / kGatherK >= 0x7fffffffu)  // the gather's grid.x
    reject("a strided gpu_to_gpu reduction of " + std::to_string(reduced) +
           " elements per result: at most 2^38");
  const std::uint64_t results = view.outputs;
  const unsigned bytes = static_cast<unsigned>(result_size(r.op, dtype_of<T>::value));
  const std::int64_t step = map.out_step();
  if (reduce_columns<T>(r, x, y, map, step, bytes, d_out, ws, stream)) return;
  const int arrays = y != nullptr ? 2 : 1;
  const std::uint64_t row_bytes = reduced * sizeof(T) * static_cast<unsigned>(arrays);
  const std::uint64_t chunk_bytes = reproducible_launch().gather_bytes != 0
                                        ? reproducible_launch().gather_bytes
                                        : kStridedGatherBytes;
  const std::uint64_t per_chunk = std::min<std::uint64_t>(
      results, row_bytes == 0 ? results : std::max<std::uint64_t>(1, chunk_bytes / row_bytes));
  // Scratch: the chunk's rows of x (and y), then its results when they cannot go in place.
  const std::uint64_t rows_bytes = (per_chunk * reduced * sizeof(T) + 255) / 256 * 256;
  const std::uint64_t results_bytes = step == 0 ? per_chunk * bytes : 0;
  const Scratch memory(rows_bytes * static_cast<unsigned>(arrays) + results_bytes, ws.device,
                       stream);
  unsigned char* scratch = memory.get();
  T* rows_x = reinterpret_cast<T*>(scratch);
  T* rows_y = y != nullptr ? reinterpret_cast<T*>(scratch + rows_bytes) : nullptr;
  unsigned char* chunk_results = scratch + rows_bytes * static_cast<unsigned>(arrays);
  // With no reduced elements every result is the empty one; the rows read nothing.
  const T* read_x = reduced > 0 ? rows_x : x;
  const T* read_y = reduced > 0 ? rows_y : y;
  for (std::uint64_t r0 = 0; r0 < results; r0 += per_chunk) {
    const std::uint64_t count = std::min(per_chunk, results - r0);
    if (reduced > 0) {
      // A block per 128 reduced indices (x: up to 2^31 - 1 of them) and 32 results (y, at most
      // 65,535 at once; each block then takes every gridDim.y-th tile of results).
      const std::uint64_t tiles_k = (reduced + kGatherK - 1) / kGatherK;
      const std::uint64_t tiles_i = (count + kGatherTile - 1) / kGatherTile;
      const dim3 grid(static_cast<unsigned>(tiles_k),
                      static_cast<unsigned>(std::min<std::uint64_t>(tiles_i, 65535)));
      using B = bits_t<T>;
      gather_kernel<B><<<grid, dim3(kGatherTile, kGatherRows), 0, stream>>>(
          reinterpret_cast<const B*>(x), reinterpret_cast<const B*>(y),
          reinterpret_cast<B*>(rows_x), reinterpret_cast<B*>(rows_y), map, r0, count, reduced,
          map.reads_along_results());
      REDUCELAB_CUDA_CHECK(cudaGetLastError());
    }
    void* out = step != 0 ? static_cast<void*>(static_cast<unsigned char*>(d_out) +
                                               static_cast<std::uint64_t>(step) * r0 * bytes)
                          : static_cast<void*>(chunk_results);
    launch_fixed_segments<T>(r, read_x, read_y, count, reduced, reduced, out,
                             step != 0 ? static_cast<std::size_t>(step) : 1, ws, stream);
    if (step == 0) {
      scatter_kernel<<<grid_for(count, 256), 256, 0, stream>>>(
          chunk_results, static_cast<unsigned char*>(d_out), map, r0, count, bytes);
      REDUCELAB_CUDA_CHECK(cudaGetLastError());
    }
  }
}

#define REDUCELAB_INSTANTIATE_STRIDED(T)                                                          \
  template void launch_reproducible_strided<T>(const Reduction&, const T*, const T*,              \
                                               const AxisView&, void*, const WorkspaceView&,      \
                                               cudaStream_t);
REDUCELAB_INSTANTIATE_STRIDED(float)
REDUCELAB_INSTANTIATE_STRIDED(double)
REDUCELAB_INSTANTIATE_STRIDED(__half)
REDUCELAB_INSTANTIATE_STRIDED(__nv_bfloat16)
#undef REDUCELAB_INSTANTIATE_STRIDED

}  // namespace reducelab::detail

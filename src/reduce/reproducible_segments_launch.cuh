#pragma once
// The launch of the gpu_to_gpu mode over segments (reproducible_segments.cuh): which kernels
// read a call's segments, and the first pass of the statistics that need one. Instantiated per
// family of types in instantiate_repro_segments_*.cu (REDUCELAB_INSTANTIATE_REPRO_SEGMENTS), so
// the build compiles them in parallel.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "common/kernel_launch.cuh"
#include "common/resident_grid.cuh"
#include "reduce/launch.hpp"
#include "reduce/reproducible.hpp"
#include "reduce/reproducible_segments.cuh"

namespace reducelab::detail {
namespace repro_launch {

using repro::kSegmentBlock;
constexpr unsigned kSegmentWarps = kSegmentBlock / 32;

template <class... Tags>
struct SegmentTag {};

// The ragged segments' L2 prefetch: how many of a warp's pending segments ahead of the one it
// reads it asks L2 for (0 = none). 2 measured against 0 on the H100 in session 47: f64 sum and
// dot over uniform 0..256 lengths 20-31 points cheaper, f32 dot there 8 points dearer
// (docs/results/h200-reproducible.md, session 47).
constexpr unsigned kPrefetchDepth = 2;
// The long kernel's grid over fixed-size rows' chunks, in resident waves (grid-stride over the
// chunks beyond them; 8 came with session 47's ragged measurement, when both shared it). Over
// ragged segments it is one wave, whose warps take the listed chunks in turn: 63 us against
// 114 us for 8 waves of slices (heavy 2^21 f32 sum, H100, session 48).
constexpr unsigned kLongWaves = 8;

//! Whether a short kernel runs held to three blocks per SM (segment_short_three_blocks_kernel,
//! 80 registers) instead of bound-free at 256 threads. Only the states read in team rounds (var,
//! var_mean, logsumexp) ever needed more than 85 registers there. Measured on one H100, gpu_to_gpu,
//! two rounds of one binary (session 53; docs/results/h200-reproducible.md):
//! - kLaneRagged, every type: 2-26% faster (session 51).
//! - kTeamRows, kTilesRows and kWarpRagged of f64, f16 and bf16: f64 var and logsumexp rows of
//!   1,024 and 4,096 12-18% faster, f16/bf16 logsumexp rows of 4,096 16-17%, f16/bf16 var rows of
//!   32 11-13%, ragged 65,536 x 0..1,024 (kWarpRagged) 13-27%; the others within 1%.
//! - Not f32 (var already at 80 registers, logsumexp at 64-79): rows of 1,024 and 4,096 of
//!   logsumexp 4-8% slower, rows of 32 of var 4% slower.
//! - Not f16/bf16 var's kTilesRows (120-126 registers, 344-808 B of stack at 80): rows of 4,096
//!   0-4% slower.
//! kTileRows stays bound-free: 80 registers or fewer in every state.
template <class T, class A, int kPath>
inline constexpr bool kThreeBlocks =
    repro::kTeamRoundsFor<A> &&
    (kPath == repro::kLaneRagged ||
     (kPath != repro::kTileRows && !std::is_same_v<T, float> &&
      !(kPath == repro::kTilesRows && sizeof(T) == 2 && repro::is_var_state<A>::value)));

template <class T>
struct SegmentCall {
  const T* x;
  const T* y;
  repro::SegmentList segments;
  const WorkspaceView& ws;
  cudaStream_t stream;

  unsigned capped(std::uint64_t blocks, unsigned resident) const {
    const unsigned forced = reproducible_launch().grid;
    if (forced != 0) return forced;
    const std::uint64_t most = static_cast<std::uint64_t>(resident) * 8;
    if (blocks == 0) blocks = 1;
    return static_cast<unsigned>(blocks < most ? blocks : most);
  }

  //! Sums term over every segment in the fixed order into A and hands each total to epilogue.
  template <class A, int kInputs, bool kYVector, class Term, class Epilogue>
  void run(const Term& term, const Epilogue& epilogue) const {
    using namespace repro;
    auto team_rows = segment_short_kernel<T, A, kInputs, kYVector, Term, Epilogue, kTeamRows>;
    auto long_kernel = segment_long_kernel<T, A, kInputs, kYVector, Term>;
    auto fold_kernel = segment_fold_kernel<T, A, kInputs, kYVector, Term, Epilogue>;
    using ShortTag =
        SegmentTag<T, A, Term, Epilogue, std::integral_constant<int, kInputs * 2 + kYVector>>;
    using LongTag = SegmentTag<ShortTag, int>;
    using FoldTag = SegmentTag<ShortTag, long>;
    // The grid cap and the plan's thresholds count the team kernel's resident warps.
    const unsigned resident = resident_grid<ShortTag>(team_rows, kSegmentBlock, ws.device);
    const std::uint64_t resident_warps = static_cast<std::uint64_t>(resident) * kSegmentWarps;

    SegmentArgs<T> a{};
    a.x = x;
    a.y = kInputs == 2 ? y : nullptr;
    a.segments = segments;
    a.partials = ws.d_partials;
    a.capacity = kPartialSlots * kPartialBytes / sizeof(A);
    a.flags = ws.d_segment_flags;
    a.counter = ws.d_counter;
    a.prefetch = kPrefetchDepth;
    const std::uint64_t count = segments.count;

    auto launch_short = [&](auto path, std::uint64_t warps_wanted) {
      constexpr int kPath = decltype(path)::value;
      auto kernel = [] {
        if constexpr (kThreeBlocks<T, A, kPath>) {
          return segment_short_three_blocks_kernel<T, A, kInputs, kYVector, Term, Epilogue, kPath>;
        } else {
          return segment_short_kernel<T, A, kInputs, kYVector, Term, Epilogue, kPath>;
        }
      }();
      const unsigned grid = capped((warps_wanted + kSegmentWarps - 1) / kSegmentWarps, resident);
      launch_kernel<SegmentTag<ShortTag, decltype(path)>>(
          kernel, grid, kSegmentBlock, stream, ws.device,
          "launch of reducelab segment_short_kernel", a, term, epilogue);
    };
    using TeamRows = std::integral_constant<int, kTeamRows>;
    using TileRows = std::integral_constant<int, kTileRows>;
    using TilesRows = std::integral_constant<int, kTilesRows>;
    using LaneRagged = std::integral_constant<int, kLaneRagged>;
    using WarpRagged = std::integral_constant<int, kWarpRagged>;
    // items: the long kernel's warps wanted, at most `waves` resident waves of them; the fold's
    // grid, at most `fold_cap` blocks.
    auto launch_long_and_fold = [&](std::uint64_t items, unsigned waves, std::uint64_t fold_warps,
                                    std::uint64_t fold_cap) {
      const unsigned long_resident = resident_grid<LongTag>(long_kernel, kSegmentBlock, ws.device);
      const unsigned long_grid =
          reproducible_launch().grid != 0
              ? reproducible_launch().grid
              : static_cast<unsigned>(std::min<std::uint64_t>(
                    (items + kSegmentWarps - 1) / kSegmentWarps,
                    static_cast<std::uint64_t>(long_resident) * waves));
      launch_kernel<LongTag>(long_kernel, long_grid, kSegmentBlock, stream, ws.device,
                             "launch of reducelab segment_long_kernel", a, term);
      const unsigned fold_grid = static_cast<unsigned>(std::min<std::uint64_t>(
          capped((fold_warps + kSegmentWarps - 1) / kSegmentWarps, resident), fold_cap));
      launch_kernel<FoldTag>(fold_kernel, fold_grid, kSegmentBlock, stream, ws.device,
                             "launch of reducelab segment_fold_kernel", a, term, epilogue);
    };

    if (segments.offsets != nullptr) {
      // Ragged: the lengths are on the device. The short kernel reads the short segments and
      // lists the long ones' chunks; the long kernel (one resident wave) and the fold (at most
      // the short kernel's resident blocks; its own residency, fewer blocks, measured the same in
      // session 48) read the list (a fold warp takes 32 entries, or 32 segments where offsets
      // decrease).
      if (count < 32 * 2 * resident_warps) {
        launch_short(WarpRagged{}, count);
      } else {
        launch_short(LaneRagged{}, (count + 31) / 32);
      }
      try {
        launch_long_and_fold(std::numeric_limits<std::uint64_t>::max() / 2, 1, (count + 31) / 32,
                             resident);
      } catch (...) {
        // The fold's last block zeroes the flags word and the chunk list's counter; without the
        // fold, this does, so that the next call on the stream starts from an empty list.
        (void)cudaMemsetAsync(ws.d_segment_flags, 0,
                              (kChunkCountAfterFlags + 2) * sizeof(unsigned), stream);
        throw;
      }
      return;
    }

    const Plan plan = plan_for(sizeof(T), segments.size);
    const std::uintptr_t line = reinterpret_cast<std::uintptr_t>(x) |
                                (kInputs == 2 ? reinterpret_cast<std::uintptr_t>(y) : 0);
    a.aligned = (line & 15) == 0 && (segments.pitch * sizeof(T)) % 16 == 0;
    if (segments.size <= plan.tile) {
      // Rows of one tile: teams of g lanes, g x kC >= the row (g = 32 past P elements).
      const std::size_t per_lane = 16 / sizeof(T);
      unsigned log2 = 0;
      while (log2 < 5 && (std::size_t{1} << log2) * per_lane < segments.size) ++log2;
      a.team_log2 = log2;
      const std::uint64_t per_warp = 32u >> log2;
      const std::uint64_t groups = (count + per_warp - 1) / per_warp;
      // Rows of one vector per lane go four groups to a warp at once (kRowBatch).
      if (segments.size <= (std::size_t{1} << log2) * per_lane) {
        launch_short(TeamRows{}, (groups + 3) / 4);  // kRowBatch groups per warp at once
      } else {
        launch_short(TileRows{}, groups);
      }
      return;
    }
    // Longer rows: a warp each when there are enough of them to fill the GPU or they are short
    // enough, else chunks of a power of two of tiles, as many as keep every resident warp busy
    // (four per warp) and fit the workspace's partials.
    if (plan.tiles <= kWarpTiles || count >= 2 * resident_warps) {
      launch_short(TilesRows{}, count);
      return;
    }
    auto chunks_of = [&](std::uint64_t c) { return (plan.tiles + c - 1) / c; };
    std::uint64_t chunk = kChunkMinTiles;
    while (chunk < plan.tiles && count * chunks_of(chunk) > a.capacity) chunk *= 2;
    while (chunk < plan.tiles && count * chunks_of(2 * chunk) >= 4 * resident_warps) chunk *= 2;
    if (chunks_of(chunk) <= 1 || count * chunks_of(chunk) > a.capacity) {
      launch_short(TilesRows{}, count);  // a warp per row, whole
      return;
    }
    a.chunk_tiles = chunk;
    a.chunks = chunks_of(chunk);
    launch_long_and_fold(count * a.chunks, kLongWaves, count,
                         std::numeric_limits<std::uint64_t>::max());
  }
};

template <class T, class Offset>
void first_pass_default(const Reduction& r, const T* x, const repro::SegmentList& segments,
                        void* out, std::size_t out_stride, const WorkspaceView& ws,
                        cudaStream_t stream) {
  if (segments.offsets == nullptr) {
    launch_fixed_segments<T>(r, x, nullptr, segments.count, segments.size, segments.pitch, out,
                             out_stride, ws, stream);
  } else {
    launch_ragged_segments<T, Offset>(r, x, nullptr, segments.count,
                                      static_cast<const Offset*>(segments.offsets), out, ws,
                                      stream);
  }
}

}  // namespace repro_launch

template <class T>
void launch_reproducible_segments(const Reduction& r, const T* x, const T* y,
                                  std::size_t num_segments, std::size_t segment_size,
                                  std::size_t pitch, const void* offsets, bool wide_offsets,
                                  void* d_out, std::size_t out_stride, const WorkspaceView& ws,
                                  cudaStream_t stream) {
  using namespace repro;
  using namespace repro_launch;
  const SegmentList segments{offsets, wide_offsets, num_segments, segment_size, pitch};
  const SegmentCall<T> call{x, y, segments, ws, stream};
  // f64's 2-norm: max |x| of each segment first (order-free: the default kernels of ord inf),
  // written into each segment's own result slot (the second pass's result overwrites it: no
  // memory besides), then (s x)^2 summed.
  if constexpr (std::is_same_v<T, double>) {
    if (r.op == Op::norm && r.ord == 2) {
      const Reduction pass = Reduction::norm(std::numeric_limits<double>::infinity());
      if (wide_offsets) {
        first_pass_default<T, std::int64_t>(pass, x, segments, d_out, out_stride, ws, stream);
      } else {
        first_pass_default<T, std::int32_t>(pass, x, segments, d_out, out_stride, ws, stream);
      }
      using Epi = SegmentEpilogue<double, double>;
      call.template run<double, 1, true>(
          SegmentScaledSquare{static_cast<const double*>(d_out), out_stride},
          Epi{d_out, out_stride, Epi::norm2, r.op, 0, false, d_out, out_stride});
      return;
    }
  }
  const bool known = visit_op<T>(r, d_out, out_stride, [&](auto acc, auto term, auto epilogue) {
    using Acc = decltype(acc);
    using A = typename Acc::type;
    if constexpr (Acc::inputs == 2) {
      // y read as vectors where it has x's alignment, else element by element.
      if ((reinterpret_cast<std::uintptr_t>(x) & 15) == (reinterpret_cast<std::uintptr_t>(y) & 15)) {
        call.template run<A, 2, true>(term, epilogue);
      } else {
        call.template run<A, 2, false>(term, epilogue);
      }
    } else {
      call.template run<A, 1, true>(term, epilogue);
    }
    return true;
  });
  if (!known)
    throw Error(ErrorCode::invalid_argument,
                "launch_reproducible_segments: no fixed order for this op");
}

}  // namespace reducelab::detail

//! The explicit instantiation for T (inside namespace reducelab::detail).
#define REDUCELAB_INSTANTIATE_REPRO_SEGMENTS(T)                                                  \
  template void launch_reproducible_segments<T>(const Reduction&, const T*, const T*,           \
                                                std::size_t, std::size_t, std::size_t,          \
                                                const void*, bool, void*, std::size_t,          \
                                                const WorkspaceView&, cudaStream_t);

#pragma once
// The launch of the fixed-order kernel (reproducible.cuh) for any term and epilogue: the grid,
// the block size and the tiles per warp. Shared by the sum, dot and mean (reproducible.cu) and
// the statistics (reproducible_stats.cu); none of it changes the bits.

#include <cstddef>
#include <cstdint>

#include "common/kernel_launch.cuh"
#include "common/resident_grid.cuh"
#include "reduce/reproducible.cuh"
#include "reduce/reproducible.hpp"

namespace reducelab::detail::repro {

//! The kernel's arguments for x[0, n) (and y, for dot) of the plan of n, on ws's partials and
//! counters; launch_block sets the tiles per warp.
template <class T>
ReproArgs<T> make_args(const T* x, const T* y, std::size_t n, const WorkspaceView& ws) {
  static_assert(kMaxTiles * 8 + kMaxGroups * 8 <= kPartialSlots * kPartialBytes,
                "the tile and group partials fit the workspace");
  static_assert(kMaxGroups <= kMaxGrid, "a group counter per group");
  const Plan plan = plan_for(sizeof(T), n);
  ReproArgs<T> args{};
  args.x = x;
  args.y = y;
  args.n = n;
  args.steps = plan.steps;
  args.tiles = plan.tiles;
  args.groups = static_cast<unsigned>(plan.groups);
  args.offset = static_cast<unsigned>((reinterpret_cast<std::uintptr_t>(x) & 15) / sizeof(T));
  args.partials = ws.d_partials;
  args.counter = ws.d_counter;
  args.group_counters = ws.d_group_counters;
  return args;
}

template <class T, class A, int kInputs, int kBlock, bool kYVector, class Term, class Epilogue,
          bool kDealt, bool kFlat>
struct KernelTag {};

//! Launches the kernel with (kDealt) or without the round-robin deal. round_robin (kDealt only):
//! tile t to warp t mod W over the resident grid (or the forced one). Otherwise a contiguous run
//! of tiles per warp, as many as the resident grid (or the forced one) needs to take them all in
//! one pass, so every busy warp has the same work (one block, without tickets, when its warps
//! take every tile with one tile each). kFlat: the runs' kernel whose blocks settle in one level
//! (settle_flat; args.flat set by launch_block).
template <class T, class A, int kInputs, int kBlock, bool kYVector, class Term, class Epilogue,
          bool kDealt, bool kFlat = false>
void launch_deal(ReproArgs<T> args, bool round_robin, const Term& term, const Epilogue& epilogue,
                 const WorkspaceView& ws, cudaStream_t stream) {
  auto kernel = reproducible_kernel<T, A, kInputs, kBlock, kYVector, Term, Epilogue, kDealt, kFlat>;
  using Tag = KernelTag<T, A, kInputs, kBlock, kYVector, Term, Epilogue, kDealt, kFlat>;
  constexpr unsigned kWarps = kBlock / 32;
  unsigned grid = reproducible_launch().grid;
  const unsigned resident = resident_grid<Tag>(kernel, kBlock, ws.device);
  if (round_robin) {
    args.run = 0;
    if (grid == 0) {
      const std::uint64_t needed = (args.tiles + kWarps - 1) / kWarps;
      grid = static_cast<unsigned>(needed < resident ? needed : resident);
    }
  } else {
    const std::uint64_t warps = static_cast<std::uint64_t>(grid != 0 ? grid : resident) * kWarps;
    args.run = (args.tiles + warps - 1) / warps;
    if (grid == 0) {
      grid = static_cast<unsigned>((args.tiles + kWarps * args.run - 1) / (kWarps * args.run));
    }
  }
  launch_kernel<Tag>(kernel, grid, kBlock, stream, ws.device,
                     "launch of reducelab reproducible_kernel", args, term, epilogue);
}

//! Tiles a lane of the folding block folds in the one-level settle (settle_flat): the tiles
//! rounded up to a power of two over the block's threads, at least 1.
inline unsigned flat_tiles_per_lane(std::uint64_t tiles, unsigned block) {
  std::uint64_t padded = 1;
  while (padded < tiles) padded *= 2;
  return padded > block ? static_cast<unsigned>(padded / block) : 1u;
}

//! The runs of the plain sums settle in one level (settle_flat) where a lane of the folding block
//! reads at most this many 16-byte loads of tile partials (measured there: reproducible.cuh).
inline constexpr unsigned kFlatLoads = 2;

//! The plain sums (sum, mean, dot) with tiles of kRoundRobinSteps steps or more take the
//! round-robin deal (reproducible.cuh), the rest the runs; the test hook may force either. The
//! kernel that holds both deals serves the plain sums from kRoundRobinSteps (and the hook's
//! round-robin below it), the kernel of the runs only the rest (reproducible_kernel says why).
//! Their runs of two groups or more settle in one level where that is cheap (kFlatLoads, block
//! 512).
template <class T, class A, int kInputs, int kBlock, bool kYVector, class Term, class Epilogue>
void launch_block(ReproArgs<T> args, const Term& term, const Epilogue& epilogue,
                  const WorkspaceView& ws, cudaStream_t stream) {
  // The partials region holds kAxisPartialBytes (workspace.hpp): logsumexp's f64 pairs take 16
  // bytes a tile.
  static_assert((kMaxTiles + kMaxGroups) * sizeof(A) <= kAxisPartialBytes,
                "the tile and group partials of A fit the workspace");
  if constexpr (kPlainTerm<Term>) {
    const ReproducibleLaunch hook = reproducible_launch();
    const bool long_tiles = args.steps >= kRoundRobinSteps;
    const bool round_robin = hook.deal == 2 || (hook.deal == 0 && long_tiles);
    if (long_tiles || round_robin) {
      launch_deal<T, A, kInputs, kBlock, kYVector, Term, Epilogue, true>(args, round_robin, term,
                                                                         epilogue, ws, stream);
      return;
    }
    if constexpr (kBlock == 512) {
      // The runs of two groups or more: one level of tickets where a lane of the folding block
      // reads at most kFlatLoads 16-byte loads of partials (or as the hook says).
      const unsigned per_lane = flat_tiles_per_lane(args.tiles, kBlock);
      const bool flat = args.groups >= 2 && hook.settle != 1 &&
                        (hook.settle == 2 || per_lane <= kFlatLoads * (16 / sizeof(A)));
      if (flat) {
        args.flat = per_lane;
        launch_deal<T, A, kInputs, kBlock, kYVector, Term, Epilogue, false, true>(
            args, false, term, epilogue, ws, stream);
        return;
      }
    }
  }
  launch_deal<T, A, kInputs, kBlock, kYVector, Term, Epilogue, false>(args, false, term, epilogue,
                                                                      ws, stream);
}

//! Sums term(x[i]) (term(x[i], y[i]) for kInputs == 2) over args' tiles in the fixed order into
//! A and passes the total to epilogue, with the block size the test hook chooses (512 by
//! default).
template <class T, class A, int kInputs, bool kYVector, class Term, class Epilogue>
void launch_fixed_order(const ReproArgs<T>& args, const Term& term, const Epilogue& epilogue,
                        const WorkspaceView& ws, cudaStream_t stream) {
  switch (reproducible_launch().block) {
    case 128: launch_block<T, A, kInputs, 128, kYVector>(args, term, epilogue, ws, stream); return;
    case 256: launch_block<T, A, kInputs, 256, kYVector>(args, term, epilogue, ws, stream); return;
    default: launch_block<T, A, kInputs, 512, kYVector>(args, term, epilogue, ws, stream); return;
  }
}

}  // namespace reducelab::detail::repro

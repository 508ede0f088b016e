// The launch of the gpu_to_gpu mode's fixed-order kernel (reproducible.cuh) for the floating
// types; which calls take it is in reproducible_policy.cpp.

#include "reduce/reproducible.hpp"

#include "common/kernel_launch.cuh"
#include "common/resident_grid.cuh"
#include "reduce/reproducible.cuh"

namespace reducelab::detail {

namespace {

template <class T, int kInputs, int kBlock, bool kYVector>
struct ReproTag {};

template <class T, int kInputs, int kBlock, bool kYVector>
void launch_block(repro::ReproArgs<T> args, const WorkspaceView& ws, cudaStream_t stream) {
  auto kernel = repro::reproducible_kernel<T, kInputs, kBlock, kYVector>;
  using Tag = ReproTag<T, kInputs, kBlock, kYVector>;
  constexpr unsigned kWarps = kBlock / 32;
  unsigned grid = reproducible_launch().grid;
  // Each warp takes a contiguous run of tiles: as many tiles per warp as the resident grid needs
  // to take them all in one pass, so every busy warp has the same work. One block (no tickets)
  // when its warps take every tile with one tile each.
  const unsigned resident = resident_grid<Tag>(kernel, kBlock, ws.device);
  const std::uint64_t warps = static_cast<std::uint64_t>(grid != 0 ? grid : resident) * kWarps;
  args.run = (args.tiles + warps - 1) / warps;
  if (grid == 0) {
    const std::uint64_t wanted = (args.tiles + kWarps * args.run - 1) / (kWarps * args.run);
    grid = static_cast<unsigned>(wanted);
  }
  launch_kernel<Tag>(kernel, grid, kBlock, stream, ws.device,
                     "launch of reducelab reproducible_kernel", args);
}

template <class T, int kInputs, bool kYVector>
void launch_inputs(const repro::ReproArgs<T>& args, const WorkspaceView& ws, cudaStream_t stream) {
  switch (reproducible_launch().block) {
    case 128: launch_block<T, kInputs, 128, kYVector>(args, ws, stream); return;
    case 256: launch_block<T, kInputs, 256, kYVector>(args, ws, stream); return;
    default: launch_block<T, kInputs, 512, kYVector>(args, ws, stream); return;
  }
}

}  // namespace

template <class T>
void launch_reproducible(const Reduction& r, const T* x, const T* y, std::size_t n, void* d_out,
                         const WorkspaceView& ws, cudaStream_t stream) {
  static_assert(repro::kMaxTiles * 8 + repro::kMaxGroups * 8 <= kPartialSlots * kPartialBytes,
                "the tile and group partials fit the workspace");
  static_assert(repro::kMaxGroups <= kMaxGrid, "a group counter per group");
  const repro::Plan plan = repro::plan_for(sizeof(T), n);
  const auto address = reinterpret_cast<std::uintptr_t>(x);
  repro::ReproArgs<T> args{x, y, n, plan.steps, plan.tiles, static_cast<unsigned>(plan.groups),
                           static_cast<unsigned>((address & 15) / sizeof(T)), d_out,
                           ws.d_partials, 0, ws.d_counter, ws.d_group_counters,
                           Finish{r.op, r.correction}};
  if (r.op != Op::dot) {
    args.y = nullptr;
    launch_inputs<T, 1, true>(args, ws, stream);
  } else if ((address & 15) == (reinterpret_cast<std::uintptr_t>(y) & 15)) {
    launch_inputs<T, 2, true>(args, ws, stream);
  } else {
    launch_inputs<T, 2, false>(args, ws, stream);
  }
}

template void launch_reproducible<float>(const Reduction&, const float*, const float*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_reproducible<double>(const Reduction&, const double*, const double*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_reproducible<__half>(const Reduction&, const __half*, const __half*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_reproducible<__nv_bfloat16>(const Reduction&, const __nv_bfloat16*, const __nv_bfloat16*, std::size_t, void*, const WorkspaceView&, cudaStream_t);

}  // namespace reducelab::detail

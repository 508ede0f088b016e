#pragma once
// Grid sizing and launch of the production kernel (kernel.cuh) with its tuned configuration
// (config.cuh), and of the standalone fold of partials (grid_step.cuh).

#include <cstdint>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "common/kernel_launch.cuh"
#include "common/resident_grid.cuh"
#include "reduce/config.cuh"
#include "reduce/kernel.cuh"
#include "reduce/launch.hpp"

namespace reducelab::detail {

template <class Traits, class Config, bool kYVector>
struct KernelTag {};

//! Blocks for `vectors` 16-byte vectors: up to one tile (kBlock x kUnroll vectors) a single
//! block loads everything in one batch and needs no grid step (sweep on the H200, f32 2^12:
//! 2 blocks 8.4 us, CUB's single-tile kernel 5.9 us); above, kMinVectorsPerThread vectors per
//! thread, at most the resident grid.
template <class Config>
unsigned grid_size(std::size_t vectors, unsigned resident) {
  if (resident > kMaxGrid) resident = kMaxGrid;  // the partials hold kMaxGrid values
  if (vectors <= Config::kTile) return 1;
  constexpr std::size_t kPerBlock =
      static_cast<std::size_t>(Config::kBlock) * Config::kMinVectorsPerThread;
  const std::size_t wanted = (vectors + kPerBlock - 1) / kPerBlock;
  return static_cast<unsigned>(wanted < resident ? wanted : resident);
}

inline bool same_offset_in_line(const void* x, const void* y) {
  return (reinterpret_cast<std::uintptr_t>(x) & 15) == (reinterpret_cast<std::uintptr_t>(y) & 15);
}

//! Whether the operands start on a 16-byte boundary: x, and y when the op reads two arrays
//! (the vector kernels' condition for reading them as whole 16-byte vectors from the start).
template <class Traits>
bool operands_aligned(const void* x, const void* y) {
  auto aligned = [](const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; };
  return aligned(x) && (Traits::kArrays == 1 || aligned(y));
}

//! Launches `kernel` (reduce_kernel or a tuning variant of the same shape) for x[0, n): the
//! head/vector split, grid = min(resident blocks, one tile per block). Tag: unique per kernel.
template <class Tag, class Config, class Kernel, class T>
void launch_reduce(Kernel kernel, const T* x, const T* y, std::size_t n, void* d_out,
                   const WorkspaceView& ws, cudaStream_t stream, Finish finish) {
  const RangeSplit split = split_range(x, n);
  const KernelArgs<T> args{x, y, n, split, d_out, ws.d_partials, ws.d_counter, finish};
  const unsigned resident = resident_grid<Tag>(kernel, Config::kBlock, ws.device);
  launch_kernel<Tag>(kernel, grid_size<Config>(split.vectors, resident), Config::kBlock, stream,
                     ws.device, "launch of reducelab reduce_kernel", args);
}

//! The production kernel of Traits: dot's y is read as vectors only when it shares x's offset
//! in a 16-byte line. Inputs of at most one small tile (OneBlockConfigFor) take that kernel.
template <class Traits, class Config = typename ConfigFor<Traits>::type>
void launch_with(const typename Traits::Elem* x, const typename Traits::Elem* y, std::size_t n,
                 void* d_out, const WorkspaceView& ws, cudaStream_t stream, Finish finish) {
  using Small = typename OneBlockConfigFor<Traits>::type;
  if constexpr (!std::is_same_v<Small, Config> && Traits::kArrays == 1) {
    if (split_range(x, n).vectors <= Small::kTile) {
      launch_reduce<KernelTag<Traits, Small, true>, Small>(reduce_kernel<Traits, Small, true>, x,
                                                           y, n, d_out, ws, stream, finish);
      return;
    }
  }
  if (Traits::kArrays == 1 || same_offset_in_line(x, y)) {
    launch_reduce<KernelTag<Traits, Config, true>, Config>(reduce_kernel<Traits, Config, true>, x,
                                                           y, n, d_out, ws, stream, finish);
  } else if constexpr (Traits::kArrays == 2) {
    launch_reduce<KernelTag<Traits, Config, false>, Config>(reduce_kernel<Traits, Config, false>,
                                                            x, y, n, d_out, ws, stream, finish);
  }
}

template <class T>
void launch_typed(const Reduction& r, const T* x, const T* y, std::size_t n, void* d_out,
                  const WorkspaceView& ws, cudaStream_t stream) {
  dispatch_traits<T>(r, [&](auto traits) {
    launch_with<typename decltype(traits)::type>(x, y, n, d_out, ws, stream, finish_of(r));
  });
}

//! One block folds partials[0, count) (Traits::Acc values) into *d_out, the result of `elements`
//! elements (the count mean, var and all read) of the op in `finish`.
template <class Traits>
void launch_combine_partials(const typename Traits::Acc* partials, unsigned count, void* d_out,
                             cudaStream_t stream, std::uint64_t elements = 0,
                             Finish finish = {Op::sum, 0}) {
  constexpr int kBlock = 256;  // the fold of kMaxGrid partials: 32 per thread at most
  combine_partials_kernel<Traits, kBlock>
      <<<1, kBlock, 0, stream>>>(partials, count, d_out, elements, finish);
  REDUCELAB_CHECK_LAUNCH("reducelab combine_partials_kernel");
}

}  // namespace reducelab::detail

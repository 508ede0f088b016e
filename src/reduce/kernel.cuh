#pragma once
// The production reduce: one kernel per call, built from three pieces.
//
// A persistent grid (at most SMs x resident blocks) shares the input: the range agent
// (agent.cuh) folds each thread's share into its state, the block combines its threads with warp
// shuffles (device/block_reduce.cuh), and the grid step (grid_step.cuh) turns the blocks'
// partials into the result, the last block to finish folding them. No second kernel, no memset,
// and the order of every addition depends only on n, the pointer's offset in a 16-byte line and
// the grid: bitwise repeatable on one GPU model.

#include <cstddef>

#include "device/block_reduce.cuh"
#include "reduce/agent.cuh"
#include "reduce/grid_step.cuh"
#include "reduce/stats_traits.cuh"

namespace reducelab::detail {

template <class T>
struct KernelArgs {
  const T* x;
  const T* y;            // dot only
  std::size_t n;
  RangeSplit split;      // split_range(x, n), worked out on the host
  void* out;             // Traits::Out
  void* partials;        // gridDim.x x Traits::Acc
  unsigned int* counter; // zero on entry; zero again on exit
  Finish finish;         // which op of Traits, and its correction
};

template <class Traits, class Config, bool kYVector>
__global__ void __launch_bounds__(Config::kBlock, Config::kMinBlocksPerSM)
    reduce_kernel(KernelArgs<typename Traits::Elem> a) {
  using Acc = typename Traits::Acc;
  constexpr int kBlock = Config::kBlock;
  using Agent = RangeAgent<Traits, kBlock, Config::kUnroll, Config::kHint, kYVector>;
  __shared__ Acc warp_slots[kBlock / device::kWarpSize];

  typename Traits::State state = Traits::start();
  Agent::consume(state, a.x, a.y, a.n, a.split, blockIdx.x, gridDim.x);
  Acc acc = Traits::finish(state, a.x);
  auto combine = [](Acc p, Acc q) { return Traits::combine(p, q); };
  acc = device::block_reduce<kBlock>(acc, combine, Traits::identity(), warp_slots);
  if (gridDim.x == 1 ||
      grid_step<Traits, kBlock>(acc, static_cast<Acc*>(a.partials), a.counter, warp_slots)) {
    if (threadIdx.x == 0) Traits::store(a.out, 0, acc, a.n, a.finish);
  }
}

}  // namespace reducelab::detail

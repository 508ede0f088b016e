#pragma once
// The article's `warpReduce` on volatile shared memory, used by V4 and V5 for the last six steps
// (s = 32..1), where only warp 0 works and no __syncthreads() is needed.
//
// Hopper finding: the article's version assumes the 32 lanes of a warp execute each line in
// lockstep. Since Volta (independent thread scheduling) that is not guaranteed: a lane may store
// smem[tid] before its neighbour has loaded it, and compute-sanitizer's racecheck reports the
// article's code. We keep its shape and make each step safe: load into a register,
// __syncwarp(), store, __syncwarp(). `volatile` is still needed so every load goes to shared
// memory instead of a register copy from the previous step.

namespace reducelab::ladder::detail {

template <class Combine>
__device__ __forceinline__ void warp_tail(volatile float* smem, unsigned tid, Combine combine) {
  // One step: smem[tid] = smem[tid] op smem[tid + offset], safe without lockstep execution.
  float value = smem[tid];
  auto step = [&](unsigned offset) {
    const float other = smem[tid + offset];
    value = combine(value, other);
    __syncwarp();
    smem[tid] = value;
    __syncwarp();
  };
  step(32);
  step(16);
  step(8);
  step(4);
  step(2);
  step(1);
}

}  // namespace reducelab::ladder::detail

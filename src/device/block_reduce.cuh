#pragma once
// Block-level reduction in two levels: shuffles inside each warp, one shared-memory slot per
// warp, then warp 0 reduces the slots. The order is fixed, so results are deterministic.

#include "device/warp_reduce.cuh"

namespace reducelab::device {

// `warp_slots` must hold kBlock / 32 values. The result is valid in thread 0 only. Contains one
// __syncthreads(); callers that reuse `warp_slots` afterwards must synchronise again.
template <int kBlock, class T, class Op>
__device__ __forceinline__ T block_reduce(T value, Op op, T identity, T* warp_slots) {
  static_assert(kBlock % kWarpSize == 0 && kBlock <= 1024, "block must be whole warps");
  constexpr int kWarps = kBlock / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  value = warp_reduce(value, op);
  if constexpr (kWarps == 1) {
    return value;
  } else {
    if (lane == 0) warp_slots[warp] = value;
    __syncthreads();
    if (warp == 0) {
      value = lane < kWarps ? warp_slots[lane] : identity;
      value = warp_reduce(value, op);
    }
    return value;
  }
}

}  // namespace reducelab::device

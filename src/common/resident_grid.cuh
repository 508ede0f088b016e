#pragma once
// The largest grid that is resident at once for one kernel: SMs x blocks of it per SM, per device,
// computed once. Used by the persistent-grid kernels (the ladder's V7 and the production reduce).

#include <cuda_runtime.h>

#include <array>
#include <atomic>

#include "common/cuda_check.hpp"

namespace reducelab::detail {

//! SMs x resident blocks of `kernel` at `block` threads on `device` (the current device).
//! `Tag` must be unique to the kernel: kernels of one element type share a function-pointer type,
//! so a cache keyed by that type alone would hand one kernel's occupancy to another (it did: the
//! first kernel of a type launched in a process set the grid of all the others).
template <class Tag, class Kernel>
unsigned resident_grid(Kernel kernel, int block, int device) {
  static std::array<std::atomic<unsigned>, 64> cache{};
  const bool cacheable = device >= 0 && device < 64;
  if (cacheable) {
    if (const unsigned cached = cache[device].load(std::memory_order_relaxed)) return cached;
  }
  int sms = 0;
  int per_sm = 0;
  REDUCELAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  REDUCELAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
  const unsigned grid = static_cast<unsigned>(sms > 0 ? sms : 1) *
                        static_cast<unsigned>(per_sm > 0 ? per_sm : 1);
  if (cacheable) cache[device].store(grid, std::memory_order_relaxed);
  return grid;
}

}  // namespace reducelab::detail

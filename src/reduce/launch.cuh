#pragma once
// Grid sizing and launch of the production kernel, and the tuned configuration.

#include <array>
#include <atomic>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "reduce/kernel.cuh"
#include "reduce/launch.hpp"

namespace reducelab::detail {

// Tuned on the H200 (docs/results/h200-tuning.md): 512 threads, 4 vectors in flight per
// thread, loads that skip L1 allocation.
struct TunedConfig {
  static constexpr int kBlock = 512;
  static constexpr int kUnroll = 4;
  static constexpr device::LoadHint kHint = device::LoadHint::no_alloc;
  static constexpr int kMinVectorsPerThread = 1;  // small inputs: blocks = vectors / (block x this)
};

// argmin/argmax carry a larger per-thread state (value, index, flag: 38 registers for f32, so 3
// blocks of 512 per SM instead of 4): 8 vectors in flight per thread keep the bytes in flight up.
// H200, f32 argmax at 2^27: U=4 146.5 us, U=8 136.1 us (docs/results/h200-tuning.md).
struct ArgConfig : TunedConfig {
  static constexpr int kUnroll = 8;
};

template <class Traits> struct ConfigFor { using type = TunedConfig; };
template <class T, bool kIsMin> struct ConfigFor<ArgTraits<T, kIsMin>> { using type = ArgConfig; };

// SM count x resident blocks per SM for one kernel instantiation, per device, computed once.
template <class Kernel>
unsigned resident_grid(Kernel kernel, int block) {
  static std::array<std::atomic<unsigned>, 64> cache{};
  int device = 0;
  REDUCELAB_CUDA_CHECK(cudaGetDevice(&device));
  if (device < 64) {
    if (const unsigned cached = cache[device].load(std::memory_order_relaxed)) return cached;
  }
  int sms = 0;
  int per_sm = 0;
  REDUCELAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  REDUCELAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
  unsigned grid = static_cast<unsigned>(sms) * static_cast<unsigned>(per_sm > 0 ? per_sm : 1);
  if (grid > kMaxGrid) grid = kMaxGrid;
  if (device < 64) cache[device].store(grid, std::memory_order_relaxed);
  return grid;
}

inline std::size_t misalignment(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) & 15;
}

//! Launches reduce_kernel<Traits, ...>: head/vector split, grid = min(resident blocks, one
//! vector per thread), dot's y read as vectors only when it shares x's 16-byte offset.
template <class Traits, class Config = typename ConfigFor<Traits>::type>
void launch_with(const typename Traits::Elem* x, const typename Traits::Elem* y, std::size_t n,
                 void* d_out, const WorkspaceView& ws, cudaStream_t stream) {
  using T = typename Traits::Elem;
  constexpr int kCount = 16 / sizeof(T);
  constexpr int kBlock = Config::kBlock;
  std::size_t head = ((16 - misalignment(x)) & 15) / sizeof(T);
  if (head > n) head = n;
  const std::size_t vectors = (n - head) / kCount;
  const KernelArgs<T> args{x, y, n, head, vectors, d_out, ws.d_partials, ws.d_counter};
  auto launch = [&](auto kernel) {
    const unsigned resident = resident_grid(kernel, kBlock);
    constexpr std::size_t kPerBlock = static_cast<std::size_t>(kBlock) * Config::kMinVectorsPerThread;
    const std::size_t wanted = (vectors + kPerBlock - 1) / kPerBlock;
    const unsigned grid = static_cast<unsigned>(wanted < 1 ? 1 : (wanted < resident ? wanted : resident));
    kernel<<<grid, kBlock, 0, stream>>>(args);
    REDUCELAB_CHECK_LAUNCH("reducelab reduce_kernel");
  };
  if constexpr (Traits::kArrays == 2) {
    if (misalignment(x) == misalignment(y)) {
      launch(reduce_kernel<Traits, kBlock, Config::kUnroll, Config::kHint, true>);
    } else {
      launch(reduce_kernel<Traits, kBlock, Config::kUnroll, Config::kHint, false>);
    }
  } else {
    launch(reduce_kernel<Traits, kBlock, Config::kUnroll, Config::kHint, true>);
  }
}

template <class T>
void launch_typed(Op op, const T* x, const T* y, std::size_t n, void* d_out,
                  const WorkspaceView& ws, cudaStream_t stream) {
  switch (op) {
    case Op::sum: return launch_with<SumTraits<T, 1>>(x, nullptr, n, d_out, ws, stream);
    case Op::dot: return launch_with<SumTraits<T, 2>>(x, y, n, d_out, ws, stream);
    case Op::min: return launch_with<ExtremumTraits<T, device::Min>>(x, nullptr, n, d_out, ws, stream);
    case Op::max: return launch_with<ExtremumTraits<T, device::Max>>(x, nullptr, n, d_out, ws, stream);
    case Op::argmin: return launch_with<ArgTraits<T, true>>(x, nullptr, n, d_out, ws, stream);
    case Op::argmax: return launch_with<ArgTraits<T, false>>(x, nullptr, n, d_out, ws, stream);
  }
}

}  // namespace reducelab::detail

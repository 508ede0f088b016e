#pragma once
// Grid sizing and launch of the production kernel, and the tuned configuration.

#include <cstdint>

#include "common/cuda_check.hpp"
#include "common/resident_grid.cuh"
#include "reduce/kernel.cuh"
#include "reduce/launch.hpp"

namespace reducelab::detail {

// Tuned on the H200 with build/release/src/reducelab_tune (docs/notebook/h200-tuning.md): the
// bytes a thread keeps in flight, and the registers its state costs, decide the configuration.
// Figures are 2^27 elements, one tune run each (runs differ by ~1-2% between machines). The
// parameters after kUnroll keep their production values except in reducelab_tune's variants.
template <int kBlock_, int kUnroll_, device::LoadHint kHint_ = device::LoadHint::no_alloc,
          int kMinVectors_ = 1, GridStep kGridStep_ = GridStep::fold>
struct Config {
  static constexpr int kBlock = kBlock_;  // threads per block
  static constexpr int kUnroll = kUnroll_;  // 16-byte vectors in flight per thread and array
  static constexpr device::LoadHint kHint = kHint_;  // cache hint of the 16-byte loads
  static constexpr int kMinVectorsPerThread = kMinVectors_;  // per thread, before another block
  static constexpr GridStep kGridStep = kGridStep_;  // how the last block gets the partials
};

// sum, min, max of 1-, 2- and 4-byte types, and min/max of 8-byte types: 512 x 4 (f32 sum:
// 125.8 us, 1024 x 2 127.0, CUB 128.9; f64 max: 244.4 us, 256 x 4 244.5, 512 x 2 245.3, CUB
// 242.6; 512 x 8 283.1 vs 249.2 for 512 x 4 in another run).
using TunedConfig = Config<512, 4>;

template <class Traits>
struct ConfigFor {
  using type = TunedConfig;
};
// sum of 8-byte elements: 8 vectors in flight (f64 sum: U=8 245.8 us, U=4 248.2, CUB 247.2).
template <class T>
struct ConfigFor<SumTraits<T, 1>> {
  using type = std::conditional_t<sizeof(T) == 8, Config<512, 8>, TunedConfig>;
};
// dot loads two arrays: 2 vectors of each in flight (f64 dot: U=2 468.7 us, U=4 480.4, CUB 474.5;
// i64 dot: all three configurations within 0.2%).
template <class T>
struct ConfigFor<SumTraits<T, 2>> {
  using type = Config<512, 2>;
};
// argmin/argmax carry a larger state (38 registers for f32 at U=4): 256 x 8 for small types
// (f32 argmax: 127.5 us, 512 x 4 127.7, 256 x 4 129.5, CUB 133.0; f16 argmax: 70.5 us, 512 x 4
// 68.8, CUB 91.0), 512 x 4 for 8-byte types (f64 argmax: 243.2 us, 512 x 8 245.8, CUB 248.2).
template <class T, bool kIsMin>
struct ConfigFor<ArgTraits<T, kIsMin>> {
  using type = std::conditional_t<sizeof(T) == 8, Config<512, 4>, Config<256, 8>>;
};

template <class Traits, class Config, bool kYVector>
struct KernelTag {};

//! Blocks for `vectors` 16-byte vectors: up to one tile (kBlock x kUnroll vectors) a single
//! block loads everything in one batch and needs no cross-block step (sweep on the H200, f32
//! 2^12: 2 blocks 8.4 us, CUB's single-tile kernel 5.9 us); above, kMinVectorsPerThread vectors
//! per thread, at most the resident grid.
template <class Config>
unsigned grid_size(std::size_t vectors, unsigned resident) {
  if (resident > kMaxGrid) resident = kMaxGrid;  // the partials hold kMaxGrid values
  constexpr std::size_t kTile = static_cast<std::size_t>(Config::kBlock) * Config::kUnroll;
  if (vectors <= kTile) return 1;
  constexpr std::size_t kPerBlock =
      static_cast<std::size_t>(Config::kBlock) * Config::kMinVectorsPerThread;
  const std::size_t wanted = (vectors + kPerBlock - 1) / kPerBlock;
  return static_cast<unsigned>(wanted < resident ? wanted : resident);
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
  auto launch = [&](auto kernel, auto tag) {
    const unsigned resident = resident_grid<decltype(tag)>(kernel, kBlock, ws.device);
    const unsigned grid = grid_size<Config>(vectors, resident);
    kernel<<<grid, kBlock, 0, stream>>>(args);
    REDUCELAB_CHECK_LAUNCH("reducelab reduce_kernel");
  };
  constexpr int kUnroll = Config::kUnroll;
  constexpr device::LoadHint kHint = Config::kHint;
  constexpr GridStep kStep = Config::kGridStep;
  if constexpr (Traits::kArrays == 2) {
    if (misalignment(x) == misalignment(y)) {
      launch(reduce_kernel<Traits, kBlock, kUnroll, kHint, true, kStep>,
             KernelTag<Traits, Config, true>{});
    } else {
      launch(reduce_kernel<Traits, kBlock, kUnroll, kHint, false, kStep>,
             KernelTag<Traits, Config, false>{});
    }
  } else {
    launch(reduce_kernel<Traits, kBlock, kUnroll, kHint, true, kStep>,
           KernelTag<Traits, Config, true>{});
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

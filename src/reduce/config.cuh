#pragma once
// The production kernel's tuning: how many threads per block, how many 16-byte vectors each
// thread keeps in flight, the cache hint of the loads, and when a second block is worth it.
//
// Tuned on the H200 with build/release/src/reducelab_tune (docs/notebook/h200-tuning.md): the
// bytes a thread keeps in flight, and the registers its state costs, decide the configuration.
// Figures are 2^27 elements, one tune run each (runs differ by ~1-2% between machines).

#include <cstddef>
#include <type_traits>

#include "device/vector_load.cuh"
#include "reduce/stats_traits.cuh"

namespace reducelab::detail {

template <int kBlock_, int kUnroll_, device::LoadHint kHint_ = device::LoadHint::no_alloc,
          int kMinVectors_ = 1, int kMinBlocks_ = 0>
struct Config {
  static constexpr int kBlock = kBlock_;    // threads per block
  static constexpr int kUnroll = kUnroll_;  // 16-byte vectors in flight per thread and array
  // Cache hint of the 16-byte loads: no_alloc and evict-first were within 0.5% of plain, the
  // L2::256B prefetch 6% slower (135.6 us, the extra sector fetches cost bandwidth).
  static constexpr device::LoadHint kHint = kHint_;
  static constexpr int kMinVectorsPerThread = kMinVectors_;  // per thread, before another block
  // Resident blocks per SM the compiler must allow (__launch_bounds__' second argument): a cap on
  // registers where the allocator would otherwise take a few more and lose a block per SM. 0
  // leaves it out: an explicit 1 is not neutral (f32 sum went from 32 to 47 registers with it).
  static constexpr int kMinBlocksPerSM = kMinBlocks_;
  //! Vectors one block loads in one batch.
  static constexpr std::size_t kTile = static_cast<std::size_t>(kBlock) * kUnroll;
};

// sum, min, max of 1-, 2- and 4-byte types, and min/max of 8-byte types: 512 x 4 (f32 sum:
// 125.8 us, 1024 x 2 127.0, CUB 128.9; f64 max: 244.4 us, 256 x 4 244.5, 512 x 2 245.3, CUB
// 242.6; 512 x 8 283.1 vs 249.2 for 512 x 4 in another run).
using TunedConfig = Config<512, 4>;

template <class Traits>
struct ConfigFor {
  using type = TunedConfig;
};
// min/max of 8-byte integers: 4 blocks of 512 per SM, as they were tuned. When the kernel was
// split into layers (session 4) the allocator gave them 40 registers instead of 32 (3 blocks per
// SM) and i64/u64 min/max went from 244.5-245.4 us to 253.6-256.5 us at 2^27 (CUB 248-249).
template <class T, class Extremum>
struct ConfigFor<ExtremumTraits<T, Extremum>> {
  using type = std::conditional_t<sizeof(T) == 8, Config<512, 4, device::LoadHint::no_alloc, 1, 4>,
                                  TunedConfig>;
};
// aminmax carries two extrema: as min/max for 8-byte elements (f64 2^27: 254.9 us at 512 x 4
// without the register cap, sum 241.6), the default for the others.
template <class T>
struct ConfigFor<MinMaxTraits<T>> {
  using type = typename ConfigFor<ExtremumTraits<T, device::Max>>::type;
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

// Inputs of at most one tile of the block below (16 KB) are read by one block of 256 threads with
// 4 vectors each, for 1-, 2- and 4-byte elements (tune --small, two machines, 400 calls per
// point taken in turn): f32 sum at 2^12 6.5 us for 256 x 4 against 6.9 for 512 x 4 (CUB 6.5),
// and 7.3 against 7.8 (CUB 8.0); f32 max 6.8 vs 7.0 and 6.7 vs 7.0; f16 sum at 2^10..2^12
// 6.6-6.7 vs 6.8-7.0. 8-byte elements keep their configuration (f64 sum at 2^11: 8.0 us for
// 256 x 4 against 7.5 for 512 x 8), and so do argmin/argmax (256 x 8 is one block up to 2^13
// floats already).
template <class Traits>
struct OneBlockConfigFor {
  using type = std::conditional_t<sizeof(typename Traits::Elem) <= 4, Config<256, 4>,
                                  typename ConfigFor<Traits>::type>;
};
template <class T, bool kIsMin>
struct OneBlockConfigFor<ArgTraits<T, kIsMin>> {
  using type = typename ConfigFor<ArgTraits<T, kIsMin>>::type;
};

}  // namespace reducelab::detail

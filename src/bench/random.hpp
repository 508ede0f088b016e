#pragma once
// Reproducible random inputs from a printed seed. Counter-based (value i depends only on seed and
// i), so large arrays fill in parallel and any element can be regenerated for a failure report.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

#include "reducelab/dtype.hpp"

namespace reducelab::bench {

//! The seed of the random inputs unless one is given: bench, sweep and profile default to it and
//! the GPU tests use it, so a row of a results file can be replayed by a test and vice versa.
inline constexpr std::uint64_t kDefaultSeed = 20261130;

enum class Distribution {
  uniform,         //!< floats in [-1, 1); integers in [-1000, 1000] ([0, 2000] unsigned)
  small_integers,  //!< integers in [-8, 8] ([0, 16] unsigned), in any type: float sums are exact
};

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <class T>
T random_value(std::uint64_t seed, std::size_t i, Distribution distribution) {
  const std::uint64_t bits = splitmix64(splitmix64(seed) + i);
  if (distribution == Distribution::small_integers) {
    const long v = static_cast<long>(bits % 17);
    if constexpr (is_floating_v<T>) {
      return T(static_cast<float>(v - 8));
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(v - 8);
    } else {
      return static_cast<T>(v);
    }
  }
  if constexpr (is_floating_v<T>) {
    const double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
    if constexpr (std::is_same_v<T, double>) {
      return 2.0 * unit - 1.0;
    } else {
      return T(static_cast<float>(2.0 * unit - 1.0));
    }
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<long>(bits % 2001) - 1000);
  } else {
    return static_cast<T>(bits % 2001);
  }
}

//! Fills out[0..n) with the values of indices [first, first + n) of the stream `seed`.
template <class T>
void fill_random(T* out, std::size_t n, std::uint64_t seed, Distribution distribution,
                 std::size_t first = 0) {
  auto fill = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) out[i] = random_value<T>(seed, first + i, distribution);
  };
  const unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  if (n < (std::size_t{1} << 20) || threads == 1) return fill(0, n);
  std::vector<std::thread> pool;
  const std::size_t chunk = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(n, t * chunk);
    const std::size_t end = std::min(n, begin + chunk);
    pool.emplace_back(fill, begin, end);
  }
  for (std::thread& thread : pool) thread.join();
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::uint64_t seed, Distribution distribution) {
  std::vector<T> out(n);
  fill_random(out.data(), n, seed, distribution);
  return out;
}

}  // namespace reducelab::bench

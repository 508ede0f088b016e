#pragma once
// The CPU reference of an axis reduction: every result of an AxisWalk, each the reference of
// reference.hpp over its elements gathered in row-major order of the reduced axes, so an
// argmin/argmax index is the position within the reduced axes (as reduce_axes documents).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "bench/axes.hpp"
#include "bench/reference.hpp"

namespace reducelab::bench {

//! One reference per result of `walk` over x (and y, for dot). Threads take contiguous blocks of
//! results, so neighbouring columns share the cache lines they read.
template <class T>
std::vector<Reference<T>> reference_axes(Op op, const T* x, const T* y, const AxisWalk& walk,
                                         std::size_t results) {
  std::vector<Reference<T>> refs(results);
  const std::size_t length = static_cast<std::size_t>(walk.reduced_count);
  std::vector<std::int64_t> offsets(length);
  for (std::size_t j = 0; j < length; ++j)
    offsets[j] = walk.reduced_offset(static_cast<std::int64_t>(j));
  auto work = [&](std::size_t begin, std::size_t end) {
    std::vector<T> gx(length);
    std::vector<T> gy(y == nullptr ? 0 : length);
    for (std::size_t s = begin; s < end; ++s) {
      const std::int64_t base = walk.kept_offset(static_cast<std::int64_t>(s));
      for (std::size_t j = 0; j < length; ++j) gx[j] = x[base + offsets[j]];
      if (y != nullptr)
        for (std::size_t j = 0; j < length; ++j) gy[j] = y[base + offsets[j]];
      refs[s] = reference(op, gx.data(), y == nullptr ? nullptr : gy.data(), length);
    }
  };
  const std::size_t threads = std::min<std::size_t>(
      std::max<std::size_t>(results, 1),
      std::max(1u, std::min(16u, std::thread::hardware_concurrency())));
  const std::size_t block = (results + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t)
    pool.emplace_back(work, std::min(results, t * block), std::min(results, (t + 1) * block));
  work(0, std::min(results, block));
  for (std::thread& thread : pool) thread.join();
  return refs;
}

}  // namespace reducelab::bench

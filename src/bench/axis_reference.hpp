#pragma once
// The CPU reference of the axis reductions (reducelab/axis.hpp): one bench::Reference per result
// of a strided view, with the same arithmetic as bench::reference (sums in long double, integers
// wrapping modulo 2^64, extrema exact with the first NaN winning), so check_result judges each.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "bench/reference.hpp"
#include "reducelab/axis.hpp"

namespace reducelab::bench {

//! A row-major walk over the axes of `layout` selected by `axes` (the others stay at index 0),
//! from any flat position among them: the offset (in elements) of the current index.
class AxisIndexWalk {
 public:
  AxisIndexWalk(const Layout& layout, AxisMask axes, std::int64_t first = 0) {
    for (int k = 0; k < layout.rank; ++k) {
      if ((axes >> k & 1u) == 0) continue;
      sizes_[count_] = layout.sizes[k];
      strides_[count_] = layout.strides[k];
      ++count_;
    }
    for (int j = count_ - 1; j >= 0; --j) {  // the multi-index of `first`
      if (sizes_[j] == 0) break;
      index_[j] = first % sizes_[j];
      first /= sizes_[j];
      offset_ += index_[j] * strides_[j];
    }
  }
  //! Number of indices of the walked axes (1 for none).
  std::int64_t count() const {
    std::int64_t n = 1;
    for (int j = 0; j < count_; ++j) n *= sizes_[j];
    return n;
  }
  std::int64_t offset() const { return offset_; }
  void next() {
    for (int j = count_ - 1; j >= 0; --j) {
      offset_ += strides_[j];
      if (++index_[j] < sizes_[j]) return;
      offset_ -= index_[j] * strides_[j];
      index_[j] = 0;
    }
  }

 private:
  int count_ = 0;
  std::int64_t sizes_[kMaxRank] = {};
  std::int64_t strides_[kMaxRank] = {};
  std::int64_t index_[kMaxRank] = {};
  std::int64_t offset_ = 0;
};

//! The mask of every axis of a view of rank `rank`.
inline AxisMask all_axes(int rank) { return rank >= 32 ? ~AxisMask{0} : (AxisMask{1} << rank) - 1; }

//! Offsets (in elements) of every index of the axes in `axes` of `layout`, in row-major order of
//! those axes: element (kept k, reduced r) of a reduction is at kept[k] + reduced[r].
inline std::vector<std::int64_t> axis_offsets(const Layout& layout, AxisMask axes) {
  AxisIndexWalk walk(layout, axes);
  std::vector<std::int64_t> out(static_cast<std::size_t>(walk.count()));
  for (std::int64_t& offset : out) {
    offset = walk.offset();
    walk.next();
  }
  return out;
}

//! Reduces the axes `axes` of the view (x, layout) (and y through the same layout, for dot; x
//! and y point at the view's element 0) on the CPU: one Reference per index of the kept axes, in
//! their row-major order. Each reduces its elements in row-major order of the reduced axes, so an
//! argmin/argmax index is the flat index within them. A result over no elements has n = 0 and,
//! for min/max/argmin/argmax, empty_extremum. Large calls run in threads, over the reduced range
//! (combined in order) or over the results, so the result does not depend on the thread count.
template <class T>
std::vector<Reference<T>> axis_reference(Op op, const T* x, const T* y, const Layout& layout,
                                         AxisMask axes) {
  const std::vector<std::int64_t> kept = axis_offsets(layout, ~axes & all_axes(layout.rank));
  const std::int64_t reduced = AxisIndexWalk(layout, axes).count();
  const std::size_t results = kept.size();
  std::vector<Reference<T>> refs(results);
  for (Reference<T>& r : refs) {
    r.op = op;
    if (reduced == 0 && op != Op::sum && op != Op::dot) r.extremum = empty_extremum<T>(op);
  }
  if (results == 0 || reduced == 0) return refs;

  // Results [k0, k1) over the reduced positions [r0, r1), into out[k - k0].
  auto work = [&](std::size_t k0, std::size_t k1, std::int64_t r0, std::int64_t r1,
                  Reference<T>* out) {
    AxisIndexWalk walk(layout, axes, r0);
    for (std::int64_t r = r0; r < r1; ++r, walk.next()) {
      for (std::size_t k = k0; k < k1; ++k) {
        const std::int64_t at = kept[k] + walk.offset();
        detail::add_element(out[k - k0], x[at], y == nullptr ? T{} : y[at], r);
      }
    }
  };
  const std::size_t total = results * static_cast<std::size_t>(reduced);
  const std::size_t threads =
      total < (std::size_t{1} << 18)
          ? 1
          : std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  // Thread t runs task(t); the calling thread runs task(0).
  auto run = [threads](auto&& task) {
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(task, t);
    task(0);
    for (std::thread& thread : pool) thread.join();
  };
  if (static_cast<std::size_t>(reduced) >= results) {
    // Chunks of the reduced range, each for every result, merged in order.
    const std::int64_t chunk = (reduced + static_cast<std::int64_t>(threads) - 1) /
                               static_cast<std::int64_t>(threads);
    std::vector<std::vector<Reference<T>>> parts(threads, refs);
    run([&](std::size_t t) {
      const std::int64_t r0 = std::min(reduced, static_cast<std::int64_t>(t) * chunk);
      work(0, results, r0, std::min(reduced, r0 + chunk), parts[t].data());
    });
    for (const std::vector<Reference<T>>& part : parts)
      for (std::size_t k = 0; k < results; ++k) detail::merge(refs[k], part[k]);
  } else {
    // Blocks of results, each over the whole reduced range.
    const std::size_t chunk = (results + threads - 1) / threads;
    run([&](std::size_t t) {
      const std::size_t k0 = std::min(results, t * chunk);
      work(k0, std::min(results, k0 + chunk), 0, reduced, refs.data() + k0);
    });
  }
  return refs;
}

}  // namespace reducelab::bench

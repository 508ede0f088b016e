#include "bench/axes.hpp"

namespace reducelab::bench {

std::string AxisShape::text() const {
  std::string out;
  for (std::size_t size : sizes) out += (out.empty() ? "" : "x") + std::to_string(size);
  return out;
}

std::string AxisShape::axes_text() const {
  std::string out;
  for (std::size_t k = 0; k < sizes.size(); ++k)
    if (mask & (AxisMask{1} << k)) out += (out.empty() ? "" : ",") + std::to_string(k);
  return out;
}

std::size_t AxisShape::elements() const { return results() * reduced(); }

std::size_t AxisShape::results() const {
  std::size_t count = 1;
  for (std::size_t k = 0; k < sizes.size(); ++k)
    if (!(mask & (AxisMask{1} << k))) count *= sizes[k];
  return count;
}

std::size_t AxisShape::reduced() const {
  std::size_t count = 1;
  for (std::size_t k = 0; k < sizes.size(); ++k)
    if (mask & (AxisMask{1} << k)) count *= sizes[k];
  return count;
}

Layout AxisShape::layout() const {
  Layout layout;
  layout.rank = static_cast<int>(sizes.size());
  std::int64_t stride = 1;
  for (int k = layout.rank - 1; k >= 0; --k) {
    layout.sizes[k] = static_cast<std::int64_t>(sizes[k]);
    layout.strides[k] = stride;
    stride *= layout.sizes[k];
  }
  return layout;
}

AxisWalk AxisShape::walk() const {
  const Layout view = layout();
  AxisWalk walk;
  bool last_reduced = false;  // the kind of the axis appended last, while one has been
  for (int k = 0; k < view.rank; ++k) {
    if (view.sizes[k] == 1) continue;
    const bool is_reduced = (mask & (AxisMask{1} << k)) != 0;
    int& rank = is_reduced ? walk.reduced_rank : walk.kept_rank;
    std::int64_t* group_sizes = is_reduced ? walk.reduced_sizes : walk.kept_sizes;
    std::int64_t* group_strides = is_reduced ? walk.reduced_strides : walk.kept_strides;
    // Row-major neighbours of the same kind merge: the outer one's stride is size x stride.
    if (rank > 0 && last_reduced == is_reduced) {
      group_sizes[rank - 1] *= view.sizes[k];
      group_strides[rank - 1] = view.strides[k];
    } else {
      group_sizes[rank] = view.sizes[k];
      group_strides[rank] = view.strides[k];
      ++rank;
    }
    last_reduced = is_reduced;
  }
  walk.reduced_count = static_cast<std::int64_t>(reduced());
  return walk;
}

bool AxisShape::rows() const {
  const AxisWalk w = walk();
  return w.reduced_rank == 0 || (w.reduced_rank == 1 && w.reduced_strides[0] == 1);
}

SegmentSpec AxisShape::segments() const { return {SegmentKind::fixed, results(), reduced()}; }

}  // namespace reducelab::bench

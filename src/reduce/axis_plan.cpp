#include "reduce/axis_plan.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "reduce/validate.hpp"

namespace reducelab::detail {
namespace {

// Products and sums of sizes and offsets, each bounded by 2^62 so that later byte counts (8-byte
// elements and 16-byte results) cannot overflow either.
constexpr std::uint64_t kMaxExtent = std::uint64_t{1} << 62;

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what) {
  if (a != 0 && b > kMaxExtent / a)
    reject(std::string(what) + " overflows: it exceeds 2^62 elements");
  return a * b;
}

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what) {
  if (b > kMaxExtent - a)
    reject(std::string(what) + " overflows: it exceeds 2^62 elements");
  return a + b;
}

struct Dim {
  std::int64_t size;
  std::int64_t in;
  std::int64_t out;
};

// Orders by input stride, largest first, keeping the view's order among equal strides; then
// merges neighbours that form one contiguous run (in the output too when `with_out`).
int canonical_dims(Dim* dims, int count, bool sort, bool with_out) {
  if (sort)
    std::stable_sort(dims, dims + count, [](const Dim& a, const Dim& b) { return a.in > b.in; });
  int merged = 0;
  for (int i = 0; i < count; ++i) {
    if (merged > 0) {
      Dim& outer = dims[merged - 1];
      const Dim& inner = dims[i];
      if (outer.in == inner.in * inner.size && (!with_out || outer.out == inner.out * inner.size)) {
        outer = {outer.size * inner.size, inner.in, inner.out};
        continue;
      }
    }
    dims[merged++] = dims[i];
  }
  return merged;
}

}  // namespace

AxisView canonicalize_axes(const Layout& x, AxisMask axes, const Layout* out,
                           bool positions_matter) {
  const int rank = x.rank;
  require_rank(rank);
  for (int k = rank; k < 32; ++k)
    if (((axes >> k) & 1u) != 0)
      reject("the axis mask names axis " + std::to_string(k) + " but the view has rank " +
              std::to_string(rank));
  for (int k = 0; k < rank; ++k) {
    if (x.sizes[k] < 0)
      reject("axis " + std::to_string(k) + " has a negative size " + std::to_string(x.sizes[k]));
    if (x.strides[k] < 0)
      reject("axis " + std::to_string(k) + " has a negative stride " +
              std::to_string(x.strides[k]) + " (strides must be non-negative)");
  }
  auto reduced_axis = [&](int k) { return ((axes >> k) & 1u) != 0; };
  int kept_count = 0;
  for (int k = 0; k < rank; ++k) kept_count += reduced_axis(k) ? 0 : 1;

  // Output strides of the kept axes, in results.
  std::int64_t out_strides[kMaxRank] = {};
  if (out == nullptr) {
    std::uint64_t running = 1;
    for (int k = rank - 1; k >= 0; --k) {
      if (reduced_axis(k)) continue;
      out_strides[k] = static_cast<std::int64_t>(running);
      running = checked_mul(running, static_cast<std::uint64_t>(x.sizes[k]), "the result");
    }
  } else {
    if (out->rank != kept_count && out->rank != rank)
      reject("out has rank " + std::to_string(out->rank) + "; expected " +
              std::to_string(kept_count) + " (reduced axes dropped) or " + std::to_string(rank) +
              " (reduced axes kept with size 1)");
    const bool keepdim = out->rank == rank;
    int o = 0;
    for (int k = 0; k < rank; ++k) {
      if (reduced_axis(k)) {
        if (keepdim && out->sizes[k] != 1)
          reject("out axis " + std::to_string(k) + " has size " + std::to_string(out->sizes[k]) +
                  "; a reduced axis has size 1 in a keepdim layout");
        if (keepdim) ++o;
        continue;
      }
      const int j = o++;
      if (out->sizes[j] != x.sizes[k])
        reject("out axis " + std::to_string(j) + " has size " + std::to_string(out->sizes[j]) +
                " but the kept axis " + std::to_string(k) + " has size " +
                std::to_string(x.sizes[k]));
      if (out->strides[j] < 0)
        reject("out axis " + std::to_string(j) + " has a negative stride " +
                std::to_string(out->strides[j]));
      if (out->strides[j] == 0 && out->sizes[j] > 1)
        reject("out axis " + std::to_string(j) + " has stride 0 and size " +
                std::to_string(out->sizes[j]) + ": its results would share one element");
      out_strides[k] = out->strides[j];
    }
  }

  AxisView view;
  Dim kept[kMaxRank];
  Dim reduced[kMaxRank];
  int kept_dims = 0;
  int reduced_dims = 0;
  std::uint64_t x_last = 0;    // offset of the view's last element
  std::uint64_t out_last = 0;  // offset of the last result
  for (int k = 0; k < rank; ++k) {
    const auto size = static_cast<std::uint64_t>(x.sizes[k]);
    if (reduced_axis(k)) {
      view.reduced = checked_mul(view.reduced, size, "the reduced axes");
    } else {
      view.outputs = checked_mul(view.outputs, size, "the result");
    }
    if (size == 0) continue;
    x_last = checked_add(
        x_last, checked_mul(size - 1, static_cast<std::uint64_t>(x.strides[k]), "the view"),
        "the view");
    if (!reduced_axis(k))
      out_last = checked_add(
          out_last,
          checked_mul(size - 1, static_cast<std::uint64_t>(out_strides[k]), "the result"),
          "the result");
    if (size == 1) continue;
    if (reduced_axis(k)) {
      reduced[reduced_dims++] = {x.sizes[k], x.strides[k], 0};
    } else {
      kept[kept_dims++] = {x.sizes[k], x.strides[k], out_strides[k]};
    }
  }
  const bool any_read = view.outputs > 0 && view.reduced > 0;
  view.x_extent = any_read ? x_last + 1 : 0;
  view.out_extent = view.outputs > 0 ? out_last + 1 : 0;
  if (view.outputs == 0) return view;  // nothing to read or write: the rest does not matter

  view.kept_rank = canonical_dims(kept, kept_dims, true, true);
  view.reduced_rank = canonical_dims(reduced, reduced_dims, !positions_matter, false);
  for (int i = 0; i < view.kept_rank; ++i) {
    view.kept_sizes[i] = kept[i].size;
    view.kept_in[i] = kept[i].in;
    view.kept_out[i] = kept[i].out;
  }
  for (int i = 0; i < view.reduced_rank; ++i) {
    view.reduced_sizes[i] = reduced[i].size;
    view.reduced_in[i] = reduced[i].in;
  }
  return view;
}

AxisPath plan_path(const AxisView& view) {
  if (view.outputs == 0) return AxisPath::nothing;
  if (view.reduced == 0) return AxisPath::strided;  // every result is an empty reduction
  const bool one_contiguous_range =
      view.reduced_rank == 0 || (view.reduced_rank == 1 && view.reduced_in[0] == 1);
  if (view.kept_rank == 0 && one_contiguous_range) return AxisPath::scalar;
  if (view.kept_rank == 1 && view.reduced_rank == 1 && view.reduced_in[0] == 1)
    return AxisPath::rows;
  return AxisPath::strided;
}

AxisRows rows_of(const AxisView& view) {
  return {view.outputs, view.reduced, static_cast<std::uint64_t>(view.kept_in[0]),
          static_cast<std::uint64_t>(view.kept_out[0])};
}

unsigned vector_columns_width(const AxisView& view, std::size_t element_bytes, bool x_aligned) {
  const auto width = static_cast<std::int64_t>(16 / element_bytes);
  if (!x_aligned || view.kept_rank == 0 || view.outputs == 0 || view.reduced == 0) return 1;
  const int inner = view.kept_rank - 1;
  if (view.kept_in[inner] != 1 || view.kept_sizes[inner] % width != 0) return 1;
  for (int i = 0; i < inner; ++i)
    if (view.kept_in[i] % width != 0) return 1;
  for (int i = 0; i < view.reduced_rank; ++i)
    if (view.reduced_in[i] % width != 0) return 1;
  return static_cast<unsigned>(width);
}

unsigned reduced_vector_width(const AxisView& view, std::size_t element_bytes, bool x_aligned) {
  const auto width = static_cast<std::int64_t>(16 / element_bytes);
  if (!x_aligned || view.reduced_rank == 0 || view.outputs == 0 || view.reduced == 0) return 1;
  const int inner = view.reduced_rank - 1;
  if (view.reduced_in[inner] != 1 || view.reduced_sizes[inner] % width != 0) return 1;
  for (int i = 0; i < inner; ++i)
    if (view.reduced_in[i] % width != 0) return 1;
  for (int i = 0; i < view.kept_rank; ++i)
    if (view.kept_in[i] % width != 0) return 1;
  return static_cast<unsigned>(width);
}

AxisView vector_runs_view(const AxisView& view, unsigned reduced_width) {
  AxisView runs = view;
  if (reduced_width > 1 && view.reduced_rank > 0) {
    const int inner = view.reduced_rank - 1;
    runs.reduced_sizes[inner] = view.reduced_sizes[inner] / reduced_width;
    runs.reduced_in[inner] = static_cast<std::int64_t>(reduced_width);
  }
  return runs;
}

bool reads_reduced_major(const AxisView& view) {
  const bool kept_contiguous = view.kept_rank > 0 && view.kept_in[view.kept_rank - 1] == 1;
  const bool reduced_contiguous =
      view.reduced_rank > 0 && view.reduced_in[view.reduced_rank - 1] == 1;
  return reduced_contiguous && !kept_contiguous;
}

AxisKernelShape plan_strided(const AxisView& view, unsigned resident_blocks,
                             std::uint64_t partial_capacity, unsigned max_groups,
                             unsigned vector_width, unsigned reduced_width,
                             std::size_t acc_bytes) {
  auto pow2_at_least = [](std::uint64_t value, unsigned cap) {
    unsigned p = 1;
    while (p < value && p < cap) p *= 2;
    return p;
  };
  AxisKernelShape shape;
  shape.steps = view.reduced;
  if (reads_reduced_major(view)) {
    // Rows that the segmented path cannot take (several kept axes that do not merge) and
    // non-adjacent reduced axes: the lanes of a result read its contiguous runs together, a
    // 16-byte vector each where the runs allow it (before session 15 an element each: 512 x
    // 256 x 1,024 over axes 0 and 2 at 1,108 GB/s, NCHW over N, H, W at 995).
    shape.reduced_major = true;
    shape.reduced_width = std::max(1u, reduced_width);
    shape.steps = view.reduced / shape.reduced_width;
    shape.lanes = pow2_at_least(shape.steps, kAxisBlock);
    shape.columns = kAxisBlock / shape.lanes;
  } else {
    // Columns (the innermost kept axis contiguous: a warp reads 32 neighbouring results' elements
    // of one reduced index, or 32 x width with vector columns), or nothing contiguous: results
    // across the threads.
    shape.width = vector_width;
    shape.columns = pow2_at_least(view.outputs / shape.width, kAxisColumns);
    shape.lanes = kAxisBlock / shape.columns;
    // Short columns and many of them (32 x 4,194,304): fewer lanes per result and more results
    // per block, until a thread reads at least kAxisMinPerThread reduced indices, so a block
    // does not spend its time in the lanes' shared-memory trees (one per result of a thread)
    // after one round of loads.
    while (shape.lanes > 1 && shape.steps < std::uint64_t{shape.lanes} * kAxisMinPerThread &&
           std::uint64_t{shape.columns} * 2 * shape.width <= view.outputs) {
      shape.lanes /= 2;
      shape.columns *= 2;
    }
  }
  const std::uint64_t resident = std::max(1u, resident_blocks);
  if (!shape.reduced_major) {
    // Many results (more blocks than the GPU holds): fewer lanes per result and more results
    // per block while the grid stays within one wave. Fat blocks beat many waves of thin ones:
    // the middle axis of 512 x 256 x 1,024 (131,072 vector columns, 256 rows) took 136.6 us in
    // 4,096 blocks of 8 lanes, 134.0 in 1,024 of 2, 130.2 in 512 of 1; 512 x 262,144 columns
    // 140.2 us in 2,048 blocks, 128.1 in 512 (2 lanes), but 157.8 in 256 (1 lane: too few
    // warps). Where no lane count fits one wave the default stays (session 15, H200, 660
    // resident blocks of f32 sum).
    auto blocks_with = [&](unsigned lanes) {
      const std::uint64_t per = std::uint64_t{kAxisBlock / lanes} * shape.width;
      return (view.outputs + per - 1) / per;
    };
    if (blocks_with(shape.lanes) > resident) {
      unsigned lanes = shape.lanes;
      while (lanes > 1 && blocks_with(lanes) > resident) lanes /= 2;
      if (blocks_with(lanes) <= resident) {
        shape.lanes = lanes;
        shape.columns = kAxisBlock / lanes;
      }
    }
  }
  const std::uint64_t per_block = std::uint64_t{shape.columns} * shape.width;
  const std::uint64_t blocks = (view.outputs + per_block - 1) / per_block;
  // The split fold gives each result of a block at least one thread: per_block <= kAxisBlock.
  if (blocks < resident && blocks <= max_groups && view.reduced > 0 && per_block <= kAxisBlock) {
    // At most one wave: grid x splits <= resident. Rounding up put 664..768 blocks on 660
    // resident slots (44 registers: 5 blocks of 256 per SM) for 1,024..32,768 kept columns:
    // the few blocks of the second wave ran alone, at 1.01 waves a whole block's time more
    // (170 us against 140, Nsight Compute, session 11).
    const std::uint64_t by_fill = resident / blocks;
    const std::uint64_t by_work = shape.steps / (std::uint64_t{shape.lanes} * kAxisMinPerThread);
    const std::uint64_t by_room = partial_capacity / (blocks * per_block);
    const std::uint64_t by_fold =
        kAxisBlock / per_block * std::max<std::uint64_t>(1, kAxisMaxFoldBytes / acc_bytes);
    const std::uint64_t splits =
        std::min({by_fill, by_work, by_room, by_fold, std::uint64_t{65535}});
    shape.splits = static_cast<unsigned>(std::max<std::uint64_t>(1, splits));
  }
  shape.chunk = (shape.steps + shape.splits - 1) / shape.splits;
  if (shape.chunk > 0)  // no empty split at the end
    shape.splits = static_cast<unsigned>((shape.steps + shape.chunk - 1) / shape.chunk);
  if (shape.splits == 0) shape.splits = 1;
  constexpr std::uint64_t kMaxGridX = 0x7fffffff;
  shape.grid = static_cast<unsigned>(std::min(blocks, kMaxGridX));
  return shape;
}

}  // namespace reducelab::detail

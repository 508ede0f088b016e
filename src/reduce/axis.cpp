// The axis reduce's runtime-typed entry point (include/reducelab/axis.hpp): validate and
// canonicalise the view (axis_plan.cpp), check the pointers over the extent it reads and writes,
// and hand it to the scalar reduce, the segmented reduce or the strided axis kernel.

#include "reducelab/axis.hpp"

#include <string>

#include "common/cuda_check.hpp"
#include "common/driver_api.hpp"
#include "common/pointer_check.hpp"
#include "reduce/axis_plan.hpp"
#include "reduce/launch.hpp"
#include "reduce/reproducible.hpp"
#include "reduce/validate.hpp"
#include "reduce/workspace.hpp"

namespace reducelab {
namespace {

using detail::reject;

// Row-major strides for the layout's sizes (a size-0 axis counts as 1, so strides stay valid).
void set_contiguous_strides(Layout& layout) {
  std::int64_t running = 1;
  for (int k = layout.rank - 1; k >= 0; --k) {
    layout.strides[k] = running;
    running *= layout.sizes[k] > 0 ? layout.sizes[k] : 1;
  }
}

Layout layout_of(std::initializer_list<std::int64_t> sizes) {
  if (sizes.size() > static_cast<std::size_t>(kMaxRank))
    reject("a layout of rank " + std::to_string(sizes.size()) + " (at most " +
            std::to_string(kMaxRank) + ")");
  Layout layout;
  layout.rank = static_cast<int>(sizes.size());
  int k = 0;
  for (std::int64_t size : sizes) {
    if (size < 0)
      reject("axis " + std::to_string(k) + " has a negative size " + std::to_string(size));
    layout.sizes[k++] = size;
  }
  return layout;
}

}  // namespace

Layout Layout::contiguous(std::initializer_list<std::int64_t> sizes) {
  Layout layout = layout_of(sizes);
  set_contiguous_strides(layout);
  return layout;
}

Layout Layout::strided(std::initializer_list<std::int64_t> sizes,
                       std::initializer_list<std::int64_t> strides) {
  if (sizes.size() != strides.size())
    reject(std::to_string(sizes.size()) + " sizes but " + std::to_string(strides.size()) +
            " strides");
  Layout layout = layout_of(sizes);
  int k = 0;
  for (std::int64_t stride : strides) layout.strides[k++] = stride;
  return layout;
}

std::int64_t Layout::count() const {
  std::int64_t n = 1;
  for (int k = 0; k < rank; ++k) n *= sizes[k];
  return n;
}

AxisMask axis_mask(std::initializer_list<int> axes) {
  AxisMask mask = 0;
  for (int axis : axes) {
    if (axis < 0 || axis >= kMaxRank)
      reject("axis " + std::to_string(axis) + " is outside [0, " + std::to_string(kMaxRank) +
              "); give the rank to count negative axes from the end");
    if ((mask >> axis) & 1u) reject("axis " + std::to_string(axis) + " is listed twice");
    mask |= AxisMask{1} << axis;
  }
  return mask;
}

AxisMask axis_mask(std::initializer_list<int> axes, int rank) {
  detail::require_rank(rank);
  AxisMask mask = 0;
  for (int axis : axes) {
    const int k = axis < 0 ? axis + rank : axis;
    if (k < 0 || k >= rank)
      reject("axis " + std::to_string(axis) + " is outside [" + std::to_string(-rank) + ", " +
              std::to_string(rank) + ") for rank " + std::to_string(rank));
    if ((mask >> k) & 1u) reject("axis " + std::to_string(axis) + " is listed twice");
    mask |= AxisMask{1} << k;
  }
  return mask;
}

Layout reduced_layout(const Layout& x, AxisMask axes, bool keepdim) {
  // Validates x and the mask the same way the reduction does.
  (void)detail::canonicalize_axes(x, axes, nullptr, false);
  Layout out;
  for (int k = 0; k < x.rank; ++k) {
    const bool reduced = ((axes >> k) & 1u) != 0;
    if (reduced && !keepdim) continue;
    out.sizes[out.rank++] = reduced ? 1 : x.sizes[k];
  }
  set_contiguous_strides(out);
  return out;
}

void reduce_axes(Reduction r, DType dtype, const void* d_x, const void* d_y, const Layout& x,
                 AxisMask axes, void* d_out, const Layout* out, cudaStream_t stream) {
  using namespace detail;
  const Op op = r.op;
  require_valid_op(r, dtype, d_y);
  require_determinism(r, dtype, "reduce_axes");
  // gpu_to_gpu: a result's order is the row-major order of its reduced elements, so the reduced
  // axes keep the view's order, as argmin's positions need.
  const bool fixed_order = takes_fixed_order(r, dtype);
  const bool positions_matter = info(op).result == ResultKind::value_index || fixed_order;
  const AxisView view = canonicalize_axes(x, axes, out, positions_matter);
  const AxisPath path = plan_path(view);
  if (path == AxisPath::nothing) return;
  const int device = current_device();
  require_pointers(op, dtype, d_x, d_y, view.x_extent,
                   {d_out, view.out_extent, result_alignment(op, dtype), "out"}, device);
  const WorkspaceView workspace = workspace_for(stream, is_capturing(stream), device);
  dispatch_dtype(dtype, [&](auto value) {
    using T = decltype(value);
    const T* tx = static_cast<const T*>(d_x);
    const T* ty = static_cast<const T*>(d_y);
    switch (path) {
      case AxisPath::scalar:
        if (fixed_order) {  // one row: the fixed order of the segmented form, the same bits
          launch_fixed_segments<T>(r, tx, ty, 1, view.reduced, view.reduced, d_out, 1, workspace,
                                   stream);
        } else {
          launch_typed<T>(r, tx, ty, view.reduced, d_out, workspace, stream);
        }
        break;
      case AxisPath::rows: {
        const AxisRows rows = rows_of(view);
        launch_fixed_segments<T>(r, tx, ty, rows.rows, rows.length, rows.pitch, d_out,
                                 rows.out_stride, workspace, stream);
        break;
      }
      default:
        if constexpr (is_floating_v<T>) {
          if (fixed_order) {  // gathered into rows, then the rows' fixed order: the same bits
            launch_reproducible_strided<T>(r, tx, ty, view, d_out, workspace, stream);
            break;
          }
        }
        launch_axes<T>(r, tx, ty, view, d_out, workspace, stream);
    }
  });
}

}  // namespace reducelab

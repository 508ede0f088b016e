// The segmented reduce's runtime-typed entry points (include/reducelab/segmented.hpp): validate
// every argument before anything is launched, find the stream's workspace, and launch the typed
// kernels (the dtype is dispatched once here, the op in segmented.cuh).

#include "reducelab/segmented.hpp"

#include <limits>
#include <string>

#include "common/cuda_check.hpp"
#include "common/driver_api.hpp"
#include "common/pointer_check.hpp"
#include "reduce/launch.hpp"
#include "reduce/reproducible.hpp"
#include "reduce/validate.hpp"
#include "reduce/workspace.hpp"

namespace reducelab {
namespace detail {
namespace {

template <class Offset>
void reduce_ragged(const Reduction& r, DType dtype, const void* d_x, const void* d_y, std::size_t num_segments,
                   const Offset* d_offsets, void* d_out, cudaStream_t stream) {
  const Op op = r.op;
  require_valid_op(r, dtype, d_y);
  require_determinism(r, dtype, "reduce_segments");
  if (num_segments == 0) return;
  if (num_segments == std::numeric_limits<std::size_t>::max())
    throw Error(ErrorCode::invalid_argument, "num_segments + 1 offsets overflow");
  // The lengths are on the device: whatever they are, the inputs must be there.
  if (d_x == nullptr || (info(op).inputs == 2 && d_y == nullptr))
    throw Error(ErrorCode::invalid_argument,
                std::string(d_x == nullptr ? "input" : "y") + " is null but num_segments = " +
                    std::to_string(num_segments) + " (ragged segments)");
  const int device = current_device();
  require_pointers(op, dtype, d_x, d_y, 1,
                   {d_out, num_segments, result_alignment(op, dtype), "out"}, device);
  require_device_pointers({{d_offsets, num_segments + 1, sizeof(Offset), "offsets"}}, device);
  const WorkspaceView workspace = workspace_for(stream, is_capturing(stream), device);
  dispatch_dtype(dtype, [&](auto value) {
    using T = decltype(value);
    launch_ragged_segments<T, Offset>(r, static_cast<const T*>(d_x), static_cast<const T*>(d_y),
                                      num_segments, d_offsets, d_out, workspace, stream);
  });
}

}  // namespace
}  // namespace detail

void reduce_segments(Reduction r, DType dtype, const void* d_x, const void* d_y,
                     std::size_t num_segments, std::size_t segment_size, void* d_out,
                     cudaStream_t stream) {
  using namespace detail;
  const Op op = r.op;
  require_valid_op(r, dtype, d_y);
  require_determinism(r, dtype, "reduce_segments");
  if (num_segments == 0) return;
  const std::size_t max_elements = std::numeric_limits<std::size_t>::max() / size_of(dtype);
  if (segment_size > max_elements / num_segments)
    throw Error(ErrorCode::invalid_argument, "num_segments x segment_size (" +
                                                 std::to_string(num_segments) + " x " +
                                                 std::to_string(segment_size) + ") overflows");
  const int device = current_device();
  require_pointers(op, dtype, d_x, d_y, num_segments * segment_size,
                   {d_out, num_segments, result_alignment(op, dtype), "out"}, device);
  const WorkspaceView workspace = workspace_for(stream, is_capturing(stream), device);
  dispatch_dtype(dtype, [&](auto value) {
    using T = decltype(value);
    launch_fixed_segments<T>(r, static_cast<const T*>(d_x), static_cast<const T*>(d_y),
                             num_segments, segment_size, segment_size, d_out, 1, workspace,
                             stream);
  });
}

void reduce_segments(Reduction r, DType dtype, const void* d_x, const void* d_y,
                     std::size_t num_segments, const std::int64_t* d_offsets, void* d_out,
                     cudaStream_t stream) {
  detail::reduce_ragged(r, dtype, d_x, d_y, num_segments, d_offsets, d_out, stream);
}

void reduce_segments(Reduction r, DType dtype, const void* d_x, const void* d_y,
                     std::size_t num_segments, const std::int32_t* d_offsets, void* d_out,
                     cudaStream_t stream) {
  detail::reduce_ragged(r, dtype, d_x, d_y, num_segments, d_offsets, d_out, stream);
}

}  // namespace reducelab

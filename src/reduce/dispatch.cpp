// The runtime-typed entry points: validate every argument before anything is launched, handle
// empty input, find the stream's workspace, and launch the typed kernel (the dtype is
// dispatched once, in launch_validated).

#include <cmath>
#include <cstring>
#include <string>

#include "common/cuda_check.hpp"
#include "common/driver_api.hpp"
#include "common/pointer_check.hpp"
#include "reduce/launch.hpp"
#include "reduce/reproducible.hpp"
#include "reduce/validate.hpp"
#include "reduce/workspace.hpp"
#include "reducelab/reduce.hpp"

namespace reducelab {
namespace detail {

void reject(const std::string& message) {
  throw Error(ErrorCode::invalid_argument, message);
}

void require_rank(int rank) {
  if (rank < 0 || rank > kMaxRank)
    reject("rank " + std::to_string(rank) + " is outside [0, " + std::to_string(kMaxRank) + "]");
}

// Enum values first (an Op or DType cast from a bad integer), then what the op needs.
void require_valid_op(const Reduction& r, DType dtype, const void* d_y) {
  const Op op = r.op;
  if (!is_valid(op))
    throw Error(ErrorCode::invalid_argument,
                "invalid Op value " + std::to_string(static_cast<int>(op)));
  if (!is_valid(dtype))
    throw Error(ErrorCode::invalid_argument,
                "invalid DType value " + std::to_string(static_cast<int>(dtype)));
  const std::string name(info(op).name);
  if (info(op).inputs == 1 && d_y != nullptr)
    reject(name + " reads one array; pass a null second array");
  if (!info(op).integers && info(dtype).kind != DTypeKind::floating)
    reject(name + " takes the floating types (f32, f64, f16, bf16), not " +
           std::string(info(dtype).name) + "; convert the data first");
  if (takes_correction(op) && !(r.correction >= 0 && r.correction <= 9.0e15))
    reject(name + ": the correction must be a finite number >= 0, not " +
           std::to_string(r.correction));
  if (op == Op::norm && !(r.ord == 0 || r.ord == 1 || r.ord == 2 || std::isinf(r.ord)))
    reject("norm: ord must be 0, 1, 2, inf or -inf, not " + std::to_string(r.ord));
}

void require_pointers(Op op, DType dtype, const void* d_x, const void* d_y, std::size_t n,
                      const PointerArg& out, int device) {
  const std::size_t element = size_of(dtype);
  if (info(op).inputs == 2) {
    require_device_pointers({{d_x, n, element, "x"}, {d_y, n, element, "y"}, out}, device);
  } else {
    require_device_pointers({{d_x, n, element, "input"}, out}, device);
  }
}

namespace {

void require_valid_call(const Reduction& r, DType dtype, const void* d_y, std::size_t n) {
  require_valid_op(r, dtype, d_y);
  require_determinism(r, dtype, "reduce");
  if (n == 0 && info(r.op).empty == EmptyRule::error)
    reject(std::string(info(r.op).name) + " of an empty input (n = 0) is undefined");
  if (n == 0 && r.op == Op::norm && std::isinf(r.ord))
    reject("norm with ord inf or -inf of an empty input (n = 0) is undefined");
}

// sum and dot of nothing are 0 in every result type (all-zero bits), written without a launch;
// the statistics of nothing come from their kernel, which reads nothing.
bool zero_without_launch(Op op, std::size_t n) {
  return n == 0 && info(op).empty == EmptyRule::zero;
}

void launch_validated(const Reduction& r, DType dtype, const void* d_x, const void* d_y,
                      std::size_t n, void* d_out, const WorkspaceView& workspace,
                      cudaStream_t stream) {
  // gpu_to_gpu: the fixed order where the order matters (reproducible.hpp); an empty mean, var,
  // norm or logsumexp reads nothing, so its NaN, 0 or -inf is order-free (the default kernel).
  const bool fixed_order = r.determinism == Determinism::gpu_to_gpu && n > 0 &&
                           !order_free(r, dtype) && has_fixed_order(r, dtype);
  dispatch_dtype(dtype, [&](auto value) {
    using T = decltype(value);
    if constexpr (is_floating_v<T>) {
      if (fixed_order && is_reproducible_statistic(r)) {
        launch_reproducible_stats<T>(r, static_cast<const T*>(d_x), n, d_out, workspace, stream);
        return;
      }
      if (fixed_order) {
        launch_reproducible<T>(r, static_cast<const T*>(d_x), static_cast<const T*>(d_y), n,
                               d_out, workspace, stream);
        return;
      }
    }
    launch_typed<T>(r, static_cast<const T*>(d_x), static_cast<const T*>(d_y), n, d_out,
                    workspace, stream);
  });
}

}  // namespace
}  // namespace detail

void reduce(Reduction r, DType dtype, const void* d_x, const void* d_y, std::size_t n,
            void* d_out, cudaStream_t stream) {
  using namespace detail;
  const Op op = r.op;
  require_valid_call(r, dtype, d_y, n);
  const int device = current_device();
  require_pointers(op, dtype, d_x, d_y, n, {d_out, 1, result_alignment(op, dtype), "out"},
                   device);
  if (zero_without_launch(op, n)) {
    REDUCELAB_CUDA_CHECK(cudaMemsetAsync(d_out, 0, result_size(op, dtype), stream));
    return;
  }
  const bool capturing = is_capturing(stream);
  launch_validated(r, dtype, d_x, d_y, n, d_out, workspace_for(stream, capturing, device),
                   stream);
}

void reduce_to_host(Reduction r, DType dtype, const void* d_x, const void* d_y, std::size_t n,
                    void* h_out, cudaStream_t stream) {
  using namespace detail;
  const Op op = r.op;
  require_valid_call(r, dtype, d_y, n);
  if (h_out == nullptr) throw Error(ErrorCode::invalid_argument, "the host result pointer is null");
  const std::size_t bytes = result_size(op, dtype);
  if (zero_without_launch(op, n)) {
    std::memset(h_out, 0, bytes);
    return;
  }
  const int device = current_device();
  require_pointers(op, dtype, d_x, d_y, n, {nullptr, 0, 1, "out (host)"}, device);
  if (is_capturing(stream))
    throw Error(ErrorCode::invalid_argument,
                "the synchronous form cannot run while its stream is captured into a graph; use "
                "the stream-ordered form with a device result pointer");
  const WorkspaceView workspace = workspace_for(stream, false, device);
  // Synchronous calls on one stream share its result slot: one at a time, launch to read-back.
  // The kernel writes the result straight into pinned host memory; the synchronisation makes
  // it visible here, and no copy is queued after the kernel.
  std::lock_guard<std::mutex> lock(*workspace.sync_mutex);
  launch_validated(r, dtype, d_x, d_y, n, workspace.d_result, workspace, stream);
  REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::memcpy(h_out, workspace.h_result, bytes);
}

}  // namespace reducelab

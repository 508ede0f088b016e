// The two halves of the sharded reduce without a transport (shard.hpp), in the core library:
// the argument checks, the state of a shard and the rank-order fold. sharded.cpp (reducelab::nccl)
// puts one NCCL collective between them; the Python package puts torch.distributed's.

#include "common/cuda_check.hpp"
#include "common/driver_api.hpp"
#include "multigpu/shard_launch.hpp"
#include "multigpu/shard_state.hpp"
#include "reduce/reproducible.hpp"
#include "reduce/validate.hpp"
#include "reduce/workspace.hpp"
#include "reducelab/shard.hpp"

#include <string>

namespace reducelab {
namespace detail {

static_assert(kWholeSlotBytes == kShardStateBytes, "shard.hpp documents the slot's size");

//! The checks of this rank's own arguments (op, type, pointers). A failure here does not stop
//! the collective: the caller marks its state rejected, takes part, then rethrows.
void require_call(const Reduction& r, DType dtype, const void* d_x, const void* d_y,
                  std::size_t n, const void* d_out, bool writes_out, int device,
                  const char* form) {
  require_valid_op(r, dtype, d_y);
  require_determinism(r, dtype, form);
  const PointerArg out = writes_out
                             ? PointerArg{d_out, 1, result_alignment(r.op, dtype), "out"}
                             : PointerArg{nullptr, 0, 1, "out"};
  require_pointers(r.op, dtype, d_x, d_y, n, out, device);
}

void launch_state(const Reduction& r, DType dtype, const void* d_x, const void* d_y,
                  std::size_t n, void* d_slot, const WorkspaceView& ws, cudaStream_t stream) {
  dispatch_dtype(dtype, [&](auto value) {
    using T = decltype(value);
    launch_shard_state<T>(r, static_cast<const T*>(d_x), static_cast<const T*>(d_y), n, d_slot,
                          ws, stream);
  });
}

void fold(const Reduction& r, DType dtype, const void* d_slots, std::size_t stride, int ranks,
          std::size_t rows, void* d_out, FoldInfo* d_info, cudaStream_t stream) {
  dispatch_dtype(dtype, [&](auto value) {
    using T = decltype(value);
    launch_fold<T>(r, d_slots, stride, ranks, rows, d_out, d_info, stream);
  });
}

}  // namespace detail

void reduce_to_shard_state(Reduction r, DType dtype, const void* d_x, const void* d_y,
                           std::size_t n, void* d_state, cudaStream_t stream) {
  using namespace detail;
  const int device = current_device();
  require_call(r, dtype, d_x, d_y, n, nullptr, false, device, "reduce_to_shard_state");
  require_device_pointers({{d_state, kWholeSlotBytes / 8, 8, "state"}}, device);
  const WorkspaceView ws = workspace_for(stream, is_capturing(stream), device);
  launch_state(r, dtype, d_x, d_y, n, d_state, ws, stream);
}

void fold_shard_states(Reduction r, DType dtype, const void* d_states, int ranks, void* d_out,
                       cudaStream_t stream) {
  using namespace detail;
  const int device = current_device();
  if (ranks < 1) reject("fold_shard_states: ranks must be >= 1, not " + std::to_string(ranks));
  require_call(r, dtype, nullptr, nullptr, 0, d_out, true, device, "fold_shard_states");
  require_device_pointers(
      {{d_states, static_cast<std::size_t>(ranks) * kWholeSlotBytes / 8, 8, "states"}}, device);
  fold(r, dtype, d_states, kWholeSlotBytes, ranks, 1, d_out, nullptr, stream);
}

}  // namespace reducelab

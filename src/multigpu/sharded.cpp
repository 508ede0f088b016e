// The sharded reduce's entry points (multigpu.hpp): validate, reduce the local shard to its state
// in the stream's workspace, one NCCL collective of the states, one fold kernel.
//
// Where the states live: the whole-array path needs ranks x 64 bytes on every rank, and the
// library's per-stream workspace (reduce/workspace.hpp) has 512 KB of partials of which the
// whole-array kernel uses the first kMaxGrid x 16 bytes (128 KB). The states take the rest, after
// the kernel is done with it (stream order), so nothing is allocated per call and the call can be
// captured into a graph (a captured call gets the graph's own workspace). Rows need ranks x rows
// slots: allocated stream-ordered, freed after the fold.

#include <nccl.h>

#include <cmath>
#include <cstring>
#include <string>

#include "common/cuda_check.hpp"
#include "common/driver_api.hpp"
#include "multigpu/shard_launch.hpp"
#include "multigpu/shard_state.hpp"
#include "reduce/reproducible.hpp"
#include "reduce/validate.hpp"
#include "reduce/workspace.hpp"
#include "reducelab/multigpu.hpp"

namespace reducelab {
namespace detail {
namespace {

//! Throws reducelab::Error for a failed NCCL call, with NCCL's words for it.
void nccl_check(ncclResult_t status, const char* call, ncclComm_t comm) {
  if (status == ncclSuccess || status == ncclInProgress) return;
  std::string message = std::string(call) + " failed: " + ncclGetErrorString(status) +
                        " (ncclResult " + std::to_string(static_cast<int>(status)) + ")";
  const char* last = comm != nullptr ? ncclGetLastError(comm) : nullptr;
  if (last != nullptr && last[0] != '\0') message += "; NCCL says: " + std::string(last);
  throw Error(ErrorCode::cuda_error, message);
}
#define REDUCELAB_NCCL_CHECK(call, comm) nccl_check((call), #call, (comm))

//! A non-blocking communicator (ncclConfig_t::blocking = 0) may return ncclInProgress from a
//! collective whose enqueueing is still under way: the fold kernel must not be queued before it,
//! so wait until the communicator says it is done (at once for a blocking communicator).
void wait_enqueued(ncclResult_t status, const char* call, ncclComm_t comm) {
  nccl_check(status, call, comm);
  while (status == ncclInProgress) {
    REDUCELAB_NCCL_CHECK(ncclCommGetAsyncError(comm, &status), comm);
    nccl_check(status, call, comm);
  }
}
#define REDUCELAB_NCCL_ENQUEUE(call, comm) wait_enqueued((call), #call, (comm))

struct CommShape {
  int rank = 0;
  int ranks = 1;
  int device = 0;  //!< the current device, which is the communicator's
};

//! The checks that need no other rank, and without which no collective can be issued: a usable
//! communicator whose device is the current one. A failure here throws on this rank alone, as an
//! NCCL call on a broken communicator would.
CommShape require_comm(ncclComm_t comm) {
  if (comm == nullptr) reject("the NCCL communicator is null");
  ncclResult_t async = ncclSuccess;
  REDUCELAB_NCCL_CHECK(ncclCommGetAsyncError(comm, &async), comm);
  if (async != ncclSuccess && async != ncclInProgress)
    nccl_check(async, "the communicator (ncclCommGetAsyncError)", comm);
  CommShape shape;
  REDUCELAB_NCCL_CHECK(ncclCommCount(comm, &shape.ranks), comm);
  REDUCELAB_NCCL_CHECK(ncclCommUserRank(comm, &shape.rank), comm);
  int comm_device = 0;
  REDUCELAB_NCCL_CHECK(ncclCommCuDevice(comm, &comm_device), comm);
  shape.device = current_device();
  if (comm_device != shape.device)
    reject("the NCCL communicator belongs to device " + std::to_string(comm_device) +
           " but the current device is " + std::to_string(shape.device) +
           "; call cudaSetDevice(" + std::to_string(comm_device) + ") first");
  return shape;
}


//! The states region of a workspace: after the whole-array kernel's kMaxGrid partials; the
//! synchronous form's result and FoldInfo after the ranks' slots.
unsigned char* states_region(const WorkspaceView& ws) {
  return static_cast<unsigned char*>(ws.d_partials) + kMaxGrid * kPartialBytes;
}
inline constexpr std::size_t kStatesRegionBytes = (kPartialSlots - kMaxGrid) * kPartialBytes;
inline constexpr std::size_t kSyncBytes = 16 + sizeof(FoldInfo);  // result, then the info

void require_region(int ranks) {
  if (static_cast<std::size_t>(ranks) * kWholeSlotBytes + kSyncBytes > kStatesRegionBytes)
    reject("the sharded reduce takes at most " +
           std::to_string((kStatesRegionBytes - kSyncBytes) / kWholeSlotBytes) +
           " ranks, not " + std::to_string(ranks));
}



//! Every whole-array form: the state into this rank's slot, the collective (root < 0: the
//! all-gather; else grouped send/recv to the root), the fold where the result goes. Returns
//! after queueing; rethrows this rank's argument error after its part of the collective.
void sharded_whole(const Reduction& r, DType dtype, const void* d_x, const void* d_y,
                   std::size_t n, void* d_out, int root, ncclComm_t comm, cudaStream_t stream,
                   FoldInfo* d_info, const char* form, void** d_sync_out = nullptr) {
  const CommShape shape = require_comm(comm);
  if (root >= shape.ranks || root < -1)
    reject(std::string(form) + ": root " + std::to_string(root) + " is not a rank of the " +
           std::to_string(shape.ranks) + "-rank communicator");
  require_region(shape.ranks);
  const bool receives = root < 0 || root == shape.rank;
  const bool capturing = is_capturing(stream);
  const WorkspaceView ws = workspace_for(stream, capturing, shape.device);
  unsigned char* slots = states_region(ws);
  unsigned char* mine = slots + static_cast<std::size_t>(shape.rank) * kWholeSlotBytes;
  if (d_sync_out != nullptr) {
    *d_sync_out = slots + static_cast<std::size_t>(shape.ranks) * kWholeSlotBytes;
    d_out = *d_sync_out;
    d_info = reinterpret_cast<FoldInfo*>(static_cast<unsigned char*>(d_out) + 16);
  }

  bool rejected = false;
  Error argument_error(ErrorCode::invalid_argument, "");
  try {
    require_call(r, dtype, d_x, d_y, n, d_out, receives && d_sync_out == nullptr, shape.device,
                 form);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::invalid_argument) throw;
    rejected = true;
    argument_error = e;
  }
  if (rejected) {
    // All bits set: the rejected signature (and a count the fold never reads).
    REDUCELAB_CUDA_CHECK(cudaMemsetAsync(mine, 0xff, kWholeSlotBytes, stream));
  } else {
    launch_state(r, dtype, d_x, d_y, n, mine, ws, stream);
  }

  if (root < 0) {
    // In place: this rank's slot is already where the gather puts it.
    REDUCELAB_NCCL_ENQUEUE(ncclAllGather(mine, slots, kWholeSlotBytes, ncclUint8, comm, stream),
                           comm);
  } else {
    REDUCELAB_NCCL_CHECK(ncclGroupStart(), comm);
    if (shape.rank == root) {
      for (int q = 0; q < shape.ranks; ++q)
        if (q != root)
          REDUCELAB_NCCL_CHECK(ncclRecv(slots + static_cast<std::size_t>(q) * kWholeSlotBytes,
                                        kWholeSlotBytes, ncclUint8, q, comm, stream),
                               comm);
    } else {
      REDUCELAB_NCCL_CHECK(ncclSend(mine, kWholeSlotBytes, ncclUint8, root, comm, stream), comm);
    }
    REDUCELAB_NCCL_ENQUEUE(ncclGroupEnd(), comm);
  }
  if (rejected) throw argument_error;
  if (receives) fold(r, dtype, slots, kWholeSlotBytes, shape.ranks, 1, d_out, d_info, stream);
}

}  // namespace
}  // namespace detail

void reduce_sharded(Reduction r, DType dtype, const void* d_x, const void* d_y, std::size_t n,
                    void* d_out, ncclComm_t comm, cudaStream_t stream) {
  detail::sharded_whole(r, dtype, d_x, d_y, n, d_out, -1, comm, stream, nullptr,
                        "reduce_sharded");
}

void reduce_sharded_root(Reduction r, DType dtype, const void* d_x, const void* d_y,
                         std::size_t n, void* d_out, int root, ncclComm_t comm,
                         cudaStream_t stream) {
  if (root < 0) detail::reject("reduce_sharded_root: root must be >= 0, not " + std::to_string(root));
  detail::sharded_whole(r, dtype, d_x, d_y, n, d_out, root, comm, stream, nullptr,
                        "reduce_sharded_root");
}

void reduce_sharded_to_host(Reduction r, DType dtype, const void* d_x, const void* d_y,
                            std::size_t n, void* h_out, ncclComm_t comm, cudaStream_t stream) {
  using namespace detail;
  if (h_out == nullptr) reject("the host result pointer is null");
  if (is_capturing(stream))
    reject("the synchronous form cannot run while its stream is captured into a graph; use "
           "reduce_sharded with a device result pointer");
  void* d_sync = nullptr;
  sharded_whole(r, dtype, d_x, d_y, n, nullptr, -1, comm, stream, nullptr,
                "reduce_sharded_to_host", &d_sync);
  unsigned char back[kSyncBytes];
  REDUCELAB_CUDA_CHECK(cudaMemcpyAsync(back, d_sync, kSyncBytes, cudaMemcpyDeviceToHost, stream));
  REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  FoldInfo info{};
  std::memcpy(&info, back + 16, sizeof(info));
  if (info.agreed == 0)
    reject("reduce_sharded_to_host: another rank rejected its arguments or made a different "
           "call (op, parameters or dtype); every rank must make the same call");
  if (info.total == 0 && fold_empty_of(r) == FoldEmpty::undefined)
    reject(std::string(reducelab::info(r.op).name) +
           " of an empty input (every shard has n = 0) is undefined");
  std::memcpy(h_out, back, result_size(r.op, dtype));
}



void reduce_rows_sharded(Reduction r, DType dtype, const void* d_x, const void* d_y,
                         std::size_t rows, std::size_t cols, void* d_out, ncclComm_t comm,
                         cudaStream_t stream) {
  using namespace detail;
  const CommShape shape = require_comm(comm);
  // Every argument of this form is checked before the collective and a failure throws at once:
  // the slot size depends on the op, so a rank cannot take part with a state of a call it
  // rejected (the other ranks would wait for bytes of another count). Documented in
  // multigpu.hpp: rows calls must agree on every rank.
  require_valid_op(r, dtype, d_y);
  require_determinism(r, dtype, "reduce_rows_sharded");
  if (rows == 0) return;  // nothing to gather on any rank (every rank passes the same rows)
  // One row is the whole-array reduce (its 64-byte state, the workspace, no allocation).
  if (rows == 1) return reduce_sharded(r, dtype, d_x, d_y, cols, d_out, comm, stream);
  if (cols != 0 && rows > static_cast<std::size_t>(-1) / cols)
    reject("reduce_rows_sharded: rows x cols overflows");
  require_pointers(r.op, dtype, d_x, d_y, rows * cols,
                   {d_out, rows, result_alignment(r.op, dtype), "out"}, shape.device);
  const std::size_t stride = dispatch_dtype(dtype, [&](auto value) {
    return row_slot_bytes<decltype(value)>(r);
  });
  const std::size_t mine_bytes = rows * stride;
  void* d_slots = nullptr;
  REDUCELAB_CUDA_CHECK(
      cudaMallocAsync(&d_slots, mine_bytes * static_cast<std::size_t>(shape.ranks), stream));
  unsigned char* mine = static_cast<unsigned char*>(d_slots) +
                        static_cast<std::size_t>(shape.rank) * mine_bytes;
  const bool capturing = is_capturing(stream);
  const WorkspaceView ws = workspace_for(stream, capturing, shape.device);
  try {
    dispatch_dtype(dtype, [&](auto value) {
      using T = decltype(value);
      if (cols == 0) {
        launch_empty_row_states<T>(r, rows, mine, stream);
      } else {
        launch_row_states<T>(r, static_cast<const T*>(d_x), static_cast<const T*>(d_y), rows,
                             cols, mine, ws, stream);
      }
    });
    REDUCELAB_NCCL_ENQUEUE(ncclAllGather(mine, d_slots, mine_bytes, ncclUint8, comm, stream),
                           comm);
    fold(r, dtype, d_slots, stride, shape.ranks, rows, d_out, nullptr, stream);
  } catch (...) {
    (void)cudaFreeAsync(d_slots, stream);
    throw;
  }
  REDUCELAB_CUDA_CHECK(cudaFreeAsync(d_slots, stream));
}

}  // namespace reducelab

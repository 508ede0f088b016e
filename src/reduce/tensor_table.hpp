#pragma once
// The device table of a list of tensors (tensors.hpp): where each tensor is and where it starts
// in the concatenation of the list. The host builds it in the device's layout in one pass over
// the list, the same pass that checks the list (tensors.cpp), straight into a pinned staging
// buffer of the stream's workspace, and queues one copy of it (send_table). A call captured into
// a graph builds it in thread-local memory instead and sends it in the parameters of small upload
// kernels, kTableChunk entries each (tensor_table.cu): kernel parameters are copied when the
// launch is queued, so every replay of the graph carries the table.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "reduce/workspace.hpp"

namespace reducelab::detail {

//! What the host knows of a list's lengths: whether the teams kernel (tensors shorter than
//! kBlockSegmentMin) and the long kernel have any work.
struct ListShape {
  bool any_short = false;
  bool any_long = false;
};

//! Entries per upload kernel: 16 KB of parameters, within the 32,764 bytes CUDA >= 12.1 allows
//! on compute capability >= 7.0.
inline constexpr unsigned kTableChunk = 1024;

//! The table on the device: count + 1 int64 offsets (the last one the list's length), then count
//! pointers.
struct DeviceTable {
  std::int64_t* offsets;
  const void** pointers;
};

//! Bytes of the device table of `count` tensors, a multiple of 16.
constexpr std::size_t table_bytes(std::size_t count) {
  return ((count + 1) * sizeof(std::int64_t) + count * sizeof(void*) + 15) / 16 * 16;
}

//! The table laid out at `base` (16-byte aligned, table_bytes(count) bytes).
DeviceTable table_at(void* base, std::size_t count);

//! A list's table on the host, in the device's layout (count + 1 offsets, the last one the
//! list's length, then count pointers): in the next pinned staging buffer of the workspace
//! outside graph capture (held from construction to send_table), else in thread-local memory.
class HostTable {
 public:
  HostTable(const WorkspaceView& ws, std::size_t count);
  std::int64_t* offsets() const { return offsets_; }
  const void** pointers() const { return pointers_; }
  std::size_t count() const { return count_; }

 private:
  friend void send_table(HostTable& host, const DeviceTable& table, const WorkspaceView& ws,
                         cudaStream_t stream);
  StagingLease lease_;  // empty in a graph's workspace
  std::int64_t* offsets_ = nullptr;
  const void** pointers_ = nullptr;
  std::size_t count_ = 0;
};

//! Queues the host table's way to `table` on `stream`: one copy from its staging buffer (a few
//! microseconds, against about 11 us per upload kernel of 1,024 entries, measured on the H200 at
//! 2bd2c02: a list of 16,384 tensors took 185 us more than the same ragged segments), or, in a
//! graph's workspace, max(1, ceil(count / kTableChunk)) upload kernels.
void send_table(HostTable& host, const DeviceTable& table, const WorkspaceView& ws,
                cudaStream_t stream);

}  // namespace reducelab::detail

#pragma once
// The device table of a list of tensors (tensors.hpp): where each tensor is and where it starts
// in the concatenation of the list. The host builds it (tensors.cpp) and sends it to the device
// in the parameters of small upload kernels, kTableChunk entries each (tensor_table.cu): kernel
// parameters are copied when the launch is queued, so the host array may change at once, no
// pinned staging buffer is needed, nothing synchronises, and a graph capture records the table.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "reduce/workspace.hpp"

namespace reducelab::detail {

//! One tensor of the list: its first element and the index of that element in the concatenation.
struct TableEntry {
  const void* data;
  std::int64_t offset;
};

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

//! Queues the upload of entries[0, count) and the list's length `total` into `table`, in
//! max(1, ceil(count / kTableChunk)) launches on `stream`: the way a captured call sends it.
void upload_table(const TableEntry* entries, std::size_t count, std::int64_t total,
                  const DeviceTable& table, int device, cudaStream_t stream);

//! The table to the device on `stream`: one copy from the workspace's pinned staging buffers
//! (stage_to_device) outside graph capture, where it costs a few microseconds against about
//! 11 us per upload kernel of 1,024 entries (measured on the H200, 2bd2c02: a list of 16,384
//! tensors took 185 us more than the same ragged segments); upload_table in a graph's workspace,
//! whose replays must carry the table themselves.
void send_table(const TableEntry* entries, std::size_t count, std::int64_t total,
                const DeviceTable& table, const WorkspaceView& ws, cudaStream_t stream);

}  // namespace reducelab::detail

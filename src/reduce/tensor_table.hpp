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
//! max(1, ceil(count / kTableChunk)) launches on `stream`.
void upload_table(const TableEntry* entries, std::size_t count, std::int64_t total,
                  const DeviceTable& table, int device, cudaStream_t stream);

}  // namespace reducelab::detail

// The upload kernels of a list's table (tensor_table.hpp).

#include "reduce/tensor_table.hpp"

#include "common/kernel_launch.cuh"

namespace reducelab::detail {
namespace {

struct TableChunk {
  DeviceTable table;
  std::size_t first;  // index of entries[0] in the list
  unsigned count;     // entries in this chunk, 1..kTableChunk
  bool last;          // the list's last chunk: also writes offsets[first + count] = total
  std::int64_t total;
  TableEntry entries[kTableChunk];
};
static_assert(sizeof(TableChunk) <= 32764, "kernel parameters are limited to 32,764 bytes");

struct UploadTag {};

__global__ void __launch_bounds__(256) upload_table_kernel(const __grid_constant__ TableChunk c) {
  for (unsigned i = threadIdx.x; i < c.count; i += blockDim.x) {
    c.table.pointers[c.first + i] = c.entries[i].data;
    c.table.offsets[c.first + i] = c.entries[i].offset;
  }
  if (c.last && threadIdx.x == 0) c.table.offsets[c.first + c.count] = c.total;
}

}  // namespace

DeviceTable table_at(void* base, std::size_t count) {
  auto* offsets = static_cast<std::int64_t*>(base);
  return {offsets, reinterpret_cast<const void**>(offsets + count + 1)};
}

void upload_table(const TableEntry* entries, std::size_t count, std::int64_t total,
                  const DeviceTable& table, int device, cudaStream_t stream) {
  // One chunk object on the host, refilled per launch: the launch copies it.
  static thread_local TableChunk chunk;
  std::size_t first = 0;
  do {
    const std::size_t left = count - first;
    chunk.table = table;
    chunk.first = first;
    chunk.count = static_cast<unsigned>(left < kTableChunk ? left : kTableChunk);
    chunk.last = first + chunk.count == count;
    chunk.total = total;
    for (unsigned i = 0; i < chunk.count; ++i) chunk.entries[i] = entries[first + i];
    launch_kernel<UploadTag>(upload_table_kernel, 1, 256, stream, device,
                             "launch of reducelab upload_table_kernel", chunk);
    first += chunk.count;
  } while (first < count);
}

void send_table(const TableEntry* entries, std::size_t count, std::int64_t total,
                const DeviceTable& table, const WorkspaceView& ws, cudaStream_t stream) {
  if (ws.staging == nullptr) {
    upload_table(entries, count, total, table, ws.device, stream);
    return;
  }
  // The device layout, built in the pinned buffer: count + 1 offsets, then count pointers.
  const std::size_t bytes = (count + 1) * sizeof(std::int64_t) + count * sizeof(void*);
  stage_to_device(
      *ws.staging, table.offsets, bytes,
      [&](void* host) {
        auto* offsets = static_cast<std::int64_t*>(host);
        auto** pointers = reinterpret_cast<const void**>(offsets + count + 1);
        for (std::size_t i = 0; i < count; ++i) {
          offsets[i] = entries[i].offset;
          pointers[i] = entries[i].data;
        }
        offsets[count] = total;
      },
      stream);
}

}  // namespace reducelab::detail

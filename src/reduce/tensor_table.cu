// A list's host table and the ways it reaches the device (tensor_table.hpp): one copy from a
// pinned staging buffer, or, in a graph's workspace, upload kernels that carry it in their
// parameters.

#include "reduce/tensor_table.hpp"

#include <vector>

#include "common/kernel_launch.cuh"

namespace reducelab::detail {
namespace {

struct TableChunk {
  DeviceTable table;
  std::size_t first;  // index of offsets[0] and pointers[0] in the list
  unsigned count;     // entries in this chunk, 1..kTableChunk
  bool last;          // the list's last chunk: also writes offsets[first + count] = total
  std::int64_t total;
  std::int64_t offsets[kTableChunk];
  const void* pointers[kTableChunk];
};
static_assert(sizeof(TableChunk) <= 32764, "kernel parameters are limited to 32,764 bytes");

struct UploadTag {};

__global__ void __launch_bounds__(256) upload_table_kernel(const __grid_constant__ TableChunk c) {
  for (unsigned i = threadIdx.x; i < c.count; i += blockDim.x) {
    c.table.pointers[c.first + i] = c.pointers[i];
    c.table.offsets[c.first + i] = c.offsets[i];
  }
  if (c.last && threadIdx.x == 0) c.table.offsets[c.first + c.count] = c.total;
}

//! Queues the upload of host offsets[0, count] and pointers[0, count) into `table`, in
//! max(1, ceil(count / kTableChunk)) launches on `stream`: the way a captured call sends it.
void upload_table(const std::int64_t* offsets, const void* const* pointers, std::size_t count,
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
    chunk.total = offsets[count];
    for (unsigned i = 0; i < chunk.count; ++i) {
      chunk.offsets[i] = offsets[first + i];
      chunk.pointers[i] = pointers[first + i];
    }
    launch_kernel<UploadTag>(upload_table_kernel, 1, 256, stream, device,
                             "launch of reducelab upload_table_kernel", chunk);
    first += chunk.count;
  } while (first < count);
}

//! Bytes of the host table of `count` tensors: count + 1 offsets, then count pointers.
constexpr std::size_t host_table_bytes(std::size_t count) {
  return (count + 1) * sizeof(std::int64_t) + count * sizeof(void*);
}

}  // namespace

DeviceTable table_at(void* base, std::size_t count) {
  auto* offsets = static_cast<std::int64_t*>(base);
  return {offsets, reinterpret_cast<const void**>(offsets + count + 1)};
}

HostTable::HostTable(const WorkspaceView& ws, std::size_t count) : count_(count) {
  void* host = nullptr;
  if (ws.staging != nullptr) {
    lease_ = acquire_staging(*ws.staging, host_table_bytes(count));
    host = lease_.host();
  } else {
    // Kept per thread (8-byte words, so the pointers after the offsets are aligned): a call
    // allocates only when its list is longer than any before on this thread.
    static thread_local std::vector<std::int64_t> words;
    words.resize(2 * count + 1);
    host = words.data();
  }
  offsets_ = static_cast<std::int64_t*>(host);
  pointers_ = reinterpret_cast<const void**>(offsets_ + count + 1);
}

void send_table(HostTable& host, const DeviceTable& table, const WorkspaceView& ws,
                cudaStream_t stream) {
  if (host.lease_.slot == nullptr) {
    upload_table(host.offsets_, host.pointers_, host.count_, table, ws.device, stream);
    return;
  }
  copy_from_staging(*ws.staging, host.lease_, table.offsets, host_table_bytes(host.count_),
                    stream);
}

}  // namespace reducelab::detail

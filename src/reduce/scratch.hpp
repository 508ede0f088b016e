#pragma once
// Stream-ordered device memory that one call needs for its length only and that does not fit
// the workspace (workspace.hpp): today the gpu_to_gpu strided gather's rows
// (reproducible_strided.cu), up to 2 x kStridedGatherBytes a call, and the column kernels' chunk
// partials when they do not fit the workspace (up to kStridedGatherBytes).
//
// It comes from a memory pool of the library's own on each device, not from the device's default
// pool: the default pool's release threshold is 0 unless the application raised it, so after
// every synchronisation its free memory goes back to the driver, and the next call maps it again
// (session 33 measured the columns' cost nearly the same, ~0.67 ms over the gather's bytes, for
// f16, f32 and f64: a fixed cost per call, as mapping 256 MB would be). The library's pool keeps
// up to kScratchKeepBytes mapped between calls (its release threshold); what calls took above that goes
// back at the next synchronisation, and release_workspaces() gives back all of it. Under stream
// capture the allocation becomes a memory node of the graph, as cudaMallocAsync's would.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reduce/reproducible_strided.hpp"

namespace reducelab::detail {

//! The memory the scratch pool of a device keeps between calls (its release threshold).
//! Two arrays' rows (dot) and the results of a chunk.
inline constexpr std::uint64_t kScratchKeepBytes =
    std::uint64_t{2} * kStridedGatherBytes + (std::uint64_t{16} << 20);

//! The library's scratch pool on `device`, created on first use (thread-safe) and kept for the
//! life of the process.
cudaMemPool_t scratch_pool(int device);

//! Gives every scratch pool's unused memory back to the driver (release_workspaces(), after it
//! has synchronised the devices).
void trim_scratch_pools();

//! `bytes` of scratch on `device`, ordered on `stream`, freed on the stream when the owner ends
//! (also when the call throws).
class Scratch {
 public:
  Scratch(std::uint64_t bytes, int device, cudaStream_t stream);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  unsigned char* get() const { return memory_; }

 private:
  unsigned char* memory_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace reducelab::detail

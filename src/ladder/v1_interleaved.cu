// V1: interleaved addressing. Changed from V0: thread tid works on index = 2*s*tid, so the
// active threads are the low-numbered ones and whole warps enter or skip the branch together.
// Bottleneck it removes: warp divergence (only the last 5 steps diverge, all inside warp 0).
// Bottleneck it creates: shared-memory bank conflicts, since the stride 2*s*tid makes lanes of
// one warp hit the same bank (2-way at s=1, 4-way at s=2, 8-way at s=4, ...).
// Preconditions: blockDim.x a power of two (256 here); any n >= 1.

#include "ladder/passes.cuh"

namespace reducelab::ladder {
namespace {

constexpr unsigned kBlock = 256;

template <class Combine, class Input>
__global__ void __launch_bounds__(kBlock) v1_interleaved_kernel(Input in, std::size_t n,
                                                                float* out) {
  __shared__ float smem[kBlock];
  const Combine combine;
  const unsigned tid = threadIdx.x;
  const std::size_t gid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
  smem[tid] = gid < n ? in(gid) : detail::identity<Combine>();
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) smem[index] = combine(smem[index], smem[index + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = smem[0];
}

struct V1 {
  static unsigned grid_for(std::size_t n) { return detail::blocks_for(n, kBlock); }
  template <class Combine, class Input>
  static void pass(Input in, std::size_t n, float* out, unsigned grid, cudaStream_t stream) {
    v1_interleaved_kernel<Combine><<<grid, kBlock, 0, stream>>>(in, n, out);
  }
};

}  // namespace

void launch_v1(const Problem& p, cudaStream_t s) { detail::launch<V1>(p, s); }
std::size_t workspace_v1(std::size_t n) { return detail::workspace_elems<V1>(n); }

}  // namespace reducelab::ladder

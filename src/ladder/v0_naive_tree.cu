// V0: naive tree. The starting point: one element per thread into shared memory, then a tree in
// which thread tid works at step s when tid % (2*s) == 0.
// Bottleneck it shows: warp divergence. At step 1 only the even lanes of every warp work (16 of
// 32), at step 2 one lane in four, and so on; the `%` is also an expensive integer division.
// Preconditions: blockDim.x a power of two (256 here); any n >= 1.

#include "ladder/passes.cuh"

namespace reducelab::ladder {
namespace {

constexpr unsigned kBlock = 256;

template <class Combine, class Input>
__global__ void __launch_bounds__(kBlock) v0_naive_tree_kernel(Input in, std::size_t n,
                                                               float* out) {
  __shared__ float smem[kBlock];
  const Combine combine;
  const unsigned tid = threadIdx.x;
  const std::size_t gid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
  smem[tid] = gid < n ? in(gid) : detail::identity<Combine>();
  __syncthreads();
  for (unsigned step = 1; step < blockDim.x; step *= 2) {
    if (tid % (2 * step) == 0) smem[tid] = combine(smem[tid], smem[tid + step]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = smem[0];
}

struct V0 {
  static unsigned grid_for(std::size_t n) { return detail::blocks_for(n, kBlock); }
  template <class Combine, class Input>
  static void pass(Input in, std::size_t n, float* out, unsigned grid, cudaStream_t stream) {
    v0_naive_tree_kernel<Combine><<<grid, kBlock, 0, stream>>>(in, n, out);
  }
};

}  // namespace

void launch_v0(const Problem& p, cudaStream_t s) { detail::launch<V0>(p, s); }
std::size_t workspace_v0(std::size_t n) { return detail::workspace_elems<V0>(n); }

}  // namespace reducelab::ladder

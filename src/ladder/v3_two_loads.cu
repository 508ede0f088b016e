// V3: two elements per thread. Changed from V2: each thread loads two elements, blockDim.x apart,
// and adds them before storing to shared memory; a block covers 2*blockDim.x elements.
// Bottleneck it removes: idle threads. In V2 half the threads did nothing after the load; now
// every thread does one useful operation during the load, and the grid has half the blocks.
// Preconditions: blockDim.x a power of two (256 here); any n >= 1.

#include "ladder/passes.cuh"

namespace reducelab::ladder {
namespace {

constexpr unsigned kBlock = 256;

template <class Combine, class Input>
__global__ void __launch_bounds__(kBlock) v3_two_loads_kernel(Input in, std::size_t n,
                                                              float* out) {
  __shared__ float smem[kBlock];
  const Combine combine;
  const unsigned tid = threadIdx.x;
  const std::size_t gid = static_cast<std::size_t>(blockIdx.x) * (blockDim.x * 2) + tid;
  float value = detail::identity<Combine>();
  if (gid < n) value = in(gid);
  if (gid + blockDim.x < n) value = combine(value, in(gid + blockDim.x));
  smem[tid] = value;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) smem[tid] = combine(smem[tid], smem[tid + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = smem[0];
}

struct V3 {
  static unsigned grid_for(std::size_t n) { return detail::blocks_for(n, 2 * kBlock); }
  template <class Combine, class Input>
  static void pass(Input in, std::size_t n, float* out, unsigned grid, cudaStream_t stream) {
    v3_two_loads_kernel<Combine><<<grid, kBlock, 0, stream>>>(in, n, out);
  }
};

}  // namespace

void launch_v3(const Problem& p, cudaStream_t s) { detail::launch<V3>(p, s); }
std::size_t workspace_v3(std::size_t n) { return detail::workspace_elems<V3>(n); }

}  // namespace reducelab::ladder

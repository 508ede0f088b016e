// V2: sequential addressing. Changed from V1: the stride starts at blockDim.x/2 and halves, and
// thread tid adds smem[tid + s] into smem[tid].
// Bottlenecks it removes: bank conflicts (a warp's 32 lanes read 32 consecutive words, one per
// bank) and divergence (the active threads are always a contiguous low range, so warps are
// either fully active or fully idle until s < 32). One change, two bottlenecks.
// Preconditions: blockDim.x a power of two (256 here); any n >= 1.

#include "ladder/passes.cuh"

namespace reducelab::ladder {
namespace {

constexpr unsigned kBlock = 256;

template <class Combine, class Input>
__global__ void __launch_bounds__(kBlock) v2_sequential_kernel(Input in, std::size_t n,
                                                               float* out) {
  __shared__ float smem[kBlock];
  const Combine combine;
  const unsigned tid = threadIdx.x;
  const std::size_t gid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + tid;
  smem[tid] = gid < n ? in(gid) : detail::identity<Combine>();
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) smem[tid] = combine(smem[tid], smem[tid + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = smem[0];
}

struct V2 {
  static unsigned grid_for(std::size_t n) { return detail::blocks_for(n, kBlock); }
  template <class Combine, class Input>
  static void pass(Input in, std::size_t n, float* out, unsigned grid, cudaStream_t stream) {
    v2_sequential_kernel<Combine><<<grid, kBlock, 0, stream>>>(in, n, out);
  }
};

}  // namespace

void launch_v2(const Problem& p, cudaStream_t s) { detail::launch<V2>(p, s); }
std::size_t workspace_v2(std::size_t n) { return detail::workspace_elems<V2>(n); }

}  // namespace reducelab::ladder

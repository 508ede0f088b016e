// V4: unroll the last warp. Changed from V3: the shared-memory loop stops at s = 64; the last six
// steps (s = 32..1) run in warp 0 alone, unrolled, without __syncthreads().
// Bottleneck it removes: redundant barriers. In V3 every one of the last five steps paid a
// block-wide barrier although only one warp was working.
// Preconditions: blockDim.x a power of two >= 64 (256 here); any n >= 1. See warp_tail.cuh for
// the __syncwarp() that Volta and later need where the article relied on lockstep execution.

#include "ladder/passes.cuh"
#include "ladder/warp_tail.cuh"

namespace reducelab::ladder {
namespace {

constexpr unsigned kBlock = 256;

template <class Combine, class Input>
__global__ void __launch_bounds__(kBlock) v4_unroll_last_warp_kernel(Input in, std::size_t n,
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
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) smem[tid] = combine(smem[tid], smem[tid + s]);
    __syncthreads();
  }
  if (tid < 32) detail::warp_tail(smem, tid, combine);
  if (tid == 0) out[blockIdx.x] = smem[0];
}

struct V4 {
  static unsigned grid_for(std::size_t n) { return detail::blocks_for(n, 2 * kBlock); }
  template <class Combine, class Input>
  static void pass(Input in, std::size_t n, float* out, unsigned grid, cudaStream_t stream) {
    v4_unroll_last_warp_kernel<Combine><<<grid, kBlock, 0, stream>>>(in, n, out);
  }
};

}  // namespace

void launch_v4(const Problem& p, cudaStream_t s) { detail::launch<V4>(p, s); }
std::size_t workspace_v4(std::size_t n) { return detail::workspace_elems<V4>(n); }

}  // namespace reducelab::ladder

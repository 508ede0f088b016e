// V5: complete unroll. Changed from V4: the block size is a template parameter, so the compiler
// knows every step of the tree: the loop, its counter and its branch vanish, and the steps a
// block size does not need are removed at compile time.
// Bottleneck it removes: loop overhead (index arithmetic, compare and branch per step).
// Preconditions: kBlockSize a power of two in [64, 1024] known at compile time (256 here);
// any n >= 1.

#include "ladder/passes.cuh"
#include "ladder/warp_tail.cuh"

namespace reducelab::ladder {
namespace {

constexpr unsigned kBlock = 256;

template <unsigned kBlockSize, class Combine, class Input>
__global__ void __launch_bounds__(kBlockSize) v5_complete_unroll_kernel(Input in, std::size_t n,
                                                                        float* out) {
  static_assert(kBlockSize >= 64 && kBlockSize <= 1024 && (kBlockSize & (kBlockSize - 1)) == 0,
                "V5 needs a power-of-two block of 64..1024 threads");
  __shared__ float smem[kBlockSize];
  const Combine combine;
  const unsigned tid = threadIdx.x;
  const std::size_t gid = static_cast<std::size_t>(blockIdx.x) * (kBlockSize * 2) + tid;
  float value = detail::identity<Combine>();
  if (gid < n) value = in(gid);
  if (gid + kBlockSize < n) value = combine(value, in(gid + kBlockSize));
  smem[tid] = value;
  __syncthreads();
  if constexpr (kBlockSize >= 1024) {
    if (tid < 512) smem[tid] = combine(smem[tid], smem[tid + 512]);
    __syncthreads();
  }
  if constexpr (kBlockSize >= 512) {
    if (tid < 256) smem[tid] = combine(smem[tid], smem[tid + 256]);
    __syncthreads();
  }
  if constexpr (kBlockSize >= 256) {
    if (tid < 128) smem[tid] = combine(smem[tid], smem[tid + 128]);
    __syncthreads();
  }
  if constexpr (kBlockSize >= 128) {
    if (tid < 64) smem[tid] = combine(smem[tid], smem[tid + 64]);
    __syncthreads();
  }
  if (tid < 32) detail::warp_tail(smem, tid, combine);
  if (tid == 0) out[blockIdx.x] = smem[0];
}

struct V5 {
  static unsigned grid_for(std::size_t n) { return detail::blocks_for(n, 2 * kBlock); }
  template <class Combine, class Input>
  static void pass(Input in, std::size_t n, float* out, unsigned grid, cudaStream_t stream) {
    v5_complete_unroll_kernel<kBlock, Combine><<<grid, kBlock, 0, stream>>>(in, n, out);
  }
};

}  // namespace

void launch_v5(const Problem& p, cudaStream_t s) { detail::launch<V5>(p, s); }
std::size_t workspace_v5(std::size_t n) { return detail::workspace_elems<V5>(n); }

}  // namespace reducelab::ladder

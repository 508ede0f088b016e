// V6: warp shuffle. Changed from V5: the tree runs in registers. Each warp reduces its 32 values
// with __shfl_down_sync (5 steps), lane 0 of each warp writes one partial to shared memory, and
// warp 0 reduces those partials with shuffles again.
// Bottleneck it removes: shared-memory round trips (and with them any chance of bank conflicts);
// the block needs one barrier instead of one per step.
// Preconditions: blockDim.x a multiple of 32, at most 1024 (256 here); any n >= 1.

#include "device/block_reduce.cuh"
#include "ladder/passes.cuh"

namespace reducelab::ladder {
namespace {

constexpr unsigned kBlock = 256;

template <class Combine, class Input>
__global__ void __launch_bounds__(kBlock) v6_warp_shuffle_kernel(Input in, std::size_t n,
                                                                 float* out) {
  __shared__ float warp_slots[kBlock / device::kWarpSize];
  const Combine combine;
  const unsigned tid = threadIdx.x;
  const std::size_t gid = static_cast<std::size_t>(blockIdx.x) * (kBlock * 2) + tid;
  float value = detail::identity<Combine>();
  if (gid < n) value = in(gid);
  if (gid + kBlock < n) value = combine(value, in(gid + kBlock));
  value = device::block_reduce<kBlock>(value, combine, detail::identity<Combine>(), warp_slots);
  if (tid == 0) out[blockIdx.x] = value;
}

struct V6 {
  static unsigned grid_for(std::size_t n) { return detail::blocks_for(n, 2 * kBlock); }
  template <class Combine, class Input>
  static void pass(Input in, std::size_t n, float* out, unsigned grid, cudaStream_t stream) {
    v6_warp_shuffle_kernel<Combine><<<grid, kBlock, 0, stream>>>(in, n, out);
  }
};

}  // namespace

void launch_v6(const Problem& p, cudaStream_t s) { detail::launch<V6>(p, s); }
std::size_t workspace_v6(std::size_t n) { return detail::workspace_elems<V6>(n); }

}  // namespace reducelab::ladder

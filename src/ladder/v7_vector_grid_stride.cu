// V7: float4 loads and a grid-stride loop. Changed from V6: each thread loads 16 bytes at a time
// (float4) and walks the array with stride blockDim.x * gridDim.x, and the grid is sized to just
// fill the GPU (SM count x resident blocks per SM) instead of one block per 512 elements.
// Bottlenecks it removes: per-element load instructions (a quarter of the load instructions) and
// idle or short-lived blocks (a 512 MB array no longer needs half a million blocks).
// Preconditions: none beyond float alignment. The article assumes 16-byte aligned data and
// n % 4 == 0; here a scalar head covers the elements before the first 16-byte boundary and a
// scalar tail the last n % 4, so any pointer and any n >= 1 work. For dot, x and y must share
// their offset from a 16-byte boundary to be read as float4; otherwise the loop falls back to
// scalar loads (still correct, slower).

#include <cstdint>
#include <type_traits>

#include "common/resident_grid.cuh"
#include "device/block_reduce.cuh"
#include "ladder/passes.cuh"

namespace reducelab::ladder {
namespace {

constexpr unsigned kBlock = 256;
constexpr unsigned kMinElementsPerThread = 8;  // two float4 per thread before the grid is cut

// Elements before x reaches a 16-byte boundary (x is 4-byte aligned).
__host__ __device__ inline std::size_t head_elements(const float* x) {
  const auto address = reinterpret_cast<std::uintptr_t>(x);
  return ((16 - (address & 15)) & 15) / sizeof(float);
}

template <class Combine, class Input, bool kVector>
__global__ void __launch_bounds__(kBlock) v7_vector_grid_stride_kernel(Input in, std::size_t n,
                                                                       float* out) {
  __shared__ float warp_slots[kBlock / device::kWarpSize];
  const Combine combine;
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  float value = detail::identity<Combine>();
  if constexpr (kVector) {
    const std::size_t head = head_elements(in.x) < n ? head_elements(in.x) : n;
    const std::size_t vectors = (n - head) / 4;
    const std::size_t tail = head + vectors * 4;
    if (thread < head) value = in(thread);
    if (thread < n - tail) value = combine(value, in(tail + thread));
    for (std::size_t i = thread; i < vectors; i += stride) {
      const float4 v = in.vec4(head + 4 * i);
      value = combine(value, combine(combine(v.x, v.y), combine(v.z, v.w)));
    }
  } else {
    for (std::size_t i = thread; i < n; i += stride) value = combine(value, in(i));
  }
  value = device::block_reduce<kBlock>(value, combine, detail::identity<Combine>(), warp_slots);
  if (threadIdx.x == 0) out[blockIdx.x] = value;
}

struct FullGridTag {};

struct V7 {
  static unsigned grid_for(std::size_t n) {
    const unsigned wanted = detail::blocks_for(n, kBlock * kMinElementsPerThread);
    // As many blocks as fit on the GPU at once (SMs x resident blocks, per device).
    const unsigned full = reducelab::detail::resident_grid<FullGridTag>(
        v7_vector_grid_stride_kernel<detail::Sum, detail::Load1, true>, kBlock,
        reducelab::detail::current_device());
    return wanted < full ? wanted : full;
  }
  template <class Combine, class Input>
  static void pass(Input in, std::size_t n, float* out, unsigned grid, cudaStream_t stream) {
    bool vector = true;
    if constexpr (std::is_same_v<Input, detail::Load2>) {
      vector = head_elements(in.x) == head_elements(in.y);
    }
    if (vector) {
      v7_vector_grid_stride_kernel<Combine, Input, true><<<grid, kBlock, 0, stream>>>(in, n, out);
    } else {
      v7_vector_grid_stride_kernel<Combine, Input, false><<<grid, kBlock, 0, stream>>>(in, n, out);
    }
  }
};

}  // namespace

void launch_v7(const Problem& p, cudaStream_t s) { detail::launch<V7>(p, s); }
std::size_t workspace_v7(std::size_t n) { return detail::workspace_elems<V7>(n); }

}  // namespace reducelab::ladder

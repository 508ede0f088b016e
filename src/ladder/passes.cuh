#pragma once
// What every rung shares: the inputs (one array, or two folded as x*y at the load), the operator
// dispatch, and the multi-pass driver that reduces the per-block partials again with the same
// rung until one value remains. What is timed is therefore the whole reduction.
//
// A rung is a struct with
//   static unsigned grid_for(std::size_t n);              // blocks for a pass over n values
//   template <class Combine, class Input>
//   static void pass(Input in, std::size_t n, float* out, unsigned grid, cudaStream_t s);

#include <cuda_runtime_api.h>

#include <climits>
#include <cstddef>

#include "common/cuda_check.hpp"
#include "device/ops.cuh"
#include "ladder/ladder.hpp"

namespace reducelab::ladder::detail {

using device::Max;
using device::Min;
using device::Sum;

// One array.
struct Load1 {
  const float* x;
  __device__ __forceinline__ float operator()(std::size_t i) const { return x[i]; }
  // Four elements from x + i, which must be 16-byte aligned.
  __device__ __forceinline__ float4 vec4(std::size_t i) const {
    return *reinterpret_cast<const float4*>(x + i);
  }
};

// Dot product: the multiplication is folded into the load, the reduction is a sum.
struct Load2 {
  const float* x;
  const float* y;
  __device__ __forceinline__ float operator()(std::size_t i) const { return x[i] * y[i]; }
  __device__ __forceinline__ float4 vec4(std::size_t i) const {
    const float4 a = *reinterpret_cast<const float4*>(x + i);
    const float4 b = *reinterpret_cast<const float4*>(y + i);
    return make_float4(a.x * b.x, a.y * b.y, a.z * b.z, a.w * b.w);
  }
};

template <class Combine>
__device__ __forceinline__ float identity() {
  return Combine::template identity<float>();
}

inline unsigned blocks_for(std::size_t n, std::size_t items_per_block) {
  const std::size_t blocks = (n + items_per_block - 1) / items_per_block;
  if (blocks > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorCode::invalid_argument,
                "n = " + std::to_string(n) + " needs more than 2^31-1 blocks for this rung");
  return static_cast<unsigned>(blocks);
}

// Floats of workspace: ping-pong buffers for the partials of pass 1 and of every later pass.
template <class Rung>
std::size_t workspace_elems(std::size_t n) {
  const unsigned grid = Rung::grid_for(n);
  return grid > 1 ? 2 * static_cast<std::size_t>(grid) : 0;
}

template <class Rung, class Combine, class Input>
void run_passes(Input first, std::size_t n, float* d_out, float* d_workspace,
                cudaStream_t stream) {
  unsigned grid = Rung::grid_for(n);
  float* buffers[2] = {d_workspace, d_workspace + grid};
  Rung::template pass<Combine>(first, n, grid == 1 ? d_out : buffers[0], grid, stream);
  REDUCELAB_CHECK_LAUNCH("ladder pass 1");
  std::size_t remaining = grid;
  int current = 0;
  while (remaining > 1) {
    grid = Rung::grid_for(remaining);
    float* dst = grid == 1 ? d_out : buffers[current ^ 1];
    Rung::template pass<Combine>(Load1{buffers[current]}, remaining, dst, grid, stream);
    REDUCELAB_CHECK_LAUNCH("ladder partials pass");
    remaining = grid;
    current ^= 1;
  }
}

// The launcher a rung file exports: the operator picks the instantiation.
template <class Rung>
void launch(const Problem& p, cudaStream_t stream) {
  switch (p.op) {
    case Op::sum:
      return run_passes<Rung, Sum>(Load1{p.d_x}, p.n, p.d_out, p.d_workspace, stream);
    case Op::min:
      return run_passes<Rung, Min>(Load1{p.d_x}, p.n, p.d_out, p.d_workspace, stream);
    case Op::max:
      return run_passes<Rung, Max>(Load1{p.d_x}, p.n, p.d_out, p.d_workspace, stream);
    case Op::dot:
      return run_passes<Rung, Sum>(Load2{p.d_x, p.d_y}, p.n, p.d_out, p.d_workspace, stream);
    default:
      throw Error(ErrorCode::invalid_argument, "the ladder implements " + supported_ops_text() +
                                                   ", not " + std::string(to_string(p.op)));
  }
}

}  // namespace reducelab::ladder::detail

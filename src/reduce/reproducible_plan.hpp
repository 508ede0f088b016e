#pragma once
// The fixed order of the gpu_to_gpu (reproducible) sum and dot, shared by the GPU launcher
// (reproducible.cuh) and the CPU function that computes the same bits (reproducible_cpu.cpp).
// Pure C++: nothing here depends on the GPU, the grid, the block size or the pointer.
//
// The order, in index space only (i is the element index, x[i] the element):
// - Lanes: P = 32 x (16 / sizeof(T)) (one 16-byte vector per thread of a warp): 128 for f32, 64
//   for f64, 256 for f16 and bf16.
// - Tiles: E = P x K elements, K a power of two >= 4 chosen from n alone (steps_for), so that
//   there are at most kMaxTiles tiles. Tile t holds x[t E, t E + E) (the last one may be short).
// - Lane l of tile t is the sequential sum, from -0, of f(x[t E + l + m P]) for m = 0, 1, ...,
//   K - 1 (indices >= n skipped), where f(x) = x widened to the accumulator (sum) or the
//   rounded product x * y (dot; no fused multiply-add).
// - The tile's partial is the complete binary tree of adjacent pairs over its P lanes:
//   ((l0 + l1) + (l2 + l3)) + ...
// - The result is the complete binary tree of adjacent pairs over the tile partials, padded
//   with -0 to a power of two (adding -0 changes no value, so padding is the same as stopping
//   the tree where the tiles end).
// - A NaN result is written as the canonical NaN (every bit but the sign set), so that the NaN
//   payload rules of the CPU and the GPU do not matter. mean divides the sum by n (rounded to
//   the accumulator type) once, at the end.
//
// Every addition is one IEEE round-to-nearest addition in the accumulator (f32 for f32, f16 and
// bf16; f64 for f64), and subnormals are kept (no flush to zero), so any IEEE machine that
// follows the order gets the same bits.

#include <cstddef>
#include <cstdint>

namespace reducelab::detail::repro {

//! Tiles at most: the tile partials fit the workspace (32768 x 8 bytes, with the group partials
//! after them), and the fold is two levels of kGroupTiles.
inline constexpr std::size_t kMaxTiles = 32768;
//! Tiles folded by one warp (32 per lane) into a group partial; kMaxTiles / kGroupTiles groups
//! at most, folded by one warp (one per lane).
inline constexpr std::size_t kGroupTiles = 1024;
inline constexpr std::size_t kMaxGroups = kMaxTiles / kGroupTiles;
static_assert(kMaxGroups == 32, "the last fold takes one group partial per lane of a warp");
//! Vectors a thread loads per tile at least (one batch in flight, as the default kernel's 4).
inline constexpr std::size_t kMinSteps = 4;

//! Lanes of a tile for elements of `element_size` bytes: one 16-byte vector per warp lane.
constexpr std::size_t lanes_for(std::size_t element_size) { return 32 * (16 / element_size); }

//! log2 of a power of two (constant-folded for the lanes of a known element size).
constexpr int log2_of(std::size_t power) {
  int l = 0;
  while ((std::size_t{1} << l) < power) ++l;
  return l;
}

struct Plan {
  std::size_t lanes;  //!< P
  std::size_t steps;  //!< K: elements of one lane in one tile
  std::size_t tile;   //!< E = P x K
  std::size_t tiles;  //!< ceil(n / E), at most kMaxTiles
  std::size_t groups; //!< ceil(tiles / kGroupTiles), at most kMaxGroups
};

constexpr Plan plan_for(std::size_t element_size, std::size_t n) {
  Plan p{};
  p.lanes = lanes_for(element_size);
  // K: the smallest power of two >= kMinSteps with at most kMaxTiles tiles of P x K elements.
  // ceil(n / (P K)) <= kMaxTiles is n <= kMaxTiles P K: no division (the segment kernels compute
  // this for every segment, where a 64-bit division is a call of about 30 instructions). The
  // tile's log2 goes alongside.
  int tile_log2 = log2_of(p.lanes) + log2_of(kMinSteps);
  p.steps = kMinSteps;
  while (n > kMaxTiles * p.lanes * p.steps) {
    p.steps *= 2;
    ++tile_log2;
  }
  p.tile = p.lanes * p.steps;
  // ceil(n / E) by a shift (E is a power of two)
  p.tiles = (n >> tile_log2) + ((n & (p.tile - 1)) != 0 ? 1 : 0);
  p.groups = (p.tiles + kGroupTiles - 1) / kGroupTiles;
  return p;
}

//! K alone (plan_for's steps).
constexpr std::size_t steps_for(std::size_t element_size, std::size_t n) {
  return plan_for(element_size, n).steps;
}

//! Depth of the order: the most additions any one element goes through, K - 1 + log2(P) +
//! ceil(log2(tiles)). The error bound of reproducible.hpp is depth x u / (1 - depth x u).
constexpr int depth_of(const Plan& p) {
  int depth = static_cast<int>(p.steps) - 1;
  for (std::size_t w = 1; w < p.lanes; w *= 2) ++depth;
  for (std::size_t w = 1; w < p.tiles; w *= 2) ++depth;
  return depth;
}

static_assert(plan_for(4, std::size_t{1} << 30).steps == 256);
static_assert(plan_for(4, std::size_t{1} << 30).tiles == kMaxTiles);
static_assert(plan_for(4, 1000).tiles == 2 && plan_for(8, 1).tiles == 1);
static_assert(plan_for(4, 0).tiles == 0 && plan_for(2, 1024).tiles == 1 &&
              plan_for(2, 1025).tiles == 2);
static_assert(plan_for(4, (std::size_t{1} << 24) + 1).steps == 8 &&
              plan_for(4, (std::size_t{1} << 24) + 1).tiles == 16385);
static_assert(plan_for(8, std::size_t{1} << 33).tiles == kMaxTiles);

}  // namespace reducelab::detail::repro

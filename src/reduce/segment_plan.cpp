#include "reduce/segment_plan.hpp"

#include <algorithm>

namespace reducelab::detail {
namespace {

unsigned ceil_div(std::size_t a, std::size_t b) {
  return static_cast<unsigned>(std::min<std::size_t>((a + b - 1) / b, ~0u));
}

// Blocks for `teams` warps of work, at most the resident grid (the kernel strides beyond it).
unsigned team_grid(std::size_t warps, const SegmentCapacity& capacity,
                   unsigned resident_blocks) {
  const unsigned wanted = ceil_div(warps, std::max(1u, capacity.team_block_warps));
  return std::max(1u, std::min(wanted, std::max(1u, resident_blocks)));
}
unsigned team_grid(std::size_t warps, const SegmentCapacity& capacity) {
  return team_grid(warps, capacity, capacity.team_blocks);
}

}  // namespace

unsigned tile_bank_wavefronts(std::size_t segment_size, std::size_t element_bytes,
                              unsigned team_log2, unsigned stride_log2) {
  constexpr unsigned kBanks = 32;
  const unsigned team = 1u << std::min(team_log2, 5u);
  const std::size_t words_per_element = element_bytes > 4 ? element_bytes / 4 : 1;
  unsigned per_bank[kBanks] = {};
  // Lanes in order read increasing addresses (a team's lanes are fewer than a row's elements),
  // so lanes that share a word are neighbours: count a word once by skipping repeats.
  std::size_t last = ~std::size_t{0};
  for (unsigned lane = 0; lane < kBanks; ++lane) {
    if (lane % team >= segment_size) continue;  // no element of the row for this lane
    const std::size_t row = std::size_t{lane / team} << stride_log2;
    const std::size_t byte = (row * segment_size + lane % team) * element_bytes;
    for (std::size_t w = 0; w < words_per_element; ++w) {
      const std::size_t word = byte / 4 + w;
      if (word == last) continue;
      last = word;
      ++per_bank[word % kBanks];
    }
  }
  return *std::max_element(per_bank, per_bank + kBanks);
}

unsigned tile_team_stride_log2(std::size_t segment_size, std::size_t element_bytes,
                               unsigned team_log2) {
  unsigned best = 0;
  unsigned fewest = tile_bank_wavefronts(segment_size, element_bytes, team_log2, 0);
  if (fewest < kTileStrideMinWavefronts) return 0;
  for (unsigned s = 1; s <= 3; ++s) {
    const unsigned w = tile_bank_wavefronts(segment_size, element_bytes, team_log2, s);
    if (w < fewest) {
      fewest = w;
      best = s;
    }
  }
  return best;
}

FixedSegmentPlan plan_fixed_segments(std::size_t num_segments, std::size_t segment_size,
                                     std::size_t element_bytes, const SegmentCapacity& capacity,
                                     unsigned max_partials, bool aligned_rows,
                                     unsigned per_thread_log2, bool contiguous_rows,
                                     std::size_t tile_row_bytes_max) {
  FixedSegmentPlan plan;
  if (takes_scalar_path(num_segments, segment_size)) {
    plan.path = SegmentPath::scalar;
    return plan;
  }
  const std::size_t row_bytes = segment_size * element_bytes;
  const std::size_t vectors = row_bytes / 16;
  if (aligned_rows && row_bytes % 16 == 0 && vectors > 0 && vectors <= kVectorRowsMax) {
    // Slots for the power of two at or above the row's vectors; the ones past its end idle.
    std::size_t slots = 1;
    while (slots < vectors) slots *= 2;
    plan.path = SegmentPath::vector_rows;
    plan.per_thread_log2 = std::min(per_thread_log2, 2u);
    while ((std::size_t{1} << plan.per_thread_log2) > slots) --plan.per_thread_log2;
    while ((std::size_t{1} << (plan.team_log2 + plan.per_thread_log2)) < slots &&
           plan.team_log2 < 5)
      ++plan.team_log2;
    while ((std::size_t{1} << (plan.team_log2 + plan.per_thread_log2)) < slots)
      ++plan.per_thread_log2;
    const std::size_t teams_per_block = kTeamThreads >> plan.team_log2;
    const std::size_t rows_per_pass = kVectorRowLoads >> plan.per_thread_log2;
    const std::size_t rows_per_block = teams_per_block * rows_per_pass;
    plan.partial_rows = slots != vectors;
    const unsigned resident =
        plan.partial_rows ? capacity.partial_vector_row_blocks : capacity.vector_row_blocks;
    plan.grid = std::max(1u, std::min(ceil_div(num_segments, rows_per_block),
                                      std::max(1u, resident)));
    return plan;
  }
  // Other short rows that lie one after another: tiles of whole rows. A tile holds kTileRowBytes
  // of the array from the 16-byte line of its first row's first element (at most 15 bytes before
  // it), so as many whole rows as fit after those bytes. Teams of lanes per row: as many lanes
  // as leave every row of a tile a team (a power of two, at most 32).
  if (contiguous_rows && segment_size > 0 && row_bytes < kOctetSegmentBytes &&
      row_bytes < tile_row_bytes_max) {
    const std::size_t tile_elements = kTileRowBytes / element_bytes;
    const std::size_t line_elements = std::max<std::size_t>(1, 16 / element_bytes);
    plan.path = SegmentPath::tile_rows;
    plan.tile_rows = (tile_elements - (line_elements - 1)) / segment_size;
    while (plan.team_log2 < 5 && (kTeamThreads >> (plan.team_log2 + 1)) >= plan.tile_rows)
      ++plan.team_log2;
    plan.team_stride_log2 = tile_team_stride_log2(segment_size, element_bytes, plan.team_log2);
    plan.grid = std::max(1u, std::min(ceil_div(num_segments, plan.tile_rows),
                                      std::max(1u, capacity.tile_row_blocks)));
    return plan;
  }
  // Rows shorter than kThreadSegmentMax (empty ones too) go to segment_teams_kernel, a lane
  // each, and so do the other rows under kOctetSegmentBytes (not one after another), which its
  // octets read four at a time; longer ones go to warp_rows_kernel. Rows of 50 f32 a warp each:
  // 733 GB/s; octets: 2,513 (session 20; tile rows: 4,084-4,164).
  if (segment_size < kThreadSegmentMax || row_bytes < kOctetSegmentBytes) {
    plan.path = SegmentPath::teams;
    plan.group = kLaneGroup;
    plan.grid = team_grid((num_segments + kLaneGroup - 1) / kLaneGroup, capacity);
    return plan;
  }
  // Long rows go to a warp each too when there are enough of them to keep every resident warp
  // busy in whole rounds (at least 90% of the last round full): one block per 4,096-element row
  // read 32,768 such rows at 2,957 GB/s on the H200 (session 6, 167eb03), a warp per row at
  // 4,278 (94d1e4d); a warp per 1,024-element row read 131,072 rows at 4,188.
  const std::size_t resident_warps =
      static_cast<std::size_t>(std::max(1u, capacity.warp_row_blocks)) *
      std::max(1u, capacity.team_block_warps);
  const std::size_t rounds = (num_segments + resident_warps - 1) / resident_warps;
  const bool warps_fill = num_segments >= resident_warps &&
                          num_segments * 10 >= rounds * resident_warps * 9 &&
                          segment_size <= kWarpSegmentMax;
  if (segment_size < kBlockSegmentMin || warps_fill) {
    plan.path = SegmentPath::warp_rows;
    plan.group = 1;
    plan.grid = team_grid(num_segments, capacity, capacity.warp_row_blocks);
    return plan;
  }
  plan.path = SegmentPath::blocks;
  const unsigned resident = std::max(1u, capacity.blocks);
  if (num_segments < resident) {
    // Fewer segments than resident blocks: share each segment among enough blocks to fill the
    // GPU once, but give every block at least one full batch of loads, and keep the partials
    // (one per block) and the group counters (one per segment) within the workspace.
    const std::size_t vectors = segment_size * element_bytes / 16;
    const unsigned batches =
        ceil_div(vectors, std::max<std::size_t>(1, capacity.block_tile_vectors));
    // At most one wave: rounding up left a few blocks to run alone after the rest (the axis
    // kernel's splits measured a whole block's time more at 1.01 waves, session 11).
    const unsigned fill = static_cast<unsigned>(resident / num_segments);
    const unsigned room = static_cast<unsigned>(max_partials / num_segments);
    plan.blocks_per_segment = std::max(1u, std::min({batches, fill, room}));
  }
  if (plan.blocks_per_segment > 1) {
    plan.grid = static_cast<unsigned>(num_segments) * plan.blocks_per_segment;
  } else {
    plan.grid = static_cast<unsigned>(std::min<std::size_t>(num_segments, resident));
  }
  return plan;
}

RaggedSegmentPlan plan_ragged_segments(std::size_t num_segments, const SegmentCapacity& capacity,
                                       unsigned max_partials) {
  RaggedSegmentPlan plan;
  // Groups of 32 only when every resident warp gets one: with fewer segments a warp per segment
  // keeps more warps busy (the lengths are unknown here, so the long ones may be among them).
  const std::size_t resident_warps = static_cast<std::size_t>(std::max(1u, capacity.team_blocks)) *
                                     std::max(1u, capacity.team_block_warps);
  plan.group = num_segments >= kLaneGroup * resident_warps ? kLaneGroup : 1;
  plan.team_grid = team_grid((num_segments + plan.group - 1) / plan.group, capacity);
  plan.long_grid = std::max(1u, std::min(capacity.long_blocks, max_partials / 2));
  return plan;
}

}  // namespace reducelab::detail

// The segmented reduce's planner and the slicing of its ragged long-segment kernel, on the CPU:
// which path each shape takes, and that the slices hand every element of every long segment to
// exactly one block, with groups whose members, partial slots and fold ranges agree.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "reduce/segment_plan.hpp"

namespace reducelab::detail {
namespace {

constexpr unsigned kPartials = 8192;  // the workspace's (workspace.hpp: kMaxGrid)

// An H200-like GPU: 132 SMs, 8 blocks of 256 threads, 4 of 512.
SegmentCapacity h200_like() {
  SegmentCapacity c;
  c.team_blocks = 132 * 8;
  c.team_block_warps = 8;
  c.warp_row_blocks = 132 * 8;
  c.vector_row_blocks = 132 * 5;
  c.partial_vector_row_blocks = 132 * 4;
  c.tile_row_blocks = 132 * 7;
  c.blocks = 132 * 4;
  c.block_tile_vectors = 512 * 4;
  c.long_blocks = 132 * 4;
  return c;
}

TEST(SegmentPlan, AlignedShortRowsTakeTheVectorRows) {
  const SegmentCapacity c = h200_like();
  auto plan = [&](std::size_t num, std::size_t size, std::size_t bytes = 4, bool aligned = true) {
    return plan_fixed_segments(num, size, bytes, c, kPartials, aligned);
  };
  struct Case {
    std::size_t size, bytes;
    unsigned team_log2, per_thread_log2;
  };
  // f32 rows of 4 .. 512 elements (1 .. 128 vectors), f64 rows of 2, f16 rows of 8.
  for (const Case& k : {Case{4, 4, 0, 0}, Case{8, 4, 1, 0}, Case{32, 4, 3, 0}, Case{128, 4, 5, 0},
                        Case{256, 4, 5, 1}, Case{512, 4, 5, 2}, Case{2, 8, 0, 0}, Case{8, 2, 0, 0}}) {
    const FixedSegmentPlan p = plan(1 << 20, k.size, k.bytes);
    EXPECT_EQ(p.path, SegmentPath::vector_rows) << k.size << " x " << k.bytes << " bytes";
    EXPECT_EQ(p.team_log2, k.team_log2) << k.size;
    EXPECT_EQ(p.per_thread_log2, k.per_thread_log2) << k.size;
    // At most the vector rows kernel's own resident grid, and all of it for 2^20 rows.
    EXPECT_EQ(p.grid, c.vector_row_blocks);
  }
  // Few rows: blocks for the rows there are (8 teams of 32 lanes, four rows each per pass).
  EXPECT_EQ(plan(64, 128).grid, 2u);
  // Not whole vectors, too long, or not aligned: the other paths.
  EXPECT_NE(plan(1 << 20, 6).path, SegmentPath::vector_rows);
  EXPECT_NE(plan(1 << 20, 1024).path, SegmentPath::vector_rows);
  EXPECT_NE(plan(1 << 20, 516).path, SegmentPath::vector_rows);  // 129 vectors
  EXPECT_NE(plan(1 << 20, 32, 4, false).path, SegmentPath::vector_rows);
  EXPECT_EQ(plan(1, 32).path, SegmentPath::scalar);
}

// Rows of whole vectors whose count is not a power of two get the slots of the next power of two.
TEST(SegmentPlan, VectorRowsOfAnyCountOfVectors) {
  const SegmentCapacity c = h200_like();
  struct Case {
    std::size_t size;
    unsigned request, team_log2, per_thread_log2;
  };
  // f32 rows of 12 (3 vectors: 4 slots), 48 (12: 16), 100 (25: 32), 192 (48: 64), 500 (125:
  // 128), with one or four vectors per lane asked for.
  for (const Case& k : {Case{12, 0, 2, 0}, Case{48, 0, 4, 0}, Case{100, 0, 5, 0},
                        Case{192, 0, 5, 1}, Case{500, 0, 5, 2}, Case{12, 2, 0, 2},
                        Case{48, 2, 2, 2}, Case{100, 2, 3, 2}, Case{500, 2, 5, 2}}) {
    const FixedSegmentPlan p = plan_fixed_segments(1 << 20, k.size, 4, c, kPartials, true, k.request);
    EXPECT_EQ(p.path, SegmentPath::vector_rows) << k.size;
    EXPECT_EQ(p.team_log2, k.team_log2) << k.size << " asking " << k.request;
    EXPECT_EQ(p.per_thread_log2, k.per_thread_log2) << k.size << " asking " << k.request;
    EXPECT_TRUE(p.partial_rows) << k.size;
    EXPECT_EQ(p.grid, c.partial_vector_row_blocks) << k.size;  // that kernel's own grid
  }
  EXPECT_FALSE(plan_fixed_segments(1 << 20, 64, 4, c, kPartials, true).partial_rows);
}

// Contiguous rows under kOctetSegmentBytes that are not vector rows: tiles of whole rows, a tile
// holding kTileRowBytes from its first row's 16-byte line, a team per row.
TEST(SegmentPlan, ContiguousShortRowsTakeTiles) {
  const SegmentCapacity c = h200_like();
  auto plan = [&](std::size_t num, std::size_t size, std::size_t bytes, bool aligned = true) {
    return plan_fixed_segments(num, size, bytes, c, kPartials, aligned, 0, true);
  };
  struct Case {
    std::size_t size, bytes, tile_rows;
    unsigned team_log2;
  };
  // f32 rows of 7 (584 a tile: 4,096 elements less the 3 a line may lead with), 33, 50 (81 rows:
  // 2 lanes each), 250 (16 rows: 16 lanes); f16 rows of 100; f64 rows of 3 and 127.
  for (const Case& k : {Case{7, 4, 584, 0}, Case{33, 4, 124, 1}, Case{50, 4, 81, 1},
                        Case{250, 4, 16, 4}, Case{100, 2, 81, 1}, Case{3, 8, 682, 0},
                        Case{127, 8, 16, 4}}) {
    const FixedSegmentPlan p = plan(1 << 22, k.size, k.bytes);
    EXPECT_EQ(p.path, SegmentPath::tile_rows) << k.size << " x " << k.bytes << " bytes";
    EXPECT_EQ(p.tile_rows, k.tile_rows) << k.size << " x " << k.bytes;
    EXPECT_EQ(p.team_log2, k.team_log2) << k.size << " x " << k.bytes;
    // The whole tile fits: the lead of a line and the rows.
    EXPECT_LE((16 / k.bytes - 1 + p.tile_rows * k.size) * k.bytes, kTileRowBytes) << k.size;
    EXPECT_EQ(p.grid, c.tile_row_blocks) << k.size;
  }
  // Few rows: a block per tile.
  EXPECT_EQ(plan(1000, 7, 4).grid, 2u);
  // Vector rows keep their kernel; misaligned ones take tiles.
  EXPECT_EQ(plan(1 << 20, 32, 4).path, SegmentPath::vector_rows);
  EXPECT_EQ(plan(1 << 20, 32, 4, false).path, SegmentPath::tile_rows);
  // 1 KB and more, or empty rows, or rows that do not lie one after another: not tiles.
  EXPECT_NE(plan(1 << 20, 256, 4, false).path, SegmentPath::tile_rows);
  EXPECT_NE(plan(100, 0, 4).path, SegmentPath::tile_rows);
  EXPECT_NE(plan_fixed_segments(1 << 20, 50, 4, c, kPartials, false).path, SegmentPath::tile_rows);
}

// The statistics that fold tiles take them only for rows under kLongFoldTileRowBytes; longer
// contiguous rows under kOctetSegmentBytes go to the teams kernel's octets, and the other ops
// keep tiles up to kOctetSegmentBytes.
TEST(SegmentPlan, LongFoldRowsLeaveTilesAtTheirLimit) {
  const SegmentCapacity c = h200_like();
  auto plan = [&](std::size_t size, std::size_t bytes, std::size_t limit) {
    return plan_fixed_segments(1 << 20, size, bytes, c, kPartials, false, 2, true, limit);
  };
  static_assert(kLongFoldTileRowBytes < kOctetSegmentBytes);
  for (const std::size_t bytes : {2u, 4u, 8u}) {
    const std::size_t below = (kLongFoldTileRowBytes - 1) / bytes;  // the longest row under it
    EXPECT_EQ(plan(below, bytes, kLongFoldTileRowBytes).path, SegmentPath::tile_rows) << bytes;
    EXPECT_EQ(plan(below + 1, bytes, kLongFoldTileRowBytes).path, SegmentPath::teams) << bytes;
    EXPECT_EQ(plan(below + 1, bytes, kLongFoldTileRowBytes).group, kLaneGroup) << bytes;
    EXPECT_EQ(plan(below + 1, bytes, kOctetSegmentBytes).path, SegmentPath::tile_rows) << bytes;
    EXPECT_EQ(plan(kOctetSegmentBytes / bytes - 1, bytes, kOctetSegmentBytes).path,
              SegmentPath::tile_rows)
        << bytes;
  }
}

// A warp's teams of tile_rows_kernel take rows far enough apart that their loads from shared
// memory fall in different banks. The counts by hand: rows of 65 f32 in teams of 4 on rows
// 0..7 start at words 0, 65, 130, ... = banks 0..7, so lanes 0..3 of each team cover banks 0..10
// four deep; on rows 0, 4, 8, ... at banks 0, 4, 8, ..., 28, once each.
TEST(SegmentPlan, TileTeamsOnDifferentBanks) {
  EXPECT_EQ(tile_bank_wavefronts(65, 4, 2, 0), 4u);
  EXPECT_EQ(tile_bank_wavefronts(65, 4, 2, 2), 1u);
  EXPECT_EQ(tile_bank_wavefronts(65, 4, 2, 3), 2u);  // banks 0, 8, 16, 24, twice each
  EXPECT_EQ(tile_bank_wavefronts(101, 4, 2, 0), 2u);  // banks 0, 5, ..., 30, 3: 30..33 meet 0..3
  EXPECT_EQ(tile_bank_wavefronts(130, 4, 3, 0), 4u);  // 4 teams of 8 at banks 0, 2, 4, 6
  EXPECT_EQ(tile_bank_wavefronts(161, 4, 3, 0), 4u);
  EXPECT_EQ(tile_bank_wavefronts(50, 4, 1, 0), 1u);   // 16 teams of 2 at even banks
  EXPECT_EQ(tile_bank_wavefronts(50, 4, 1, 3), 8u);   // rows 8 apart: banks 0 and 16
  EXPECT_EQ(tile_bank_wavefronts(65, 8, 3, 0), 4u);   // f64: two words a lane, two at best
  EXPECT_EQ(tile_bank_wavefronts(65, 8, 3, 2), 2u);
  EXPECT_EQ(tile_bank_wavefronts(20, 2, 0, 0), 2u);   // f16 rows of 20, a lane each: 10 words
                                                      // apart, 16 even banks twice
  EXPECT_EQ(tile_bank_wavefronts(1, 2, 0, 0), 1u);    // lanes that share a word count once
  // The planner keeps consecutive rows under kTileStrideMinWavefronts, else takes the stride
  // with the fewest (the least among equals), for every row the tiles take: it reaches one
  // wavefront for the f32 rows that measured bank conflicts (65, 130, 161) and keeps rows of 50,
  // 101 and 199 (1 and 2 wavefronts) as they were.
  const SegmentCapacity c = h200_like();
  for (const std::size_t bytes : {1u, 2u, 4u, 8u}) {
    for (std::size_t size = 1; size * bytes < kOctetSegmentBytes; ++size) {
      const FixedSegmentPlan p = plan_fixed_segments(1 << 20, size, bytes, c, kPartials, false, 0,
                                                     true);
      ASSERT_EQ(p.path, SegmentPath::tile_rows) << size << " x " << bytes;
      unsigned fewest = ~0u;
      unsigned first = 0;
      for (unsigned s = 0; s <= 3; ++s) {
        const unsigned w = tile_bank_wavefronts(size, bytes, p.team_log2, s);
        if (w < fewest) {
          fewest = w;
          first = s;
        }
      }
      const bool conflicts =
          tile_bank_wavefronts(size, bytes, p.team_log2, 0) >= kTileStrideMinWavefronts;
      EXPECT_EQ(p.team_stride_log2, conflicts ? first : 0u) << size << " x " << bytes;
    }
  }
  for (const std::size_t size : {65u, 130u, 161u}) {
    const FixedSegmentPlan p = plan_fixed_segments(1 << 20, size, 4, c, kPartials, false, 0, true);
    EXPECT_GT(p.team_stride_log2, 0u) << size;
    EXPECT_EQ(tile_bank_wavefronts(size, 4, p.team_log2, p.team_stride_log2), 1u) << size;
  }
  for (const std::size_t size : {50u, 101u, 199u}) {
    const FixedSegmentPlan p = plan_fixed_segments(1 << 20, size, 4, c, kPartials, false, 0, true);
    EXPECT_EQ(p.team_stride_log2, 0u) << size;
  }
}

// A round of tile_rows_kernel: every valid row goes to exactly one team, to as many warps as
// consecutive rows would take (ceil(valid / teams per warp)), and a full round is interleaved in
// groups of 1 << stride warps. By hand: 40 rows of 101 f32 in teams of 4 (8 a warp), stride 1:
// warps 0-1 rows 0-15, warps 2-3 rows 16-31 (each 2 apart), warp 4 rows 32-39 one after another.
TEST(SegmentPlan, TileRoundSlots) {
  EXPECT_EQ(tile_round_slot(0, 0, 40, 2, 1), 0u);
  EXPECT_EQ(tile_round_slot(1, 0, 40, 2, 1), 1u);
  EXPECT_EQ(tile_round_slot(0, 7, 40, 2, 1), 14u);
  EXPECT_EQ(tile_round_slot(3, 7, 40, 2, 1), 31u);
  EXPECT_EQ(tile_round_slot(4, 0, 40, 2, 1), 32u);
  EXPECT_EQ(tile_round_slot(4, 7, 40, 2, 1), 39u);
  EXPECT_GE(tile_round_slot(5, 0, 40, 2, 1), 40u);
  // 25 rows of 161 in teams of 8 (4 a warp), stride 3: 16 rows over warps 0-3, 8 over 4-5, 1 on 6.
  EXPECT_EQ(tile_round_slot(3, 3, 25, 3, 3), 15u);
  EXPECT_EQ(tile_round_slot(5, 3, 25, 3, 3), 23u);
  EXPECT_EQ(tile_round_slot(6, 0, 25, 3, 3), 24u);
  EXPECT_GE(tile_round_slot(6, 1, 25, 3, 3), 25u);
  EXPECT_GE(tile_round_slot(7, 0, 25, 3, 3), 25u);
  // 62 rows of 65 in teams of 4, stride 2: 30 rows after the first 32 need warps 4-7 anyway, so
  // they stay 4 apart: warp 4 rows 32, 36, ..., 60, warp 6's last row (62) and warp 7's are past.
  EXPECT_EQ(tile_round_slot(4, 7, 62, 2, 2), 60u);
  EXPECT_EQ(tile_round_slot(5, 7, 62, 2, 2), 61u);
  EXPECT_GE(tile_round_slot(6, 7, 62, 2, 2), 62u);
  EXPECT_EQ(tile_round_slot(7, 6, 62, 2, 2), 59u);
  for (unsigned team_log2 = 0; team_log2 <= 5; ++team_log2) {
    const unsigned per_warp = 32u >> team_log2;
    const unsigned teams = 8 * per_warp;
    for (unsigned stride = 0; stride <= 3; ++stride) {
      for (unsigned valid = 1; valid <= teams; ++valid) {
        std::vector<int> seen(teams, 0);
        unsigned warps = 0;
        for (unsigned w = 0; w < 8; ++w) {
          bool active = false;
          for (unsigned t = 0; t < per_warp; ++t) {
            const unsigned row = tile_round_slot(w, t, valid, team_log2, stride);
            if (row < valid) {
              ++seen[row];
              active = true;
            }
            if (valid == teams) {  // a full round: the groups of 1 << stride warps, interleaved
              const unsigned s = stride;
              EXPECT_EQ(row, ((w >> s) << (s + 5 - team_log2)) | (t << s) | (w & ((1u << s) - 1)));
            }
          }
          warps += active ? 1 : 0;
        }
        for (unsigned r = 0; r < valid; ++r) {
          ASSERT_EQ(seen[r], 1) << team_log2 << " " << stride << " " << valid << " row " << r;
        }
        EXPECT_EQ(warps, (valid + per_warp - 1) / per_warp)
            << team_log2 << " " << stride << " " << valid;
      }
    }
  }
}

// The statistics' Moments ask for four vectors per lane (per_thread_log2 = 2): fewer lanes per
// row, the same rows and loads per pass.
TEST(SegmentPlan, VectorRowsWithFourVectorsPerLane) {
  const SegmentCapacity c = h200_like();
  struct Case {
    std::size_t size;
    unsigned team_log2, per_thread_log2;
  };
  // f32 rows of 4 .. 512 elements (1 .. 128 vectors).
  for (const Case& k : {Case{4, 0, 0}, Case{8, 0, 1}, Case{16, 0, 2}, Case{32, 1, 2},
                        Case{128, 3, 2}, Case{512, 5, 2}}) {
    const FixedSegmentPlan p = plan_fixed_segments(1 << 20, k.size, 4, c, kPartials, true, 2);
    EXPECT_EQ(p.path, SegmentPath::vector_rows) << k.size;
    EXPECT_EQ(p.team_log2, k.team_log2) << k.size;
    EXPECT_EQ(p.per_thread_log2, k.per_thread_log2) << k.size;
  }
}

TEST(SegmentPlan, FixedSizeTiers) {
  const SegmentCapacity c = h200_like();
  auto plan = [&](std::size_t num, std::size_t size, std::size_t bytes = 4) {
    return plan_fixed_segments(num, size, bytes, c, kPartials);
  };
  EXPECT_EQ(plan(1, 1).path, SegmentPath::scalar);
  EXPECT_EQ(plan(1, 1000003).path, SegmentPath::scalar);
  // One empty segment is not the scalar path (which throws for an empty min).
  EXPECT_EQ(plan(1, 0).path, SegmentPath::teams);

  const FixedSegmentPlan rows4 = plan(4096, 4);
  EXPECT_EQ(rows4.path, SegmentPath::teams);
  EXPECT_EQ(rows4.group, kLaneGroup);
  EXPECT_EQ(rows4.grid, 4096u / 32 / 8);
  EXPECT_EQ(plan(100, kThreadSegmentMax - 1).group, kLaneGroup);
  EXPECT_EQ(plan(5, 0).group, kLaneGroup);
  // Rows under kOctetSegmentBytes that are not vector rows: octets of the teams kernel.
  const FixedSegmentPlan octets = plan(333, 33);
  EXPECT_EQ(octets.path, SegmentPath::teams);
  EXPECT_EQ(octets.group, kLaneGroup);
  EXPECT_EQ(octets.grid, 2u);  // 11 groups of 32 rows, 8 warps per block
  EXPECT_EQ(plan(100, kOctetSegmentBytes / 4 - 1).group, kLaneGroup);
  EXPECT_EQ(plan(100, kOctetSegmentBytes / 8 - 1, 8).group, kLaneGroup);

  const FixedSegmentPlan warps = plan(333, kOctetSegmentBytes / 4);
  EXPECT_EQ(warps.path, SegmentPath::warp_rows);
  EXPECT_EQ(warps.group, 1u);
  EXPECT_EQ(warps.grid, (333u + 7) / 8);
  EXPECT_EQ(plan(1000, kBlockSegmentMin - 1).path, SegmentPath::warp_rows);

  // Enough segments to fill the GPU: one block each, the grid striding over them.
  const FixedSegmentPlan many = plan(1000, kBlockSegmentMin);
  EXPECT_EQ(many.path, SegmentPath::blocks);
  EXPECT_EQ(many.blocks_per_segment, 1u);
  EXPECT_EQ(many.grid, c.blocks);

  // Long rows, enough of them for every resident warp in whole rounds: a warp each.
  const std::size_t resident_warps = std::size_t{c.warp_row_blocks} * c.team_block_warps;
  EXPECT_EQ(plan(4 * resident_warps, kBlockSegmentMin).path, SegmentPath::warp_rows);
  EXPECT_EQ(plan(32768, 4096).path, SegmentPath::warp_rows);  // 3.88 rounds: 97% full
  EXPECT_EQ(plan(10000, 4096).path, SegmentPath::blocks);  // 1.18 rounds: half the last idle
  EXPECT_EQ(plan(4 * resident_warps, kWarpSegmentMax + 1).path, SegmentPath::blocks);

  // Few long segments: groups of blocks, one resident grid at most.
  const FixedSegmentPlan few = plan(7, (std::size_t{1} << 20) + 3);
  EXPECT_EQ(few.path, SegmentPath::blocks);
  EXPECT_EQ(few.blocks_per_segment, c.blocks / 7);
  EXPECT_EQ(few.grid, 7 * few.blocks_per_segment);

  // Few segments too short for a second block's batch: one block each.
  const FixedSegmentPlan short_few = plan(2, kBlockSegmentMin);
  EXPECT_EQ(short_few.blocks_per_segment, 1u);
  EXPECT_EQ(short_few.grid, 2u);
  // A group is at most as large as the segment has batches.
  EXPECT_EQ(plan(1 + 1, 3 * 2048 * 4).blocks_per_segment, 3u);
}

TEST(SegmentPlan, GroupsFitTheWorkspace) {
  SegmentCapacity c = h200_like();
  c.blocks = 100000;  // a GPU larger than the workspace
  for (std::size_t num : {2u, 3u, 100u, 4095u, 4097u, 8191u, 9000u}) {
    const FixedSegmentPlan p = plan_fixed_segments(num, std::size_t{1} << 24, 4, c, kPartials);
    EXPECT_LE(static_cast<std::size_t>(p.blocks_per_segment) * num,
              std::max<std::size_t>(num, kPartials))
        << num;
    if (p.blocks_per_segment > 1) {
      EXPECT_LE(num * p.blocks_per_segment, kPartials) << num;
      EXPECT_EQ(p.grid, num * p.blocks_per_segment);
    }
  }
}

TEST(SegmentPlan, Ragged) {
  const SegmentCapacity c = h200_like();
  const std::size_t resident_warps = std::size_t{c.team_blocks} * c.team_block_warps;
  const RaggedSegmentPlan few = plan_ragged_segments(1000, c, kPartials);
  EXPECT_EQ(few.group, 1u);
  EXPECT_EQ(few.team_grid, 1000u / 8);
  EXPECT_EQ(few.long_grid, c.long_blocks);
  const RaggedSegmentPlan many = plan_ragged_segments(kLaneGroup * resident_warps, c, kPartials);
  EXPECT_EQ(many.group, kLaneGroup);
  EXPECT_EQ(many.team_grid, c.team_blocks);
  SegmentCapacity huge = c;
  huge.long_blocks = 100000;
  EXPECT_EQ(plan_ragged_segments(5, huge, kPartials).long_grid, kPartials / 2);
}

TEST(SegmentSlices, EveryElementInOneSlice) {
  for (std::uint64_t total : {1ull, 2ull, 7ull, 100ull, 4096ull, 100003ull}) {
    for (unsigned count : {1u, 2u, 3u, 7u, 528u, 4096u}) {
      const Slices slices{-17, total, count};
      EXPECT_EQ(slices.begin(0), -17);
      EXPECT_EQ(slices.begin(count), -17 + static_cast<std::int64_t>(total));
      for (unsigned b = 0; b < count; ++b) {
        const std::int64_t length = slices.begin(b + 1) - slices.begin(b);
        EXPECT_GE(length, static_cast<std::int64_t>(total / count));
        EXPECT_LE(length, static_cast<std::int64_t>(total / count + 1));
      }
      for (std::int64_t e = -17;
           e < -17 + static_cast<std::int64_t>(std::min<std::uint64_t>(total, 5000)); ++e) {
        const unsigned b = slices.of(e);
        ASSERT_LT(b, count);
        ASSERT_LE(slices.begin(b), e) << total << " " << count << " " << e;
        ASSERT_GT(slices.begin(b + 1), e) << total << " " << count << " " << e;
      }
    }
  }
}

// What long_segments_kernel does with nondecreasing offsets, block by block: the segments from
// the one that holds the slice's start, kBlock at a time while every one of a chunk starts before
// the slice's end; a piece of each long one that overlaps the slice; whole, or a partial in the
// group's slot.
struct Piece {
  unsigned block;
  std::size_t segment;
  std::int64_t from;
  std::int64_t to;
};

std::vector<Piece> simulate_long_kernel(const std::vector<std::int64_t>& offsets, unsigned grid,
                                        std::size_t long_min, std::size_t chunk_size) {
  const std::size_t num = offsets.size() - 1;
  const Slices slices{offsets[0], static_cast<std::uint64_t>(offsets[num] - offsets[0]), grid};
  std::vector<Piece> pieces;
  for (unsigned b = 0; b < grid; ++b) {
    const std::int64_t lo = slices.begin(b);
    const std::int64_t hi = slices.begin(b + 1);
    // The last segment whose offset is at or below lo.
    std::size_t chunk =
        static_cast<std::size_t>(std::upper_bound(offsets.begin(), offsets.begin() + num, lo) -
                                 offsets.begin()) -
        1;
    for (;; chunk += chunk_size) {
      bool more = true;
      for (std::size_t s = chunk; s < chunk + chunk_size; ++s) {
        if (s >= num) {
          more = false;
          continue;
        }
        if (reads_piece(offsets[s], offsets[s + 1], lo, hi, long_min))
          pieces.push_back({b, s, std::max(offsets[s], lo), std::min(offsets[s + 1], hi)});
        more = more && offsets[s] < hi;
      }
      if (!more) break;
    }
  }
  return pieces;
}

void check_slicing(const std::vector<std::int64_t>& offsets, unsigned grid, std::size_t long_min) {
  const std::size_t num = offsets.size() - 1;
  const Slices slices{offsets[0], static_cast<std::uint64_t>(offsets[num] - offsets[0]), grid};
  const std::vector<Piece> pieces = simulate_long_kernel(offsets, grid, long_min, 512);
  std::map<std::size_t, std::vector<Piece>> by_segment;
  for (const Piece& p : pieces) by_segment[p.segment].push_back(p);
  std::map<unsigned, std::size_t> slot_owner;  // partial slot -> segment
  for (std::size_t s = 0; s < num; ++s) {
    const std::int64_t begin = offsets[s];
    const std::int64_t end = offsets[s + 1];
    const bool is_long = end - begin >= static_cast<std::int64_t>(long_min);
    const auto found = by_segment.find(s);
    if (!is_long) {
      EXPECT_EQ(found, by_segment.end()) << "short segment " << s << " read by the long kernel";
      continue;
    }
    ASSERT_NE(found, by_segment.end()) << "long segment " << s << " read by no block";
    std::vector<Piece> mine = found->second;
    std::sort(mine.begin(), mine.end(),
              [](const Piece& a, const Piece& b) { return a.block < b.block; });
    const SliceGroup group = SliceGroup::of(slices, begin, end);
    ASSERT_EQ(mine.size(), group.members()) << "segment " << s;
    std::int64_t next = begin;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      EXPECT_EQ(mine[i].block, group.first + i) << "segment " << s;
      EXPECT_EQ(mine[i].from, next) << "segment " << s << ": a gap or an overlap";
      EXPECT_LE(mine[i].from, mine[i].to);
      next = mine[i].to;
      if (group.whole()) continue;
      const unsigned slot = group.slot(mine[i].block);
      EXPECT_GE(slot, group.fold_first());
      EXPECT_LT(slot, group.fold_first() + group.fold_count());
      EXPECT_TRUE(slot_owner.emplace(slot, s).second) << "slot " << slot << " written twice";
    }
    EXPECT_EQ(next, end) << "segment " << s << " not read to its end";
    if (!group.whole()) {
      // The fold's other slots are the odd ones of inner blocks: no piece writes them.
      for (unsigned b = group.first + 1; b < group.last; ++b)
        EXPECT_TRUE(slot_owner.emplace(2 * b + 1, s).second) << "inner slot of block " << b;
      EXPECT_LE(group.fold_first() + group.fold_count(), 2 * grid);
    }
  }
}

TEST(SegmentSlices, LongSegmentsSplitIntoGroupsThatAgree) {
  constexpr std::size_t kLong = 64;  // small, so that small inputs have many long segments
  std::mt19937_64 random(20261130);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t num = 1 + random() % 300;
    std::vector<std::int64_t> offsets(num + 1);
    offsets[0] = static_cast<std::int64_t>(random() % 50);
    for (std::size_t s = 0; s < num; ++s) {
      const unsigned kind = random() % 10;
      const std::int64_t length = kind < 3   ? 0
                                  : kind < 7 ? static_cast<std::int64_t>(random() % kLong)
                                  : kind < 9 ? static_cast<std::int64_t>(kLong + random() % 500)
                                             : static_cast<std::int64_t>(random() % 20000);
      offsets[s + 1] = offsets[s] + length;
    }
    if (offsets[num] == offsets[0]) offsets[num] += kLong;  // the kernel runs only with a long one
    for (unsigned grid : {1u, 2u, 5u, 64u, 528u, 4096u}) check_slicing(offsets, grid, kLong);
    if (HasFailure()) {
      ADD_FAILURE() << "trial " << trial;
      return;
    }
  }
}

TEST(SegmentSlices, OneHugeSegmentAmongTinyOnes) {
  std::vector<std::int64_t> offsets{5};
  for (int s = 0; s < 1000; ++s) offsets.push_back(offsets.back() + s % 3);
  offsets.push_back(offsets.back() + (std::int64_t{1} << 31) + 5);
  for (int s = 0; s < 1000; ++s) offsets.push_back(offsets.back() + s % 4);
  check_slicing(offsets, 528, kBlockSegmentMin);
  check_slicing(offsets, 4096, kBlockSegmentMin);
}

}  // namespace
}  // namespace reducelab::detail

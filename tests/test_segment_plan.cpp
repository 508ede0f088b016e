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
  c.blocks = 132 * 4;
  c.block_tile_vectors = 512 * 4;
  c.ragged_blocks = 132 * 8;
  c.fallback_blocks = 132 * 4;
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
    EXPECT_LE(p.grid, c.team_blocks);
  }
  // Few rows: blocks for the rows there are (8 teams of 32 lanes, four rows each per pass).
  EXPECT_EQ(plan(64, 128).grid, 2u);
  // Not whole vectors, not a power of two of them, too long, or not aligned: the other paths.
  EXPECT_NE(plan(1 << 20, 6).path, SegmentPath::vector_rows);
  EXPECT_NE(plan(1 << 20, 12).path, SegmentPath::vector_rows);
  EXPECT_NE(plan(1 << 20, 1024).path, SegmentPath::vector_rows);
  EXPECT_NE(plan(1 << 20, 32, 4, false).path, SegmentPath::vector_rows);
  EXPECT_EQ(plan(1, 32).path, SegmentPath::scalar);
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
  EXPECT_EQ(plan(100, kThreadSegmentMax).group, 1u);
  EXPECT_EQ(plan(5, 0).group, kLaneGroup);

  const FixedSegmentPlan warps = plan(333, 33);
  EXPECT_EQ(warps.path, SegmentPath::teams);
  EXPECT_EQ(warps.group, 1u);
  EXPECT_EQ(warps.grid, (333u + 7) / 8);
  EXPECT_EQ(plan(1000, kBlockSegmentMin - 1).path, SegmentPath::teams);

  // Enough segments to fill the GPU: one block each, the grid striding over them.
  const FixedSegmentPlan many = plan(1000, kBlockSegmentMin);
  EXPECT_EQ(many.path, SegmentPath::blocks);
  EXPECT_EQ(many.blocks_per_segment, 1u);
  EXPECT_EQ(many.grid, c.blocks);

  // Long rows, enough of them for every resident warp in whole rounds: a warp each.
  const std::size_t resident_warps = std::size_t{c.team_blocks} * c.team_block_warps;
  EXPECT_EQ(plan(4 * resident_warps, kBlockSegmentMin).path, SegmentPath::teams);
  EXPECT_EQ(plan(32768, 4096).path, SegmentPath::teams);  // 3.88 rounds: 97% full
  EXPECT_EQ(plan(10000, 4096).path, SegmentPath::blocks);  // 1.18 rounds: half the last idle
  EXPECT_EQ(plan(4 * resident_warps, kWarpSegmentMax + 1).path, SegmentPath::blocks);

  // Few long segments: groups of blocks, about one resident grid in all.
  const FixedSegmentPlan few = plan(7, (std::size_t{1} << 20) + 3);
  EXPECT_EQ(few.path, SegmentPath::blocks);
  EXPECT_EQ(few.blocks_per_segment, (c.blocks + 6) / 7);
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
  const RaggedSegmentPlan few = plan_ragged_segments(1000, c, kPartials);
  EXPECT_EQ(few.grid, c.ragged_blocks);  // the whole GPU, whatever the segments
  EXPECT_EQ(few.fallback_grid, c.fallback_blocks);
  EXPECT_EQ(plan_ragged_segments(3, c, kPartials).fallback_grid, 3u);
  SegmentCapacity huge = c;
  huge.ragged_blocks = 100000;
  EXPECT_EQ(plan_ragged_segments(5, huge, kPartials).grid, kPartials / 2);  // two slots a block
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

// What ragged_slices_kernel does with nondecreasing offsets, from RaggedSlicing alone: every
// element in exactly one warp's slice, in order; every empty segment written by exactly one warp;
// every segment that crosses blocks leaves one piece in each block of its SliceGroup, in distinct
// slots of the group's fold, the other slots of the fold left at the identity.
void check_ragged_slicing(const std::vector<std::int64_t>& offsets, int shift, int width,
                          unsigned blocks, unsigned warps) {
  const std::size_t num = offsets.size() - 1;
  const RaggedSlicing slicing{offsets[0], offsets[num], shift, width, blocks, warps};
  struct Range {
    std::int64_t lo, hi;
  };
  std::vector<Range> block_ranges;
  std::vector<Range> warp_ranges;
  for (unsigned b = 0; b < blocks; ++b) {
    block_ranges.push_back({slicing.element_at(slicing.block_slices().begin(b)),
                            slicing.element_at(slicing.block_slices().begin(b + 1))});
    const Slices inner = slicing.warp_slices(b);
    for (unsigned w = 0; w < warps; ++w)
      warp_ranges.push_back(
          {slicing.element_at(inner.begin(w)), slicing.element_at(inner.begin(w + 1))});
  }
  // The warps' slices tile [offsets[0], offsets[num]) in order, inside their block's.
  std::int64_t next = offsets[0];
  for (std::size_t i = 0; i < warp_ranges.size(); ++i) {
    ASSERT_EQ(warp_ranges[i].lo, next) << "warp " << i;
    ASSERT_LE(warp_ranges[i].lo, warp_ranges[i].hi) << "warp " << i;
    ASSERT_GE(warp_ranges[i].lo, block_ranges[i / warps].lo);
    ASSERT_LE(warp_ranges[i].hi, block_ranges[i / warps].hi);
    next = warp_ranges[i].hi;
  }
  ASSERT_EQ(next, offsets[num]);
  std::map<unsigned, std::size_t> slot_owner;  // partial slot -> segment
  for (std::size_t s = 0; s < num; ++s) {
    const std::int64_t begin = offsets[s];
    const std::int64_t end = offsets[s + 1];
    if (begin == end) {
      int writers = 0;
      for (std::size_t i = 0; i < warp_ranges.size(); ++i)
        writers += RaggedSlicing::owns_empty(warp_ranges[i].lo, warp_ranges[i].hi, i == 0, begin);
      EXPECT_EQ(writers, 1) << "empty segment " << s << " at " << begin;
      continue;
    }
    // The blocks holding a piece: those whose elements meet the segment, and those with no
    // elements whose position lies inside it (a warp there reports an empty middle piece).
    std::vector<unsigned> members;
    for (unsigned b = 0; b < blocks; ++b) {
      const Range r = block_ranges[b];
      const bool meets = r.lo < r.hi && r.lo < end && r.hi > begin;
      const bool inside = r.lo == r.hi && begin < r.lo && r.lo < end;
      if (meets || inside) members.push_back(b);
    }
    const SliceGroup group = slicing.group(begin, end);
    ASSERT_FALSE(members.empty()) << "segment " << s;
    EXPECT_EQ(members.front(), group.first) << "segment " << s;
    EXPECT_EQ(members.back(), group.last) << "segment " << s;
    EXPECT_EQ(members.size(), group.members()) << "segment " << s << ": a block skipped";
    if (group.whole()) continue;
    for (unsigned b : members) {
      const unsigned slot = group.slot(b);
      EXPECT_EQ(slot, b == group.first ? 2 * b + 1 : 2 * b);
      EXPECT_GE(slot, group.fold_first());
      EXPECT_LT(slot, group.fold_first() + group.fold_count());
      EXPECT_TRUE(slot_owner.emplace(slot, s).second) << "slot " << slot << " written twice";
    }
    EXPECT_LE(group.fold_first() + group.fold_count(), 2 * blocks);
  }
}

std::vector<std::int64_t> random_offsets(std::mt19937_64& random, std::size_t num) {
  std::vector<std::int64_t> offsets(num + 1);
  offsets[0] = static_cast<std::int64_t>(random() % 50);
  for (std::size_t s = 0; s < num; ++s) {
    const unsigned kind = random() % 10;
    const std::int64_t length = kind < 3   ? 0
                                : kind < 7 ? static_cast<std::int64_t>(random() % 64)
                                : kind < 9 ? static_cast<std::int64_t>(64 + random() % 500)
                                           : static_cast<std::int64_t>(random() % 20000);
    offsets[s + 1] = offsets[s] + length;
  }
  return offsets;
}

TEST(RaggedSlicing, SlicesGroupsAndEmptySegmentsAgree) {
  std::mt19937_64 random(20261130);
  for (int trial = 0; trial < 150; ++trial) {
    const std::vector<std::int64_t> offsets = random_offsets(random, 1 + random() % 300);
    for (int width : {2, 4, 8}) {
      const int shift = static_cast<int>(random() % width);
      for (unsigned blocks : {1u, 2u, 5u, 64u, 1056u})
        check_ragged_slicing(offsets, shift, width, blocks, 8);
    }
    if (HasFailure()) {
      ADD_FAILURE() << "trial " << trial;
      return;
    }
  }
}

TEST(RaggedSlicing, FewElementsManyBlocksAndOnlyEmptySegments) {
  check_ragged_slicing({3, 3, 3, 3}, 1, 4, 1056, 8);        // only empty segments
  check_ragged_slicing({0, 1}, 0, 4, 1056, 8);              // one element
  check_ragged_slicing({2, 2, 9, 9, 11, 11}, 3, 4, 7, 8);  // fewer vectors than warps
}

TEST(RaggedSlicing, OneHugeSegmentAmongTinyOnes) {
  std::vector<std::int64_t> offsets{5};
  for (int s = 0; s < 1000; ++s) offsets.push_back(offsets.back() + s % 3);
  offsets.push_back(offsets.back() + (std::int64_t{1} << 31) + 5);
  for (int s = 0; s < 1000; ++s) offsets.push_back(offsets.back() + s % 4);
  check_ragged_slicing(offsets, 1, 4, 1056, 8);
  check_ragged_slicing(offsets, 0, 2, 4096, 8);
}

}  // namespace
}  // namespace reducelab::detail

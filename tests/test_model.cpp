// The CPU model of the ladder (src/model/model.hpp) against the article's tables: V0's lane
// utilisation, V1's bank conflicts, V2's "no conflicts, no divergence", the barrier counts of
// V4/V5 and V6/V7, and the first-pass grids. Runs on the CPU; no GPU involved.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "reducelab/error.hpp"

namespace reducelab::model {
namespace {

const std::vector<int> kBlocks = {64, 128, 256, 512, 1024};

const StepStats& step_named(const RungModel& rung, const std::string& label) {
  for (const StepStats& step : rung.steps)
    if (step.label == label) return step;
  ADD_FAILURE() << rung.id << " at B = " << rung.block << " has no step '" << label << "'";
  static const StepStats missing{};
  return missing;
}

std::vector<const StepStats*> steps_of_kind(const RungModel& rung, StepKind kind) {
  std::vector<const StepStats*> out;
  for (const StepStats& step : rung.steps)
    if (step.kind == kind) out.push_back(&step);
  return out;
}

int log2_of(int value) {
  int power = 0;
  while ((1 << power) < value) ++power;
  return power;
}

// ---- bank_conflict_degree -----------------------------------------------------------------

TEST(BankConflictDegree, NoLanesIsZero) { EXPECT_EQ(bank_conflict_degree({}), 0); }

TEST(BankConflictDegree, BroadcastOfOneWordCountsOnce) {
  EXPECT_EQ(bank_conflict_degree(std::vector<std::int64_t>(32, 0)), 1);
  EXPECT_EQ(bank_conflict_degree(std::vector<std::int64_t>(32, 77)), 1);
}

TEST(BankConflictDegree, TwoWordsInOneBankAreTwoWay) {
  EXPECT_EQ(bank_conflict_degree({0, 32}), 2);
  EXPECT_EQ(bank_conflict_degree({5, 37}), 2);
  EXPECT_EQ(bank_conflict_degree({0, 1}), 1);  // different banks
}

TEST(BankConflictDegree, ConsecutiveWordsAreConflictFree) {
  std::vector<std::int64_t> words;
  for (int lane = 0; lane < 32; ++lane) words.push_back(lane + 5);  // any offset: 32 banks
  EXPECT_EQ(bank_conflict_degree(words), 1);
}

TEST(BankConflictDegree, StridedWordsConflictByStride) {
  auto strided = [](int stride) {
    std::vector<std::int64_t> words;
    for (int lane = 0; lane < 32; ++lane) words.push_back(std::int64_t{lane} * stride);
    return words;
  };
  EXPECT_EQ(bank_conflict_degree(strided(2)), 2);
  EXPECT_EQ(bank_conflict_degree(strided(4)), 4);
  EXPECT_EQ(bank_conflict_degree(strided(32)), 32);
  EXPECT_EQ(bank_conflict_degree(strided(33)), 1);  // odd strides cover all banks
  // Duplicates count once; the worst bank decides.
  EXPECT_EQ(bank_conflict_degree({0, 32, 32, 64, 1, 2}), 3);
  EXPECT_EQ(bank_conflict_degree({-32, 0}), 2);
}

// ---- V0: divergence -----------------------------------------------------------------------

TEST(ModelV0, ArticleLaneUtilisationAtSteps1And2) {
  const RungModel v0 = model_rung("V0", 256);
  const StepStats& step1 = step_named(v0, "s=1");
  EXPECT_EQ(step1.active_threads, 128);
  EXPECT_EQ(step1.warps_executing, 8);
  EXPECT_EQ(step1.min_active_lanes, 16);
  EXPECT_EQ(step1.max_active_lanes, 16);
  EXPECT_DOUBLE_EQ(step1.lane_utilisation, 0.5);
  EXPECT_EQ(step1.divergent_warps, 8);

  const StepStats& step2 = step_named(v0, "s=2");
  EXPECT_EQ(step2.active_threads, 64);
  EXPECT_EQ(step2.warps_executing, 8);
  EXPECT_EQ(step2.min_active_lanes, 8);
  EXPECT_EQ(step2.max_active_lanes, 8);
  EXPECT_DOUBLE_EQ(step2.lane_utilisation, 0.25);
  EXPECT_EQ(step2.divergent_warps, 8);
}

TEST(ModelV0, EveryStepDivergesButNoneConflicts) {
  for (int block : kBlocks) {
    const RungModel v0 = model_rung("V0", block);
    EXPECT_EQ(v0.reduction_steps, log2_of(block)) << block;
    EXPECT_EQ(v0.divergent_steps, v0.reduction_steps) << block;
    EXPECT_EQ(v0.max_bank_conflict_degree, 1) << block;
  }
  // Past step 16 whole warps drop out: tid % 64 == 0 leaves warps 0, 2, 4, 6 with one lane each.
  const StepStats& step32 = step_named(model_rung("V0", 256), "s=32");
  EXPECT_EQ(step32.warps_executing, 4);
  EXPECT_EQ(step32.active_threads, 4);
  EXPECT_DOUBLE_EQ(step32.lane_utilisation, 1.0 / 32);
  EXPECT_DOUBLE_EQ(model_rung("V0", 256).mean_lane_utilisation, 106.25 / 100 / 8);
}

// ---- V1: bank conflicts, divergence only in warp 0 -------------------------------------

TEST(ModelV1, ArticleBankConflictsAtS1To4) {
  const RungModel v1 = model_rung("V1", 256);
  EXPECT_EQ(step_named(v1, "s=1").bank_conflict_degree, 2);
  EXPECT_EQ(step_named(v1, "s=2").bank_conflict_degree, 4);
  EXPECT_EQ(step_named(v1, "s=4").bank_conflict_degree, 8);
  // The rest of the tree: fewer active lanes, still 32-word strides inside warp 0.
  EXPECT_EQ(step_named(v1, "s=8").bank_conflict_degree, 8);
  EXPECT_EQ(step_named(v1, "s=16").bank_conflict_degree, 8);
  EXPECT_EQ(step_named(v1, "s=32").bank_conflict_degree, 4);
  EXPECT_EQ(step_named(v1, "s=64").bank_conflict_degree, 2);
  EXPECT_EQ(step_named(v1, "s=128").bank_conflict_degree, 1);
  EXPECT_EQ(v1.max_bank_conflict_degree, 8);
}

TEST(ModelV1, DivergesOnlyInWarp0OnceFewerThan32ThreadsWork) {
  for (int block : kBlocks) {
    const RungModel v1 = model_rung("V1", block);
    for (const StepStats* step : steps_of_kind(v1, StepKind::smem_tree)) {
      if (step->active_threads >= 32) {
        EXPECT_EQ(step->divergent_warps, 0) << block << " " << step->label;
        EXPECT_DOUBLE_EQ(step->lane_utilisation, 1.0) << block << " " << step->label;
      } else {
        EXPECT_EQ(step->divergent_warps, 1) << block << " " << step->label;
        EXPECT_EQ(step->warps_executing, 1) << block << " " << step->label;
      }
    }
    EXPECT_EQ(v1.divergent_steps, 5) << block;  // "only the last 5 rounds, all in warp 0"
  }
}

TEST(ModelV1, WorstConflictIsBlockOver32) {
  // Warp 0's 32 lanes at stride 2s reach at most B/32 words of one bank.
  for (int block : kBlocks)
    EXPECT_EQ(model_rung("V1", block).max_bank_conflict_degree, block / 32) << block;
}

// ---- V2/V3: no conflicts, no divergence while s >= 32 ------------------------------------

TEST(ModelV2, ConflictFreeAtEveryStep) {
  for (const char* id : {"V2", "V3"}) {
    for (int block : kBlocks) {
      const RungModel rung = model_rung(id, block);
      for (const StepStats& step : rung.steps)
        EXPECT_EQ(step.bank_conflict_degree, 1) << id << " " << block << " " << step.label;
    }
  }
}

TEST(ModelV2, NoDivergentWarpsWhileStrideAtLeast32) {
  for (int block : kBlocks) {
    const RungModel v2 = model_rung("V2", block);
    for (int s = block / 2; s >= 32; s /= 2)
      EXPECT_EQ(step_named(v2, "s=" + std::to_string(s)).divergent_warps, 0) << block << " " << s;
    for (int s = 16; s >= 1; s /= 2)
      EXPECT_EQ(step_named(v2, "s=" + std::to_string(s)).divergent_warps, 1) << block << " " << s;
    EXPECT_EQ(v2.divergent_steps, 5) << block;
  }
}

TEST(ModelV2, SameLaneUseAsV1FewerConflicts) {
  // The article's point: V1 -> V2 changes the addresses, not how many lanes work.
  const RungModel v1 = model_rung("V1", 256);
  const RungModel v2 = model_rung("V2", 256);
  EXPECT_DOUBLE_EQ(v1.mean_lane_utilisation, v2.mean_lane_utilisation);
  EXPECT_NEAR(v2.mean_lane_utilisation, 0.49609375, 1e-12);
  EXPECT_GT(v1.max_bank_conflict_degree, v2.max_bank_conflict_degree);
}

// ---- Barriers ------------------------------------------------------------------------------

TEST(ModelLadder, BarrierCountsPerRung) {
  // One after the load (V0..V5) plus one per smem tree step; V4/V5 stop the loop at s = 64;
  // V6/V7 have the single barrier of block_reduce.
  const std::vector<std::pair<int, std::vector<int>>> expected = {
      {256, {9, 9, 9, 9, 3, 3, 1, 1}},  // the article's block
      {64, {7, 7, 7, 7, 1, 1, 1, 1}},   // V4/V5: no loop step left before the tail
      {128, {8, 8, 8, 8, 2, 2, 1, 1}},
      {512, {10, 10, 10, 10, 4, 4, 1, 1}},
      {1024, {11, 11, 11, 11, 5, 5, 1, 1}},
  };
  for (const auto& [block, barriers] : expected) {
    const std::vector<RungModel> all = model_all(block);
    ASSERT_EQ(all.size(), 8u);
    for (std::size_t i = 0; i < all.size(); ++i)
      EXPECT_EQ(all[i].block_barriers, barriers[i]) << all[i].id << " at B = " << block;
  }
}

TEST(ModelLadder, LoadIsTheFirstStep) {
  for (const RungModel& rung : model_all(256)) {
    ASSERT_FALSE(rung.steps.empty());
    EXPECT_EQ(rung.steps.front().kind, StepKind::load) << rung.id;
    EXPECT_EQ(rung.steps.front().active_threads, 256) << rung.id;
    const bool to_smem = rung.id != "V6" && rung.id != "V7";
    EXPECT_EQ(rung.steps.front().block_barriers, to_smem ? 1 : 0) << rung.id;
    EXPECT_EQ(rung.steps.front().smem_stores, to_smem ? 1 : 0) << rung.id;
    EXPECT_EQ(rung.reduction_steps, static_cast<int>(rung.steps.size()) - 1) << rung.id;
    for (std::size_t i = 1; i < rung.steps.size(); ++i)
      EXPECT_NE(rung.steps[i].kind, StepKind::load) << rung.id;
  }
}

TEST(ModelLadder, ActiveThreadsMatchLaneUtilisation) {
  for (int block : kBlocks) {
    for (const RungModel& rung : model_all(block)) {
      for (const StepStats& step : rung.steps) {
        EXPECT_GE(step.warps_executing, 1) << rung.id << " " << step.label;
        EXPECT_LE(step.warps_executing, block / 32) << rung.id << " " << step.label;
        EXPECT_NEAR(step.lane_utilisation * 32 * step.warps_executing, step.active_threads, 1e-9)
            << rung.id << " " << step.label;
        EXPECT_LE(step.divergent_warps, step.warps_executing) << rung.id << " " << step.label;
      }
    }
  }
}

// ---- V4/V5: the warp tail --------------------------------------------------------------

TEST(ModelWarpTail, WholeWarp0NoBlockBarriers) {
  for (int block : kBlocks) {
    const RungModel v4 = model_rung("V4", block);
    const std::vector<const StepStats*> tail = steps_of_kind(v4, StepKind::warp_tail);
    ASSERT_EQ(tail.size(), 6u) << block;
    const std::vector<std::string> labels = {"warp tail +32", "warp tail +16", "warp tail +8",
                                             "warp tail +4",  "warp tail +2",  "warp tail +1"};
    const std::vector<int> warp_syncs = {2, 2, 2, 2, 2, 1};
    for (std::size_t i = 0; i < tail.size(); ++i) {
      EXPECT_EQ(tail[i]->label, labels[i]);
      EXPECT_EQ(tail[i]->block_barriers, 0) << tail[i]->label;
      EXPECT_EQ(tail[i]->warp_syncs, warp_syncs[i]) << tail[i]->label;
      EXPECT_EQ(tail[i]->active_threads, 32) << tail[i]->label;
      EXPECT_EQ(tail[i]->warps_executing, 1) << tail[i]->label;
      EXPECT_EQ(tail[i]->divergent_warps, 0) << tail[i]->label;
      EXPECT_EQ(tail[i]->bank_conflict_degree, 1) << tail[i]->label;
      EXPECT_EQ(tail[i]->smem_loads, i == 0 ? 2 : 1) << tail[i]->label;
      EXPECT_EQ(tail[i]->smem_stores, 1) << tail[i]->label;
    }
    EXPECT_EQ(v4.warp_syncs, 11) << block;
    // The loop before the tail stops at s = 64: log2(B) - 6 steps with a barrier each.
    EXPECT_EQ(static_cast<int>(steps_of_kind(v4, StepKind::smem_tree).size()), log2_of(block) - 6);
  }
}

TEST(ModelV5, SameStepsAsV4) {
  for (int block : kBlocks) {
    const RungModel v4 = model_rung("V4", block);
    const RungModel v5 = model_rung("V5", block);
    ASSERT_EQ(v4.steps.size(), v5.steps.size()) << block;
    for (std::size_t i = 0; i < v4.steps.size(); ++i) {
      const StepStats& a = v4.steps[i];
      const StepStats& b = v5.steps[i];
      EXPECT_EQ(a.label, b.label);
      EXPECT_EQ(a.active_threads, b.active_threads) << a.label;
      EXPECT_EQ(a.bank_conflict_degree, b.bank_conflict_degree) << a.label;
      EXPECT_EQ(a.block_barriers, b.block_barriers) << a.label;
      EXPECT_EQ(a.warp_syncs, b.warp_syncs) << a.label;
    }
    EXPECT_EQ(v4.block_barriers, v5.block_barriers) << block;
  }
}

// ---- V6/V7: shuffles, one slot per warp ------------------------------------------------

TEST(ModelV6, CrossWarpStepsAndShuffles) {
  for (int block : kBlocks) {
    const int warps = block / 32;
    const RungModel v6 = model_rung("V6", block);
    EXPECT_EQ(v6.reduction_steps, 12) << block;  // 5 shuffles, write, read, 5 shuffles

    const StepStats& write = step_named(v6, "warp partials to smem");
    EXPECT_EQ(write.active_threads, warps) << block;
    EXPECT_EQ(write.warps_executing, warps) << block;
    EXPECT_EQ(write.max_active_lanes, 1) << block;
    EXPECT_EQ(write.divergent_warps, warps) << block;
    EXPECT_EQ(write.block_barriers, 1) << block;
    EXPECT_EQ(write.bank_conflict_degree, 1) << block;

    const StepStats& read = step_named(v6, "warp 0 reads partials");
    EXPECT_EQ(read.active_threads, warps) << block;
    EXPECT_EQ(read.warps_executing, 1) << block;
    EXPECT_EQ(read.divergent_warps, warps < 32 ? 1 : 0) << block;  // B = 1024 fills warp 0
    EXPECT_EQ(read.block_barriers, 0) << block;

    const std::vector<const StepStats*> shuffles = steps_of_kind(v6, StepKind::shuffle);
    ASSERT_EQ(shuffles.size(), 10u) << block;
    for (std::size_t i = 0; i < shuffles.size(); ++i) {
      EXPECT_EQ(shuffles[i]->bank_conflict_degree, 0) << shuffles[i]->label;
      EXPECT_EQ(shuffles[i]->smem_loads + shuffles[i]->smem_stores, 0) << shuffles[i]->label;
      EXPECT_EQ(shuffles[i]->block_barriers, 0) << shuffles[i]->label;
      EXPECT_EQ(shuffles[i]->active_threads, i < 5 ? block : 32) << shuffles[i]->label;
    }
    EXPECT_EQ(v6.block_barriers, 1) << block;
    EXPECT_EQ(v6.divergent_steps, warps < 32 ? 2 : 1) << block;
  }
}

TEST(ModelV7, SameBlockReductionAsV6QuarterTheLoads) {
  const RungModel v6 = model_rung("V6", 256);
  const RungModel v7 = model_rung("V7", 256);
  ASSERT_EQ(v6.steps.size(), v7.steps.size());
  for (std::size_t i = 1; i < v6.steps.size(); ++i) {
    EXPECT_EQ(v6.steps[i].label, v7.steps[i].label);
    EXPECT_EQ(v6.steps[i].active_threads, v7.steps[i].active_threads);
  }
  EXPECT_DOUBLE_EQ(v6.global_loads_per_element, 1.0);
  EXPECT_DOUBLE_EQ(v7.global_loads_per_element, 0.25);
  EXPECT_EQ(model_rung("V0", 256).elements_per_thread, 1);
  EXPECT_EQ(model_rung("V3", 256).elements_per_thread, 2);
  EXPECT_EQ(v7.elements_per_thread, 8);
}

// ---- Grids -----------------------------------------------------------------------------

TEST(LaunchStats, ArticleSizeAt256) {
  const std::size_t n = std::size_t{1} << 27;
  const LaunchStats v0 = launch_stats(model_rung("V0", 256), n);
  EXPECT_EQ(v0.blocks, 524288u);
  EXPECT_EQ(v0.passes, 4);  // 524288 -> 2048 -> 8 -> 1
  EXPECT_FALSE(v0.grid_capped);

  const LaunchStats v3 = launch_stats(model_rung("V3", 256), n);
  EXPECT_EQ(v3.blocks, 262144u);
  EXPECT_EQ(v3.passes, 3);  // 262144 -> 256 -> 1

  const LaunchStats v7 = launch_stats(model_rung("V7", 256), n);  // 132 SMs x 8 blocks
  EXPECT_EQ(v7.full_grid, 1056u);
  EXPECT_EQ(v7.blocks, 1056u);
  EXPECT_TRUE(v7.grid_capped);
  EXPECT_EQ(v7.passes, 2);
  EXPECT_NEAR(v7.elements_per_thread, 134217728.0 / (1056.0 * 256.0), 1e-9);
}

TEST(LaunchStats, SmallOddSizesAndOtherMachines) {
  EXPECT_EQ(launch_stats(model_rung("V0", 256), 1).blocks, 1u);
  EXPECT_EQ(launch_stats(model_rung("V0", 256), 1).passes, 1);
  EXPECT_EQ(launch_stats(model_rung("V2", 256), (std::size_t{1} << 20) + 3).blocks, 4097u);
  EXPECT_EQ(launch_stats(model_rung("V5", 512), (std::size_t{1} << 20) + 3).blocks, 1025u);
  const LaunchStats small = launch_stats(model_rung("V7", 256), 1000);
  EXPECT_EQ(small.blocks, 1u);
  EXPECT_FALSE(small.grid_capped);
  EXPECT_EQ(launch_stats(model_rung("V7", 256), std::size_t{1} << 27, Machine{10, 4}).blocks, 40u);
  // blocks_per_sm = 0 derives 2048 / B resident blocks: 2 at B = 1024.
  EXPECT_EQ(launch_stats(model_rung("V7", 1024), std::size_t{1} << 27).full_grid, 264u);
  EXPECT_FALSE(launch_stats(model_rung("V0", 64), std::size_t{1} << 40).fits_grid);
  EXPECT_TRUE(launch_stats(model_rung("V7", 64), std::size_t{1} << 40).fits_grid);
}

TEST(LaunchStats, RejectsZeroAndBadMachines) {
  EXPECT_THROW(launch_stats(model_rung("V0", 256), 0), Error);
  EXPECT_THROW(launch_stats(model_rung("V7", 256), 100, Machine{0, 8}), Error);
  EXPECT_THROW(launch_stats(model_rung("V7", 256), 100, Machine{132, -1}), Error);
}

// ---- Errors and output -----------------------------------------------------------------

// ---- The registry is the model's source ---------------------------------------------------

TEST(ModelRegistry, OneModelPerRegistryRungFromItsData) {
  const std::vector<RungModel> all = model_all(256);
  ASSERT_EQ(all.size(), ladder::rungs().size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const ladder::Rung& rung = ladder::rungs()[i];
    EXPECT_EQ(all[i].id, rung.id);
    EXPECT_EQ(all[i].elements_per_thread, rung.elements_per_thread) << rung.id;
    EXPECT_DOUBLE_EQ(all[i].global_loads_per_element, 1.0 / rung.load_width) << rung.id;
    const RungModel by_id = model_rung(rung.id, 256);
    ASSERT_EQ(by_id.steps.size(), all[i].steps.size()) << rung.id;
    for (std::size_t s = 0; s < by_id.steps.size(); ++s)
      EXPECT_EQ(by_id.steps[s].label, all[i].steps[s].label) << rung.id;
  }
}

TEST(ModelRegistry, FirstPassGridMatchesTheKernels) {
  // The kernels' grid_for() sizes the workspace (two buffers of the first grid when it has more
  // than one block); V0..V6 need no device for it, so the model's grid can be checked against it.
  for (const ladder::Rung& rung : ladder::rungs()) {
    if (rung.grid != ladder::GridRule::cover) continue;
    for (std::size_t n :
         {std::size_t{1}, std::size_t{1000}, (std::size_t{1} << 20) + 3, std::size_t{1} << 27}) {
      const std::uint64_t blocks = launch_stats(model_rung(rung, rung.block_size), n).blocks;
      EXPECT_EQ(rung.workspace_elems(n), blocks > 1 ? 2 * blocks : 0) << rung.id << " n = " << n;
    }
  }
}

TEST(ModelErrors, UnknownRungOrBadBlock) {
  for (const char* id : {"V8", "", "X1", "V10", "all"}) {
    try {
      model_rung(id, 256);
      ADD_FAILURE() << "'" << id << "' was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("expected one of: V0 V1"), std::string::npos)
          << e.what();
    }
  }
  for (int block : {0, 32, 96, 100, 2048, -256})
    EXPECT_THROW(model_rung("V2", block), Error) << block;
  EXPECT_EQ(model_rung("v3", 128).id, "V3");
  EXPECT_EQ(model_all(512).size(), 8u);
}

TEST(RenderMarkdown, V1TableRows) {
  const std::string text = render_markdown(model_rung("V1", 256), std::size_t{1} << 27);
  EXPECT_NE(text.find("| s=1 | 128 | 4 | 32/32 | 100% | 0 | 2/1 | 2-way | 1 | 0 |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| s=8 | 16 | 1 | 16/32 | 50% | 1 | 2/1 | 8-way | 1 | 0 |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| __syncthreads per block | 9 "), std::string::npos) << text;
  EXPECT_NE(text.find("524288 = ceil(n / 256)"), std::string::npos) << text;
  // Header, separator, the load and 8 tree steps.
  const std::size_t table_end = text.find("\n\n");
  ASSERT_NE(table_end, std::string::npos);
  EXPECT_EQ(std::count(text.begin(), text.begin() + static_cast<long>(table_end), '\n'), 10);
}

TEST(RenderMarkdown, OverviewHasOneRowPerRung) {
  const std::string text = render_overview_markdown(model_all(256), std::size_t{1} << 27);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 10);
  EXPECT_NE(text.find("| V1 | 8 | 9 | 0 | 49.6% | 5 | 8-way |"), std::string::npos) << text;
  EXPECT_NE(text.find("1056 (full GPU)"), std::string::npos) << text;
  EXPECT_EQ(format_count(std::size_t{1} << 27), "134217728 (2^27)");
  EXPECT_EQ(format_count(1000), "1000");
}

}  // namespace
}  // namespace reducelab::model

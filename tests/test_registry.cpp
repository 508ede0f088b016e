#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "ladder/ladder.hpp"
#include "reducelab/error.hpp"

namespace reducelab::ladder {
namespace {

TEST(Registry, EightRungsInOrderWithTheArticlesDescriptions) {
  const auto& all = rungs();
  ASSERT_EQ(all.size(), 8u);
  std::set<std::string> ids;
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(std::string(all[i].id), "V" + std::to_string(i));
    ids.insert(all[i].id);
    EXPECT_GT(std::string(all[i].name).size(), 3u);
    EXPECT_GT(std::string(all[i].change).size(), 3u);
    EXPECT_GT(std::string(all[i].bottleneck).size(), 3u);
    EXPECT_GT(std::string(all[i].preconditions).size(), 3u);
    EXPECT_NE(all[i].launch, nullptr);
    EXPECT_NE(all[i].workspace_elems, nullptr);
    EXPECT_EQ(all[i].block_size, 256);
  }
  EXPECT_EQ(ids.size(), 8u);
  EXPECT_EQ(all[0].elements_per_thread, 1);
  EXPECT_EQ(all[3].elements_per_thread, 2);
  EXPECT_EQ(all[7].elements_per_thread, 8);  // two float4 before the grid cap
}

TEST(Registry, WhatTheModelReadsOfEachRung) {
  const auto& all = rungs();
  const std::vector<TreeShape> trees = {TreeShape::modulo,
                                        TreeShape::interleaved,
                                        TreeShape::sequential,
                                        TreeShape::sequential,
                                        TreeShape::sequential_then_warp_tail,
                                        TreeShape::sequential_then_warp_tail,
                                        TreeShape::warp_shuffle,
                                        TreeShape::warp_shuffle};
  ASSERT_EQ(all.size(), trees.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].tree, trees[i]) << all[i].id;
    EXPECT_EQ(all[i].grid, i == 7 ? GridRule::resident : GridRule::cover) << all[i].id;
    EXPECT_EQ(all[i].load_width, i == 7 ? 4 : 1) << all[i].id;
    EXPECT_EQ(all[i].elements_per_thread % all[i].load_width, 0) << all[i].id;
  }
}

TEST(Registry, FindAndParseLists) {
  EXPECT_EQ(find_rung("v3"), &rungs()[3]);
  EXPECT_EQ(find_rung("V9"), nullptr);
  EXPECT_EQ(parse_rung_list("all").size(), 8u);
  const auto some = parse_rung_list("V7,v0,V7");
  ASSERT_EQ(some.size(), 2u);
  EXPECT_EQ(std::string(some[0]->id), "V7");
  EXPECT_EQ(std::string(some[1]->id), "V0");
  EXPECT_THROW(parse_rung_list("V1,V8"), Error);
  EXPECT_THROW(parse_rung_list(""), Error);
  EXPECT_EQ(&get_rung("v5"), &rungs()[5]);
  EXPECT_THROW(get_rung("all"), Error);
}

TEST(Registry, UnknownIdsSuggestAndListTheValidOnes) {
  try {
    parse_rung_list("V0,V33");
    ADD_FAILURE() << "V33 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()),
              "reducelab: unknown rung 'V33' (did you mean 'V3'?); expected one of: V0 V1 V2 V3 "
              "V4 V5 V6 V7 all");
  }
  try {
    get_rung("x");
    ADD_FAILURE() << "x was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "reducelab: unknown rung 'x'; expected one of: V0 V1 V2 V3 V4 V5 V6 V7");
  }
}

TEST(Registry, WorkspaceCoversEveryPass) {
  // V0..V6 need no GPU to size their grids (V7 asks the device for its occupancy).
  // V0: 2^27 floats -> 524288 partials -> 2048 -> 8 -> 1; ping-pong buffers of the first grid.
  EXPECT_EQ(rungs()[0].workspace_elems(std::size_t{1} << 27), 2u * 524288u);
  EXPECT_EQ(rungs()[3].workspace_elems(std::size_t{1} << 27), 2u * 262144u);
  EXPECT_EQ(rungs()[0].workspace_elems(256), 0u);  // one block: straight to the output
  EXPECT_EQ(rungs()[0].workspace_elems(257), 4u);
  EXPECT_EQ(rungs()[6].workspace_elems(513), 4u);
}

TEST(Registry, SupportsTheLaddersFourOps) {
  EXPECT_TRUE(supports(Op::sum));
  EXPECT_TRUE(supports(Op::dot));
  EXPECT_FALSE(supports(Op::argmin));
  EXPECT_FALSE(supports(static_cast<Op>(99)));
  for (Op op : kAllOps) EXPECT_EQ(supports(op), info(op).in_ladder) << to_string(op);
  EXPECT_EQ(supported_ops_text(), "sum, min, max and dot");
}

}  // namespace
}  // namespace reducelab::ladder

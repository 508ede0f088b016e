// The axis reduce's planner (src/reduce/axis_plan.hpp) on the CPU: the canonical form (size-1
// axes dropped, contiguous runs merged, kept axes ordered by stride, reduced axes kept in view
// order for argmin/argmax), the path each shape takes, the strided kernel's shape and splits,
// the extents the pointer checks use, and every layout error.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/axis_reference.hpp"
#include "reduce/axis_plan.hpp"
#include "reduce/reproducible_strided.hpp"
#include "reducelab/axis.hpp"
#include "reducelab/error.hpp"

namespace reducelab::detail {
namespace {

constexpr unsigned kResident = 1056;      // 132 SMs x 8 blocks of 256 threads (H200)
constexpr std::uint64_t kCapacity = 131072;  // 512 KB of 4-byte partials
constexpr unsigned kGroups = 8192;

AxisView canon(const Layout& x, AxisMask axes, bool positions = false,
               const Layout* out = nullptr) {
  return canonicalize_axes(x, axes, out, positions);
}

TEST(AxisPlan, ContiguousRowsAreTheSegmentedPath) {
  const AxisView v = canon(Layout::contiguous({4194304, 32}), axis_mask({1}));
  EXPECT_EQ(plan_path(v), AxisPath::rows);
  const AxisRows rows = rows_of(v);
  EXPECT_EQ(rows.rows, 4194304u);
  EXPECT_EQ(rows.length, 32u);
  EXPECT_EQ(rows.pitch, 32u);
  EXPECT_EQ(rows.out_stride, 1u);
  EXPECT_EQ(v.x_extent, 4194304u * 32u);
  EXPECT_EQ(v.out_extent, 4194304u);
}

TEST(AxisPlan, LastAxisOfABatchMergesTheKeptAxes) {
  const AxisView v = canon(Layout::contiguous({8, 16, 100}), axis_mask({-1}, 3));
  EXPECT_EQ(plan_path(v), AxisPath::rows);
  EXPECT_EQ(rows_of(v).rows, 128u);
  EXPECT_EQ(rows_of(v).pitch, 100u);
}

TEST(AxisPlan, SlicedRowsKeepTheirPitchAndAStridedOutputItsStride) {
  const Layout x = Layout::strided({1000, 33}, {40, 1});  // x[:, :33] of a 1000 x 40 array
  const Layout out = Layout::strided({1000, 1}, {3, 1});  // keepdim, every third result
  const AxisView v = canon(x, axis_mask({1}), false, &out);
  ASSERT_EQ(plan_path(v), AxisPath::rows);
  EXPECT_EQ(rows_of(v).pitch, 40u);
  EXPECT_EQ(rows_of(v).out_stride, 3u);
  EXPECT_EQ(v.x_extent, 999u * 40u + 33u);
  EXPECT_EQ(v.out_extent, 999u * 3u + 1u);
}

TEST(AxisPlan, EverythingContiguousIsTheScalarPath) {
  EXPECT_EQ(plan_path(canon(Layout::contiguous({64, 32, 8}), axis_mask({0, 1, 2}))),
            AxisPath::scalar);
  // A single element, with a mask that reduces it.
  EXPECT_EQ(plan_path(canon(Layout::contiguous({1, 1}), axis_mask({0, 1}))), AxisPath::scalar);
  // Size-1 axes kept or reduced do not matter.
  EXPECT_EQ(plan_path(canon(Layout::contiguous({1, 4096, 1}), axis_mask({1}))), AxisPath::scalar);
}

TEST(AxisPlan, ATransposedFullReductionIsContiguousUnlessPositionsMatter) {
  const Layout transposed = Layout::strided({300, 200}, {1, 300});
  EXPECT_EQ(plan_path(canon(transposed, axis_mask({0, 1}))), AxisPath::scalar);
  // argmin's index is row-major over the view's axes: the reduced axes keep their order.
  const AxisView arg = canon(transposed, axis_mask({0, 1}), true);
  EXPECT_EQ(plan_path(arg), AxisPath::strided);
  ASSERT_EQ(arg.reduced_rank, 2);
  EXPECT_EQ(arg.reduced_in[0], 1);
  EXPECT_EQ(arg.reduced_in[1], 300);
}

TEST(AxisPlan, ColumnsAreTheStridedKernelReadingAlongTheKeptAxis) {
  const AxisView v = canon(Layout::contiguous({131072, 1024}), axis_mask({0}));
  ASSERT_EQ(plan_path(v), AxisPath::strided);
  ASSERT_EQ(v.kept_rank, 1);
  EXPECT_EQ(v.kept_in[0], 1);
  EXPECT_EQ(v.reduced_in[0], 1024);
  const AxisKernelShape s = plan_strided(v, kResident, kCapacity, kGroups);
  EXPECT_FALSE(s.reduced_major);
  EXPECT_EQ(s.columns, kAxisColumns);
  EXPECT_EQ(s.columns * s.lanes, kAxisBlock);
  EXPECT_EQ(s.grid, 1024u / kAxisColumns);
  // Few result blocks: the reduced axis is split until the GPU is full, in one wave.
  EXPECT_LE(static_cast<std::uint64_t>(s.grid) * s.splits, kResident);
  EXPECT_GT(static_cast<std::uint64_t>(s.grid) * (s.splits + 1), kResident);
  EXPECT_LE(static_cast<std::uint64_t>(s.grid) * s.columns * s.splits, kCapacity);
  EXPECT_GE(static_cast<std::uint64_t>(s.splits) * s.chunk, v.reduced);
  EXPECT_LT(static_cast<std::uint64_t>(s.splits - 1) * s.chunk, v.reduced);
}

TEST(AxisPlan, AlignedColumnsAreReadFourAtATime) {
  const AxisView v = canon(Layout::contiguous({32768, 4096}), axis_mask({0}));
  EXPECT_EQ(vector_columns_width(v, 4, true), 4u);
  EXPECT_EQ(vector_columns_width(v, 2, true), 8u);
  EXPECT_EQ(vector_columns_width(v, 4, false), 1u);  // base not aligned
  const AxisKernelShape s = plan_strided(v, kResident, kCapacity, kGroups, 4);
  EXPECT_EQ(s.width, 4u);
  EXPECT_EQ(s.columns, kAxisColumns);
  EXPECT_EQ(s.grid, 4096u / (kAxisColumns * 4));
  EXPECT_LE(static_cast<std::uint64_t>(s.grid) * s.columns * 4 * s.splits, kCapacity);
  // Columns not a multiple of the vector, rows not on 16-byte boundaries, or a strided kept
  // axis: one result per thread.
  EXPECT_EQ(vector_columns_width(canon(Layout::contiguous({100, 6}), axis_mask({0})), 4, true), 1u);
  EXPECT_EQ(vector_columns_width(canon(Layout::strided({100, 8}, {9, 1}), axis_mask({0})), 4, true),
            1u);
  EXPECT_EQ(vector_columns_width(canon(Layout::strided({100, 8}, {16, 2}), axis_mask({0})), 4, true),
            1u);
}

TEST(AxisPlan, ManyColumnsNeedNoSplit) {
  const AxisView v = canon(Layout::contiguous({32, 4194304}), axis_mask({0}));
  const AxisKernelShape s = plan_strided(v, kResident, kCapacity, kGroups);
  EXPECT_EQ(s.splits, 1u);
  EXPECT_EQ(s.chunk, 32u);
  // 32 rows: 2 lanes per result read 16 each (kAxisMinPerThread), 128 results per block.
  EXPECT_EQ(s.lanes, 2u);
  EXPECT_EQ(s.columns, kAxisBlock / 2);
  EXPECT_EQ(s.grid, 4194304u / (kAxisBlock / 2));
  // Long columns keep kAxisColumns results per block.
  const AxisView tall = canon(Layout::contiguous({4096, 4194304}), axis_mask({0}));
  EXPECT_EQ(plan_strided(tall, kResident, kCapacity, kGroups).columns, kAxisColumns);
  // Few results: never more results per block than there are.
  const AxisView few = canon(Layout::contiguous({8, 64}), axis_mask({0}));
  const AxisKernelShape f = plan_strided(few, kResident, kCapacity, kGroups);
  EXPECT_EQ(f.columns, 64u);
  EXPECT_EQ(f.columns * f.lanes, kAxisBlock);
}

TEST(AxisPlan, TwoColumnsSplitAsFarAsTheWorkAllows) {
  const AxisView v = canon(Layout::contiguous({1 << 26, 2}), axis_mask({0}));
  const AxisKernelShape s = plan_strided(v, kResident, kCapacity, kGroups);
  EXPECT_EQ(s.columns, 2u);
  EXPECT_EQ(s.lanes, 128u);
  EXPECT_EQ(s.grid, 1u);
  EXPECT_EQ(s.splits, kResident);
  // Short columns: no thread gets fewer than kAxisMinPerThread elements from a split.
  const AxisView short_columns = canon(Layout::contiguous({4096, 2}), axis_mask({0}));
  const AxisKernelShape t = plan_strided(short_columns, kResident, kCapacity, kGroups);
  EXPECT_EQ(t.splits, 4096u / (128u * kAxisMinPerThread));
  // And never more partials than the workspace holds.
  const AxisKernelShape u = plan_strided(v, kResident, 100, kGroups);
  EXPECT_EQ(u.splits, 50u);
  // 128 columns: one block of 128 results, folded by 2 threads each, so at most 2 x
  // kAxisMaxFoldBytes of partials per thread whatever the GPU and the workspace hold: var's
  // 20-byte partials 2 x 102 splits, a float sum's as many as the GPU holds.
  const AxisView wide = canon(Layout::contiguous({1 << 20, 128}), axis_mask({0}));
  const AxisKernelShape w = plan_strided(wide, 528, 1 << 20, kGroups, 4, 1, 20);
  EXPECT_EQ(w.grid, 1u);
  EXPECT_EQ(w.splits, 2 * (kAxisMaxFoldBytes / 20));
  EXPECT_EQ(plan_strided(wide, 660, 1 << 20, kGroups, 4, 1, 4).splits, 660u);
}

TEST(AxisPlan, AMiddleAxisKeepsTwoAxesAndReadsAlongTheInnerOne) {
  const AxisView v = canon(Layout::contiguous({16, 1000, 64}), axis_mask({1}));
  ASSERT_EQ(plan_path(v), AxisPath::strided);
  ASSERT_EQ(v.kept_rank, 2);
  EXPECT_EQ(v.kept_in[0], 64000);
  EXPECT_EQ(v.kept_in[1], 1);
  EXPECT_EQ(v.kept_out[0], 64);
  EXPECT_EQ(v.kept_out[1], 1);
  EXPECT_EQ(v.outputs, 1024u);
  EXPECT_EQ(v.reduced, 1000u);
}

TEST(AxisPlan, RowsThatDoNotMergeAreReadByLanesTogether) {
  // x[:, :, :50] of an 8 x 16 x 64 array, reducing the last axis: the kept axes do not merge.
  const AxisView v = canon(Layout::strided({8, 16, 50}, {2048, 64, 1}), axis_mask({2}));
  ASSERT_EQ(plan_path(v), AxisPath::strided);
  const AxisKernelShape s = plan_strided(v, kResident, kCapacity, kGroups);
  EXPECT_TRUE(s.reduced_major);
  EXPECT_EQ(s.lanes, 64u);
  EXPECT_EQ(s.columns, 4u);
}

TEST(AxisPlan, OuterAndInnerAxesReducedKeepTwoReducedAxes) {
  const AxisView v = canon(Layout::contiguous({5, 7, 9}), axis_mask({0, 2}));
  EXPECT_EQ(plan_path(v), AxisPath::strided);
  EXPECT_EQ(v.reduced_rank, 2);
  EXPECT_EQ(v.reduced, 45u);
  EXPECT_EQ(v.outputs, 7u);
}

TEST(AxisPlan, NonAdjacentReducedAxesReadWholeVectorsOfTheirRuns) {
  // 512 x 256 x 1,024 over axes 0 and 2: 256 results, each 512 runs of 1,024 contiguous elements
  // (262,144 apart). Every run starts on a 16-byte boundary for any element size.
  const AxisView v = canon(Layout::contiguous({512, 256, 1024}), axis_mask({0, 2}));
  ASSERT_EQ(plan_path(v), AxisPath::strided);
  ASSERT_EQ(v.reduced_rank, 2);
  EXPECT_TRUE(reads_reduced_major(v));
  EXPECT_EQ(reduced_vector_width(v, 4, true), 4u);
  EXPECT_EQ(reduced_vector_width(v, 2, true), 8u);
  EXPECT_EQ(reduced_vector_width(v, 8, true), 2u);
  EXPECT_EQ(reduced_vector_width(v, 4, false), 1u);  // a misaligned base: element loads
  const AxisKernelShape s = plan_strided(v, 660, kCapacity * 4, kGroups, 1, 4);
  EXPECT_TRUE(s.reduced_major);
  EXPECT_EQ(s.reduced_width, 4u);
  EXPECT_EQ(s.steps, 512u * 1024 / 4);
  EXPECT_EQ(s.lanes, 256u);
  EXPECT_EQ(s.columns, 1u);
  EXPECT_EQ(s.grid, 256u);
  EXPECT_EQ(s.splits, 2u);  // at most one wave: 660 / 256 blocks
  EXPECT_EQ(s.chunk, s.steps / 2);
  // The kernel's view counts the inner axis in vectors, four elements apart.
  const AxisView runs = vector_runs_view(v, 4);
  EXPECT_EQ(runs.reduced_sizes[0], 512);
  EXPECT_EQ(runs.reduced_in[0], 262144);
  EXPECT_EQ(runs.reduced_sizes[1], 256);
  EXPECT_EQ(runs.reduced_in[1], 4);
  EXPECT_EQ(runs.reduced, v.reduced);  // the count the results divide by stays the elements'
  EXPECT_EQ(vector_runs_view(v, 1).reduced_sizes[1], 1024);

  // BatchNorm's axes of NCHW (0, 2, 3): H and W merge into one run of 4,096.
  const AxisView nchw = canon(Layout::contiguous({32, 256, 64, 64}), axis_mask({0, 2, 3}));
  ASSERT_EQ(nchw.reduced_rank, 2);
  EXPECT_EQ(nchw.reduced_sizes[1], 4096);
  EXPECT_EQ(reduced_vector_width(nchw, 4, true), 4u);

  // Runs that are not whole vectors, or start off a 16-byte boundary: element loads.
  EXPECT_EQ(reduced_vector_width(canon(Layout::contiguous({8, 16, 1022}), axis_mask({0, 2})), 4,
                                 true),
            1u);
  EXPECT_EQ(reduced_vector_width(
                canon(Layout::strided({8, 16, 64}, {1030, 64, 1}), axis_mask({0, 2})), 4, true),
            1u);  // the outer stride 1,030 is no multiple of 4
  EXPECT_EQ(reduced_vector_width(
                canon(Layout::strided({8, 16, 64}, {1024, 66, 1}), axis_mask({0, 2})), 4, true),
            1u);  // the kept stride 66 is none either
  EXPECT_EQ(reduced_vector_width(canon(Layout::contiguous({8, 16, 64}), axis_mask({0, 2})), 8,
                                 true),
            2u);
  // Columns are not read reduced-major: the plan ignores a run width there.
  const AxisView columns = canon(Layout::contiguous({4096, 64}), axis_mask({0}));
  EXPECT_FALSE(reads_reduced_major(columns));
  const AxisKernelShape c = plan_strided(columns, kResident, kCapacity, kGroups, 1, 4);
  EXPECT_EQ(c.reduced_width, 1u);
  EXPECT_EQ(c.steps, 4096u);
}

TEST(AxisPlan, ManyResultsTakeFewerLanesToFitOneWave) {
  // The middle axis of 512 x 256 x 1,024: 131,072 groups of 4 columns, 256 rows. 8 lanes would
  // be 4,096 blocks; one lane per group is 512, within the 660 an H200 holds.
  const AxisView mid = canon(Layout::contiguous({512, 256, 1024}), axis_mask({1}));
  const AxisKernelShape m = plan_strided(mid, 660, kCapacity, kGroups, 4);
  EXPECT_EQ(m.lanes, 1u);
  EXPECT_EQ(m.columns, 256u);
  EXPECT_EQ(m.grid, 512u);
  EXPECT_EQ(m.splits, 1u);
  // 512 x 262,144 over axis 0: 2 lanes, 512 blocks.
  const AxisView wide = canon(Layout::contiguous({512, 262144}), axis_mask({0}));
  const AxisKernelShape w = plan_strided(wide, 660, kCapacity, kGroups, 4);
  EXPECT_EQ(w.lanes, 2u);
  EXPECT_EQ(w.grid, 512u);
  // 32 x 4,194,304: even one lane needs 4,096 blocks; the short-columns rule's 2 lanes stay.
  const AxisView tall = canon(Layout::contiguous({32, 4194304}), axis_mask({0}));
  const AxisKernelShape t = plan_strided(tall, 660, kCapacity, kGroups, 4);
  EXPECT_EQ(t.lanes, 2u);
  // Fewer blocks than the GPU holds: unchanged, the reduced axis is split instead.
  const AxisView few = canon(Layout::contiguous({32768, 4096}), axis_mask({0}));
  const AxisKernelShape f = plan_strided(few, 660, kCapacity, kGroups, 4);
  EXPECT_EQ(f.lanes, 8u);
  EXPECT_GT(f.splits, 1u);
}

TEST(AxisPlan, RowsThatDoNotMergeReadVectorsWhenAligned) {
  // x[:, :, :48] of an 8 x 16 x 64 array, reducing the last axis: 12 vectors of f32 per row.
  const AxisView v = canon(Layout::strided({8, 16, 48}, {1024, 64, 1}), axis_mask({2}));
  ASSERT_EQ(reduced_vector_width(v, 4, true), 4u);
  const AxisKernelShape s = plan_strided(v, kResident, kCapacity, kGroups, 1, 4);
  EXPECT_TRUE(s.reduced_major);
  EXPECT_EQ(s.steps, 12u);
  EXPECT_EQ(s.lanes, 16u);
  EXPECT_EQ(s.columns, 16u);
}

TEST(AxisPlan, ZeroSizes) {
  // A kept axis of size 0: no results, nothing read.
  const AxisView none = canon(Layout::contiguous({0, 5}), axis_mask({1}));
  EXPECT_EQ(plan_path(none), AxisPath::nothing);
  EXPECT_EQ(none.x_extent, 0u);
  EXPECT_EQ(none.out_extent, 0u);
  // A reduced axis of size 0: every result is empty, nothing is read.
  const AxisView empty = canon(Layout::contiguous({5, 0}), axis_mask({1}));
  EXPECT_EQ(plan_path(empty), AxisPath::strided);
  EXPECT_EQ(empty.x_extent, 0u);
  EXPECT_EQ(empty.out_extent, 5u);
  EXPECT_EQ(plan_strided(empty, kResident, kCapacity, kGroups).splits, 1u);
}

TEST(AxisPlan, NoAxisReducedIsOneResultPerElement) {
  const AxisView v = canon(Layout::contiguous({3, 4}), 0);
  EXPECT_EQ(plan_path(v), AxisPath::strided);
  EXPECT_EQ(v.outputs, 12u);
  EXPECT_EQ(v.reduced, 1u);
}

TEST(AxisPlan, BroadcastAxes) {
  // A row repeated 1000 times (stride 0): rows with pitch 0.
  const AxisView v = canon(Layout::strided({1000, 64}, {0, 1}), axis_mask({1}));
  ASSERT_EQ(plan_path(v), AxisPath::rows);
  EXPECT_EQ(rows_of(v).pitch, 0u);
  EXPECT_EQ(v.x_extent, 64u);
}

TEST(AxisPlan, Errors) {
  auto expect_invalid = [](auto call, const char* text) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one mentioning " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  Layout nine;
  nine.rank = 9;
  expect_invalid([&] { canon(nine, 1); }, "rank 9");
  expect_invalid([&] { canon(Layout::strided({4, 4}, {-4, 1}), 1); }, "negative stride");
  Layout negative = Layout::contiguous({4, 4});
  negative.sizes[1] = -1;
  expect_invalid([&] { canon(negative, 1); }, "negative size");
  expect_invalid([&] { canon(Layout::contiguous({4, 4}), axis_mask({2})); }, "axis 2");
  const Layout wrong_rank = Layout::contiguous({4, 4, 4});
  expect_invalid([&] { canon(Layout::contiguous({4, 4}), 1, false, &wrong_rank); }, "rank 3");
  const Layout wrong_size = Layout::contiguous({5});
  expect_invalid([&] { canon(Layout::contiguous({4, 4}), 1, false, &wrong_size); }, "size 5");
  const Layout keepdim_wrong = Layout::contiguous({2, 4});
  expect_invalid([&] { canon(Layout::contiguous({4, 4}), 1, false, &keepdim_wrong); },
                 "size 1 in a keepdim");
  const Layout zero_stride = Layout::strided({4}, {0});
  expect_invalid([&] { canon(Layout::contiguous({4, 4}), 2, false, &zero_stride); }, "stride 0");
  expect_invalid([&] { canon(Layout::strided({4, 4}, {std::int64_t{1} << 62, 1}), 1); },
                 "exceeds 2^62");
  expect_invalid([] { (void)axis_mask({1, 1}); }, "twice");
  expect_invalid([] { (void)axis_mask({-1}); }, "give the rank");
  expect_invalid([] { (void)axis_mask({3}, 3); }, "outside [-3, 3)");
  expect_invalid([] { (void)Layout::strided({1, 2}, {1}); }, "2 sizes but 1 strides");
}

TEST(AxisPlan, ReducedLayout) {
  const Layout x = Layout::contiguous({2, 3, 4});
  const Layout dropped = reduced_layout(x, axis_mask({1}), false);
  ASSERT_EQ(dropped.rank, 2);
  EXPECT_EQ(dropped.sizes[0], 2);
  EXPECT_EQ(dropped.sizes[1], 4);
  EXPECT_EQ(dropped.strides[0], 4);
  EXPECT_EQ(dropped.strides[1], 1);
  const Layout kept = reduced_layout(x, axis_mask({1}), true);
  ASSERT_EQ(kept.rank, 3);
  EXPECT_EQ(kept.sizes[1], 1);
  EXPECT_EQ(kept.strides[0], 4);
  EXPECT_EQ(Layout::contiguous({2, 3, 4}).count(), 24);
  EXPECT_EQ(Layout{}.count(), 1);
}

// ---- the gpu_to_gpu mode's strided gather (reproducible_strided.hpp) --------------------------

// The gather's map puts every result's reduced elements where the axis reference walks them:
// result r (the canonical order) lies at output offset j, a row-major index of the view's kept
// axes, and its k-th element is the reference's k-th (row-major over the reduced axes, the order
// the gpu_to_gpu mode fixes), for columns, a middle axis, transposed, sliced and broadcast views.
TEST(StridedMap, WalksEachResultInTheReferenceOrder) {
  struct Case {
    Layout x;
    AxisMask axes;
  };
  const Case cases[] = {
      {Layout::contiguous({300, 7}), axis_mask({0})},                      // columns
      {Layout::contiguous({6, 5, 77}), axis_mask({1})},                    // a middle axis
      {Layout::contiguous({6, 5, 77}), axis_mask({0, 2})},                 // both ends
      {Layout::strided({40, 30}, {1, 40}), axis_mask({1})},                // a transposed view
      {Layout::strided({9, 3, 11}, {400, 0, 3}), axis_mask({0, 2})},      // broadcast, sliced
      {Layout::contiguous({3, 4, 5, 6}), axis_mask({0, 2})},               // rank 4
      {Layout::strided({12, 10}, {20, 1}), axis_mask({0})},                // sliced columns
      {Layout::strided({5, 8}, {1, 5}), axis_mask({0, 1})},                // all of a transpose
  };
  for (const Case& c : cases) {
    const std::string what = "case " + std::to_string(&c - cases);
    const AxisView view = canon(c.x, c.axes, true);
    ASSERT_EQ(plan_path(view), AxisPath::strided) << what;
    const StridedMap map = StridedMap::of(view);
    AxisMask kept = 0;
    for (int k = 0; k < c.x.rank; ++k)
      if (((c.axes >> k) & 1u) == 0) kept |= AxisMask{1} << k;
    const std::vector<std::int64_t> results = bench::axis_offsets(c.x, kept);
    const std::vector<std::int64_t> elements = bench::axis_offsets(c.x, c.axes);
    ASSERT_EQ(results.size(), view.outputs);
    ASSERT_EQ(elements.size(), view.reduced);
    std::vector<bool> seen(results.size(), false);
    for (std::uint64_t r = 0; r < view.outputs; ++r) {
      const std::int64_t j = map.result_out(r);  // a contiguous output: the row-major index
      ASSERT_TRUE(j >= 0 && j < static_cast<std::int64_t>(results.size())) << what;
      EXPECT_FALSE(seen[static_cast<std::size_t>(j)]) << what << " result " << r;
      seen[static_cast<std::size_t>(j)] = true;
      EXPECT_EQ(map.result_in(r), results[static_cast<std::size_t>(j)]) << what;
    }
    for (std::uint64_t k = 0; k < view.reduced; ++k)
      EXPECT_EQ(map.reduced_at(k), elements[k]) << what << " element " << k;
  }
}

// Results one stride apart in the output go in place; other outputs through scratch.
TEST(StridedMap, OutStepAndReadDirection) {
  const AxisView columns = canon(Layout::contiguous({300, 7}), axis_mask({0}), true);
  EXPECT_EQ(StridedMap::of(columns).out_step(), 1);
  EXPECT_TRUE(StridedMap::of(columns).reads_along_results());
  const Layout spaced = Layout::strided({7}, {3});
  EXPECT_EQ(StridedMap::of(canon(Layout::contiguous({300, 7}), axis_mask({0}), true, &spaced))
                .out_step(),
            3);
  // A middle axis into a transposed output: the kept axes are no row-major chain there.
  const Layout transposed = Layout::strided({6, 77}, {1, 6});
  const AxisView middle = canon(Layout::contiguous({6, 5, 77}), axis_mask({1}), true, &transposed);
  EXPECT_EQ(StridedMap::of(middle).out_step(), 0);
  // Every other element of a transposed view's rows: the reduced axis is the closer in memory.
  const AxisView every_other = canon(Layout::strided({40, 30}, {2, 80}), axis_mask({0}), true);
  ASSERT_EQ(plan_path(every_other), AxisPath::strided);
  EXPECT_FALSE(StridedMap::of(every_other).reads_along_results());
}

}  // namespace
}  // namespace reducelab::detail

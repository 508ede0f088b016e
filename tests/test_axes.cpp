// The axis shapes of `bench --shape/--axis` and `sweep --axis-sweep`: how a view is walked result
// by result (the CPU reference and CUB's strided baseline both follow it), and the reference.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "bench/axes.hpp"
#include "bench/axis_reference.hpp"

namespace reducelab::bench {
namespace {

// Every element offset of `shape`, segment-major: result by result, reduced axes row-major.
std::vector<std::int64_t> walk_offsets(const AxisShape& shape) {
  const AxisWalk walk = shape.walk();
  std::vector<std::int64_t> offsets;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(shape.elements()); ++i)
    offsets.push_back(walk.offset(i));
  return offsets;
}

TEST(AxisShape, CountsLayoutAndText) {
  const AxisShape shape{{2, 3, 4}, 0b010};
  EXPECT_EQ(shape.text(), "2x3x4");
  EXPECT_EQ(shape.axes_text(), "1");
  EXPECT_EQ(shape.elements(), 24u);
  EXPECT_EQ(shape.results(), 8u);
  EXPECT_EQ(shape.reduced(), 3u);
  const Layout layout = shape.layout();
  EXPECT_EQ(layout.rank, 3);
  EXPECT_EQ(layout.strides[0], 12);
  EXPECT_EQ(layout.strides[1], 4);
  EXPECT_EQ(layout.strides[2], 1);
}

TEST(AxisShape, RowsAreTheLastAxesSizeOneAside) {
  EXPECT_TRUE((AxisShape{{64, 32}, 0b10}).rows());
  EXPECT_TRUE((AxisShape{{4, 8, 16}, 0b110}).rows());
  EXPECT_TRUE((AxisShape{{1 << 20}, 0b1}).rows());
  EXPECT_TRUE((AxisShape{{64, 1}, 0b01}).rows());   // columns of a single column: one run
  EXPECT_TRUE((AxisShape{{64, 32, 1}, 0b010}).rows());
  EXPECT_FALSE((AxisShape{{64, 32}, 0b01}).rows());
  EXPECT_FALSE((AxisShape{{4, 8, 16}, 0b010}).rows());
  EXPECT_FALSE((AxisShape{{4, 8, 16}, 0b101}).rows());
}

TEST(AxisWalk, ColumnsMergeToOneKeptAndOneReducedAxis) {
  const AxisShape columns{{3, 2, 2}, 0b001};  // axes 1 and 2 kept, contiguous: merged
  const AxisWalk walk = columns.walk();
  EXPECT_EQ(walk.kept_rank, 1);
  EXPECT_EQ(walk.reduced_rank, 1);
  EXPECT_EQ(walk.kept_sizes[0], 4);
  EXPECT_EQ(walk.kept_strides[0], 1);
  EXPECT_EQ(walk.reduced_sizes[0], 3);
  EXPECT_EQ(walk.reduced_strides[0], 4);
  EXPECT_EQ(walk_offsets(columns),
            (std::vector<std::int64_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
}

TEST(AxisWalk, MiddleAndOuterAxes) {
  // 2x3x2, axis 1: results (i0, i2) row-major, each over i1.
  EXPECT_EQ(walk_offsets(AxisShape{{2, 3, 2}, 0b010}),
            (std::vector<std::int64_t>{0, 2, 4, 1, 3, 5, 6, 8, 10, 7, 9, 11}));
  // 2x3x2, axes 0 and 2: results i1, each over (i0, i2) row-major.
  EXPECT_EQ(walk_offsets(AxisShape{{2, 3, 2}, 0b101}),
            (std::vector<std::int64_t>{0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11}));
  // Size-1 axes change nothing.
  EXPECT_EQ(walk_offsets(AxisShape{{2, 1, 3, 2}, 0b0100}),
            walk_offsets(AxisShape{{2, 3, 2}, 0b010}));
}

TEST(ReferenceAxes, ColumnSumsAndArgmaxIndexWithinTheReducedAxes) {
  // 3 x 4, reduced along axis 0: four column results.
  const std::vector<float> x = {1, 9, 3, 4,  //
                                5, 2, 3, 8,  //
                                0, 9, 7, 8};
  const AxisShape columns{{3, 4}, 0b01};
  const float* none = nullptr;
  const auto sums = axis_reference(Op::sum, x.data(), none, columns.layout(), columns.mask);
  ASSERT_EQ(sums.size(), 4u);
  EXPECT_EQ(sums[0].total, 6.0L);
  EXPECT_EQ(sums[1].total, 20.0L);
  EXPECT_EQ(sums[3].total, 20.0L);
  const auto args = axis_reference(Op::argmax, x.data(), none, columns.layout(), columns.mask);
  EXPECT_EQ(args[0].index, 1);
  EXPECT_EQ(args[1].index, 0);  // 9 twice: the first
  EXPECT_EQ(args[2].index, 2);
  EXPECT_EQ(args[3].index, 1);
  EXPECT_EQ(args[3].n, 3u);
}

TEST(ReferenceAxes, DotAndFirstNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {1, 2, nan, 4, 5, nan};  // 2 x 3, reduced along axis 0
  const std::vector<float> y = {2, 2, 2, 2, 2, 2};
  const AxisShape columns{{2, 3}, 0b01};
  const auto dots = axis_reference(Op::dot, x.data(), y.data(), columns.layout(), columns.mask);
  EXPECT_EQ(dots[0].total, 10.0L);
  EXPECT_EQ(dots[1].total, 14.0L);
  const float* none = nullptr;
  const auto mins = axis_reference(Op::argmin, x.data(), none, columns.layout(), columns.mask);
  EXPECT_EQ(mins[0].index, 0);
  EXPECT_EQ(mins[2].index, 0);  // the first NaN wins
}

}  // namespace
}  // namespace reducelab::bench

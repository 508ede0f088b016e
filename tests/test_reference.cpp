// The CPU reference is what every kernel is judged by, so it is tested on hand-checked inputs.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "bench/axis_reference.hpp"
#include "bench/random.hpp"
#include "bench/reference.hpp"

namespace reducelab::bench {
namespace {

TEST(Reference, SumsAndDots) {
  const std::vector<float> x = {1.5f, -2.0f, 4.0f, 0.25f};
  const std::vector<float> y = {2.0f, 3.0f, -1.0f, 4.0f};
  EXPECT_EQ(reference(Op::sum, x.data(), static_cast<const float*>(nullptr), 4).total, 3.75L);
  EXPECT_EQ(reference(Op::dot, x.data(), y.data(), 4).total, 3.0L - 6.0L - 4.0L + 1.0L);
  EXPECT_EQ(reference(Op::sum, x.data(), static_cast<const float*>(nullptr), 4).magnitude, 7.75L);
}

TEST(Reference, IntegerSumsWidenAndWrap) {
  const std::vector<std::int32_t> big(3, 2000000000);
  EXPECT_EQ(reference(Op::sum, big.data(), static_cast<const std::int32_t*>(nullptr), 3).total,
            6000000000LL);
  const std::vector<std::uint64_t> wrap = {std::numeric_limits<std::uint64_t>::max(), 2};
  EXPECT_EQ(reference(Op::sum, wrap.data(), static_cast<const std::uint64_t*>(nullptr), 2).total, 1u);
}

TEST(Reference, ExtremaKeepTheFirstIndexAndNaNWins) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {3, 1, 5, 1, 5};
  const float* none = nullptr;
  EXPECT_EQ(reference(Op::argmin, x.data(), none, 5).index, 1);
  EXPECT_EQ(reference(Op::argmax, x.data(), none, 5).index, 2);
  const std::vector<float> with_nan = {3, nan, 0, nan};
  EXPECT_EQ(reference(Op::argmin, with_nan.data(), none, 4).index, 1);
  EXPECT_TRUE(std::isnan(reference(Op::max, with_nan.data(), none, 4).extremum));
}

TEST(Reference, ChunkedResultEqualsSequential) {
  // Longer than one 2^20 chunk: the parallel combine must keep first-index and NaN rules.
  const std::size_t n = (std::size_t{1} << 21) + 17;
  auto x = random_vector<float>(n, 7, Distribution::uniform);
  x[(std::size_t{1} << 20) + 5] = -2.0f;
  x[(std::size_t{1} << 21) + 3] = -2.0f;
  const float* none = nullptr;
  const auto r = reference(Op::argmin, x.data(), none, n);
  EXPECT_EQ(r.index, (1 << 20) + 5);
  EXPECT_EQ(r.extremum, -2.0f);
}

TEST(Reference, CheckResultCatchesWrongAnswers) {
  const std::vector<float> x = {1, 2, 3, 4};
  const float* none = nullptr;
  const auto sum = reference(Op::sum, x.data(), none, 4);
  unsigned char slot[16] = {};
  float value = 10.0f;
  std::memcpy(slot, &value, 4);
  EXPECT_EQ(check_result(sum, slot), "");
  value = 10.01f;
  std::memcpy(slot, &value, 4);
  EXPECT_NE(check_result(sum, slot), "");
  value = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(slot, &value, 4);
  EXPECT_NE(check_result(sum, slot), "");

  const auto amax = reference(Op::argmax, x.data(), none, 4);
  float v = 4.0f;
  std::int64_t index = 3;
  std::memcpy(slot, &v, 4);
  std::memcpy(slot + 8, &index, 8);
  EXPECT_EQ(check_result(amax, slot), "");
  index = 2;
  std::memcpy(slot + 8, &index, 8);
  EXPECT_NE(check_result(amax, slot), "");
}

// The strided reference of the axis reductions, on a 2 x 3 matrix
//   1 5 2
//   4 0 4
// stored row-major (strides 3, 1) and column-major (strides 1, 2).
TEST(AxisReference, RowsColumnsAndTheWholeMatrix) {
  const std::vector<float> rows = {1, 5, 2, 4, 0, 4};
  const std::vector<float> cols = {1, 4, 5, 0, 2, 4};
  const float* none = nullptr;
  Layout row_major;
  row_major.rank = 2;
  row_major.sizes[0] = 2;
  row_major.sizes[1] = 3;
  row_major.strides[0] = 3;
  row_major.strides[1] = 1;
  Layout col_major = row_major;
  col_major.strides[0] = 1;
  col_major.strides[1] = 2;
  for (const auto& [x, view] : {std::pair{rows.data(), row_major}, std::pair{cols.data(), col_major}}) {
    const auto row_sums = axis_reference(Op::sum, x, none, view, 2);
    ASSERT_EQ(row_sums.size(), 2u);
    EXPECT_EQ(row_sums[0].total, 8.0L);
    EXPECT_EQ(row_sums[1].total, 8.0L);
    const auto row_max = axis_reference(Op::argmax, x, none, view, 2);
    EXPECT_EQ(row_max[0].index, 1);
    EXPECT_EQ(row_max[1].index, 0);  // the first of two 4s
    const auto col_min = axis_reference(Op::argmin, x, none, view, 1);
    ASSERT_EQ(col_min.size(), 3u);
    EXPECT_EQ(col_min[0].index, 0);
    EXPECT_EQ(col_min[1].index, 1);
    EXPECT_EQ(col_min[1].extremum, 0.0f);
    EXPECT_EQ(col_min[2].index, 0);
    const auto all = axis_reference(Op::argmin, x, none, view, 3);
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].index, 4);  // row-major flat index over both axes, whatever the strides
    const auto copy = axis_reference(Op::argmax, x, none, view, 0);
    ASSERT_EQ(copy.size(), 6u);
    EXPECT_EQ(copy[3].extremum, 4.0f);
    EXPECT_EQ(copy[3].index, 0);
    const auto dot = axis_reference(Op::dot, x, x, view, 1);
    EXPECT_EQ(dot[1].total, 25.0L);
  }
}

TEST(AxisReference, BroadcastEmptyAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {3, nan, 1, nan};
  const float* none = nullptr;
  Layout view;  // [4, 5] with stride 0 on axis 1: each row is x[i] five times
  view.rank = 2;
  view.sizes[0] = 4;
  view.sizes[1] = 5;
  view.strides[0] = 1;
  view.strides[1] = 0;
  const auto sums = axis_reference(Op::sum, x.data(), none, view, 2);
  EXPECT_EQ(sums[0].total, 15.0L);
  EXPECT_EQ(sums[0].n, 5u);
  const auto first_nan = axis_reference(Op::argmin, x.data(), none, view, 3);
  EXPECT_EQ(first_nan[0].index, 5);  // row 1, column 0
  EXPECT_TRUE(std::isnan(first_nan[0].extremum));
  view.sizes[1] = 0;  // every row empty
  const auto empty = axis_reference(Op::min, x.data(), none, view, 2);
  ASSERT_EQ(empty.size(), 4u);
  EXPECT_EQ(empty[2].n, 0u);
  EXPECT_EQ(empty[2].index, -1);
  EXPECT_EQ(empty[2].extremum, std::numeric_limits<float>::infinity());
  EXPECT_EQ(axis_reference(Op::min, x.data(), none, view, 1).size(), 0u);  // no results
}

// Past the threaded threshold (over the reduced range and over the results), the result equals
// the sequential one, first-index rule included.
TEST(AxisReference, ThreadedEqualsSequential) {
  const std::int64_t n = (std::int64_t{1} << 19) + 3;
  auto x = random_vector<float>(2 * static_cast<std::size_t>(n), 9, Distribution::small_integers);
  x[static_cast<std::size_t>(n) + 400001] = -9.0f;
  x[static_cast<std::size_t>(n) + 500001] = -9.0f;
  const float* none = nullptr;
  Layout view;  // [2, n] row-major
  view.rank = 2;
  view.sizes[0] = 2;
  view.sizes[1] = n;
  view.strides[0] = n;
  view.strides[1] = 1;
  for (Op op : {Op::sum, Op::argmin}) {
    const auto got = axis_reference(op, x.data(), none, view, 2);
    for (std::size_t row = 0; row < 2; ++row) {
      const auto want =
          reference(op, x.data() + row * static_cast<std::size_t>(n), none, static_cast<std::size_t>(n));
      EXPECT_EQ(got[row].total, want.total);
      EXPECT_EQ(got[row].index, want.index);
      EXPECT_EQ(got[row].n, want.n);
    }
  }
  EXPECT_EQ(axis_reference(Op::argmin, x.data(), none, view, 2)[1].index, 400001);
  Layout columns = view;  // the same as [n, 2] columns: many threads over 2 results
  columns.sizes[0] = n;
  columns.sizes[1] = 2;
  columns.strides[0] = 2;
  const auto col = axis_reference(Op::argmin, x.data(), none, columns, 1);
  EXPECT_EQ(col[0].index, (n + 400001) / 2);  // n + 400001 is even: column 0
  EXPECT_EQ(col[0].extremum, -9.0f);
  // Reducing axis 1 of it instead: n results of 2, threads over the results.
  const auto pairs = axis_reference(Op::sum, x.data(), none, columns, 2);
  ASSERT_EQ(pairs.size(), static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < pairs.size(); ++k)
    ASSERT_EQ(pairs[k].total, static_cast<long double>(x[2 * k]) + x[2 * k + 1]) << k;
  const std::vector<std::int64_t> walk = axis_offsets(columns, 1);
  EXPECT_EQ(AxisIndexWalk(columns, 1, 12345).offset(), walk[12345]);
}

TEST(Random, ReproducibleAndNotConstant) {
  const auto a = random_vector<float>(1000, 42, Distribution::uniform);
  const auto b = random_vector<float>(1000, 42, Distribution::uniform);
  const auto c = random_vector<float>(1000, 43, Distribution::uniform);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  float lo = 1, hi = -1;
  for (float v : a) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_LT(lo, -0.9f);
  EXPECT_GT(hi, 0.9f);
  for (float v : random_vector<float>(1000, 1, Distribution::small_integers)) {
    EXPECT_EQ(v, std::round(v));
    EXPECT_LE(std::fabs(v), 8.0f);
  }
  for (auto v : random_vector<std::uint32_t>(1000, 1, Distribution::uniform)) EXPECT_LE(v, 2000u);
}

}  // namespace
}  // namespace reducelab::bench

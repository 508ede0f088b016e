// The CPU reference is what every kernel is judged by, so it is tested on hand-checked inputs.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

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

// The fold of the ranks' partial states (src/multigpu/shard_state.hpp) on the CPU: rank order,
// global indices for argmin/argmax, empty and 1-element shards, NaN on one rank, ties and
// extremes across shard boundaries, Chan's merge of moments, and the agreement check. The fold
// is generic over the traits; the production traits are device-only, so the states here come
// from host traits with the production traits' combine rules (traits.cuh, stats_traits.cuh),
// and every result is checked against a reference over the concatenated shards in double. The
// GPU tests (test_multigpu.cpp) run the same fold with the production traits.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "multigpu/shard_state.hpp"

namespace {

using reducelab::detail::fold_slots;
using reducelab::detail::kRejectedSignature;
using reducelab::detail::kSlotHeaderBytes;
using reducelab::detail::kWholeSlotBytes;
using reducelab::detail::state_signature;

using Shards = std::vector<std::vector<double>>;

const std::uint64_t kSignature = state_signature(0, 1, 0, 1.0);

// ---- host traits with the production combine rules ----------------------------------------------

struct SumHost {
  using Acc = double;
  static Acc shifted(Acc a, std::int64_t) { return a; }
  static Acc combine(Acc a, Acc b) { return a + b; }
  static Acc local(const std::vector<double>& x) {
    double s = -0.0;
    for (double v : x) s += v;
    return s;
  }
};

struct ArgAcc {
  double value;
  std::int64_t index;
};

// ArgTraits<T, kIsMin>: strictly better (NaN beats any number) wins, else the smaller index.
template <bool kIsMin>
struct ArgHost {
  using Acc = ArgAcc;
  static bool better(double c, double cur) {
    const bool nan_c = std::isnan(c), nan_cur = std::isnan(cur);
    return (kIsMin ? c < cur : c > cur) || (nan_c && !nan_cur);
  }
  static Acc shifted(Acc a, std::int64_t by) { return {a.value, a.index + by}; }
  static Acc combine(Acc a, Acc b) {
    if (better(b.value, a.value)) return b;
    if (better(a.value, b.value)) return a;
    return b.index < a.index ? b : a;
  }
  static Acc local(const std::vector<double>& x) {
    Acc best{kIsMin ? INFINITY : -INFINITY, std::numeric_limits<std::int64_t>::max()};
    for (std::size_t i = 0; i < x.size(); ++i)
      if (i == 0 || better(x[i], best.value)) best = {x[i], static_cast<std::int64_t>(i)};
    return best;
  }
};

struct Moments {
  double count, shift, mean, m2, sum;
};

// MomentsTraits::combine (Chan), with an exact reciprocal.
struct MomentsHost {
  using Acc = Moments;
  static Acc shifted(Acc a, std::int64_t) { return a; }
  static Acc combine(Acc a, Acc b) {
    if (b.count == 0) return a;
    if (a.count == 0) return b;
    const double n = a.count + b.count;
    const double delta = ((b.shift - a.shift) + b.mean) - a.mean;
    const double w = b.count / n;
    return {n, a.shift, a.mean + delta * w, a.m2 + b.m2 + delta * delta * (a.count * w),
            a.sum + b.sum};
  }
  static Acc local(const std::vector<double>& x) {
    Acc s{0, 0, 0, 0, -0.0};
    for (double v : x) {
      if (s.count == 0) s.shift = v;
      s.count += 1;
      const double delta = (v - s.shift) - s.mean;
      const double step = delta / s.count;
      s.mean += step;
      s.m2 += delta * (delta - step);
      s.sum += v;
    }
    return s;
  }
};

// ---- slots ----------------------------------------------------------------------------------------

template <class Acc>
void put_slot(unsigned char* slot, std::uint64_t count, std::uint64_t signature, const Acc& acc) {
  std::memcpy(slot, &count, 8);
  std::memcpy(slot + 8, &signature, 8);
  std::memcpy(slot + kSlotHeaderBytes, &acc, sizeof(Acc));
}

//! Each shard's local state in a kWholeSlotBytes slot, rank 0 first, as the all-gather leaves them.
template <class Traits>
std::vector<unsigned char> gather(const Shards& shards) {
  std::vector<unsigned char> slots(shards.size() * kWholeSlotBytes, 0xA5);
  for (std::size_t r = 0; r < shards.size(); ++r)
    put_slot(slots.data() + r * kWholeSlotBytes, shards[r].size(), kSignature,
             Traits::local(shards[r]));
  return slots;
}

template <class Traits>
reducelab::detail::FoldResult<typename Traits::Acc> fold(const Shards& shards) {
  const std::vector<unsigned char> slots = gather<Traits>(shards);
  return fold_slots<Traits>(slots.data(), kWholeSlotBytes, static_cast<int>(shards.size()));
}

std::vector<double> concat(const Shards& shards) {
  std::vector<double> all;
  for (const auto& s : shards) all.insert(all.end(), s.begin(), s.end());
  return all;
}

//! Reference argmin/argmax over the concatenation: the first NaN, else the first extremum.
std::int64_t reference_arg(const std::vector<double>& x, bool is_min) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::isnan(x[i])) return static_cast<std::int64_t>(i);
  std::size_t best = 0;
  for (std::size_t i = 1; i < x.size(); ++i)
    if (is_min ? x[i] < x[best] : x[i] > x[best]) best = i;
  return static_cast<std::int64_t>(best);
}

Shards random_shards(const std::vector<std::size_t>& lengths, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Shards shards;
  for (std::size_t n : lengths) {
    std::vector<double> s(n);
    for (double& v : s) v = normal(rng);
    shards.push_back(s);
  }
  return shards;
}

// Uneven shards, an empty one and a 1-element one: the lengths every test below draws from.
const std::vector<std::size_t> kLengths = {37, 0, 1, 1000, 5, 0, 64};
constexpr std::uint64_t kSeed = 20240615;

// ---- tests ----------------------------------------------------------------------------------------

TEST(ShardFold, SumOfUnevenShardsMatchesTheReference) {
  const Shards shards = random_shards(kLengths, kSeed);
  const auto folded = fold<SumHost>(shards);
  double reference = 0;
  for (double v : concat(shards)) reference += v;
  EXPECT_TRUE(folded.agreed);
  EXPECT_EQ(folded.total, 37u + 1 + 1000 + 5 + 64);
  EXPECT_NEAR(folded.acc, reference, 1e-12 + std::fabs(reference) * 1e-14);
}

TEST(ShardFold, ArgOfRandomUnevenShardsIsTheGlobalIndex) {
  for (std::uint64_t seed = kSeed; seed < kSeed + 20; ++seed) {
    const Shards shards = random_shards(kLengths, seed);
    const std::vector<double> all = concat(shards);
    EXPECT_EQ(fold<ArgHost<true>>(shards).acc.index, reference_arg(all, true)) << seed;
    EXPECT_EQ(fold<ArgHost<false>>(shards).acc.index, reference_arg(all, false)) << seed;
    EXPECT_EQ(fold<ArgHost<false>>(shards).acc.value, all[reference_arg(all, false)]) << seed;
  }
}

TEST(ShardFold, TiesAcrossRanksGoToTheLowestGlobalIndex) {
  // The max, 3, on ranks 1 (local 0), 3 (local 1) and 4; rank 0 ends just before it.
  const Shards shards = {{1, 2}, {3, -1}, {}, {0, 3}, {3}};
  const auto max = fold<ArgHost<false>>(shards);
  EXPECT_EQ(max.acc.index, 2);
  EXPECT_EQ(max.acc.value, 3);
  // The min, -1, once at rank 1 local 1 and again in the 1-element last shard.
  const Shards mins = {{0, 5}, {3, -1}, {}, {0, 3}, {-1}};
  EXPECT_EQ(fold<ArgHost<true>>(mins).acc.index, 3);
}

TEST(ShardFold, ExtremesOnShardBoundaries) {
  // The max is the last element of rank 0, the min the first element of rank 2 (after an empty
  // rank 1): their global indices are the boundaries.
  const Shards shards = {{0.5, 0.25, 9.0}, {}, {-7.0, 1.0}, {2.0}};
  EXPECT_EQ(fold<ArgHost<false>>(shards).acc.index, 2);
  EXPECT_EQ(fold<ArgHost<true>>(shards).acc.index, 3);
  // And the first element of the last rank.
  const Shards last = {{0.5, 0.25}, {1.0}, {10.0, 1.0}};
  EXPECT_EQ(fold<ArgHost<false>>(last).acc.index, 3);
}

TEST(ShardFold, NaNOnOneRankWinsAtItsGlobalIndex) {
  Shards shards = random_shards(kLengths, kSeed);
  shards[3][17] = NAN;  // rank 3 alone: 37 + 0 + 1 elements before it
  for (bool is_min : {true, false}) {
    const auto folded = is_min ? fold<ArgHost<true>>(shards) : fold<ArgHost<false>>(shards);
    EXPECT_TRUE(std::isnan(folded.acc.value));
    EXPECT_EQ(folded.acc.index, 38 + 17);
  }
  // A second NaN on a later rank does not move it; one on an earlier rank does.
  shards[6][0] = NAN;
  EXPECT_EQ(fold<ArgHost<false>>(shards).acc.index, 38 + 17);
  shards[2][0] = NAN;
  EXPECT_EQ(fold<ArgHost<false>>(shards).acc.index, 37);
  // The sum propagates it.
  EXPECT_TRUE(std::isnan(fold<SumHost>(shards).acc));
}

TEST(ShardFold, MomentsMergeInRankOrderToTheTwoPassVariance) {
  // A large mean against a unit spread: the merge must not lose the spread.
  Shards shards = random_shards(kLengths, kSeed + 1);
  for (auto& s : shards)
    for (double& v : s) v += 1e6;
  const auto folded = fold<MomentsHost>(shards);
  const std::vector<double> all = concat(shards);
  double mean = 0;
  for (double v : all) mean += v;
  mean /= static_cast<double>(all.size());
  double m2 = 0;
  for (double v : all) m2 += (v - mean) * (v - mean);
  EXPECT_EQ(folded.total, all.size());
  EXPECT_EQ(folded.acc.count, static_cast<double>(all.size()));
  EXPECT_NEAR(folded.acc.m2, m2, 1e-9 * m2);
  EXPECT_NEAR(folded.acc.sum / static_cast<double>(folded.total), mean, 1e-9);
}

TEST(ShardFold, OneRankGivesItsAccumulatorUntouched) {
  // With one rank (or one non-empty rank) the fold does no arithmetic: the single-GPU bits.
  const Shards one = {{1.0, 1e-17, -1.0, 3.5}};
  EXPECT_EQ(fold<SumHost>(one).acc, SumHost::local(one[0]));
  const Shards padded = {{}, {1.0, 1e-17, -1.0, 3.5}, {}};
  const auto folded = fold<MomentsHost>(padded);
  const Moments local = MomentsHost::local(padded[1]);
  EXPECT_EQ(std::memcmp(&folded.acc, &local, sizeof(Moments)), 0);
}

TEST(ShardFold, EveryShardEmptyGivesRankZerosStateAndNoElements) {
  const Shards empty = {{}, {}, {}};
  const auto folded = fold<MomentsHost>(empty);
  EXPECT_EQ(folded.total, 0u);
  EXPECT_TRUE(folded.agreed);
  EXPECT_EQ(folded.acc.count, 0.0);  // rank 0's state of nothing
  EXPECT_EQ(fold<SumHost>(empty).total, 0u);
}

TEST(ShardFold, DisagreeingOrRejectedRanksAreReported) {
  const Shards shards = random_shards({3, 4, 5}, kSeed);
  std::vector<unsigned char> slots = gather<SumHost>(shards);
  EXPECT_TRUE(fold_slots<SumHost>(slots.data(), kWholeSlotBytes, 3).agreed);
  // Rank 2 computed another op.
  const std::uint64_t other = state_signature(1, 1, 0, 1.0);
  std::memcpy(slots.data() + 2 * kWholeSlotBytes + 8, &other, 8);
  EXPECT_FALSE(fold_slots<SumHost>(slots.data(), kWholeSlotBytes, 3).agreed);
  // Rank 0 rejected its arguments (its whole slot is 0xff).
  slots = gather<SumHost>(shards);
  std::memset(slots.data(), 0xff, kWholeSlotBytes);
  EXPECT_FALSE(fold_slots<SumHost>(slots.data(), kWholeSlotBytes, 3).agreed);
  // A different correction is a different call.
  EXPECT_NE(state_signature(7, 0, 0, 1.0), state_signature(7, 0, 0, 0.0));
  EXPECT_NE(state_signature(11, 0, 1, 1.0), state_signature(11, 0, 2, 1.0));
  EXPECT_NE(state_signature(11, 0, 1, 1.0), kRejectedSignature);
}

TEST(ShardFold, RowsInterleavedByRankFoldWithTheRowStride) {
  // Two rows, three ranks: rank q's rows are together (q * rows + i), as the all-gather puts them.
  const std::vector<Shards> rows = {random_shards({4, 0, 9}, kSeed),
                                    random_shards({4, 0, 9}, kSeed + 7)};
  constexpr std::size_t kSlot = 32;  // a compact slot: header + ArgAcc
  std::vector<unsigned char> slots(3 * 2 * kSlot);
  for (std::size_t q = 0; q < 3; ++q)
    for (std::size_t i = 0; i < 2; ++i)
      put_slot(slots.data() + (q * 2 + i) * kSlot, rows[i][q].size(), kSignature,
               ArgHost<false>::local(rows[i][q]));
  for (std::size_t i = 0; i < 2; ++i) {
    const auto folded = fold_slots<ArgHost<false>>(slots.data() + i * kSlot, 2 * kSlot, 3);
    EXPECT_EQ(folded.acc.index, reference_arg(concat(rows[i]), false)) << "row " << i;
    EXPECT_EQ(folded.total, 13u);
  }
}

}  // namespace

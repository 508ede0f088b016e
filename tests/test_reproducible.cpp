// The gpu_to_gpu mode on the CPU (issue 14): reproducible_reduce_cpu against a long-double
// reference within the bound reproducible.hpp states, on adversarial inputs and awkward sizes;
// and a CPU model of the kernel's data movement (reproducible.cuh: aligned spans, the masked
// head, the extra vector, the rotation by the pointer's offset, the two fold levels), which must
// give the CPU function's bits at every offset and size: the GPU computes the same function only
// if this index arithmetic is right, and it can be checked here without a GPU.

#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <typeinfo>
#include <limits>
#include <random>
#include <string>
#include <algorithm>
#include <vector>

#include "bench/reference.hpp"
#include "reduce/portable_math.hpp"
#include "reduce/reproducible.hpp"
#include "reduce/reproducible_plan.hpp"
#include "reduce/reproducible_stats.hpp"
#include "reducelab/error.hpp"
#include "reducelab/reproducible.hpp"

namespace reducelab {
namespace {

namespace plan = detail::repro;

constexpr std::uint64_t kSeed = 20261114;

using bench::from_double;
template <class T>
long double to_long_double(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return v;
  }
}
template <class A>
A from_ld(long double v) { return static_cast<A>(v); }

template <class A>
std::uint64_t bits(A v) {
  std::uint64_t out = 0;
  std::memcpy(&out, &v, sizeof(A));
  return out;
}

enum class Input { normal, alternating, cancellation, subnormal, wide };

template <class T>
std::vector<T> make_input(Input kind, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<T> x(n);
  const bool half = sizeof(T) == 2;
  for (std::size_t i = 0; i < n; ++i) {
    double v = 0;
    switch (kind) {
      case Input::normal: v = normal(rng); break;
      // 1e8 and 1 in turn (bf16/f16 cannot hold 1e8: 1e4 and 1 there, f16's max is 65504)
      case Input::alternating: v = i % 2 == 0 ? (half ? 1e4 : 1e8) : 1.0; break;
      // pairs that cancel, big, plus small noise: the sum is the noise's
      case Input::cancellation: {
        const double big = (half ? 1e3 : 1e7) * (1 + (i / 2 % 7));
        v = (i % 2 == 0 ? big : -big) + 1e-3 * normal(rng);
        break;
      }
      case Input::subnormal: {
        const double tiny = half ? std::ldexp(1.0, -20)
                                 : (sizeof(T) == 4 ? std::ldexp(1.0, -140) : std::ldexp(1.0, -1060));
        v = tiny * normal(rng) * (sizeof(T) == 2 && std::is_same_v<T, __nv_bfloat16> ? std::ldexp(1.0, -110) : 1.0);
        break;
      }
      // magnitudes over 2^-20..2^20 (2^-8..2^8 for f16, whose largest finite value is 65504)
      case Input::wide: {
        const int span = std::is_same_v<T, __half> ? 16 : 40;
        v = normal(rng) * std::ldexp(1.0, static_cast<int>(rng() % span) - span / 2);
        break;
      }
    }
    x[i] = from_double<T>(v);
  }
  return x;
}

template <class T>
struct Reference {
  long double value;
  long double magnitude;  // sum |term|
};

template <class T>
Reference<T> reference(const std::vector<T>& x, const std::vector<T>* y) {
  Reference<T> r{0, 0};
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long double term = to_long_double(x[i]) * (y != nullptr ? to_long_double((*y)[i]) : 1.0L);
    r.value += term;
    r.magnitude += std::fabs(term);
  }
  return r;
}

template <class T>
class ReproducibleCpu : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double, __half, __nv_bfloat16>;
TYPED_TEST_SUITE(ReproducibleCpu, FloatTypes);

const std::size_t kSizes[] = {1, 2, 31, 32, 33, 127, 128, 129, 511, 512, 513, 1000, 4097,
                              65537, (std::size_t{1} << 20) + 3};

TYPED_TEST(ReproducibleCpu, WithinTheStatedBoundOfTheExactSum) {
  using T = TypeParam;
  using A = sum_t<T>;
  const DType dtype = dtype_of<T>::value;
  for (Input kind : {Input::normal, Input::alternating, Input::cancellation, Input::subnormal,
                     Input::wide}) {
    for (std::size_t n : kSizes) {
      const std::vector<T> x = make_input<T>(kind, n, kSeed + n);
      const std::vector<T> y = make_input<T>(Input::normal, n, kSeed + 7 * n);
      for (bool dot : {false, true}) {
        const A got = dot ? reproducible_dot_cpu(x.data(), y.data(), n)
                          : reproducible_sum_cpu(x.data(), n);
        const Reference<T> ref = reference(x, dot ? &y : nullptr);
        const long double bound =
            reproducible_error_bound(dtype, n, dot ? Op::dot : Op::sum) * ref.magnitude;
        // the result's own rounding to A, beyond the bound's additions; and for dot the
        // products that underflow, each rounded by up to half the smallest subnormal
        // (reproducible.hpp: additions of subnormals are exact, products are not)
        const long double last = std::fabs(ref.value) * std::numeric_limits<A>::epsilon();
        const long double underflow =
            dot ? static_cast<long double>(n) * std::numeric_limits<A>::denorm_min() / 2 : 0;
        EXPECT_LE(std::fabs(static_cast<long double>(got) - ref.value), bound + last + underflow)
            << "seed " << kSeed << " kind " << static_cast<int>(kind) << " n " << n
            << (dot ? " dot" : " sum") << " got " << static_cast<double>(got) << " ref "
            << static_cast<double>(ref.value);
      }
    }
  }
}

TYPED_TEST(ReproducibleCpu, SeveralTileSizes) {
  // f32 2^24 + 3 takes K = 8 (more than kMaxTiles tiles of K = 4); the bound still holds.
  using T = TypeParam;
  const std::size_t n = plan::lanes_for(sizeof(T)) * plan::kMinSteps * plan::kMaxTiles + 3;
  ASSERT_EQ(plan::plan_for(sizeof(T), n).steps, 2 * plan::kMinSteps);
  const std::vector<T> x = make_input<T>(Input::normal, n, kSeed);
  const auto got = reproducible_sum_cpu(x.data(), n);
  const Reference<T> ref = reference<T>(x, nullptr);
  EXPECT_LE(std::fabs(static_cast<long double>(got) - ref.value),
            reproducible_error_bound(dtype_of<T>::value, n) * ref.magnitude +
                std::fabs(ref.value) * std::numeric_limits<sum_t<T>>::epsilon());
}

// ---- a model of the kernel's data movement -------------------------------------------------

template <class A>
A pairwise_model(std::vector<A> v) {  // the complete tree of adjacent pairs, padded with -0
  std::size_t size = 1;
  while (size < v.size()) size *= 2;
  v.resize(size, -A(0));
  for (; size > 1; size /= 2)
    for (std::size_t j = 0; j < size / 2; ++j) v[j] = v[2 * j] + v[2 * j + 1];
  return v[0];
}

template <class A, class T>
A widen_model(T v) { return static_cast<A>(to_long_double(v)); }  // exact for every T here

// What reproducible_kernel computes for x[0, n) placed at element offset o of a 16-byte line.
template <class T>
sum_t<T> kernel_model(const std::vector<T>& x, const std::vector<T>* y, unsigned o) {
  using A = sum_t<T>;
  constexpr int kC = 16 / sizeof(T);
  const std::uint64_t n = x.size();
  const plan::Plan p = plan::plan_for(sizeof(T), n);
  const std::uint64_t tile = p.steps * 32 * kC;
  auto term = [&](std::uint64_t i) {  // i must be in [0, n): an out-of-range read fails the test
    EXPECT_LT(i, n);
    if (i >= n) return std::numeric_limits<A>::quiet_NaN();
    A v = widen_model<A>(x[i]);
    if (y != nullptr) {
      const A w = widen_model<A>((*y)[i]);
      v = v * w;
    }
    return v;
  };
  std::vector<A> tiles(p.tiles);
  for (std::uint64_t t = 0; t < p.tiles; ++t) {
    const std::uint64_t first = t * tile;
    std::vector<std::vector<A>> acc(32, std::vector<A>(kC, -A(0)));
    const bool interior = (o == 0 || t > 0) && first + tile + (o != 0 ? kC - o : 0) <= n;
    if (interior) {
      for (std::uint64_t k = 0; k < p.steps; ++k)
        for (unsigned r = 0; r < 32; ++r)
          for (int j = 0; j < kC; ++j) {
            const std::uint64_t i = first - o + (r + 32 * k) * kC + j;
            const A v = term(i);  // read even where masked, as the vector load does
            const int from = k == 0 && r == 0 ? static_cast<int>(o) : 0;
            acc[r][j] = acc[r][j] + (j >= from ? v : -A(0));
          }
      if (o != 0)
        for (unsigned j = 0; j < o; ++j)
          acc[0][j] = acc[0][j] + term(first - o + 32 * p.steps * kC + j);
    } else {
      const std::uint64_t end = std::min<std::uint64_t>(first + tile, n);
      for (std::uint64_t k = 0; k <= p.steps; ++k)
        for (unsigned r = 0; r < 32; ++r)
          for (int j = 0; j < kC; ++j) {
            const std::uint64_t shifted = first + (r + 32 * k) * kC + j;
            if (shifted >= first + o && shifted < end + o)
              acc[r][j] = acc[r][j] + term(shifted - o);
          }
    }
    std::vector<A> lanes(32 * kC);
    for (unsigned r = 0; r < 32; ++r)
      for (int j = 0; j < kC; ++j)
        lanes[r * kC + j] = j + static_cast<int>(o) < kC ? acc[r][j + o]
                                                         : acc[(r + 1) % 32][j + o - kC];
    tiles[t] = pairwise_model(lanes);
  }
  // Two fold levels: groups of kGroupTiles (8 at a time per lane), then the groups.
  std::vector<A> groups(p.groups);
  for (std::uint64_t g = 0; g < p.groups; ++g) {
    std::vector<A> per_lane(32);
    for (unsigned r = 0; r < 32; ++r) {
      std::vector<A> chunks;
      for (unsigned c = 0; c < plan::kGroupTiles / 32 / 8; ++c) {
        std::vector<A> v(8, -A(0));
        for (unsigned j = 0; j < 8; ++j) {
          const std::uint64_t index = g * plan::kGroupTiles + r * (plan::kGroupTiles / 32) + c * 8 + j;
          if (index < p.tiles && index < (g + 1) * plan::kGroupTiles) v[j] = tiles[index];
        }
        chunks.push_back(pairwise_model(v));
      }
      per_lane[r] = pairwise_model(chunks);
    }
    groups[g] = pairwise_model(per_lane);
  }
  A total = p.groups == 1 ? groups[0] : pairwise_model(groups);
  if (total != total) total = std::numeric_limits<A>::quiet_NaN();
  return total;
}

TYPED_TEST(ReproducibleCpu, KernelModelGivesTheSameBitsAtEveryOffset) {
  using T = TypeParam;
  constexpr unsigned kC = 16 / sizeof(T);
  const std::size_t lanes = plan::lanes_for(sizeof(T));
  const std::size_t tile = lanes * plan::kMinSteps;
  const std::size_t sizes[] = {1, 5, kC - 1, kC + 1, lanes - 1, lanes + 3, tile - 1, tile, tile + 1,
                               tile + kC - 1, 2 * tile, 2 * tile + 1, 3 * tile + 5, 1000 * tile + 7,
                               plan::kGroupTiles * tile + 3};
  for (std::size_t n : sizes) {
    const std::vector<T> x = make_input<T>(Input::wide, n, kSeed + n);
    const std::vector<T> y = make_input<T>(Input::normal, n, kSeed + 3 * n);
    const auto want = reproducible_sum_cpu(x.data(), n);
    const auto want_dot = reproducible_dot_cpu(x.data(), y.data(), n);
    for (unsigned o = 0; o < kC; ++o) {
      EXPECT_EQ(bits(kernel_model<T>(x, nullptr, o)), bits(want)) << "n " << n << " offset " << o;
      EXPECT_EQ(bits(kernel_model<T>(x, &y, o)), bits(want_dot)) << "dot n " << n << " offset " << o;
    }
  }
}

// ---- the statistics (reproducible_stats.hpp) -------------------------------------------------

// Long-double references of the statistics.
template <class T>
struct StatReference {
  long double mean, m2, abs_sum, sum_sq, max, sum_exp, abs_magnitude;
};

// Neumaier's compensated sum in long double: the reference of a sum of 2^20 doubles must be
// better than long double's own sequential rounding (2^20 x 2^-64 relative, near f64's bound).
struct Compensated {
  long double sum = 0, carry = 0;
  void add(long double v) {
    const long double t = sum + v;
    carry += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  long double value() const { return sum + carry; }
};

template <class T>
StatReference<T> stat_reference(const std::vector<T>& x) {
  StatReference<T> r{0, 0, 0, 0, -INFINITY, 0, 0};
  Compensated mean, abs_sum, sum_sq, m2, sum_exp;
  for (const T& v : x) {
    const long double e = to_long_double(v);
    mean.add(e);
    abs_sum.add(std::fabs(e));
    sum_sq.add(e * e);  // one long-double rounding per square (2^-64), far inside the bounds
    r.max = std::max(r.max, e);
  }
  r.mean = mean.value() / static_cast<long double>(x.size());
  for (const T& v : x) {
    const long double d = to_long_double(v) - r.mean;
    m2.add(d * d);
    sum_exp.add(std::exp(to_long_double(v) - r.max));
  }
  r.abs_sum = r.abs_magnitude = abs_sum.value();
  r.sum_sq = sum_sq.value();
  r.m2 = m2.value();
  r.sum_exp = sum_exp.value();
  return r;
}

long double g(int k, long double u) { return k * u / (1 - k * u); }

template <class T>
int depth(std::size_t n) {
  return plan::depth_of(plan::plan_for(sizeof(T), n));
}

// Inputs for the statistics: the sum's, plus a large mean against a small spread (where a
// one-pass sum of squares loses everything), and (6) the same with every tile's first element,
// var's centre, an outlier far from the rest.
template <class T>
std::vector<T> stat_input(int kind, std::size_t n, std::uint64_t seed) {
  if (kind < 5) return make_input<T>(static_cast<Input>(kind), n, seed);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<T> x(n);
  const double centre = sizeof(T) == 2 ? 300.0 : 1e6;
  for (std::size_t i = 0; i < n; ++i) x[i] = from_double<T>(centre + normal(rng));
  if (kind == 6) {
    const std::size_t tile = plan::plan_for(sizeof(T), n).tile;
    for (std::size_t i = 0; i < n; i += tile) x[i] = from_double<T>(sizeof(T) == 2 ? 600.0 : 1.1e6);
  }
  return x;
}

// var's centred magnitude: the sum over tiles of (x_i - x_first of the tile)^2, in long double.
template <class T>
long double centred_squares(const std::vector<T>& x) {
  const std::size_t tile = plan::plan_for(sizeof(T), x.size()).tile;
  Compensated sum;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long double d = to_long_double(x[i]) - to_long_double(x[i / tile * tile]);
    sum.add(d * d);
  }
  return sum.value();
}

// What the whole-array var kernel (reproducible.cuh, var_tile_partial) computes for x[0, n) at
// element offset o of a 16-byte line: thread r's component j holds lane r kC + j - o of the
// order, a batch (4 vectors) at a time, centred on the tile's first element; thread 0's first o
// components hold lanes P - o .. P - 1 one step late, so their batch b is vectors 4b + 1 .. 4b + 3
// and the first vector of the next batch (loaded ahead); the lanes rotate into place, the lanes'
// tree, then the tiles' tree. Tiles whose span leaves [0, n) go element by element. Returns
// (m2, sum) of the whole array.
template <class T>
detail::repro::VarState<sum_t<T>> var_kernel_model(const std::vector<T>& x, unsigned o) {
  using A = sum_t<T>;
  namespace repro = detail::repro;
  constexpr int kC = 16 / sizeof(T);
  constexpr int kB = repro::kVarBatch;
  const std::uint64_t n = x.size();
  const plan::Plan p = plan::plan_for(sizeof(T), n);
  const std::uint64_t tile = p.steps * 32 * kC;
  auto value = [&](std::uint64_t i) {  // an out-of-range read fails the test
    EXPECT_LT(i, n);
    return i < n ? widen_model<A>(x[i]) : std::numeric_limits<A>::quiet_NaN();
  };
  std::vector<repro::VarState<A>> tiles(p.tiles);
  for (std::uint64_t t = 0; t < p.tiles; ++t) {
    const std::uint64_t first = t * tile;
    const A shift = value(first);
    std::vector<repro::VarState<A>> state(32 * kC, repro::var_identity<A>());
    std::vector<A> sum(32 * kC, -A(0));  // index r kC + j: thread r's component j
    auto add_batch = [&](std::size_t at, const A (&v)[kB], int k) {
      A c[kB] = {};
      for (int u = 0; u < k; ++u) {
        c[u] = v[u] - shift;
        sum[at] = sum[at] + v[u];
      }
      state[at] = repro::var_merge_lanes(state[at], repro::var_batch(c, k));
    };
    const bool interior = (o == 0 || t > 0) && first + tile + (o != 0 ? kC - o : 0) <= n;
    if (interior) {
      for (std::uint64_t b = 0; b < p.steps / kB; ++b) {
        for (unsigned r = 0; r < 32; ++r) {
          for (int j = 0; j < kC; ++j) {
            auto at_vector = [&](std::uint64_t k) { return first - o + (r + 32 * k) * kC + j; };
            A v[kB];
            if (r == 0 && j < static_cast<int>(o)) {
              for (int u = 0; u < kB; ++u) v[u] = value(first - o + 32 * (kB * b + u + 1) * kC + j);
            } else {
              for (int u = 0; u < kB; ++u) v[u] = value(at_vector(kB * b + u));
            }
            add_batch(r * kC + j, v, kB);
          }
        }
      }
    } else {
      const std::uint64_t end = std::min<std::uint64_t>(first + tile, n);
      for (std::uint64_t b = 0; b < p.steps / kB && first + kB * b * 32 * kC < end; ++b)
        for (unsigned r = 0; r < 32; ++r)
          for (int j = 0; j < kC; ++j) {
            A v[kB] = {};
            int k = 0;
            for (int u = 0; u < kB; ++u) {
              const std::uint64_t i = first + (kB * b + u) * 32 * kC + r * kC + j;
              if (i < end) v[k++] = value(i);
            }
            if (k > 0) add_batch(r * kC + j, v, k);
          }
    }
    for (std::size_t at = 0; at < state.size(); ++at) state[at].sum = sum[at];
    std::vector<repro::VarState<A>> lanes(32 * kC);
    const unsigned shift_by = interior ? o : 0;
    for (unsigned r = 0; r < 32; ++r)
      for (int j = 0; j < kC; ++j)
        lanes[r * kC + j] = j + static_cast<int>(shift_by) < kC
                                ? state[r * kC + j + shift_by]
                                : state[((r + 1) % 32) * kC + j + shift_by - kC];
    // The lanes' tree (symmetric merges), the tile's centre, then the tiles' tree.
    std::size_t size = lanes.size();
    for (; size > 1; size /= 2)
      for (std::size_t j = 0; j < size / 2; ++j)
        lanes[j] = repro::var_merge_lanes(lanes[2 * j], lanes[2 * j + 1]);
    tiles[t] = lanes[0];
    tiles[t].shift = shift;
  }
  std::size_t size = 1;
  while (size < tiles.size()) size *= 2;
  tiles.resize(size, repro::var_identity<A>());
  for (; size > 1; size /= 2)
    for (std::size_t j = 0; j < size / 2; ++j) tiles[j] = repro::var_merge(tiles[2 * j], tiles[2 * j + 1]);
  return tiles[0];
}

// The var kernel's data movement gives the CPU function's bits (var and the mean of var_mean) at
// every offset and size, interior and boundary tiles, one tile and many.
TYPED_TEST(ReproducibleCpu, VarKernelModelGivesTheSameBitsAtEveryOffset) {
  using T = TypeParam;
  using A = sum_t<T>;
  constexpr unsigned kC = 16 / sizeof(T);
  const std::size_t lanes = plan::lanes_for(sizeof(T));
  const std::size_t tile = lanes * plan::kMinSteps;
  const std::size_t sizes[] = {1, 2, 5, kC + 1, lanes - 1, lanes + 3, 2 * lanes + 1, 3 * lanes,
                               tile - 1, tile, tile + 1, tile + kC - 1, 2 * tile + 1, 3 * tile + 5,
                               1000 * tile + 7, plan::kMaxTiles * tile + 3};
  for (std::size_t n : sizes) {
    const std::vector<T> x = stat_input<T>(5, n, kSeed + 7 * n);
    StatPair<A> want{};
    reproducible_reduce_cpu(Reduction::var_mean(1), dtype_of<T>::value, x.data(), nullptr, n, &want);
    for (unsigned o = 0; o < kC; ++o) {
      const detail::repro::VarState<A> got = var_kernel_model<T>(x, o);
      const A var = n > 1 ? got.m2 / static_cast<A>(n - 1) : std::numeric_limits<A>::quiet_NaN();
      const A mean = got.sum / static_cast<A>(n);
      if (n > 1) EXPECT_EQ(bits(var), bits(want.first)) << "n " << n << " offset " << o;
      EXPECT_EQ(bits(mean), bits(want.mean)) << "n " << n << " offset " << o;
    }
  }
}

// What the segment kernels' short paths compute for a segment of one tile at K = 4 (length <= 4 P,
// reproducible_segments.cuh's var_team_partial): `team` lanes of kC lanes of the order each
// (team x kC >= length for the team rows, 32 for a warp's one-tile rows; 32 lanes of one element
// each with kC = 1 for the lane-per-segment ragged path), each lane its present steps as one
// batch centred on the segment's first element, the thread's tree, then the team's.
template <class T>
detail::repro::VarState<sum_t<T>> var_team_model(const std::vector<T>& x, unsigned team, int kC) {
  using A = sum_t<T>;
  namespace repro = detail::repro;
  const std::size_t n = x.size();
  const std::size_t lanes = plan::lanes_for(sizeof(T));
  const A shift = widen_model<A>(x[0]);
  std::vector<repro::VarState<A>> state(team * kC, repro::var_identity<A>());
  for (unsigned r = 0; r < team; ++r)
    for (int j = 0; j < kC; ++j) {
      A c[repro::kVarBatch] = {};
      A sum = -A(0);
      int present = 0;
      for (std::size_t k = 0; k < repro::kMinSteps; ++k) {
        const std::size_t i = k * lanes + r * kC + j;
        if (i >= n) break;
        const A v = widen_model<A>(x[i]);
        c[present++] = v - shift;
        sum = sum + v;
      }
      if (present > 0) state[r * kC + j] = repro::var_batch(c, present);
      state[r * kC + j].sum = sum;
    }
  for (std::size_t size = state.size(); size > 1; size /= 2)
    for (std::size_t j = 0; j < size / 2; ++j)
      state[j] = repro::var_merge_lanes(state[2 * j], state[2 * j + 1]);
  state[0].shift = shift;
  return state[0];
}

// The short segment paths give the CPU function's bits: teams of 1..32 lanes over rows of at most
// one step, a warp over rows of one tile, a lane over ragged segments of up to 32 elements.
TYPED_TEST(ReproducibleCpu, VarTeamModelGivesTheSameBitsForShortSegments) {
  using T = TypeParam;
  using A = sum_t<T>;
  constexpr int kC = 16 / sizeof(T);
  const std::size_t lanes = plan::lanes_for(sizeof(T));
  auto check = [](const std::vector<T>& x, const detail::repro::VarState<A>& got,
                  const std::string& where) {
    StatPair<A> want{};
    reproducible_reduce_cpu(Reduction::var_mean(0), dtype_of<T>::value, x.data(), nullptr,
                            x.size(), &want);
    EXPECT_EQ(bits(got.m2 / static_cast<A>(x.size())), bits(want.first)) << where;
    EXPECT_EQ(bits(got.sum / static_cast<A>(x.size())), bits(want.mean)) << where;
  };
  for (std::size_t n = 1; n <= 4 * lanes; n += (n < 40 ? 1 : 37)) {
    const std::vector<T> x = stat_input<T>(5, n, kSeed + 13 * n);
    if (n <= lanes) {
      unsigned team = 1;
      while (team * kC < n) team *= 2;
      check(x, var_team_model<T>(x, team, kC), "team rows n " + std::to_string(n));
    }
    check(x, var_team_model<T>(x, 32, kC), "one-tile rows n " + std::to_string(n));
    if (n <= 32) check(x, var_team_model<T>(x, 32, 1), "lane ragged n " + std::to_string(n));
  }
}

TYPED_TEST(ReproducibleCpu, StatisticsWithinTheirStatedBounds) {
  using T = TypeParam;
  using A = sum_t<T>;
  const long double u = std::numeric_limits<A>::epsilon() / 2;
  for (int kind = 0; kind < 7; ++kind) {
    if (kind == static_cast<int>(Input::subnormal)) continue;  // below: SpecialValues
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{33}, std::size_t{1000},
                          std::size_t{4097}, std::size_t{65537}, (std::size_t{1} << 20) + 3}) {
      const std::vector<T> x = stat_input<T>(kind, n, kSeed + 11 * n + kind);
      const StatReference<T> ref = stat_reference(x);
      const int d = depth<T>(n);
      const std::string where = "kind " + std::to_string(kind) + " n " + std::to_string(n);

      // norm ord 1: g_d sum |x| plus the final rounding.
      const long double n1 = reproducible_norm_cpu(x.data(), n, 1);
      EXPECT_LE(std::fabs(n1 - ref.abs_sum), g(d, u) * ref.abs_sum + u * ref.abs_sum) << where;

      // norm ord 2: (g'/2 + u) relative.
      const long double exact2 = std::sqrt(ref.sum_sq);
      const long double u2 = std::is_same_v<T, float> || std::is_same_v<T, __nv_bfloat16>
                                 ? std::ldexp(1.0L, -53) : u;
      const int d2 = std::is_same_v<T, double> ? d + 1 : d;
      const long double n2 = reproducible_norm_cpu(x.data(), n, 2);
      EXPECT_LE(std::fabs(n2 - exact2), (g(d2, u2) / 2 + u) * exact2 * 1.0001L) << where;

      // var (correction 1 and 0), std: the one-pass bound, g_{2d+10} (M2 + the centred squares).
      const long double centred = centred_squares(x);
      for (double correction : {1.0, 0.0}) {
        if (n <= correction) continue;
        StatPair<A> pair{};
        reproducible_reduce_cpu(Reduction::var_mean(correction), dtype_of<T>::value, x.data(),
                                nullptr, n, &pair);
        const long double m = pair.mean;
        const long double mean_err = std::fabs(m - ref.mean);
        EXPECT_LE(mean_err, g(d, u) * ref.abs_sum / n + u * std::fabs(m)) << where;
        const long double divisor = static_cast<long double>(n) - correction;
        const long double sum_bound = g(2 * d + 10, u) * (ref.m2 + centred);
        const long double exact_var = ref.m2 / divisor;
        if (std::getenv("REDUCELAB_VAR_RATIO") != nullptr)
          std::printf("%s %s: |m2 - M2| / (u (M2 + C)) = %.2Lf, d = %d, C / M2 = %.3Lg\n",
                      typeid(T).name(), where.c_str(),
                      std::fabs(pair.first * divisor - ref.m2) / (u * (ref.m2 + centred)), d,
                      centred / ref.m2);
        const long double var_bound = sum_bound / divisor * (1 + 3 * u) + 2 * u * exact_var;
        EXPECT_LE(std::fabs(pair.first - exact_var), var_bound)
            << where << " correction " << correction << " var " << static_cast<double>(pair.first)
            << " exact " << static_cast<double>(exact_var);
        EXPECT_EQ(bits(pair.first), bits(reproducible_var_cpu(x.data(), n, correction))) << where;
        EXPECT_EQ(bits(pair.mean), bits(reproducible_mean_cpu(x.data(), n))) << where;
        StatPair<A> std_pair{};
        reproducible_reduce_cpu(Reduction::std_mean(correction), dtype_of<T>::value, x.data(),
                                nullptr, n, &std_pair);
        // |sqrt(v') - sqrt(v)| = |v' - v| / (sqrt(v') + sqrt(v)), then the root's rounding.
        const long double exact_std = std::sqrt(exact_var);
        const long double roots = std::sqrt(static_cast<long double>(pair.first)) + exact_std;
        const long double std_bound =
            (roots > 0 ? var_bound / roots : 0) + u * std::fabs(std_pair.first);
        EXPECT_LE(std::fabs(std_pair.first - exact_std), std_bound * 1.0001L) << where;
      }

      // logsumexp (one pass of merged pairs): g_{5d} + u ln n + 2 u ln(sum) + u |r|, absolute.
      const long double exact_lse = ref.max + std::log(ref.sum_exp);
      const long double lse = reproducible_logsumexp_cpu(x.data(), n);
      const long double lse_bound = g(5 * d, u) + std::log(static_cast<long double>(n)) * u +
                                    2 * u * std::log(ref.sum_exp) + u * std::fabs(exact_lse);
      EXPECT_LE(std::fabs(lse - exact_lse), lse_bound * 1.001L)
          << where << " got " << static_cast<double>(lse) << " exact "
          << static_cast<double>(exact_lse);
    }
  }
}

// The plan is computed without a division (the segment kernels compute it for every segment);
// it must be the plan of the order's definition: K the smallest power of two >= kMinSteps with
// ceil(n / (P K)) <= kMaxTiles, and ceil(n / E) tiles.
TEST(ReproducibleCpuValues, PlanWithoutDivisionIsTheDefinedPlan) {
  std::mt19937_64 gen(46);
  for (std::size_t size : {std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
    const std::size_t lanes = plan::lanes_for(size);
    for (int e = 0; e <= 50; ++e) {
      for (int k = 0; k < 300; ++k) {
        const std::size_t power = std::size_t{1} << e;
        // around the power of two, then anywhere up to twice it
        const std::size_t n = k < 5 ? power + k - (power >= 2 ? 2 : 0) : power + gen() % (power + 1);
        std::size_t steps = plan::kMinSteps;
        while ((n + lanes * steps - 1) / (lanes * steps) > plan::kMaxTiles) steps *= 2;
        const plan::Plan p = plan::plan_for(size, n);
        ASSERT_EQ(p.steps, steps) << "size " << size << " n " << n;
        ASSERT_EQ(plan::steps_for(size, n), steps) << "size " << size << " n " << n;
        ASSERT_EQ(p.tile, lanes * steps);
        ASSERT_EQ(p.tiles, (n + p.tile - 1) / p.tile) << "size " << size << " n " << n;
        ASSERT_EQ(p.groups, (p.tiles + plan::kGroupTiles - 1) / plan::kGroupTiles);
        ASSERT_LE(p.tiles, plan::kMaxTiles);
      }
    }
  }
}

// The norms are fixed-order sums of their terms: the same bits as the sum of the terms written
// out here (the CPU function's order is the sum's, so the sum of precomputed terms in sum_t gives
// the same bits). var has its own order (one pass: the kernel model below checks it).
TEST(ReproducibleCpuValues, StatisticsAreTheFixedOrderSumOfTheirTerms) {
  const std::size_t n = 100003;
  const std::vector<float> x = make_input<float>(Input::wide, n, kSeed);
  std::vector<float> abs(n);
  for (std::size_t i = 0; i < n; ++i) abs[i] = std::fabs(x[i]);
  EXPECT_EQ(bits(reproducible_norm_cpu(x.data(), n, 1)), bits(reproducible_sum_cpu(abs.data(), n)));
  // norm ord 2 of f32 is the double sum of exact squares: the double sum of x*x as f64 input.
  std::vector<double> sq(n);
  for (std::size_t i = 0; i < n; ++i) sq[i] = static_cast<double>(x[i]) * x[i];
  // Not the same order (f64's lanes are 64, f32's 128), so only close, not equal:
  const double root = std::sqrt(reproducible_sum_cpu(sq.data(), n));
  EXPECT_NEAR(reproducible_norm_cpu(x.data(), n, 2), root, root * 1e-7);
}

TEST(ReproducibleCpuValues, PortableExpAndLogWithinOneUlp) {
  namespace portable = detail::portable;
  auto check = [](auto zero, int count) {
    using A = decltype(zero);
    std::mt19937_64 rng(kSeed);
    std::uniform_real_distribution<double> unit(-1, 1);
    const double lo = sizeof(A) == 4 ? -104.0 : -746.0;
    const double hi = sizeof(A) == 4 ? 88.7 : 709.7;
    auto ulps = [](A got, long double want) -> long double {
      const A w = static_cast<A>(want);
      if (std::isinf(w)) return got == w ? 0 : 1e9;
      const long double ulp = std::fabs(w) < std::numeric_limits<A>::min()
                                  ? std::numeric_limits<A>::denorm_min()
                                  : std::fabs(std::nextafter(w, A(0)) - w) * (w == 0 ? 0 : 1);
      return ulp == 0 ? (got == 0 ? 0 : 1e9) : std::fabs(got - want) / ulp;
    };
    long double worst_exp = 0, worst_log = 0;
    for (int i = 0; i < count; ++i) {
      const double span = i % 3 == 0 ? 1.0 : (i % 3 == 1 ? 1e-4 : 1.0);
      const A x = static_cast<A>(i % 3 == 0 ? lo + (hi - lo) * (unit(rng) + 1) / 2 : span * unit(rng) * 40);
      worst_exp = std::max(worst_exp, ulps(portable::exp_rn(x), std::exp(static_cast<long double>(x))));
      const int e = static_cast<int>(unit(rng) * (sizeof(A) == 4 ? 149 : 1074));
      const A y = i % 4 == 0 ? static_cast<A>(1 + unit(rng) * 1e-3)
                             : static_cast<A>(std::ldexp(1.5 + unit(rng) / 2, e));
      if (y > 0)
        worst_log = std::max(worst_log, ulps(portable::log_rn(y), std::log(static_cast<long double>(y))));
    }
    EXPECT_LE(worst_exp, 1.0L) << sizeof(A);
    EXPECT_LE(worst_log, 1.0L) << sizeof(A);
    const A inf = std::numeric_limits<A>::infinity();
    EXPECT_EQ(portable::exp_rn(A(0)), A(1));
    EXPECT_EQ(bits(portable::log_rn(A(1))), bits(A(0)));
    EXPECT_EQ(portable::exp_rn(-inf), A(0));
    EXPECT_EQ(portable::exp_rn(inf), inf);
    EXPECT_EQ(portable::exp_rn(A(1000)), inf);
    EXPECT_EQ(portable::log_rn(A(0)), -inf);
    EXPECT_EQ(portable::log_rn(inf), inf);
    EXPECT_TRUE(std::isnan(portable::log_rn(A(-1))));
    EXPECT_TRUE(std::isnan(portable::exp_rn(std::numeric_limits<A>::quiet_NaN())));
    EXPECT_EQ(portable::exp_rn(std::numeric_limits<A>::lowest() ), A(0));
    EXPECT_GT(portable::exp_rn(static_cast<A>(sizeof(A) == 4 ? -103.0 : -744.0)), A(0));  // subnormal
  };
  check(0.0f, 400000);
  check(0.0, 400000);
}

TEST(ReproducibleCpuValues, StatisticsSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::uint64_t canonical = 0x7fffffff;
  const std::vector<float> one = {3.0f};
  // n <= correction: 0 / 0 = NaN (one element), s / 0 = inf; as the default mode.
  EXPECT_EQ(bits(reproducible_var_cpu(one.data(), 1, 1)), canonical);
  EXPECT_EQ(reproducible_var_cpu(one.data(), 1, 0), 0.0f);
  const std::vector<float> two = {1.0f, 2.0f};
  EXPECT_EQ(reproducible_var_cpu(two.data(), 2, 2), inf);
  EXPECT_EQ(reproducible_var_cpu(two.data(), 2, 1), 0.5f);
  // NaN and infinities.
  std::vector<float> x(1000, 1.5f);
  x[700] = inf;
  EXPECT_EQ(bits(reproducible_var_cpu(x.data(), x.size())), canonical);  // x - inf
  EXPECT_EQ(reproducible_logsumexp_cpu(x.data(), x.size()), inf);
  EXPECT_EQ(reproducible_norm_cpu(x.data(), x.size(), 1), inf);
  EXPECT_EQ(reproducible_norm_cpu(x.data(), x.size(), 2), inf);
  x[300] = -nan;
  EXPECT_EQ(bits(reproducible_logsumexp_cpu(x.data(), x.size())), canonical);
  EXPECT_EQ(bits(reproducible_norm_cpu(x.data(), x.size(), 2)), canonical);
  const std::vector<float> minus_inf(77, -inf);
  EXPECT_EQ(reproducible_logsumexp_cpu(minus_inf.data(), 77), -inf);
  std::vector<float> one_finite = minus_inf;
  one_finite[40] = 2.5f;
  EXPECT_EQ(reproducible_logsumexp_cpu(one_finite.data(), 77), 2.5f);
  const std::vector<float> zeros(50, 0.0f);
  EXPECT_EQ(reproducible_logsumexp_cpu(zeros.data(), 50), std::log(50.0f));  // within 1 ulp of it
  // Empty: the default mode's values.
  EXPECT_EQ(bits(reproducible_var_cpu<float>(nullptr, 0)), canonical);
  EXPECT_EQ(bits(reproducible_norm_cpu<float>(nullptr, 0, 2)), bits(0.0f));
  EXPECT_EQ(reproducible_logsumexp_cpu<float>(nullptr, 0), -inf);
  StatPair<double> pair{};
  reproducible_reduce_cpu(Reduction::std_mean(), DType::f64, nullptr, nullptr, 0, &pair);
  EXPECT_EQ(bits(pair.first), std::uint64_t{0x7fffffffffffffff});
  EXPECT_EQ(bits(pair.mean), std::uint64_t{0x7fffffffffffffff});
  // norm ord 2 without overflow or underflow: f32 squares in double, f64 scaled.
  const std::vector<float> big(1000, 1e30f);
  EXPECT_NEAR(reproducible_norm_cpu(big.data(), 1000, 2), 1e30 * std::sqrt(1000.0), 1e30 * 1e-5);
  const std::vector<float> tiny(1000, 1e-40f);  // subnormal floats
  EXPECT_NEAR(reproducible_norm_cpu(tiny.data(), 1000, 2), 1e-40f * std::sqrt(1000.0f), 1e-45);
  for (double scale : {std::ldexp(1.0, 700), std::ldexp(1.0, -1000), std::ldexp(1.0, -1070)}) {
    std::vector<double> v(4097);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = scale * (1 + (i % 3));
    long double exact = 0;
    for (double e : v) exact += (static_cast<long double>(e) / scale) * (static_cast<long double>(e) / scale);
    exact = std::sqrt(exact) * scale;
    const double got = reproducible_norm_cpu(v.data(), v.size(), 2);
    EXPECT_TRUE(std::isfinite(got) && got > 0) << scale;
    EXPECT_LE(std::fabs(got - exact), exact * 1e-14L + std::numeric_limits<double>::denorm_min())
        << scale;
  }
  // The large mean against a small spread: the centred batches keep the spread.
  std::vector<float> shifted(10000);
  for (std::size_t i = 0; i < shifted.size(); ++i) shifted[i] = 1e6f + (i % 2 == 0 ? 0.5f : -0.5f);
  EXPECT_NEAR(reproducible_var_cpu(shifted.data(), shifted.size(), 0), 0.25f, 1e-6f);
}

// ---- special values and errors ---------------------------------------------------------------

TEST(ReproducibleCpuValues, SignedZerosNaNAndEmpty) {
  const std::vector<float> negative_zeros(1000, -0.0f);
  EXPECT_EQ(bits(reproducible_sum_cpu(negative_zeros.data(), 1000)), bits(-0.0f));
  std::vector<float> mixed = negative_zeros;
  mixed[517] = 0.0f;
  EXPECT_EQ(bits(reproducible_sum_cpu(mixed.data(), 1000)), bits(0.0f));
  EXPECT_EQ(bits(reproducible_sum_cpu<float>(nullptr, 0)), bits(0.0f));  // as reduce(): +0
  std::vector<float> with_nan(300, 1.0f);
  with_nan[100] = -std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(bits(reproducible_sum_cpu(with_nan.data(), 300)), std::uint64_t{0x7fffffff});
  std::vector<double> infinities = {std::numeric_limits<double>::infinity(), 1.0,
                                    -std::numeric_limits<double>::infinity()};
  EXPECT_EQ(bits(reproducible_sum_cpu(infinities.data(), 3)), std::uint64_t{0x7fffffffffffffff});
  EXPECT_TRUE(std::isnan(reproducible_mean_cpu<float>(nullptr, 0)));
  const std::vector<float> ones(1000, 1.0f);
  EXPECT_EQ(reproducible_mean_cpu(ones.data(), 1000), 1.0f);
  // Alternating 1e8 and 1: a sequential float sum loses every 1; the lanes keep them apart.
  std::vector<float> alternating(4096);
  for (std::size_t i = 0; i < alternating.size(); ++i) alternating[i] = i % 2 == 0 ? 1e8f : 1.0f;
  EXPECT_EQ(reproducible_sum_cpu(alternating.data(), alternating.size()), 2048 * 1e8f + 2048.0f);
}

TEST(ReproducibleCpuValues, RejectsWhatItDoesNotCompute) {
  const std::vector<std::int32_t> ints(4, 1);
  std::int64_t out = 0;
  EXPECT_THROW(reproducible_reduce_cpu(Op::sum, DType::i32, ints.data(), nullptr, 4, &out), Error);
  const std::vector<float> x(4, 1.0f);
  float value = 0;
  EXPECT_THROW(reproducible_reduce_cpu(Op::max, DType::f32, x.data(), nullptr, 4, &value), Error);
  EXPECT_THROW(reproducible_reduce_cpu(Op::dot, DType::f32, x.data(), nullptr, 4, &value), Error);
  EXPECT_THROW(reproducible_reduce_cpu(Op::sum, DType::f32, x.data(), x.data(), 4, &value), Error);
  // norm of ord 0 and inf are order-free (the default mode's bits), not computed here.
  EXPECT_THROW(reproducible_reduce_cpu(Reduction::norm(0), DType::f32, x.data(), nullptr, 4, &value),
               Error);
  EXPECT_THROW(reproducible_reduce_cpu(Reduction::norm(INFINITY), DType::f32, x.data(), nullptr, 4,
                                       &value),
               Error);
  EXPECT_THROW(reproducible_reduce_cpu(Reduction::var(-1), DType::f32, x.data(), nullptr, 4, &value),
               Error);
  EXPECT_THROW(reproducible_reduce_cpu(Reduction::var(NAN), DType::f32, x.data(), nullptr, 4, &value),
               Error);
  EXPECT_THROW(reproducible_reduce_cpu(Op::logsumexp, DType::f32, x.data(), x.data(), 4, &value),
               Error);
  try {
    reproducible_reduce_cpu(Reduction::norm(0), DType::f32, x.data(), nullptr, 4, &value);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("order-free"), std::string::npos) << e.what();
  }
}

// Which forms take the gpu_to_gpu mode (checked before any launch, so on the CPU): the
// whole-array, segmented and axis forms for the ops with a fixed order; the list form and the
// sharded reduce throw rather than give bits that would not repeat; order-free ops pass anywhere.
TEST(ReproducibleCpuValues, FormsThatTakeTheFixedOrder) {
  const Reduction sum = Reduction(Op::sum).reproducible();
  for (const char* form : {"reduce", "reduce_segments", "reduce_axes"})
    EXPECT_NO_THROW(detail::require_determinism(sum, DType::f32, form)) << form;
  for (const char* form : {"reduce_tensors", "reduce_to_shard_state", "reduce_rows_sharded"}) {
    EXPECT_THROW(detail::require_determinism(sum, DType::f32, form), Error) << form;
    EXPECT_NO_THROW(detail::require_determinism(Reduction(Op::max).reproducible(), DType::f32,
                                                form))
        << form;
    EXPECT_NO_THROW(detail::require_determinism(sum, DType::i32, form)) << form;
  }
  EXPECT_TRUE(detail::takes_fixed_order(Reduction::var().reproducible(), DType::bf16));
  EXPECT_FALSE(detail::takes_fixed_order(Reduction::var(), DType::bf16));
  EXPECT_FALSE(detail::takes_fixed_order(Reduction(Op::argmax).reproducible(), DType::f64));
}

TEST(ReproducibleCpuValues, ApiDefaultsToRunToRun) {
  static_assert(Reduction().determinism == Determinism::run_to_run);
  static_assert(Reduction(Op::dot).reproducible().determinism == Determinism::gpu_to_gpu);
  static_assert(Reduction::var(0).reproducible().correction == 0);
  static_assert(to_string(Determinism::gpu_to_gpu) == "gpu_to_gpu");
}

}  // namespace
}  // namespace reducelab

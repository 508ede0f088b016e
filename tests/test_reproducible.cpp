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
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "bench/reference.hpp"
#include "reduce/reproducible_plan.hpp"
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
}

TEST(ReproducibleCpuValues, ApiDefaultsToRunToRun) {
  static_assert(Reduction().determinism == Determinism::run_to_run);
  static_assert(Reduction(Op::dot).reproducible().determinism == Determinism::gpu_to_gpu);
  static_assert(Reduction::var(0).reproducible().correction == 0);
  static_assert(to_string(Determinism::gpu_to_gpu) == "gpu_to_gpu");
}

}  // namespace
}  // namespace reducelab

// The gpu_to_gpu mode on the GPU (issue 14): the same bits as the CPU function
// (reproducible_reduce_cpu), whatever the grid (forced to 1, 7, 132 and 8,192 blocks through the
// test hook), the block size (128, 256, 512), the offset of the pointers (0..15 elements) and
// the stream; adversarial inputs; the order-free ops give the same bits in both modes and at
// every grid; the forms without a fixed order yet throw.

#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "reduce/reproducible.hpp"
#include "reducelab/reducelab.hpp"

namespace reducelab::test {
namespace {


enum class Input { normal, alternating, cancellation, subnormal };

template <class T>
std::vector<T> input(Input kind, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const bool half = sizeof(T) == 2;
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    double v = normal(rng);
    if (kind == Input::alternating) v = i % 2 == 0 ? (half ? 1e4 : 1e8) : 1.0;
    if (kind == Input::cancellation) v = (i % 2 == 0 ? 1 : -1) * (half ? 1e3 : 1e7) + 1e-3 * v;
    if (kind == Input::subnormal)
      v *= half ? std::ldexp(1.0, -20) : (sizeof(T) == 4 ? std::ldexp(1.0, -140) : std::ldexp(1.0, -1060));
    x[i] = bench::from_double<T>(v);
  }
  return x;
}

template <class R>
std::uint64_t bits(const R& v) {
  std::uint64_t out = 0;
  std::memcpy(&out, &v, sizeof(R));
  return out;
}

// Restores the library's own launch when a test ends.
struct ForcedLaunch {
  ForcedLaunch(unsigned grid, int block, int deal = 0, int settle = 0) {
    detail::ReproducibleLaunch launch{};
    launch.grid = grid;
    launch.block = block;
    launch.deal = deal;
    launch.settle = settle;
    detail::set_reproducible_launch(launch);
  }
  ~ForcedLaunch() { detail::set_reproducible_launch({}); }
};

template <class T>
sum_t<T> gpu(Op op, const DeviceBuffer<T>& x, std::size_t x_offset, const DeviceBuffer<T>* y,
             std::size_t y_offset, std::size_t n, cudaStream_t stream = nullptr) {
  sum_t<T> out{};
  reduce_to_host(Reduction(op).reproducible(), dtype_of<T>::value, x.data() + x_offset,
                 y != nullptr ? y->data() + y_offset : nullptr, n, &out, stream);
  return out;
}

template <class T>
class ReproducibleGpu : public GpuTest {};
using FloatTypes = ::testing::Types<float, double, __half, __nv_bfloat16>;
TYPED_TEST_SUITE(ReproducibleGpu, FloatTypes);

const std::size_t kSizes[] = {1, 31, 33, 127, 129, 1000, 4097, 65537, (std::size_t{1} << 20) + 3,
                              (std::size_t{1} << 22) + 5};

TYPED_TEST(ReproducibleGpu, SameBitsAsTheCpuAtEveryOffset) {
  using T = TypeParam;
  for (Input kind : {Input::normal, Input::alternating, Input::cancellation, Input::subnormal}) {
    for (std::size_t n : kSizes) {
      const std::vector<T> hx = input<T>(kind, n, kSeed + n);
      const std::vector<T> hy = input<T>(Input::normal, n, kSeed + 3 * n);
      const auto want_sum = reproducible_sum_cpu(hx.data(), n);
      const auto want_dot = reproducible_dot_cpu(hx.data(), hy.data(), n);
      for (std::size_t offset = 0; offset < 16; ++offset) {
        const DeviceBuffer<T> dx = upload(hx, offset);
        const DeviceBuffer<T> dy = upload(hy, (offset * 7) % 16);  // y at another offset too
        const DeviceBuffer<T> dy_same = upload(hy, offset);
        EXPECT_EQ(bits(gpu(Op::sum, dx, offset, static_cast<const DeviceBuffer<T>*>(nullptr), 0, n)),
                  bits(want_sum))
            << "seed " << kSeed << " kind " << static_cast<int>(kind) << " n " << n << " offset "
            << offset;
        EXPECT_EQ(bits(gpu(Op::dot, dx, offset, &dy, (offset * 7) % 16, n)), bits(want_dot))
            << "dot, y at another offset: kind " << static_cast<int>(kind) << " n " << n
            << " offset " << offset;
        EXPECT_EQ(bits(gpu(Op::dot, dx, offset, &dy_same, offset, n)), bits(want_dot))
            << "dot, y at the same offset: kind " << static_cast<int>(kind) << " n " << n
            << " offset " << offset;
      }
    }
  }
}

TYPED_TEST(ReproducibleGpu, SameBitsOnEveryGridAndBlockSize) {
  using T = TypeParam;
  for (std::size_t n : {std::size_t{1000}, std::size_t{65537}, (std::size_t{1} << 22) + 5,
                        (std::size_t{1} << 25) + 3}) {
    const std::vector<T> hx = input<T>(Input::normal, n, kSeed + n);
    const std::vector<T> hy = input<T>(Input::cancellation, n, kSeed + 5 * n);
    const auto want_sum = reproducible_sum_cpu(hx.data(), n);
    const auto want_dot = reproducible_dot_cpu(hx.data(), hy.data(), n);
    for (std::size_t offset : {std::size_t{0}, std::size_t{3}}) {
      const DeviceBuffer<T> dx = upload(hx, offset);
      const DeviceBuffer<T> dy = upload(hy, offset);
      for (unsigned grid : {0u, 1u, 7u, 132u, 8192u}) {
        for (int block : {128, 256, 512}) {
          const ForcedLaunch forced(grid, block);
          EXPECT_EQ(bits(gpu(Op::sum, dx, offset, static_cast<const DeviceBuffer<T>*>(nullptr), 0, n)),
                    bits(want_sum))
              << "n " << n << " offset " << offset << " grid " << grid << " block " << block;
          EXPECT_EQ(bits(gpu(Op::dot, dx, offset, &dy, offset, n)), bits(want_dot))
              << "dot n " << n << " offset " << offset << " grid " << grid << " block " << block;
        }
      }
    }
  }
}

// The whole-array kernel deals tiles as contiguous runs per warp or tile t to warp t mod W (the
// latter for long tiles, reproducible_launch.cuh): both give the same bits, on any grid.
TYPED_TEST(ReproducibleGpu, SameBitsUnderEitherDealOfTheTiles) {
  using T = TypeParam;
  for (std::size_t n : {std::size_t{65537}, (std::size_t{1} << 22) + 5}) {
    const std::vector<T> hx = input<T>(Input::alternating, n, kSeed + 11 * n);
    const std::vector<T> hy = input<T>(Input::normal, n, kSeed + 13 * n);
    const auto want_sum = reproducible_sum_cpu(hx.data(), n);
    const auto want_dot = reproducible_dot_cpu(hx.data(), hy.data(), n);
    for (std::size_t offset : {std::size_t{0}, std::size_t{5}}) {
      const DeviceBuffer<T> dx = upload(hx, offset);
      const DeviceBuffer<T> dy = upload(hy, offset);
      for (int deal : {1, 2}) {
        for (unsigned grid : {0u, 7u, 132u}) {
          for (int block : {128, 512}) {
            const ForcedLaunch forced(grid, block, deal);
            EXPECT_EQ(bits(gpu(Op::sum, dx, offset, static_cast<const DeviceBuffer<T>*>(nullptr), 0, n)),
                      bits(want_sum))
                << "n " << n << " offset " << offset << " deal " << deal << " grid " << grid
                << " block " << block;
            EXPECT_EQ(bits(gpu(Op::dot, dx, offset, &dy, offset, n)), bits(want_dot))
                << "dot n " << n << " offset " << offset << " deal " << deal << " grid " << grid
                << " block " << block;
          }
        }
      }
    }
  }
}

// The runs' tile partials folded by two levels of tickets or by one (the whole tree in the
// last block): sizes of 3 to 17 groups of short tiles, where both serve.
TYPED_TEST(ReproducibleGpu, SameBitsUnderEitherSettleOfTheRuns) {
  using T = TypeParam;
  for (std::size_t n : {(std::size_t{1} << 20) + 3, (std::size_t{1} << 23) + 5}) {
    const std::vector<T> hx = input<T>(Input::cancellation, n, kSeed + 17 * n);
    const std::vector<T> hy = input<T>(Input::normal, n, kSeed + 19 * n);
    const auto want_sum = reproducible_sum_cpu(hx.data(), n);
    const auto want_dot = reproducible_dot_cpu(hx.data(), hy.data(), n);
    for (std::size_t offset : {std::size_t{0}, std::size_t{5}}) {
      const DeviceBuffer<T> dx = upload(hx, offset);
      const DeviceBuffer<T> dy = upload(hy, offset);
      for (int settle : {1, 2}) {
        for (unsigned grid : {0u, 7u, 132u, 8192u}) {
          const ForcedLaunch forced(grid, 512, 1, settle);
          EXPECT_EQ(bits(gpu(Op::sum, dx, offset, static_cast<const DeviceBuffer<T>*>(nullptr), 0, n)),
                    bits(want_sum))
              << "n " << n << " offset " << offset << " settle " << settle << " grid " << grid;
          EXPECT_EQ(bits(gpu(Op::dot, dx, offset, &dy, offset, n)), bits(want_dot))
              << "dot n " << n << " offset " << offset << " settle " << settle << " grid " << grid;
        }
      }
    }
  }
}

TYPED_TEST(ReproducibleGpu, StreamOrderedAndOtherStreams) {
  using T = TypeParam;
  const std::size_t n = (std::size_t{1} << 20) + 7;
  const std::vector<T> hx = input<T>(Input::normal, n, kSeed);
  const DeviceBuffer<T> dx = upload(hx);
  const auto want = reproducible_sum_cpu(hx.data(), n);
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int call = 0; call < 3; ++call) {
    const std::vector<unsigned char> out = poisoned_output(sizeof(sum_t<T>), [&](void* d_out) {
      reduce(Reduction(Op::sum).reproducible(), dtype_of<T>::value, dx.data(), nullptr, n, d_out,
             stream);
      REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    });
    sum_t<T> got{};
    std::memcpy(&got, out.data(), sizeof(got));
    EXPECT_EQ(bits(got), bits(want)) << "call " << call;
  }
  release_workspace(stream);
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

TYPED_TEST(ReproducibleGpu, MeanIsTheSumOverN) {
  using T = TypeParam;
  for (std::size_t n : {std::size_t{1}, std::size_t{4097}, (std::size_t{1} << 21) + 1}) {
    const std::vector<T> hx = input<T>(Input::normal, n, kSeed + n);
    const DeviceBuffer<T> dx = upload(hx, 5);
    stat_t<T> got{};
    reduce_to_host(Reduction(Op::mean).reproducible(), dtype_of<T>::value, dx.data() + 5, nullptr,
                   n, &got);
    EXPECT_EQ(bits(got), bits(reproducible_mean_cpu(hx.data(), n))) << "n " << n;
  }
}

TEST_F(GpuTest, ReproducibleSpecialValues) {
  std::vector<float> h(5000, -0.0f);
  DeviceBuffer<float> d = upload(h, 1);
  EXPECT_EQ(bits(reducelab::test::gpu<float>(Op::sum, d, 1, nullptr, 0, h.size())), bits(-0.0f));
  h[4001] = std::nanf("");
  d = upload(h, 1);
  EXPECT_EQ(bits(reducelab::test::gpu<float>(Op::sum, d, 1, nullptr, 0, h.size())),
            std::uint64_t{0x7fffffff});
}

// ---- the statistics (reproducible_stats.hpp) ----------------------------------------------

// The statistics in the gpu_to_gpu mode, each with its parameters.
const Reduction kStatistics[] = {Reduction::norm(1), Reduction::norm(2), Reduction::var(1),
                                 Reduction::stddev(0), Reduction::var_mean(1),
                                 Reduction::std_mean(2.5), Reduction(Op::logsumexp)};

std::string name_of(const Reduction& r) {
  return std::string(to_string(r.op)) + " ord " + std::to_string(r.ord) + " correction " +
         std::to_string(r.correction);
}

template <class T>
std::vector<unsigned char> gpu_statistic(const Reduction& r, const T* d_x, std::size_t n) {
  std::vector<unsigned char> out(result_size(r.op, dtype_of<T>::value));
  reduce_to_host(r.reproducible(), dtype_of<T>::value, d_x, nullptr, n, out.data());
  return out;
}

template <class T>
std::vector<unsigned char> cpu_statistic(const Reduction& r, const std::vector<T>& x,
                                         std::size_t n) {
  std::vector<unsigned char> out(result_size(r.op, dtype_of<T>::value));
  reproducible_reduce_cpu(r, dtype_of<T>::value, x.data(), nullptr, n, out.data());
  return out;
}

// Adversarial inputs for the statistics: a large mean against a small spread, values near the
// overflow of squares (f64: 2^600, 2^-1000; f32: 1e30), -inf and NaN mixed in. For f64's
// 2-norm, whose interior tiles compute (2^-600 x)^2 only for batches with an |x| >= 2^60 and
// (2^600 x)^2 only until an |x| >= 2^-450 (norm2_interior_partial): down_sparse has one 2^500
// among elements just under 2^60 (terms +0) and, one in 1,000, in [2^60, 2^89) (subnormal
// terms), so the sum scaled by 2^-600 counts while most batches skip it; up_dead_late has tiny
// elements and a last one of 1.
enum class StatInput {
  shifted, huge, tiny, with_minus_inf, every_magnitude, down_sparse, up_dead_late
};

template <class T>
std::vector<T> stat_input(StatInput kind, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const bool half = sizeof(T) == 2;
  const bool f16 = std::is_same_v<T, __half>;
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    double v = normal(rng);
    switch (kind) {
      case StatInput::shifted: v = (half ? 300.0 : 1e6) + v; break;
      case StatInput::huge:
        v *= f16 ? 3e4 : (sizeof(T) == 8 ? std::ldexp(1.0, 600) : 1e30);
        break;
      case StatInput::tiny:
        v *= f16 ? 1e-6 : (sizeof(T) == 8 ? std::ldexp(1.0, -1000) : 1e-40);
        break;
      case StatInput::with_minus_inf:
        v = i % 5 == 3 ? -INFINITY : 40 * v;
        break;
      case StatInput::every_magnitude: {
        // Exponents over the type's whole range, subnormals included (f64's 2-norm then takes
        // the sum scaled by 2^-600, where the smallest squares vanish).
        const int lo = f16 ? -24 : (sizeof(T) == 8 ? -1070 : -140);
        const int hi = f16 ? 12 : (sizeof(T) == 8 ? 1020 : 125);
        v = std::ldexp(v, lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo)));
        break;
      }
      case StatInput::down_sparse: {
        if (sizeof(T) != 8) break;  // f64's case; the others keep N(0, 1)
        const double mantissa = std::copysign(0.5 + 0.5 * std::fabs(std::tanh(v)), v);  // [0.5, 1)
        const int e = i % 1000 == 999 ? 61 + static_cast<int>(rng() % 29)
                                      : 60 - static_cast<int>(rng() % 20);
        v = i == n / 2 ? std::ldexp(0.75, 500) : std::ldexp(mantissa, e);
        break;
      }
      case StatInput::up_dead_late:
        if (sizeof(T) == 8) v = i + 1 == n ? 1.0 : std::ldexp(v, -1000);
        break;
    }
    x[i] = bench::from_double<T>(v);
  }
  return x;
}

TYPED_TEST(ReproducibleGpu, StatisticsSameBitsAsTheCpuAtEveryOffset) {
  using T = TypeParam;
  for (Input kind : {Input::normal, Input::alternating, Input::cancellation, Input::subnormal}) {
    for (std::size_t n : kSizes) {
      const std::vector<T> hx = input<T>(kind, n, kSeed + n);
      for (const Reduction& r : kStatistics) {
        const std::vector<unsigned char> want = cpu_statistic(r, hx, n);
        for (std::size_t offset = 0; offset < 16; ++offset) {
          const DeviceBuffer<T> dx = upload(hx, offset);
          EXPECT_EQ(gpu_statistic(r, dx.data() + offset, n), want)
              << name_of(r) << " kind " << static_cast<int>(kind) << " n " << n << " offset "
              << offset;
        }
      }
    }
  }
}

TYPED_TEST(ReproducibleGpu, StatisticsSameBitsOnEveryGridAndBlockSize) {
  using T = TypeParam;
  for (std::size_t n : {std::size_t{1000}, std::size_t{65537}, (std::size_t{1} << 22) + 5,
                        (std::size_t{1} << 25) + 3}) {
    const std::vector<T> hx = input<T>(Input::normal, n, kSeed + n);
    for (std::size_t offset : {std::size_t{0}, std::size_t{3}}) {
      const DeviceBuffer<T> dx = upload(hx, offset);
      for (const Reduction& r : kStatistics) {
        const std::vector<unsigned char> want = cpu_statistic(r, hx, n);
        for (unsigned grid : {0u, 1u, 7u, 132u, 8192u}) {
          for (int block : {128, 256, 512}) {
            const ForcedLaunch forced(grid, block);
            EXPECT_EQ(gpu_statistic(r, dx.data() + offset, n), want)
                << name_of(r) << " n " << n << " offset " << offset << " grid " << grid
                << " block " << block;
          }
        }
      }
    }
  }
}

TYPED_TEST(ReproducibleGpu, StatisticsAdversarialInputsAndSpecialValues) {
  using T = TypeParam;
  for (StatInput kind : {StatInput::shifted, StatInput::huge, StatInput::tiny,
                         StatInput::with_minus_inf, StatInput::every_magnitude,
                         StatInput::down_sparse, StatInput::up_dead_late}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{777}, (std::size_t{1} << 20) + 3}) {
      std::vector<T> hx = stat_input<T>(kind, n, kSeed + 13 * n);
      for (int special = 0; special < 4; ++special) {
        // 0: as made; 1: a +inf; 2: a NaN; 3: every element -inf.
        if (special == 1) hx[n / 2] = bench::from_double<T>(INFINITY);
        if (special == 2) hx[n / 3] = bench::from_double<T>(NAN);
        if (special == 3) std::fill(hx.begin(), hx.end(), bench::from_double<T>(-INFINITY));
        for (std::size_t offset : {std::size_t{0}, std::size_t{5}}) {
          const DeviceBuffer<T> dx = upload(hx, offset);
          for (const Reduction& r : kStatistics) {
            EXPECT_EQ(gpu_statistic(r, dx.data() + offset, n), cpu_statistic(r, hx, n))
                << name_of(r) << " kind " << static_cast<int>(kind) << " special " << special
                << " n " << n << " offset " << offset;
          }
        }
      }
    }
  }
  // Empty: the default kernel's values, the CPU function's too.
  const DeviceBuffer<T> empty = upload(std::vector<T>(1));
  for (const Reduction& r : kStatistics) {
    const std::vector<unsigned char> got = gpu_statistic(r, empty.data(), 0);
    const std::vector<unsigned char> want = cpu_statistic(r, std::vector<T>{}, 0);
    // NaN payloads of the default kernel's 0 / 0 are not promised: compare values, NaN as NaN.
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < got.size(); k += sizeof(stat_t<T>)) {
      stat_t<T> a{}, b{};
      std::memcpy(&a, got.data() + k, sizeof(a));
      std::memcpy(&b, want.data() + k, sizeof(b));
      EXPECT_TRUE((a != a && b != b) || bits(a) == bits(b)) << name_of(r) << " empty";
    }
  }
}

TYPED_TEST(ReproducibleGpu, StatisticsStreamOrderedOnAnotherStream) {
  using T = TypeParam;
  const std::size_t n = (std::size_t{1} << 20) + 7;
  const std::vector<T> hx = input<T>(Input::normal, n, kSeed);
  const DeviceBuffer<T> dx = upload(hx, 2);
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const Reduction& r : kStatistics) {
    const std::size_t bytes = result_size(r.op, dtype_of<T>::value);
    const std::vector<unsigned char> out = poisoned_output(bytes, [&](void* d_out) {
      reduce(r.reproducible(), dtype_of<T>::value, dx.data() + 2, nullptr, n, d_out, stream);
      REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    });
    EXPECT_EQ(std::vector<unsigned char>(out.begin(), out.begin() + bytes), cpu_statistic(r, hx, n))
        << name_of(r);
  }
  release_workspace(stream);
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

// Integer ops and min/max/argmin/argmax: the order does not matter, so the default kernels run in
// both modes and any grid gives the same bits.
TEST_F(GpuTest, OrderFreeOpsAreTheSameInBothModesAndGrids) {
  const std::size_t n = (std::size_t{1} << 22) + 3;
  std::mt19937_64 rng(kSeed);
  std::vector<std::int32_t> hi(n);
  for (auto& v : hi) v = static_cast<std::int32_t>(rng());
  std::vector<float> hf = input<float>(Input::normal, n, kSeed);
  const DeviceBuffer<std::int32_t> di = upload(hi, 1);
  const DeviceBuffer<float> df = upload(hf, 1);
  for (Op op : {Op::sum, Op::min, Op::max, Op::argmin, Op::argmax, Op::count_nonzero,
                Op::aminmax, Op::dot}) {
    std::vector<unsigned char> first;
    for (unsigned grid : {0u, 1u, 7u, 8192u}) {
      const ForcedLaunch forced(grid, 256);
      for (Determinism mode : {Determinism::run_to_run, Determinism::gpu_to_gpu}) {
        std::vector<unsigned char> out(result_size(op, DType::i32));
        reduce_to_host(Reduction(op).with(mode), DType::i32, di.data() + 1,
                       op == Op::dot ? di.data() + 1 : nullptr, n, out.data());
        if (first.empty()) first = out;
        EXPECT_EQ(out, first) << to_string(op) << " i32 grid " << grid;
      }
    }
  }
  for (Op op : {Op::min, Op::max, Op::argmin, Op::argmax, Op::aminmax}) {
    std::vector<unsigned char> a(result_size(op, DType::f32)), b(a.size());
    reduce_to_host(Reduction(op), DType::f32, df.data() + 1, nullptr, n, a.data());
    reduce_to_host(Reduction(op).reproducible(), DType::f32, df.data() + 1, nullptr, n, b.data());
    EXPECT_EQ(a, b) << to_string(op);
  }
}

// The bits of a fixed set of gpu_to_gpu results, written to the file REDUCELAB_REPRO_DUMP names
// (one line per result), each also checked against the CPU function. scripts/gpu_check.sh's
// repro-jit step runs it from two binaries, the sm_90 build and a compute_80-PTX-only build that
// the driver JIT-compiles, and compares the two files byte for byte.
template <class T>
void dump_bits(std::FILE* file, const char* type) {
  const struct {
    const char* name;
    Reduction r;
  } ops[] = {{"sum", Reduction(Op::sum)}, {"dot", Reduction(Op::dot)},
             {"mean", Reduction(Op::mean)}, {"var", Reduction::var()},
             {"std0", Reduction::stddev(0)}, {"norm1", Reduction::norm(1)},
             {"norm2", Reduction::norm(2)}, {"logsumexp", Reduction(Op::logsumexp)}};
  for (std::size_t n : {std::size_t{1000}, (std::size_t{1} << 20) + 3, (std::size_t{1} << 25) + 3}) {
    const std::vector<T> hx = input<T>(Input::normal, n, kSeed + n);
    const std::vector<T> hy = input<T>(Input::cancellation, n, kSeed + 5 * n);
    for (std::size_t offset : {std::size_t{0}, std::size_t{3}}) {
      const DeviceBuffer<T> dx = upload(hx, offset);
      const DeviceBuffer<T> dy = upload(hy, offset);
      for (const auto& op : ops) {
        const bool dot = op.r.op == Op::dot;
        unsigned char got[16] = {};
        unsigned char want[16] = {};
        reduce_to_host(op.r.reproducible(), dtype_of<T>::value, dx.data() + offset,
                       dot ? dy.data() + offset : nullptr, n, got);
        reproducible_reduce_cpu(op.r.reproducible(), dtype_of<T>::value, hx.data(),
                                dot ? hy.data() : nullptr, n, want);
        const std::size_t size = result_size(op.r.op, dtype_of<T>::value);
        EXPECT_EQ(std::memcmp(got, want, size), 0) << type << " " << op.name << " n " << n;
        std::fprintf(file, "%s %s n=%zu offset=%zu ", type, op.name, n, offset);
        for (std::size_t b = size; b-- > 0;) std::fprintf(file, "%02x", got[b]);
        std::fprintf(file, "\n");
      }
    }
  }
}

TEST_F(GpuTest, ReproducibleBitsDump) {
  const char* path = std::getenv("REDUCELAB_REPRO_DUMP");
  if (path == nullptr || *path == '\0')
    GTEST_SKIP() << "set REDUCELAB_REPRO_DUMP=FILE to write the gpu_to_gpu bits (the compute_80 "
                    "JIT comparison, scripts/gpu_check.sh repro-jit)";
  std::FILE* file = std::fopen(path, "w");
  ASSERT_NE(file, nullptr) << "cannot write " << path;
  dump_bits<float>(file, "f32");
  dump_bits<double>(file, "f64");
  dump_bits<__half>(file, "f16");
  dump_bits<__nv_bfloat16>(file, "bf16");
  std::fclose(file);
}

TEST_F(GpuTest, ReproducibleFormsWithoutAnOrderYetThrow) {
  // The list form has no fixed order yet (the axis and segmented forms do, strided axes among
  // them: test_reproducible_segments_gpu.cpp).
  const std::vector<float> h(1024, 1.0f);
  const DeviceBuffer<float> d = upload(h);
  const TensorSpan tensors[2] = {{d.data(), 512}, {d.data() + 512, 512}};
  float out[2] = {};
  expect_invalid_argument(
      [&] {
        reduce_tensors(Reduction(Op::sum).reproducible(), DType::f32, tensors, 2, out, nullptr,
                       nullptr);
      },
      "tensors gpu_to_gpu", "reduce_tensors");
}

}  // namespace
}  // namespace reducelab::test

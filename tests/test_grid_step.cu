// The standalone fold of partials (grid_step.cuh's combine_partials_kernel), which segmented and
// multi-GPU paths hand their per-block or per-rank partials to: every partial counted once, in a
// fixed order, ties resolved to the lowest index, NaN propagated.

#include <cmath>
#include <limits>
#include <random>

#include "gpu_test.hpp"
#include "reduce/launch.cuh"

namespace reducelab::test {
namespace {

class CombinePartials : public GpuTest {};

template <class Traits>
typename Traits::Out fold_on_gpu(const std::vector<typename Traits::Acc>& partials) {
  DeviceBuffer<typename Traits::Acc> d(partials.size());
  REDUCELAB_CUDA_CHECK(cudaMemcpy(d.data(), partials.data(), d.bytes(), cudaMemcpyHostToDevice));
  DeviceBuffer<typename Traits::Out> out(1);
  REDUCELAB_CUDA_CHECK(cudaMemset(out.data(), 0xA5, sizeof(typename Traits::Out)));
  detail::launch_combine_partials<Traits>(d.data(), static_cast<unsigned>(partials.size()),
                                          out.data(), nullptr);
  typename Traits::Out host{};
  REDUCELAB_CUDA_CHECK(cudaMemcpy(&host, out.data(), sizeof(host), cudaMemcpyDeviceToHost));
  return host;
}

TEST_F(CombinePartials, SumsEveryPartialOnceInAFixedOrder) {
  using Traits = detail::SumTraits<float, 1>;
  std::mt19937_64 random(kSeed);
  std::uniform_real_distribution<float> value(-1000.0f, 1000.0f);
  for (unsigned count : {1u, 7u, 132u, 528u, 1000u, detail::kMaxGrid}) {
    std::vector<float> partials(count);
    double exact = 0;
    double magnitude = 0;
    for (float& p : partials) {
      p = value(random);
      exact += p;
      magnitude += std::fabs(p);
    }
    const float got = fold_on_gpu<Traits>(partials);
    EXPECT_NEAR(got, exact, 64 * 0x1.0p-23 * magnitude) << count << " partials";
    EXPECT_EQ(fold_on_gpu<Traits>(partials), got) << "not repeatable";
  }
}

TEST_F(CombinePartials, ArgmaxTakesTheLowestIndexOfTiesAndTheFirstNaN) {
  using Traits = detail::ArgTraits<double, false>;
  using Acc = Traits::Acc;
  std::vector<Acc> partials(600);
  for (unsigned b = 0; b < partials.size(); ++b)
    partials[b] = {static_cast<double>(b % 50), static_cast<std::int64_t>(1000 + b)};
  partials[420].value = 77.0;
  partials[420].index = 5000;
  partials[130].value = 77.0;
  partials[130].index = 4000;  // the lowest index among the maxima, at a lower partial
  ArgResult<double> got = fold_on_gpu<Traits>(partials);
  EXPECT_EQ(got.value, 77.0);
  EXPECT_EQ(got.index, 4000);
  partials[599] = {std::numeric_limits<double>::quiet_NaN(), 90000};
  partials[7] = {std::numeric_limits<double>::quiet_NaN(), 95000};
  got = fold_on_gpu<Traits>(partials);
  EXPECT_TRUE(std::isnan(got.value));
  EXPECT_EQ(got.index, 90000) << "NaN beats every number; among NaNs the lowest index";
}

TEST_F(CombinePartials, MinOfInt64) {
  using Traits = detail::ExtremumTraits<std::int64_t, device::Min>;
  std::vector<std::int64_t> partials(8192);
  for (std::size_t b = 0; b < partials.size(); ++b) partials[b] = static_cast<std::int64_t>(b * 7919 % 8191) - 4000;
  partials[8000] = std::numeric_limits<std::int64_t>::lowest();
  EXPECT_EQ(fold_on_gpu<Traits>(partials), std::numeric_limits<std::int64_t>::lowest());
}

}  // namespace
}  // namespace reducelab::test

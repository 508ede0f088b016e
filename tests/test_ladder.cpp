// Every rung x op x awkward size against the double-precision CPU reference, on two kinds of
// random data: uniform floats (checked within a rounding bound) and small integers (every float
// sum is then exact, so a dropped or doubled element cannot hide in the tolerance). V7 also on
// pointers that are not 16-byte aligned.

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>

#include "gpu_test.hpp"
#include "ladder/ladder.hpp"

namespace reducelab::test {
namespace {

using bench::Distribution;

struct LadderCase {
  const ladder::Rung* rung;
  Op op;
  std::size_t n;
};

std::string case_name(const ::testing::TestParamInfo<LadderCase>& info) {
  return std::string(info.param.rung->id) + "_" + std::string(to_string(info.param.op)) + "_" +
         std::to_string(info.param.n);
}

constexpr std::size_t kSizes[] = {1,    2,    31,    32,    33,    255, 256, 257, 1023,
                                  1025, 4097, 65537, (1u << 20) + 3, (1u << 24) + 7};

std::vector<LadderCase> all_cases() {
  std::vector<LadderCase> cases;
  for (const ladder::Rung& rung : ladder::rungs())
    for (Op op : kLadderOps)
      for (std::size_t n : kSizes) cases.push_back({&rung, op, n});
  return cases;
}

// Host inputs are shared by every rung and op of one size.
const std::vector<float>& host_input(std::size_t n, Distribution d, int which) {
  static std::map<std::tuple<std::size_t, Distribution, int>, std::unique_ptr<std::vector<float>>> cache;
  auto& slot = cache[{n, d, which}];
  if (!slot) slot = std::make_unique<std::vector<float>>(bench::random_vector<float>(n, kSeed + which, d));
  return *slot;
}

// Runs the rung on x[x_offset..], y[y_offset..] and returns "" or what is wrong.
std::string run_and_check(const ladder::Rung& rung, Op op, std::size_t n, Distribution d,
                          std::size_t x_offset = 0, std::size_t y_offset = 0) {
  const auto& hx = host_input(n, d, 0);
  const auto& hy = host_input(n, d, 1);
  const auto ref = bench::reference(op, hx.data(), op == Op::dot ? hy.data() : nullptr, n);
  const DeviceBuffer<float> dx = upload(hx, x_offset);
  const DeviceBuffer<float> dy = upload(hy, y_offset);
  DeviceBuffer<float> workspace(std::max<std::size_t>(1, rung.workspace_elems(n)));
  DeviceBuffer<float> out(4);
  REDUCELAB_CUDA_CHECK(cudaMemset(out.data(), 0xFF, out.bytes()));  // NaN: unwritten fails
  ladder::run(rung, {dx.data() + x_offset, dy.data() + y_offset, n, op, out.data(), workspace.data()});
  REDUCELAB_CUDA_CHECK(cudaDeviceSynchronize());
  unsigned char slot[16] = {};
  REDUCELAB_CUDA_CHECK(cudaMemcpy(slot, out.data(), sizeof(float), cudaMemcpyDeviceToHost));
  std::string why = bench::check_result(ref, slot);
  if (why.empty() && d == Distribution::small_integers && (op == Op::sum || op == Op::dot)) {
    float got = 0;
    std::memcpy(&got, slot, sizeof(got));
    if (static_cast<long double>(got) != ref.total)
      why = "integer-valued sum must be exact: got " + std::to_string(got) + ", want " +
            std::to_string(static_cast<double>(ref.total));
  }
  return why;
}

class LadderTest : public GpuTestWithParam<LadderCase> {};

TEST_P(LadderTest, MatchesReference) {
  const LadderCase& c = GetParam();
  for (Distribution d : {Distribution::small_integers, Distribution::uniform}) {
    const std::string why = run_and_check(*c.rung, c.op, c.n, d);
    EXPECT_TRUE(why.empty()) << c.rung->id << " " << to_string(c.op) << " n=" << c.n << " seed "
                             << kSeed << " ("
                             << (d == Distribution::uniform ? "uniform" : "small integers")
                             << "): " << why;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryRung, LadderTest, ::testing::ValuesIn(all_cases()), case_name);

class LadderV7Alignment : public GpuTest {};

TEST_F(LadderV7Alignment, AnyFloatAlignedPointer) {
  const ladder::Rung& v7 = *ladder::find_rung("V7");
  for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{1023}, std::size_t{4097},
                        (std::size_t{1} << 20) + 3}) {
    for (std::size_t x_offset = 0; x_offset < 4; ++x_offset) {
      for (Op op : kLadderOps) {
        for (std::size_t y_offset : {x_offset, (x_offset + 1) % 4}) {
          if (op != Op::dot && y_offset != x_offset) continue;
          const std::string why = run_and_check(v7, op, n, Distribution::small_integers, x_offset, y_offset);
          EXPECT_TRUE(why.empty()) << "V7 " << to_string(op) << " n=" << n << " x offset "
                                   << x_offset << " y offset " << y_offset << ": " << why;
        }
      }
    }
  }
}

class LadderErrors : public GpuTest {};

TEST_F(LadderErrors, BadArgumentsThrowAndLeaveTheContextUsable) {
  const ladder::Rung& v3 = *ladder::find_rung("V3");
  DeviceBuffer<float> x(1024);
  DeviceBuffer<float> workspace(1024);
  DeviceBuffer<float> out(1);
  std::vector<float> host(1024, 1.0f);
  auto expect_invalid = [&](const ladder::Problem& p, const char* what) {
    try {
      ladder::run(v3, p);
      ADD_FAILURE() << what << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << what << ": " << e.what();
    }
  };
  expect_invalid({nullptr, nullptr, 1024, Op::sum, out.data(), workspace.data()}, "null input");
  expect_invalid({host.data(), nullptr, 1024, Op::sum, out.data(), workspace.data()}, "host input");
  expect_invalid({x.data(), nullptr, 0, Op::sum, out.data(), workspace.data()}, "empty input");
  expect_invalid({x.data(), nullptr, 1024, Op::dot, out.data(), workspace.data()}, "dot without y");
  expect_invalid({x.data(), nullptr, 1024, Op::argmax, out.data(), workspace.data()}, "argmax");
  expect_invalid({reinterpret_cast<const float*>(reinterpret_cast<const char*>(x.data()) + 1),
                  nullptr, 16, Op::sum, out.data(), workspace.data()},
                 "misaligned input");
  // The context still works.
  REDUCELAB_CUDA_CHECK(cudaMemcpy(x.data(), host.data(), 1024 * sizeof(float), cudaMemcpyHostToDevice));
  ladder::run(v3, {x.data(), nullptr, 1024, Op::sum, out.data(), workspace.data()});
  float got = 0;
  REDUCELAB_CUDA_CHECK(cudaMemcpy(&got, out.data(), sizeof(got), cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, 1024.0f);
}

}  // namespace
}  // namespace reducelab::test

// The production reduce: every op x type x awkward size x misalignment against the CPU
// reference, both call forms; NaN and infinities; ties; empty input; every error case; bitwise
// repeatability; and 2^31 + 5 elements (the "large" tests).

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

#include "gpu_test.hpp"
#include "reducelab/reducelab.hpp"

namespace reducelab::test {
namespace {

using bench::Distribution;

using AllTypes = ::testing::Types<float, double, __half, __nv_bfloat16, std::int32_t, std::int64_t,
                                  std::uint32_t, std::uint64_t>;

// Calls the stream-ordered form of `op` into a 16-byte device slot (the harness layout).
template <class T>
void call_async(Op op, const T* x, const T* y, std::size_t n, void* out, cudaStream_t stream) {
  switch (op) {
    case Op::sum: return reducelab::sum(x, n, static_cast<sum_t<T>*>(out), stream);
    case Op::min: return reducelab::min(x, n, static_cast<T*>(out), stream);
    case Op::max: return reducelab::max(x, n, static_cast<T*>(out), stream);
    case Op::dot: return reducelab::dot(x, y, n, static_cast<sum_t<T>*>(out), stream);
    case Op::argmin: return reducelab::argmin(x, n, static_cast<ArgResult<T>*>(out), stream);
    case Op::argmax: return reducelab::argmax(x, n, static_cast<ArgResult<T>*>(out), stream);
    default:  // an op without a typed call: the runtime-typed entry
      return reducelab::reduce(op, dtype_of<T>::value, x, input_arrays(op) == 2 ? y : nullptr, n,
                               out, stream);
  }
}

// Calls the synchronous form and stores its result in the 16-byte host slot layout.
template <class T>
void call_sync(Op op, const T* x, const T* y, std::size_t n, unsigned char* slot,
               cudaStream_t stream = nullptr) {
  auto store = [&](auto value) { std::memcpy(slot, &value, sizeof(value)); };
  switch (op) {
    case Op::sum: return store(reducelab::sum(x, n, stream));
    case Op::min: return store(reducelab::min(x, n, stream));
    case Op::max: return store(reducelab::max(x, n, stream));
    case Op::dot: return store(reducelab::dot(x, y, n, stream));
    case Op::argmin: return store(reducelab::argmin(x, n, stream));
    case Op::argmax: return store(reducelab::argmax(x, n, stream));
    default:
      return reducelab::reduce_to_host(op, dtype_of<T>::value, x, input_arrays(op) == 2 ? y : nullptr,
                                       n, slot, stream);
  }
}

// Bitwise equality of the bytes that carry a result (ArgResult<T> has padding after a small
// value, which neither form promises to write).
template <class T>
bool same_bits(Op op, const unsigned char* a, const unsigned char* b) {
  const bool arg = info(op).result == ResultKind::value_index;
  const std::size_t value_bytes = arg ? sizeof(T) : result_size(op, dtype_of<T>::value);
  return std::memcmp(a, b, value_bytes) == 0 && (!arg || std::memcmp(a + 8, b + 8, 8) == 0);
}

// Runs both forms on device copies x, y of hx, hy; returns "" or what is wrong.
template <class T>
std::string check_both_forms(Op op, const std::vector<T>& hx, const std::vector<T>& hy,
                             const T* x, const T* y) {
  const std::size_t n = hx.size();
  const auto ref = bench::reference(op, hx.data(), input_arrays(op) == 2 ? hy.data() : nullptr, n);
  DeviceBuffer<unsigned char> out(16);
  REDUCELAB_CUDA_CHECK(cudaMemset(out.data(), 0xA5, 16));
  call_async<T>(op, x, y, n, out.data(), nullptr);
  unsigned char async_slot[16];
  REDUCELAB_CUDA_CHECK(cudaMemcpy(async_slot, out.data(), 16, cudaMemcpyDeviceToHost));
  unsigned char sync_slot[16];
  std::memset(sync_slot, 0xA5, sizeof(sync_slot));
  call_sync<T>(op, x, y, n, sync_slot);
  // The runtime-typed entry the typed calls wrap (and the bench and bindings call).
  REDUCELAB_CUDA_CHECK(cudaMemset(out.data(), 0xA5, 16));
  reducelab::reduce(op, dtype_of<T>::value, x, input_arrays(op) == 2 ? y : nullptr, n, out.data(), nullptr);
  unsigned char runtime_slot[16];
  REDUCELAB_CUDA_CHECK(cudaMemcpy(runtime_slot, out.data(), 16, cudaMemcpyDeviceToHost));
  std::string why = bench::check_result(ref, async_slot);
  if (!why.empty()) return "stream-ordered form: " + why;
  if (!same_bits<T>(op, async_slot, runtime_slot))
    return "reducelab::reduce differs bitwise from the typed call";
  why = bench::check_result(ref, sync_slot);
  if (!why.empty()) return "synchronous form: " + why;
  if (!same_bits<T>(op, async_slot, sync_slot)) return "the two forms differ bitwise";
  return {};
}

template <class T>
class ProductionTest : public GpuTest {};
TYPED_TEST_SUITE(ProductionTest, AllTypes);

TYPED_TEST(ProductionTest, EveryOpSizeAndAlignment) {
  using T = TypeParam;
  constexpr std::size_t kVector = 16 / sizeof(T);
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7},
                        std::size_t{31}, std::size_t{33}, std::size_t{257}, std::size_t{1001},
                        std::size_t{4099}, std::size_t{65537}, (std::size_t{1} << 20) + 3}) {
    for (Distribution d : {Distribution::uniform, Distribution::small_integers}) {
      const auto hx = bench::random_vector<T>(n, kSeed + n, d);
      const auto hy = bench::random_vector<T>(n, kSeed + n + 1, d);
      // Offsets that matter: each head length; for dot also y misaligned against x.
      const DeviceBuffer<T> dx = upload(hx, kVector);
      const DeviceBuffer<T> dy = upload(hy, kVector);
      for (std::size_t x_offset = 0; x_offset < kVector; ++x_offset) {
        REDUCELAB_CUDA_CHECK(cudaMemcpy(dx.data() + x_offset, hx.data(), n * sizeof(T), cudaMemcpyHostToDevice));
        for (std::size_t y_offset : {x_offset, (x_offset + 1) % kVector}) {
          REDUCELAB_CUDA_CHECK(cudaMemcpy(dy.data() + y_offset, hy.data(), n * sizeof(T), cudaMemcpyHostToDevice));
          for (Op op : kCoreOps) {
            if (op != Op::dot && y_offset != x_offset) continue;
            const std::string why =
                check_both_forms<T>(op, hx, hy, dx.data() + x_offset, dy.data() + y_offset);
            EXPECT_TRUE(why.empty())
                << to_string(dtype_of<T>::value) << " " << to_string(op) << " n=" << n
                << " x offset " << x_offset << " y offset " << y_offset << " seed " << kSeed + n
                << ": " << why;
          }
        }
      }
    }
  }
}

TYPED_TEST(ProductionTest, TwoToThe27PlusFive) {
  using T = TypeParam;
  const std::size_t n = (std::size_t{1} << 27) + 5;
  const auto hx = bench::random_vector<T>(n, kSeed, Distribution::uniform);
  const auto hy = bench::random_vector<T>(n, kSeed + 1, Distribution::uniform);
  for (std::size_t x_offset : {std::size_t{0}, std::size_t{1}}) {
    const DeviceBuffer<T> dx = upload(hx, x_offset);
    const DeviceBuffer<T> dy = upload(hy, x_offset);
    for (Op op : kCoreOps) {
      const std::string why =
          check_both_forms<T>(op, hx, hy, dx.data() + x_offset, dy.data() + x_offset);
      EXPECT_TRUE(why.empty()) << to_string(dtype_of<T>::value) << " " << to_string(op)
                               << " n=2^27+5 offset " << x_offset << ": " << why;
    }
  }
}

TYPED_TEST(ProductionTest, EmptyInput) {
  using T = TypeParam;
  DeviceBuffer<T> x(4);
  DeviceBuffer<unsigned char> out(16);
  REDUCELAB_CUDA_CHECK(cudaMemset(out.data(), 0xA5, 16));
  EXPECT_EQ(static_cast<double>(reducelab::sum(x.data(), 0)), 0.0);
  EXPECT_EQ(static_cast<double>(reducelab::dot(x.data(), x.data(), 0)), 0.0);
  reducelab::sum(x.data(), 0, reinterpret_cast<sum_t<T>*>(out.data()), nullptr);
  sum_t<T> got{};
  REDUCELAB_CUDA_CHECK(cudaMemcpy(&got, out.data(), sizeof(got), cudaMemcpyDeviceToHost));
  EXPECT_EQ(static_cast<double>(got), 0.0);
  // Null is fine when there is nothing to read.
  EXPECT_EQ(static_cast<double>(reducelab::sum(static_cast<const T*>(nullptr), 0)), 0.0);
  for (Op op : {Op::min, Op::max, Op::argmin, Op::argmax}) {
    unsigned char slot[16];
    try {
      call_sync<T>(op, x.data(), nullptr, 0, slot);
      ADD_FAILURE() << to_string(op) << " of empty input did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
    }
  }
}

TYPED_TEST(ProductionTest, ArgminArgmaxReturnTheFirstIndexOfTies) {
  using T = TypeParam;
  const std::size_t n = 100003;
  std::vector<T> h(n, T(5));
  for (std::size_t i : {std::size_t{17}, std::size_t{4242}, std::size_t{99999}}) h[i] = T(1);
  for (std::size_t i : {std::size_t{31}, std::size_t{777}, std::size_t{100002}}) h[i] = T(9);
  const DeviceBuffer<T> d = upload(h);
  EXPECT_EQ(reducelab::argmin(d.data(), n).index, 17);
  EXPECT_EQ(reducelab::argmax(d.data(), n).index, 31);
  EXPECT_EQ(bench::to_double(reducelab::argmin(d.data(), n).value), 1.0);
  EXPECT_EQ(bench::to_double(reducelab::max(d.data(), n)), 9.0);
  // All equal: index 0.
  std::vector<T> same(n, T(3));
  const DeviceBuffer<T> ds = upload(same);
  EXPECT_EQ(reducelab::argmin(ds.data(), n).index, 0);
  EXPECT_EQ(reducelab::argmax(ds.data(), n).index, 0);
}

TYPED_TEST(ProductionTest, ExtremeValues) {
  using T = TypeParam;
  const std::size_t n = 70001;
  auto h = bench::random_vector<T>(n, kSeed, Distribution::uniform);
  T lowest;
  T highest;
  if constexpr (is_floating_v<T>) {
    lowest = T(-std::numeric_limits<float>::infinity());
    highest = T(std::numeric_limits<float>::infinity());
  } else {
    lowest = std::numeric_limits<T>::lowest();
    highest = std::numeric_limits<T>::max();
  }
  h[123] = lowest;
  h[65000] = highest;
  const DeviceBuffer<T> d = upload(h);
  for (Op op : {Op::min, Op::max, Op::argmin, Op::argmax, Op::sum}) {
    const auto ref = bench::reference(op, h.data(), static_cast<const T*>(nullptr), n);
    unsigned char slot[16];
    call_sync<T>(op, d.data(), nullptr, n, slot);
    if (op == Op::sum && is_floating_v<T>) {
      double got = 0;
      if constexpr (is_floating_v<T>) {
        sum_t<T> value;
        std::memcpy(&value, slot, sizeof(value));
        got = static_cast<double>(value);
      }
      EXPECT_TRUE(std::isnan(got)) << "+inf + -inf must be NaN, got " << got;
      continue;
    }
    EXPECT_EQ(bench::check_result(ref, slot), "") << to_string(op);
  }
}

TYPED_TEST(ProductionTest, NaNPropagatesLikePyTorch) {
  using T = TypeParam;
  if constexpr (!is_floating_v<T>) {
    GTEST_SKIP() << "integers have no NaN";
  } else {
    const std::size_t n = 50021;
    auto h = bench::random_vector<T>(n, kSeed, Distribution::uniform);
    const T nan = T(std::numeric_limits<float>::quiet_NaN());
    h[9000] = nan;
    h[30000] = nan;
    h[100] = T(-std::numeric_limits<float>::infinity());
    const DeviceBuffer<T> d = upload(h);
    EXPECT_TRUE(std::isnan(bench::to_double(reducelab::min(d.data(), n))));
    EXPECT_TRUE(std::isnan(bench::to_double(reducelab::max(d.data(), n))));
    const auto lo = reducelab::argmin(d.data(), n);
    const auto hi = reducelab::argmax(d.data(), n);
    EXPECT_TRUE(std::isnan(bench::to_double(lo.value)));
    EXPECT_EQ(lo.index, 9000);
    EXPECT_EQ(hi.index, 9000);
    EXPECT_TRUE(std::isnan(static_cast<double>(reducelab::sum(d.data(), n))));
    // NaN in the tail and in the head of a misaligned pointer.
    for (std::size_t at : {std::size_t{0}, n - 1}) {
      auto g = bench::random_vector<T>(n, kSeed + 1, Distribution::uniform);
      g[at] = nan;
      const DeviceBuffer<T> dg = upload(g, 1);
      EXPECT_EQ(reducelab::argmax(dg.data() + 1, n).index, static_cast<std::int64_t>(at));
      EXPECT_TRUE(std::isnan(bench::to_double(reducelab::min(dg.data() + 1, n))));
    }
  }
}

TYPED_TEST(ProductionTest, FiftyCallsAreBitwiseEqual) {
  using T = TypeParam;
  const std::size_t n = (std::size_t{1} << 24) + 3;
  const auto h = bench::random_vector<T>(n, kSeed, Distribution::uniform);
  const DeviceBuffer<T> d = upload(h);
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (Op op : {Op::sum, Op::dot, Op::argmax}) {
    unsigned char first[16];
    call_sync<T>(op, d.data(), d.data(), n, first);
    for (int call = 0; call < 50; ++call) {
      unsigned char again[16];
      call_sync<T>(op, d.data(), d.data(), n, again, call % 2 ? stream : nullptr);
      ASSERT_TRUE(same_bits<T>(op, first, again)) << to_string(op) << " call " << call;
    }
  }
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

class ProductionErrors : public GpuTest {};

TEST_F(ProductionErrors, BadArgumentsThrowClearErrorsAndTheContextStillWorks) {
  const std::size_t n = 4096;
  std::vector<float> host(n, 1.0f);
  const DeviceBuffer<float> d = upload(host);
  DeviceBuffer<float> out(4);
  float* pinned = nullptr;
  REDUCELAB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned), n * sizeof(float)));
  expect_invalid_argument([&] { reducelab::sum(static_cast<const float*>(nullptr), n); }, "null", "null");
  expect_invalid_argument([&] { reducelab::sum(host.data(), n); }, "pageable host", "host memory");
  expect_invalid_argument([&] { reducelab::max(pinned, n); }, "pinned host", "host memory");
  expect_invalid_argument([&] { reducelab::sum(d.data(), n, host.data(), nullptr); }, "host out", "host memory");
  expect_invalid_argument([&] { reducelab::dot(d.data(), static_cast<const float*>(nullptr), n); }, "null y", "null");
  expect_invalid_argument(
      [&] {
        reducelab::sum(reinterpret_cast<const float*>(reinterpret_cast<const char*>(d.data()) + 2), 16);
      },
      "misaligned", "aligned");
  expect_invalid_argument([&] { reducelab::argmin(d.data(), 0); }, "empty argmin", "empty");
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(reducelab::sum(d.data(), n), static_cast<float>(n));
  REDUCELAB_CUDA_CHECK(cudaFreeHost(pinned));
}

class ProductionLarge : public GpuTest {};

// 2^31 + 5 elements: indices and counts past 32 bits.
TEST_F(ProductionLarge, MoreThanTwoToThe31Elements) {
  const std::size_t n = (std::size_t{1} << 31) + 5;
  {
    auto h = bench::random_vector<float>(n, kSeed, Distribution::small_integers);
    h[n - 3] = 100.0f;  // the maximum, at an index past 2^31
    const DeviceBuffer<float> d = upload(h);
    const auto ref_sum = bench::reference(Op::sum, h.data(), static_cast<const float*>(nullptr), n);
    unsigned char slot[16];
    call_sync<float>(Op::sum, d.data(), nullptr, n, slot);
    EXPECT_EQ(bench::check_result(ref_sum, slot), "");
    const auto amax = reducelab::argmax(d.data(), n);
    EXPECT_EQ(amax.index, static_cast<std::int64_t>(n - 3));
    EXPECT_EQ(amax.value, 100.0f);
  }
  {
    const auto h = bench::random_vector<std::int32_t>(n, kSeed, Distribution::uniform);
    const DeviceBuffer<std::int32_t> d = upload(h);
    const auto ref = bench::reference(Op::sum, h.data(), static_cast<const std::int32_t*>(nullptr), n);
    EXPECT_EQ(reducelab::sum(d.data(), n), ref.total);
  }
  {
    auto h = bench::random_vector<__half>(n, kSeed, Distribution::uniform);
    h[(std::size_t{1} << 31) + 1] = __half(-7.0f);
    const DeviceBuffer<__half> d = upload(h);
    const auto ref = bench::reference(Op::sum, h.data(), static_cast<const __half*>(nullptr), n);
    unsigned char slot[16];
    call_sync<__half>(Op::sum, d.data(), nullptr, n, slot);
    EXPECT_EQ(bench::check_result(ref, slot), "");
    EXPECT_EQ(reducelab::argmin(d.data(), n).index, static_cast<std::int64_t>((std::size_t{1} << 31) + 1));
  }
}

}  // namespace
}  // namespace reducelab::test

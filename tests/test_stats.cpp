// The statistics (issue 12): every op x type x awkward size x misalignment against the
// long-double reference (bench/stats_reference.hpp, through bench/stats_check.hpp), along whole
// arrays, fixed and ragged segments and axes; the hard inputs (a large mean with a small spread,
// huge and tiny norms, infinities and NaN in logsumexp, all-zero and all-NaN counts); empty
// inputs; errors; and the typed synchronous calls.

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "bench/stats_check.hpp"
#include "gpu_test.hpp"
#include "stats_cases.hpp"
#include "reducelab/reducelab.hpp"

namespace reducelab::test {
namespace {

using bench::Distribution;

template <class T>
std::vector<T> from_doubles(const std::vector<double>& values) {
  std::vector<T> out;
  for (double v : values) {
    if constexpr (std::is_same_v<T, __half>) {
      out.push_back(__double2half(v));
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      out.push_back(__double2bfloat16(v));
    } else {
      out.push_back(static_cast<T>(v));
    }
  }
  return out;
}

//! The whole-array result of r on host data uploaded at `offset` elements past an aligned base.
template <class T>
std::vector<unsigned char> run_whole(const Reduction& r, const std::vector<T>& host,
                                     std::size_t offset = 0) {
  const DeviceBuffer<T> d = upload(host, offset);
  return poisoned_output(result_size(r.op, dtype_of<T>::value), [&](void* out) {
    reducelab::reduce(r, dtype_of<T>::value, d.data() + offset, nullptr, host.size(), out,
                      nullptr);
  });
}

template <class T>
std::string check_whole(const Reduction& r, const std::vector<T>& host, std::size_t offset = 0) {
  const std::vector<unsigned char> got = run_whole(r, host, offset);
  const std::string why = bench::check_statistic(r, host.data(), host.size(), got.data());
  return why.empty() ? why : describe(r) + " n=" + std::to_string(host.size()) + ": " + why;
}

template <class T>
class Statistics : public GpuTest {};
using AllTypes = ::testing::Types<float, double, __half, __nv_bfloat16, std::int32_t, std::int64_t,
                                  std::uint32_t, std::uint64_t>;
TYPED_TEST_SUITE(Statistics, AllTypes);

TYPED_TEST(Statistics, EveryOpAtAwkwardSizesAndOffsets) {
  using T = TypeParam;
  const std::size_t sizes[] = {1, 2, 3, 7, 31, 100, 1000, 4097, 65537, (std::size_t{1} << 20) + 13,
                               (std::size_t{3} << 20) + 1};
  std::size_t seed = kSeed;
  for (std::size_t n : sizes) {
    const std::vector<T> host = bench::random_vector<T>(n, seed++, Distribution::uniform);
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
      if (offset != 0 && n > 100000) continue;
      for (const Reduction& r : statistics_for(dtype_of<T>::value))
        EXPECT_EQ(check_whole(r, host, offset), "") << "offset " << offset;
    }
  }
}

TYPED_TEST(Statistics, ZerosNansAndSignedZerosInTheCounts) {
  using T = TypeParam;
  std::vector<T> host = bench::random_vector<T>(5000, kSeed, Distribution::small_integers);
  for (std::size_t i = 0; i < host.size(); i += 3) host[i] = T{};  // many zeros
  if constexpr (is_floating_v<T>) {
    host[10] = from_doubles<T>({-0.0})[0];
    host[11] = from_doubles<T>({std::nan("")})[0];
  }
  for (Op op : {Op::count_nonzero, Op::any, Op::all, Op::aminmax})
    EXPECT_EQ(check_whole(op, host), "");
  const std::vector<T> zeros(777, T{});
  for (Op op : {Op::count_nonzero, Op::any, Op::all}) EXPECT_EQ(check_whole(op, zeros), "");
  if constexpr (is_floating_v<T>) {
    const std::vector<T> nans = from_doubles<T>(std::vector<double>(999, std::nan("")));
    for (Op op : {Op::count_nonzero, Op::any, Op::all, Op::aminmax})
      EXPECT_EQ(check_whole(op, nans), "");
    const std::vector<T> negative_zeros = from_doubles<T>(std::vector<double>(513, -0.0));
    EXPECT_EQ(check_whole(Op::any, negative_zeros), "");
  }
}

template <class T>
class FloatingStatistics : public GpuTest {};
using FloatingTypes = ::testing::Types<float, double, __half, __nv_bfloat16>;
TYPED_TEST_SUITE(FloatingStatistics, FloatingTypes);

// (No "Large" in a test's name: the gpu test leaves out *Large*, the large label's tests.)
TYPED_TEST(FloatingStatistics, MeanFarAboveASmallSpread) {
  using T = TypeParam;
  // 1e6 + N(0, 1) (f16 holds neither: 1000 + N(0, 1) there, its largest mean with a spread it can
  // represent at all).
  const double mean = std::is_same_v<T, __half> ? 1000.0 : 1e6;
  std::mt19937_64 random(kSeed);
  std::normal_distribution<double> normal(mean, 1.0);
  for (std::size_t n : {std::size_t{1000}, std::size_t{1} << 20, (std::size_t{1} << 22) + 3}) {
    std::vector<double> values(n);
    for (double& v : values) v = normal(random);
    const std::vector<T> host = from_doubles<T>(values);
    for (const Reduction& r : {Reduction::var(1), Reduction::var(0), Reduction::stddev(1),
                               Reduction::var_mean(1), Reduction::std_mean(0), Reduction(Op::mean)})
      EXPECT_EQ(check_whole(r, host), "");
  }
}

TYPED_TEST(FloatingStatistics, NormsOfHugeAndTinyElements) {
  using T = TypeParam;
  // Magnitudes whose squares overflow or underflow the element type (f16: its range's ends).
  std::vector<double> scales;
  if constexpr (std::is_same_v<T, double>) {
    scales = {1e300, 1e-300, 1e-310};
  } else if constexpr (std::is_same_v<T, __half>) {
    scales = {60000.0, 1e-7};
  } else {
    scales = {1e30, 1e-30, 1e-40};
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (double scale : scales) {
    std::vector<double> values = {};
    std::mt19937_64 random(kSeed);
    std::uniform_real_distribution<double> unit(0.5, 1.0);
    for (int i = 0; i < 100003; ++i) values.push_back((i % 2 ? -1 : 1) * scale * unit(random));
    const std::vector<T> host = from_doubles<T>(values);
    for (double ord : {2.0, 1.0, inf, -inf, 0.0})
      EXPECT_EQ(check_whole(Reduction::norm(ord), host), "") << "scale " << scale;
  }
}

TYPED_TEST(FloatingStatistics, LogsumexpInfinitiesAndNan) {
  using T = TypeParam;
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t n = 70001;
  auto with = [&](std::vector<std::pair<std::size_t, double>> at, double rest) {
    std::vector<double> values(n, rest);
    for (auto [i, v] : at) values[i] = v;
    return from_doubles<T>(values);
  };
  const std::vector<T> cases[] = {
      with({}, -inf),                              // all -inf: -inf
      with({{12345, inf}}, 0.5),                   // one +inf: +inf
      with({{6, std::nan("")}, {9, inf}}, -1.0),   // NaN beats +inf
      with({{n - 1, 3.0}}, -inf),                  // one finite element among -inf: itself
  };
  for (const std::vector<T>& host : cases) EXPECT_EQ(check_whole(Op::logsumexp, host), "");
  // Large values that overflow a plain exp, and a row of equal values.
  std::vector<double> large(50000);
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = 60000.0 - static_cast<double>(i % 97);
  if (!std::is_same_v<T, __half>) EXPECT_EQ(check_whole(Op::logsumexp, from_doubles<T>(large)), "");
  EXPECT_EQ(check_whole(Op::logsumexp, from_doubles<T>(std::vector<double>(4096, 2.5))), "");
}

TYPED_TEST(FloatingStatistics, InfinitiesInTheMoments) {
  using T = TypeParam;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values(4000, 1.0);
  values[17] = inf;
  const std::vector<T> host = from_doubles<T>(values);
  for (const Reduction& r : {Reduction(Op::mean), Reduction::var(1), Reduction::var_mean(1)})
    EXPECT_EQ(check_whole(r, host), "") << describe(r);
  // The first element infinite: the mean stays inf (a thread centred on it would make it NaN).
  values[0] = -inf;
  values[17] = 1.0;
  const std::vector<T> first = from_doubles<T>(values);
  for (const Reduction& r : {Reduction(Op::mean), Reduction::var(1), Reduction::var_mean(1)})
    EXPECT_EQ(check_whole(r, first), "") << describe(r) << ", -inf first";
}

TEST_F(GpuTest, EmptyInputsGiveTheDocumentedValues) {
  const std::vector<float> none;
  for (const Reduction& r : {Reduction(Op::mean), Reduction::var(1), Reduction::var_mean(0),
                             Reduction::std_mean(1), Reduction::norm(2), Reduction::norm(1),
                             Reduction::norm(0), Reduction(Op::logsumexp),
                             Reduction(Op::count_nonzero), Reduction(Op::any), Reduction(Op::all)}) {
    EXPECT_EQ(check_whole(r, none), "") << describe(r);
    // The synchronous form gives the same bytes.
    unsigned char host[16];
    std::memset(host, 0xA5, sizeof(host));
    reduce_to_host(r, DType::f32, nullptr, nullptr, 0, host);
    EXPECT_EQ(bench::check_statistic(r, none.data(), 0, host), "") << describe(r) << " (sync)";
  }
}

TEST_F(GpuTest, StatisticsRejectWhatTheyDoNotTake) {
  DeviceBuffer<std::int32_t> ints(16);
  DeviceBuffer<float> floats(16);
  DeviceBuffer<unsigned char> out(16);
  for (Op op : {Op::mean, Op::var, Op::std, Op::var_mean, Op::std_mean, Op::norm, Op::logsumexp})
    expect_invalid_argument(
        [&] { reduce(op, DType::i32, ints.data(), nullptr, 16, out.data(), nullptr); },
        "integer statistic", "floating types");
  expect_invalid_argument(
      [&] { reduce(Reduction::norm(3), DType::f32, floats.data(), nullptr, 16, out.data(), nullptr); },
      "norm ord 3", "ord must be");
  expect_invalid_argument(
      [&] { reduce(Reduction::var(-1), DType::f32, floats.data(), nullptr, 16, out.data(), nullptr); },
      "negative correction", "correction");
  expect_invalid_argument(
      [&] { reduce(Op::aminmax, DType::f32, floats.data(), nullptr, 0, out.data(), nullptr); },
      "empty aminmax", "empty");
  expect_invalid_argument(
      [&] {
        reduce(Reduction::norm(std::numeric_limits<double>::infinity()), DType::f32, floats.data(),
               nullptr, 0, out.data(), nullptr);
      },
      "empty inf norm", "empty");
  // The context still works.
  const std::vector<float> ones(100, 1.0f);
  const DeviceBuffer<float> d = upload(ones);
  EXPECT_EQ(reducelab::mean(d.data(), ones.size()), 1.0f);
}

TEST_F(GpuTest, TypedSynchronousCalls) {
  const std::vector<float> values = {1, 2, 3, 4, 0, -6};
  const DeviceBuffer<float> d = upload(values);
  const std::size_t n = values.size();
  EXPECT_FLOAT_EQ(reducelab::mean(d.data(), n), 4.0f / 6);
  const double mean = 4.0 / 6;
  double m2 = 0;
  for (float v : values) m2 += (v - mean) * (v - mean);
  EXPECT_NEAR(reducelab::var(d.data(), n), m2 / 5, 1e-5);
  EXPECT_NEAR(reducelab::var(d.data(), n, 0), m2 / 6, 1e-5);
  EXPECT_NEAR(reducelab::stddev(d.data(), n), std::sqrt(m2 / 5), 1e-5);
  const StatPair<float> vm = reducelab::var_mean(d.data(), n);
  EXPECT_NEAR(vm.first, m2 / 5, 1e-5);
  EXPECT_NEAR(vm.mean, mean, 1e-6);
  EXPECT_NEAR(reducelab::norm(d.data(), n), std::sqrt(66.0), 1e-5);
  EXPECT_EQ(reducelab::norm(d.data(), n, 1), 16.0f);
  EXPECT_EQ(reducelab::norm(d.data(), n, std::numeric_limits<double>::infinity()), 6.0f);
  EXPECT_EQ(reducelab::norm(d.data(), n, 0), 5.0f);
  EXPECT_EQ(reducelab::count_nonzero(d.data(), n), 5);
  EXPECT_TRUE(reducelab::any(d.data(), n));
  EXPECT_FALSE(reducelab::all(d.data(), n));
  const MinMax<float> mm = reducelab::aminmax(d.data(), n);
  EXPECT_EQ(mm.min, -6.0f);
  EXPECT_EQ(mm.max, 4.0f);
  double sum_exp = 0;
  for (float v : values) sum_exp += std::exp(static_cast<double>(v));
  EXPECT_NEAR(reducelab::logsumexp(d.data(), n), std::log(sum_exp), 1e-5);
}

// ---- segments and axes ---------------------------------------------------------------------------

struct Span {
  std::size_t begin;
  std::size_t count;
};

template <class T>
std::string check_results(const Reduction& r, const std::vector<T>& host,
                          const std::vector<Span>& spans, const std::vector<unsigned char>& out) {
  const std::size_t size = result_size(r.op, dtype_of<T>::value);
  std::ostringstream why;
  int wrong = 0;
  for (std::size_t s = 0; s < spans.size() && wrong < 4; ++s) {
    const std::string what = bench::check_statistic(r, host.data() + spans[s].begin,
                                                    spans[s].count, out.data() + s * size, true);
    if (!what.empty()) {
      why << " [" << describe(r) << " result " << s << " of " << spans.size() << ", "
          << spans[s].count << " elements: " << what << "]";
      ++wrong;
    }
  }
  return why.str();
}

//! Back-to-back segments of min_length + random() % spread elements, as many as fit in n.
struct RaggedLayout {
  std::vector<std::int64_t> offsets{0};
  std::vector<Span> spans;
};
RaggedLayout random_ragged(std::mt19937_64& random, std::size_t n, std::size_t min_length,
                           std::size_t spread) {
  RaggedLayout layout;
  while (true) {
    const std::size_t length = min_length + random() % spread;
    const auto begin = static_cast<std::size_t>(layout.offsets.back());
    if (begin + length > n) break;
    layout.spans.push_back({begin, length});
    layout.offsets.push_back(static_cast<std::int64_t>(begin + length));
  }
  return layout;
}

//! reduce_segments over the layout's int64 offsets, every result checked.
template <class T>
std::string check_ragged(const Reduction& r, const std::vector<T>& host, const DeviceBuffer<T>& d,
                         const RaggedLayout& layout) {
  const DType dtype = dtype_of<T>::value;
  const DeviceBuffer<std::int64_t> d_offsets = upload(layout.offsets);
  const std::size_t num = layout.spans.size();
  const std::vector<unsigned char> out =
      poisoned_output(num * result_size(r.op, dtype), [&](void* o) {
        reduce_segments(r, dtype, d.data(), nullptr, num, d_offsets.data(), o, nullptr);
      });
  return check_results(r, host, layout.spans, out);
}

//! reduce_segments over the first n / size rows of `size` elements, every result checked.
template <class T>
std::string check_rows(const Reduction& r, const std::vector<T>& host, const DeviceBuffer<T>& d,
                       std::size_t n, std::size_t size) {
  const DType dtype = dtype_of<T>::value;
  const std::size_t num = n / size;
  std::vector<Span> spans;
  for (std::size_t s = 0; s < num; ++s) spans.push_back({s * size, size});
  const std::vector<unsigned char> out =
      poisoned_output(num * result_size(r.op, dtype), [&](void* o) {
        reduce_segments(r, dtype, d.data(), nullptr, num, size, o, nullptr);
      });
  return check_results(r, host, spans, out);
}

template <class T>
class SegmentedStatistics : public GpuTest {};
using SomeTypes = ::testing::Types<float, double, __half, std::int32_t>;
TYPED_TEST_SUITE(SegmentedStatistics, SomeTypes);

TYPED_TEST(SegmentedStatistics, FixedSizeSegments) {
  using T = TypeParam;
  const DType dtype = dtype_of<T>::value;
  // Shapes that take every segmented path: a thread, a warp, a team of lanes over aligned vector
  // rows (a power of two of vectors, or not: 12, 48, 100 and 300 elements), a block and a group
  // of blocks per segment, and one segment (the scalar path).
  const std::pair<std::size_t, std::size_t> shapes[] = {
      {1000, 0},  {3000, 5}, {4096, 32}, {2048, 64},  {2000, 12}, {600, 48},
      {300, 100}, {777, 300}, {129, 4096}, {3, 200001}, {1, 70000}};
  for (auto [num, size] : shapes) {
    const std::vector<T> host = bench::random_vector<T>(num * size, kSeed + size, Distribution::uniform);
    const DeviceBuffer<T> d = upload(host);
    std::vector<Span> spans;
    for (std::size_t s = 0; s < num; ++s) spans.push_back({s * size, size});
    for (const Reduction& r : statistics_for(dtype)) {
      const std::vector<unsigned char> out =
          poisoned_output(num * result_size(r.op, dtype), [&](void* o) {
            reduce_segments(r, dtype, d.data(), nullptr, num, size, o, nullptr);
          });
      EXPECT_EQ(check_results(r, host, spans, out), "") << num << " x " << size;
    }
  }
}

TYPED_TEST(SegmentedStatistics, RaggedSegmentsWithEmptyAndLongOnes) {
  using T = TypeParam;
  const DType dtype = dtype_of<T>::value;
  std::mt19937_64 random(kSeed);
  std::vector<std::size_t> lengths;
  for (int s = 0; s < 3000; ++s) {
    const unsigned pick = static_cast<unsigned>(random() % 100);
    lengths.push_back(pick < 10 ? 0 : pick < 80 ? random() % 64 : pick < 98 ? random() % 3000
                                                                            : 100000 + random() % 300000);
  }
  std::size_t total = 0;
  std::vector<std::int64_t> offsets{0};
  std::vector<Span> spans;
  for (std::size_t length : lengths) {
    spans.push_back({total, length});
    total += length;
    offsets.push_back(static_cast<std::int64_t>(total));
  }
  const std::vector<T> host = bench::random_vector<T>(total, kSeed + 7, Distribution::uniform);
  const DeviceBuffer<T> d = upload(host);
  const DeviceBuffer<std::int64_t> d_offsets = upload(offsets);
  for (const Reduction& r : statistics_for(dtype)) {
    const std::vector<unsigned char> out =
        poisoned_output(lengths.size() * result_size(r.op, dtype), [&](void* o) {
          reduce_segments(r, dtype, d.data(), nullptr, lengths.size(), d_offsets.data(), o, nullptr);
        });
    EXPECT_EQ(check_results(r, host, spans, out), "");
  }
}

// Enough ragged segments for groups of 32 (segment_runs_kernel on this aligned input for the
// statistics of 2-byte types it serves, kRunsServe: mean and the norms; the others take
// segment_teams_kernel's groups): 0..40
// elements and some of 100..3,000, long ones among them, with +inf, -inf and NaN at spots that
// fall on every lane and round, and a large mean against a unit spread. Each statistic's pieces
// are closed at a segment's start and carried over the lanes and rounds by Traits::combine.
TYPED_TEST(SegmentedStatistics, ManyRaggedSegmentsReadAsRuns) {
  using T = TypeParam;
  const DType dtype = dtype_of<T>::value;
  const std::size_t count = segments_for_full_groups();
  std::mt19937_64 random(kSeed + 23);
  RaggedLayout layout;
  for (std::size_t s = 0; s < count; ++s) {
    const std::uint64_t r = random();
    std::size_t length = r % 100 < 96 ? (r >> 8) % 41 : 100 + (r >> 8) % 2901;
    if (s % 1999 == 1000) length = 4096 + s % 5000;  // long_segments_kernel's
    const auto begin = static_cast<std::size_t>(layout.offsets.back());
    layout.spans.push_back({begin, length});
    layout.offsets.push_back(static_cast<std::int64_t>(begin + length));
  }
  const auto n = static_cast<std::size_t>(layout.offsets.back());
  std::vector<T> host;
  if constexpr (is_floating_v<T>) {
    const double centre = std::is_same_v<T, __half> ? 100.0 : 1e5;
    std::normal_distribution<double> normal(centre, 1.0);
    std::vector<double> values(n);
    for (double& v : values) v = normal(random);
    const double inf = std::numeric_limits<double>::infinity();
    for (std::size_t i = 11; i < n; i += 40009) values[i] = inf;
    for (std::size_t i = 5003; i < n; i += 50021) values[i] = -inf;
    for (std::size_t i = 777; i < n; i += 60013) values[i] = std::nan("");
    host = from_doubles<T>(values);
  } else {
    host = bench::random_vector<T>(n, kSeed + 23, Distribution::uniform);
  }
  const DeviceBuffer<T> d = upload(host);
  for (const Reduction& r : statistics_for(dtype))
    EXPECT_EQ(check_ragged(r, host, d, layout), "") << describe(r) << ", " << count << " segments";
}

// Rows read by teams of lanes (vector rows of 32 elements, octets over ragged segments of 33..255
// elements, a warp per row of 1,024), whose lanes' moments meet in one step around one centre
// (MomentsTraits::team_reduce) and whose logsumexp sums meet at one max
// (LogSumExpTraits::team_reduce), and tile rows of 33, 50, 65 (where a warp's teams interleave)
// and 127 (f32; f64's go to the octets), whose f32 and f64 var family folds each row in two
// passes over shared memory (MomentsTraits::team_row): a large mean against a unit spread, and rows holding
// +inf, -inf, both, or NaN at every lane's place; lanes with no elements (rows of 33) take no
// part.
TYPED_TEST(SegmentedStatistics, TeamsMergeMomentsOfBigMeansAndInfinities) {
  using T = TypeParam;
  if constexpr (is_floating_v<T>) {
    const double inf = std::numeric_limits<double>::infinity();
    const double base = std::is_same_v<T, __half> ? 1000.0 : 1e6;
    std::mt19937_64 random(kSeed);
    std::normal_distribution<double> normal(base, 1.0);
    const std::size_t n = 1 << 20;
    std::vector<double> values(n);
    for (double& v : values) v = normal(random);
    // Specials in some rows of every shape below, at positions that fall to different lanes.
    for (std::size_t i = 0; i < n; i += 4099) values[i] = inf;
    for (std::size_t i = 1000; i < n; i += 7919) values[i] = -inf;
    for (std::size_t i = 77; i < n; i += 10007) values[i] = std::nan("");
    for (std::size_t i = 5000; i < n; i += 12011) {
      values[i] = inf;
      values[i + 9] = -inf;
    }
    const std::vector<T> host = from_doubles<T>(values);
    const DeviceBuffer<T> d = upload(host);
    const Reduction ops[] = {Reduction::var(1), Reduction::var_mean(0), Reduction::std_mean(1),
                             Reduction(Op::logsumexp)};
    const RaggedLayout ragged = random_ragged(random, n, 33, 223);
    for (const Reduction& r : ops) {
      for (std::size_t size : {std::size_t{32}, std::size_t{33}, std::size_t{50}, std::size_t{65},
                                std::size_t{127}, std::size_t{1024}})
        EXPECT_EQ(check_rows(r, host, d, n, size), "") << describe(r) << ", rows of " << size;
      EXPECT_EQ(check_ragged(r, host, d, ragged), "") << describe(r) << ", ragged 33..255";
    }
  }
}

// Short segments and columns of values near a constant (0.5 + 0.01 U, 1000 + U): the rounding
// of a mean the size of the constant must not reach m2 (a textbook Welford step is 40 ulps off
// on two such floats; the first run over 2,097,152 ragged segments found it).
TYPED_TEST(SegmentedStatistics, ShortSegmentsAndColumnsNearAConstant) {
  using T = TypeParam;
  if constexpr (is_floating_v<T>) {
    const DType dtype = dtype_of<T>::value;
    std::mt19937_64 random(kSeed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (auto [base, spread] : {std::pair{0.5, 0.01}, std::pair{1000.0, 1.0}}) {
      if (std::is_same_v<T, __half> && base > 1) continue;  // f16 holds 1000 + U to 0.5
      const std::size_t n = 300000;
      std::vector<double> values(n);
      for (double& v : values) v = base + spread * unit(random);
      const std::vector<T> host = from_doubles<T>(values);
      const DeviceBuffer<T> d = upload(host);
      // Fixed segments of 2, 3 and 37 (a thread, a warp per segment), ragged ones of 1..5.
      for (std::size_t size : {std::size_t{2}, std::size_t{3}, std::size_t{37}}) {
        for (const Reduction& r : {Reduction::var(1), Reduction::var_mean(0)})
          EXPECT_EQ(check_rows(r, host, d, n, size), "") << size << " base " << base;
      }
      EXPECT_EQ(check_ragged(Reduction(Op::var), host, d, random_ragged(random, n, 1, 5)), "")
          << "ragged, base " << base;
      // Columns of a 75 x 4000 view: the strided kernel's element-by-element updates.
      const std::size_t rows = 75;
      const std::size_t columns = 4000;
      std::vector<T> gathered;
      std::vector<Span> column_spans;
      for (std::size_t c = 0; c < columns; ++c) {
        column_spans.push_back({gathered.size(), rows});
        for (std::size_t r = 0; r < rows; ++r) gathered.push_back(host[r * columns + c]);
      }
      const std::vector<unsigned char> column_out =
          poisoned_output(columns * result_size(Op::var, dtype), [&](void* o) {
            reduce_axes(Op::var, dtype, d.data(), nullptr,
                        Layout::contiguous({static_cast<std::int64_t>(rows),
                                            static_cast<std::int64_t>(columns)}),
                        axis_mask({0}), o, nullptr, nullptr);
          });
      EXPECT_EQ(check_results(Reduction(Op::var), gathered, column_spans, column_out), "")
          << "columns, base " << base;
    }
  }
}

//! The results of reducing `axes` of a contiguous array of `sizes`, on the CPU side: the spans
//! are gathered copies (the reference reads contiguous data), in the output's order.
template <class T>
void check_axes(const std::vector<std::int64_t>& sizes, AxisMask axes) {
  const DType dtype = dtype_of<T>::value;
  Layout layout;
  layout.rank = static_cast<int>(sizes.size());
  for (int k = 0; k < layout.rank; ++k) layout.sizes[k] = sizes[k];
  std::int64_t stride = 1;
  for (int k = layout.rank - 1; k >= 0; --k) {
    layout.strides[k] = stride;
    stride *= sizes[k];
  }
  const std::size_t count = static_cast<std::size_t>(stride);
  const std::vector<T> host = bench::random_vector<T>(count, kSeed + count, Distribution::uniform);
  const DeviceBuffer<T> d = upload(host);
  // Gather each result's elements, in increasing index order of the reduced axes.
  std::vector<T> gathered;
  std::vector<Span> spans;
  std::vector<std::int64_t> index(sizes.size(), 0);
  std::vector<int> kept;
  std::vector<int> reduced;
  for (int k = 0; k < layout.rank; ++k) (((axes >> k) & 1u) ? reduced : kept).push_back(k);
  std::size_t outputs = 1;
  std::size_t per = 1;
  for (int k : kept) outputs *= static_cast<std::size_t>(sizes[k]);
  for (int k : reduced) per *= static_cast<std::size_t>(sizes[k]);
  for (std::size_t o = 0; o < outputs; ++o) {
    std::size_t rest = o;
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
      index[*it] = static_cast<std::int64_t>(rest % sizes[*it]);
      rest /= sizes[*it];
    }
    spans.push_back({gathered.size(), per});
    for (std::size_t e = 0; e < per; ++e) {
      std::size_t r = e;
      for (auto it = reduced.rbegin(); it != reduced.rend(); ++it) {
        index[*it] = static_cast<std::int64_t>(r % sizes[*it]);
        r /= sizes[*it];
      }
      std::int64_t at = 0;
      for (int k = 0; k < layout.rank; ++k) at += index[k] * layout.strides[k];
      gathered.push_back(host[static_cast<std::size_t>(at)]);
    }
  }
  for (const Reduction& r : statistics_for(dtype)) {
    const std::vector<unsigned char> out =
        poisoned_output(outputs * result_size(r.op, dtype), [&](void* o) {
          reduce_axes(r, dtype, d.data(), nullptr, layout, axes, o, nullptr, nullptr);
        });
    std::ostringstream shape;
    for (auto s : sizes) shape << s << " ";
    EXPECT_EQ(check_results(r, gathered, spans, out), "") << "shape " << shape.str() << "axes "
                                                          << axes;
  }
}

TYPED_TEST(SegmentedStatistics, AlongAxes) {
  using T = TypeParam;
  check_axes<T>({1000, 37}, 0b10);        // rows
  check_axes<T>({4096, 64}, 0b01);        // columns, vector columns
  check_axes<T>({50001, 3}, 0b01);        // few columns, split along the reduced axis
  check_axes<T>({20, 30, 41}, 0b010);     // a middle axis
  check_axes<T>({9, 30, 40}, 0b101);      // two reduced axes that do not merge: vector runs
  check_axes<T>({64, 5, 2048}, 0b101);    // the same, split over blocks
  check_axes<T>({4, 6, 8, 16}, 0b1101);   // NCHW over N, H and W
  check_axes<T>({3, 4, 5, 2, 16}, 0b10101);  // three reduced axes that do not merge
  check_axes<T>({9, 30, 42}, 0b101);      // runs of no whole vectors: element loads
  check_axes<T>({6, 0, 5}, 0b010);        // a zero-size reduced axis: every result is empty
}

// 2^31 + 5 f16 elements (4 GB): counts and indices past 32 bits, and the statistics over them.
TEST_F(GpuTest, StatisticsLarge) {
  const std::size_t n = (std::size_t{1} << 31) + 5;
  const std::vector<__half> host = bench::random_vector<__half>(n, kSeed, Distribution::uniform);
  for (const Reduction& r : {Reduction(Op::mean), Reduction::var(1), Reduction::norm(2),
                             Reduction(Op::logsumexp), Reduction(Op::count_nonzero)})
    EXPECT_EQ(check_whole(r, host), "");
}

}  // namespace
}  // namespace reducelab::test

// The segmented reduce (include/reducelab/segmented.hpp): every op x type x fixed-size shape
// (each planner path and its thresholds) x base offset against the CPU reference per segment;
// ragged offsets (int32 and int64) with empty segments, one huge segment among tiny ones and
// heavy-tailed lengths; the empty-segment results; NaN in some segments only; a decreasing offset
// pair; every error; bitwise repeatability; graph capture; and more than 2^31 elements in one
// segment (SegmentLarge, run with the "large" tests only).
//
// Run with: reducelab_gpu_tests --gtest_filter='Segment*'

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "gpu_test.hpp"
#include "reduce/segment_plan.hpp"
#include "reducelab/reducelab.hpp"

namespace reducelab::test {
namespace {

using bench::Distribution;
using detail::kBlockSegmentMin;
using detail::kOctetSegmentBytes;
using detail::kThreadSegmentMax;

using AllTypes = ::testing::Types<float, double, __half, __nv_bfloat16, std::int32_t, std::int64_t,
                                  std::uint32_t, std::uint64_t>;
using FloatTypes = ::testing::Types<float, double, __half, __nv_bfloat16>;

//! Segment s of a call, as elements [begin, begin + count) of the host input.
struct HostSegment {
  std::size_t begin;
  std::size_t count;
};

std::vector<HostSegment> fixed_segments(std::size_t num, std::size_t size) {
  std::vector<HostSegment> out(num);
  for (std::size_t s = 0; s < num; ++s) out[s] = {s * size, size};
  return out;
}

template <class Offset>
std::vector<Offset> offsets_of(const std::vector<std::size_t>& lengths, std::size_t base) {
  std::vector<Offset> offsets{static_cast<Offset>(base)};
  for (std::size_t length : lengths)
    offsets.push_back(static_cast<Offset>(offsets.back() + length));
  return offsets;
}

std::vector<HostSegment> ragged_segments(const std::vector<std::size_t>& lengths,
                                         std::size_t base) {
  std::vector<HostSegment> out;
  for (std::size_t length : lengths) {
    out.push_back({base, length});
    base += length;
  }
  return out;
}

std::size_t total_of(const std::vector<std::size_t>& lengths) {
  std::size_t total = 0;
  for (std::size_t length : lengths) total += length;
  return total;
}

//! "" when every segment's result in `out` matches the CPU reference (or the empty result),
//! otherwise the first few that do not. hx, hy: the host inputs the segments index.
template <class T>
std::string check_segments(Op op, const std::vector<T>& hx, const std::vector<T>& hy,
                           const std::vector<HostSegment>& segments,
                           const std::vector<unsigned char>& out) {
  const std::size_t size = result_size(op, dtype_of<T>::value);
  const std::vector<unsigned char> empty = empty_result<T>(op);
  std::ostringstream why;
  int wrong = 0;
  for (std::size_t s = 0; s < segments.size() && wrong < 5; ++s) {
    const unsigned char* got = out.data() + s * size;
    const HostSegment& seg = segments[s];
    std::string what;
    if (seg.count == 0) {
      if (std::memcmp(got, empty.data(), size) != 0) what = "not the empty-segment result";
    } else {
      const T* y = input_arrays(op) == 2 ? hy.data() + seg.begin : nullptr;
      what = bench::check_result(bench::reference(op, hx.data() + seg.begin, y, seg.count), got);
    }
    if (!what.empty()) {
      why << " [segment " << s << " of " << segments.size() << ", " << seg.count
          << " elements: " << what << "]";
      ++wrong;
    }
  }
  return why.str();
}

//! Runs a call that writes num results of `op` and returns them (d_out prefilled with kPoison).
template <class Call>
std::vector<unsigned char> results_of(Op op, DType dtype, std::size_t num, Call&& call) {
  return poisoned_output(num * result_size(op, dtype), call);
}

template <class T>
std::vector<unsigned char> run_fixed(Op op, const T* x, const T* y, std::size_t num,
                                     std::size_t size, cudaStream_t stream = nullptr) {
  return results_of(op, dtype_of<T>::value, num, [&](void* out) {
    reduce_segments(op, dtype_of<T>::value, x, input_arrays(op) == 2 ? y : nullptr, num, size, out,
                    stream);
  });
}

template <class T, class Offset>
std::vector<unsigned char> run_ragged(Op op, const T* x, const T* y, std::size_t num,
                                      const Offset* offsets, cudaStream_t stream = nullptr) {
  return results_of(op, dtype_of<T>::value, num, [&](void* out) {
    reduce_segments(op, dtype_of<T>::value, x, input_arrays(op) == 2 ? y : nullptr, num, offsets,
                    out, stream);
  });
}

std::string label(DType dtype, Op op, std::size_t num, std::size_t size, std::size_t offset) {
  std::ostringstream out;
  out << to_string(dtype) << " " << to_string(op) << " " << num << " x " << size << " offset "
      << offset;
  return out.str();
}

// ---- fixed-size segments -----------------------------------------------------------------------

template <class T>
class SegmentFixed : public GpuTest {};
TYPED_TEST_SUITE(SegmentFixed, AllTypes);

// The shapes and each side of every planner threshold: one thread, one warp, one block
// and a group of blocks per segment, and the scalar path for one segment.
TYPED_TEST(SegmentFixed, EveryOpShapeAndOffset) {
  using T = TypeParam;
  const std::vector<std::pair<std::size_t, std::size_t>> shapes{
      {1, 1},
      {1, 1000003},
      {3, 5},
      {4096, 4},
      {1000, 8},
      {333, 33},
      {64, 1024},
      {1024, 64},
      // Rows of whole vectors whose count is not a power of two (for some element sizes).
      {1000, 12},
      {500, 48},
      {300, 100},
      {200, 192},
      {64, 500},
      // Contiguous rows that are not vector rows: tiles of rows; more tiles than resident blocks.
      {700001, 7},
      // Rows whose teams the planner spreads over the banks (tile_team_stride_log2): f32 rows
      // of 65 (teams of 4 lanes on every 4th row), 130 (every 4th) and 161 (every 8th).
      {3001, 65},
      {1001, 130},
      {777, 161},
      {7, (std::size_t{1} << 20) + 3},
      {100, kThreadSegmentMax - 1},
      {100, kThreadSegmentMax},
      {20, kBlockSegmentMin - 1},
      {20, kBlockSegmentMin},
      {600, kBlockSegmentMin + 904},
      {2, 3 * (std::size_t{1} << 20) + 1}};
  int shape_index = 0;
  for (const auto& [num, size] : shapes) {
    const std::size_t n = num * size;
    const std::uint64_t seed = kSeed + n + num;
    // Small integers on every other shape: many ties for argmin/argmax, exact float sums.
    const Distribution d = shape_index++ % 2 ? Distribution::small_integers : Distribution::uniform;
    const auto hx = bench::random_vector<T>(n, seed, d);
    const auto hy = bench::random_vector<T>(n, seed + 1, d);
    const std::vector<HostSegment> segments = fixed_segments(num, size);
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      const DeviceBuffer<T> dx = upload(hx, offset);
      const DeviceBuffer<T> dy = upload(hy, offset);
      for (Op op : kCoreOps) {
        const auto out = run_fixed<T>(op, dx.data() + offset, dy.data() + offset, num, size);
        EXPECT_EQ(check_segments<T>(op, hx, hy, segments, out), "")
            << label(dtype_of<T>::value, op, num, size, offset) << " seed " << seed;
      }
    }
    // dot with y at another offset in its 16-byte line than x: y read element by element.
    const DeviceBuffer<T> dx = upload(hx, 0);
    const DeviceBuffer<T> dy = upload(hy, 1);
    const auto out = run_fixed<T>(Op::dot, dx.data(), dy.data() + 1, num, size);
    EXPECT_EQ(check_segments<T>(Op::dot, hx, hy, segments, out), "")
        << label(dtype_of<T>::value, Op::dot, num, size, 0) << ", y offset 1";
  }
}

TYPED_TEST(SegmentFixed, ZeroSizeSegmentsGiveTheEmptyResult) {
  using T = TypeParam;
  for (std::size_t num : {std::size_t{1}, std::size_t{5}, std::size_t{100}}) {
    for (Op op : kCoreOps) {
      // Nothing is read: null inputs are fine.
      const auto out = run_fixed<T>(op, nullptr, nullptr, num, 0);
      EXPECT_EQ(check_segments<T>(op, {}, {}, fixed_segments(num, 0), out), "")
          << label(dtype_of<T>::value, op, num, 0, 0);
    }
  }
}

TYPED_TEST(SegmentFixed, TypedFormsMatchTheRuntimeTypedEntry) {
  using T = TypeParam;
  const std::size_t num = 50;
  const std::size_t size = 77;
  const auto hx = bench::random_vector<T>(num * size, kSeed, Distribution::uniform);
  const DeviceBuffer<T> dx = upload(hx);
  const std::vector<std::int64_t> offsets =
      offsets_of<std::int64_t>(std::vector<std::size_t>(num, size), 0);
  const DeviceBuffer<std::int64_t> doff = upload(offsets);
  auto typed = [&](Op op, auto segments) {
    return results_of(op, dtype_of<T>::value, num, [&](void* out) {
      switch (op) {
        case Op::sum:
          return sum_segments(dx.data(), num, segments, static_cast<sum_t<T>*>(out), nullptr);
        case Op::min:
          return min_segments(dx.data(), num, segments, static_cast<T*>(out), nullptr);
        case Op::max:
          return max_segments(dx.data(), num, segments, static_cast<T*>(out), nullptr);
        case Op::dot:
          return dot_segments(dx.data(), dx.data(), num, segments, static_cast<sum_t<T>*>(out),
                              nullptr);
        case Op::argmin:
          return argmin_segments(dx.data(), num, segments, static_cast<ArgResult<T>*>(out),
                                 nullptr);
        case Op::argmax:
          return argmax_segments(dx.data(), num, segments, static_cast<ArgResult<T>*>(out),
                                 nullptr);
      }
    });
  };
  for (Op op : kCoreOps) {
    EXPECT_EQ(typed(op, size), run_fixed<T>(op, dx.data(), dx.data(), num, size)) << to_string(op);
    const auto ragged = typed(op, static_cast<const std::int64_t*>(doff.data()));
    EXPECT_EQ(check_segments<T>(op, hx, hx, fixed_segments(num, size), ragged), "")
        << to_string(op);
  }
}

// ---- ragged segments ---------------------------------------------------------------------------

template <class T>
class SegmentRagged : public GpuTest {
 protected:
  // Every op over `lengths` starting `base` elements into the input, with int32 (where the
  // offsets fit) and int64 offsets, the input at offsets 0 and 1 of its 16-byte line.
  void check_lengths(const std::vector<std::size_t>& lengths, std::size_t base, std::uint64_t seed,
                     const std::string& what) {
    const std::size_t n = base + total_of(lengths);
    const auto hx = bench::random_vector<T>(n, seed, Distribution::uniform);
    const auto hy = bench::random_vector<T>(n, seed + 1, Distribution::uniform);
    const std::vector<HostSegment> segments = ragged_segments(lengths, base);
    const DeviceBuffer<std::int64_t> off64 = upload(offsets_of<std::int64_t>(lengths, base));
    const bool fits32 = n <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());
    const DeviceBuffer<std::int32_t> off32 =
        fits32 ? upload(offsets_of<std::int32_t>(lengths, base)) : DeviceBuffer<std::int32_t>();
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      const DeviceBuffer<T> dx = upload(hx, offset);
      const DeviceBuffer<T> dy = upload(hy, offset);
      for (Op op : kCoreOps) {
        const T* x = dx.data() + offset;
        const T* y = dy.data() + offset;
        EXPECT_EQ(check_segments<T>(op, hx, hy, segments,
                                    run_ragged<T>(op, x, y, lengths.size(), off64.data())),
                  "")
            << what << ": " << to_string(dtype_of<T>::value) << " " << to_string(op)
            << " int64 offsets, input offset " << offset << ", seed " << seed;
        if (!fits32) continue;
        EXPECT_EQ(check_segments<T>(op, hx, hy, segments,
                                    run_ragged<T>(op, x, y, lengths.size(), off32.data())),
                  "")
            << what << ": " << to_string(dtype_of<T>::value) << " " << to_string(op)
            << " int32 offsets, input offset " << offset << ", seed " << seed;
      }
    }
    // dot with y at another offset in its 16-byte line than x: y read element by element.
    const DeviceBuffer<T> dx = upload(hx, 0);
    const DeviceBuffer<T> dy = upload(hy, 1);
    EXPECT_EQ(check_segments<T>(Op::dot, hx, hy, segments,
                                run_ragged<T>(Op::dot, dx.data(), dy.data() + 1, lengths.size(),
                                              off64.data())),
              "")
        << what << ": " << to_string(dtype_of<T>::value) << " dot, y offset 1, seed " << seed;
  }
};
TYPED_TEST_SUITE(SegmentRagged, AllTypes);

TYPED_TEST(SegmentRagged, EmptySegmentsAndEveryPathsThresholds) {
  const std::size_t t = kThreadSegmentMax;
  const std::size_t b = kBlockSegmentMin;
  const std::vector<std::size_t> lengths{
      0, 0, 1, 5, 0, t - 1, t, t + 1, 100, 0, b - 1, b, b + 1, 70001, 0, 2,
      (std::size_t{1} << 20) + 7, 3, 0, 0};
  this->check_lengths(lengths, 0, kSeed, "thresholds");
  this->check_lengths(lengths, 3, kSeed + 1, "thresholds, offsets[0] = 3");
  this->check_lengths({0}, 0, kSeed, "one empty segment");
  this->check_lengths({0, 0, 0}, 7, kSeed, "only empty segments");
  this->check_lengths({1000003}, 0, kSeed, "one long segment");
  this->check_lengths({kBlockSegmentMin}, 5, kSeed, "one segment at the long threshold");
}

//! `count` segment lengths, each `draw(r)` of one number r of a 64-bit Mersenne twister seeded
//! with `seed`, in order.
template <class Draw>
std::vector<std::size_t> draw_lengths(std::size_t count, std::uint64_t seed, Draw&& draw) {
  std::mt19937_64 random(seed);
  std::vector<std::size_t> lengths(count);
  for (std::size_t& length : lengths) length = draw(random());
  return lengths;
}

TYPED_TEST(SegmentRagged, OneHugeSegmentAmongTinyOnes) {
  std::vector<std::size_t> lengths = draw_lengths(3000, kSeed, [](std::uint64_t r) { return r % 8; });
  lengths.insert(lengths.begin() + 1700, 5 * (std::size_t{1} << 20) + 3);
  this->check_lengths(lengths, 1, kSeed, "one huge segment among 3000 tiny ones");
}

// Lengths from a Pareto law (most segments short, a few very long), 10000 of them.
TYPED_TEST(SegmentRagged, HeavyTailedLengths) {
  const std::uint64_t seed = kSeed + 7;
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::size_t> lengths;
  for (int s = 0; s < 10000; ++s) {
    const double length = 2.0 / std::pow(1.0 - unit(random), 1.6);
    lengths.push_back(static_cast<std::size_t>(std::min(length, 1e6)) - 1);
  }
  std::cout << "heavy-tailed lengths: seed " << seed << ", " << total_of(lengths)
            << " elements, longest " << *std::max_element(lengths.begin(), lengths.end())
            << std::endl;
  this->check_lengths(lengths, 0, seed, "heavy-tailed lengths");
}

// Enough segments that every resident warp of segment_teams_kernel takes a group of 32 (one per
// lane): then segments of kThreadSegmentMax elements up to kOctetSegmentBytes are read by teams of
// 8 lanes, four at once, and longer ones by the whole warp. Lengths on both sides of each
// threshold, in every lane of a group, with long ones among them. The count is an upper bound
// of 32 x the resident warps (every SM full of warps), so the groups form on any GPU.
TYPED_TEST(SegmentRagged, GroupsOfShortOctetAndWarpSegments) {
  using T = TypeParam;
  const std::size_t count = segments_for_full_groups();
  const std::size_t octet_max = kOctetSegmentBytes / sizeof(T);  // the first warp length
  const std::size_t t = kThreadSegmentMax;
  std::vector<std::size_t> lengths = draw_lengths(count, kSeed + 13, [&](std::uint64_t r) {
    const unsigned kind = static_cast<unsigned>(r % 20);
    if (kind < 9) return (r >> 8) % t;                        // a lane alone, empty ones included
    if (kind < 18) return t + (r >> 8) % (octet_max - t);     // a team of 8 lanes
    return octet_max + (r >> 8) % 700;                        // the warp
  });
  // Each threshold, in several lanes of one group and across groups.
  const std::vector<std::size_t> edges{t - 1, t, t + 1, octet_max - 1, octet_max, octet_max + 1};
  for (std::size_t i = 0; i < edges.size() * 40; ++i) lengths[1000 + 7 * i] = edges[i % edges.size()];
  for (std::size_t i = 0; i < 32; ++i) lengths[32 * 160 + i] = octet_max - 1;  // a group of octets
  lengths[20000] = kBlockSegmentMin;  // long ones among them (long_segments_kernel)
  lengths[count / 2] = 3 * kBlockSegmentMin + 5;
  this->check_lengths(lengths, 1, kSeed + 13, "groups of short, octet and warp segments");
}

// Enough segments for groups of 32 on an aligned input: segment_runs_kernel reads each group's
// short segments as runs of elements in rounds of whole vectors (for dot, and for sum, min and
// max of 2-byte types: kRunsServe; the other ops take segment_teams_kernel's groups).
// Lengths of 0..kCount + 1 elements (every start inside a 16-byte vector), tens, hundreds and
// up to long_min - 1 (segments across lanes and rounds); groups of only empty segments, of one
// element among empty ones, of 32 segments just below long_min (a run of ~500 rounds), and
// long segments at a group's first lane, last lane, side by side and alone among short ones
// (the runs between them). The input offset 1 of check_lengths takes segment_teams_kernel.
TYPED_TEST(SegmentRagged, RunsAcrossRoundsLanesAndLongSegments) {
  using T = TypeParam;
  const std::size_t count = segments_for_full_groups();
  const std::size_t per_vector = 16 / sizeof(T);
  const std::size_t b = kBlockSegmentMin;
  std::vector<std::size_t> lengths = draw_lengths(count, kSeed + 17, [&](std::uint64_t r) {
    const unsigned kind = static_cast<unsigned>(r % 100);
    if (kind < 50) return (r >> 8) % (per_vector + 2);  // within a vector or two, empty ones too
    if (kind < 93) return (r >> 8) % 100;
    if (kind < 99) return 100 + (r >> 8) % 1000;
    return 1100 + (r >> 8) % (b - 1100);  // up to long_min - 1
  });
  for (std::size_t s = 500; s < count; s += 997) lengths[s] = b + s % 3000;  // long ones
  auto group = [&](std::size_t g) { return lengths.begin() + static_cast<std::ptrdiff_t>(32 * g); };
  std::fill(group(100), group(101), 0);                 // only empty segments
  std::fill(group(101), group(102), 0);
  *(group(101) + 17) = 1;                               // one element among empty ones
  std::fill(group(102), group(103), b - 1);             // a run of 32 x (long_min - 1)
  *group(103) = b;                                      // long at the first lane
  *(group(104) + 31) = b + 1;                           // at the last lane
  *(group(105) + 9) = b;                                // side by side
  *(group(105) + 10) = 2 * b;
  std::fill(group(106), group(107), b);                 // all long but one short one
  *(group(106) + 20) = 3;
  std::fill(group(107), group(108), 0);                 // long among empty ones
  *(group(107) + 5) = b + 7;
  this->check_lengths(lengths, 3, kSeed + 17, "runs across rounds, lanes and long segments");
}

// The offsets' window (32 segment ends a warp holds) moving on inside one 32-vector chunk: many
// segments of 0..3 elements, and runs of hundreds of empty ones, over every warp's slice.
TYPED_TEST(SegmentRagged, DenseTinySegmentsAndRunsOfEmptyOnes) {
  std::vector<std::size_t> lengths =
      draw_lengths(200000, kSeed + 11, [](std::uint64_t r) { return r % 4; });
  lengths.insert(lengths.begin() + 5000, 700, 0);
  lengths.insert(lengths.begin() + 100000, 40, 0);
  lengths.insert(lengths.end(), 100, 0);
  lengths.insert(lengths.begin(), 33, 0);
  this->check_lengths(lengths, 2, kSeed + 11, "dense tiny segments and runs of empty ones");
}

// A decreasing pair is an empty segment, never a crash or a hang; the other segments (long ones
// included, read on the slower path) keep their results, and the next call is unaffected.
TYPED_TEST(SegmentRagged, DecreasingPairIsAnEmptySegment) {
  using T = TypeParam;
  const std::size_t n = 300000;
  const auto hx = bench::random_vector<T>(n, kSeed, Distribution::uniform);
  const DeviceBuffer<T> dx = upload(hx);
  const std::vector<std::int64_t> offsets{0, 100, 50, 20000, 20010, 5, 250000, 250040};
  const DeviceBuffer<std::int64_t> doff = upload(offsets);
  std::vector<HostSegment> segments;
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    const std::size_t begin = static_cast<std::size_t>(offsets[s]);
    const std::size_t end = static_cast<std::size_t>(offsets[s + 1]);
    segments.push_back({begin, end < begin ? 0 : end - begin});
  }
  for (Op op : kCoreOps) {
    EXPECT_EQ(
        check_segments<T>(op, hx, hx, segments,
                          run_ragged<T>(op, dx.data(), dx.data(), segments.size(), doff.data())),
        "")
        << to_string(dtype_of<T>::value) << " " << to_string(op) << " with decreasing pairs";
  }
  // The same workspace, valid offsets: the long kernel is back on its slices.
  const std::vector<std::int64_t> valid{0, 100, 200000, 200010};
  const DeviceBuffer<std::int64_t> dvalid = upload(valid);
  const std::vector<HostSegment> valid_segments{{0, 100}, {100, 199900}, {200000, 10}};
  for (Op op : kCoreOps)
    EXPECT_EQ(check_segments<T>(op, hx, hx, valid_segments,
                                run_ragged<T>(op, dx.data(), dx.data(), 3, dvalid.data())),
              "")
        << to_string(op) << " after a call with decreasing pairs";
}

// ---- NaN --------------------------------------------------------------------------------------

template <class T>
class SegmentNaN : public GpuTest {};
TYPED_TEST_SUITE(SegmentNaN, FloatTypes);

// NaN in some segments only (one or two, anywhere in the segment): those segments' min/max are
// NaN and argmin/argmax give the first NaN's index in the segment; sums are NaN; the other
// segments are unaffected. Every path: thread, tiles, warp, block, group of blocks, ragged long
// slices.
TYPED_TEST(SegmentNaN, OnlyTheSegmentsWithNaN) {
  using T = TypeParam;
  const T nan = T(std::numeric_limits<float>::quiet_NaN());
  auto check = [&](std::vector<T> h, const std::vector<HostSegment>& segments, auto&& run,
                   const std::string& what) {
    std::mt19937_64 random(kSeed);
    std::vector<bool> has_nan(segments.size(), false);
    for (std::size_t s = 0; s < segments.size(); s += 3) {
      if (segments[s].count == 0) continue;
      for (int k = 0; k < 1 + static_cast<int>(s % 2); ++k)
        h[segments[s].begin + random() % segments[s].count] = nan;
      has_nan[s] = true;
    }
    const DeviceBuffer<T> d = upload(h, 1);
    for (Op op : {Op::min, Op::max, Op::argmin, Op::argmax}) {
      const auto out = run(op, d.data() + 1);
      EXPECT_EQ(check_segments<T>(op, h, h, segments, out), "") << what << " " << to_string(op);
    }
    const auto sums = run(Op::sum, d.data() + 1);
    for (std::size_t s = 0; s < segments.size(); ++s) {
      sum_t<T> got;
      std::memcpy(&got, sums.data() + s * sizeof(got), sizeof(got));
      EXPECT_EQ(std::isnan(static_cast<double>(got)), static_cast<bool>(has_nan[s]))
          << what << " sum of segment " << s;
    }
  };
  // 101 and 250 elements at offset 1: tiles of rows (octets for f32 var's 250), whose teams
  // fold argmin/argmax kCount elements, `team` apart, at a time.
  for (const auto& [num, size] : std::vector<std::pair<std::size_t, std::size_t>>{
           {64, 8},
           {1000, 101},
           {300, 250},
           {64, 1000},
           {600, 5000},
           {3, (std::size_t{1} << 20) + 1}}) {
    const auto h = bench::random_vector<T>(num * size, kSeed, Distribution::uniform);
    check(
        h, fixed_segments(num, size),
        [&](Op op, const T* x) { return run_fixed<T>(op, x, nullptr, num, size); },
        label(dtype_of<T>::value, Op::min, num, size, 1));
  }
  std::vector<std::size_t> lengths;
  for (int s = 0; s < 200; ++s) lengths.push_back(s % 7 == 0 ? 50000 + s : s % 40);
  const auto h = bench::random_vector<T>(total_of(lengths), kSeed, Distribution::uniform);
  const DeviceBuffer<std::int32_t> off = upload(offsets_of<std::int32_t>(lengths, 0));
  check(
      h, ragged_segments(lengths, 0),
      [&](Op op, const T* x) { return run_ragged<T>(op, x, nullptr, lengths.size(), off.data()); },
      "ragged");
}

// ---- calls, streams and graphs
// -------------------------------------------------------------------

class SegmentCalls : public GpuTest {};

TEST_F(SegmentCalls, NoSegmentsWriteNothing) {
  DeviceBuffer<float> x(16);
  DeviceBuffer<std::int64_t> offsets(16);
  for (Op op : kCoreOps) {
    const auto fixed = results_of(op, DType::f32, 1, [&](void* out) {
      reduce_segments(op, DType::f32, x.data(), input_arrays(op) == 2 ? x.data() : nullptr, 0, 4,
                      out, nullptr);
    });
    EXPECT_EQ(fixed, std::vector<unsigned char>(fixed.size(), kPoison)) << to_string(op);
    const auto ragged = results_of(op, DType::f32, 1, [&](void* out) {
      reduce_segments(op, DType::f32, x.data(), input_arrays(op) == 2 ? x.data() : nullptr, 0,
                      offsets.data(), out, nullptr);
    });
    EXPECT_EQ(ragged, std::vector<unsigned char>(ragged.size(), kPoison)) << to_string(op);
    // Null everywhere is fine when there is nothing to do.
    reduce_segments(op, DType::f32, nullptr, nullptr, 0, 4, nullptr, nullptr);
    reduce_segments(op, DType::f32, nullptr, nullptr, 0, static_cast<const std::int32_t*>(nullptr),
                    nullptr, nullptr);
  }
}

// Two calls on two streams give the same bits, on every path.
TEST_F(SegmentCalls, RepeatedCallsAreBitwiseEqual) {
  const std::size_t n = (std::size_t{1} << 22) + 3;
  const auto h = bench::random_vector<float>(n, kSeed, Distribution::uniform);
  const DeviceBuffer<float> d = upload(h, 1);
  const float* x = d.data() + 1;
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<std::size_t> lengths;
  for (int s = 0; s < 500; ++s) lengths.push_back(s % 100 == 0 ? 700000 : s % 50);
  const DeviceBuffer<std::int64_t> off = upload(offsets_of<std::int64_t>(lengths, 0));
  for (Op op : {Op::sum, Op::dot, Op::argmax}) {
    for (const auto& [num, size] : std::vector<std::pair<std::size_t, std::size_t>>{
             {n / 4, 4}, {n / 1000, 1000}, {n / 50000, 50000}, {3, n / 3}}) {
      const auto first = run_fixed<float>(op, x, x, num, size);
      EXPECT_EQ(run_fixed<float>(op, x, x, num, size, stream), first)
          << to_string(op) << " " << num << " x " << size;
    }
    const auto first = run_ragged<float>(op, x, x, lengths.size(), off.data());
    EXPECT_EQ(run_ragged<float>(op, x, x, lengths.size(), off.data(), stream), first)
        << to_string(op) << " ragged";
  }
  REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  release_workspace(stream);
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

// A captured call (its graph owns a workspace) replays correctly, twice, with new input values
// between the replays: groups of blocks and the ragged long kernel reset their counters.
TEST_F(SegmentCalls, GraphCaptureAndReplay) {
  const std::size_t n = 3 * (std::size_t{1} << 20) + 5;
  std::vector<std::size_t> lengths;
  for (int s = 0; s < 300; ++s) lengths.push_back(s % 100 == 7 ? 900000 : s % 30);
  const std::size_t ragged_n = total_of(lengths);
  DeviceBuffer<float> d(std::max(n, ragged_n));
  const DeviceBuffer<std::int32_t> off = upload(offsets_of<std::int32_t>(lengths, 0));
  DeviceBuffer<float> fixed_out(3);
  DeviceBuffer<ArgResult<float>> ragged_out(lengths.size());
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  sum_segments(d.data(), 3, n / 3, fixed_out.data(), stream);
  argmax_segments(d.data(), lengths.size(), static_cast<const std::int32_t*>(off.data()),
                  ragged_out.data(), stream);
  REDUCELAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  REDUCELAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {
    const auto h = bench::random_vector<float>(d.size(), kSeed + replay, Distribution::uniform);
    REDUCELAB_CUDA_CHECK(cudaMemcpy(d.data(), h.data(), d.bytes(), cudaMemcpyHostToDevice));
    REDUCELAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<unsigned char> sums(3 * sizeof(float));
    REDUCELAB_CUDA_CHECK(
        cudaMemcpy(sums.data(), fixed_out.data(), sums.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ(check_segments<float>(Op::sum, h, h, fixed_segments(3, n / 3), sums), "")
        << "replay " << replay;
    std::vector<unsigned char> args(lengths.size() * 16);
    REDUCELAB_CUDA_CHECK(
        cudaMemcpy(args.data(), ragged_out.data(), args.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ(check_segments<float>(Op::argmax, h, h, ragged_segments(lengths, 0), args), "")
        << "replay " << replay;
  }
  REDUCELAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  REDUCELAB_CUDA_CHECK(cudaGraphDestroy(graph));
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

class SegmentErrors : public GpuTest {};

TEST_F(SegmentErrors, BadArgumentsThrowBeforeAnyLaunchAndTheContextStillWorks) {
  const std::size_t num = 64;
  const std::size_t size = 64;
  std::vector<float> host(num * size, 1.0f);
  const DeviceBuffer<float> d = upload(host);
  DeviceBuffer<float> out(num + 4);
  DeviceBuffer<ArgResult<float>> arg_out(num);
  const std::vector<std::int64_t> host_offsets =
      offsets_of<std::int64_t>(std::vector<std::size_t>(num, size), 0);
  const DeviceBuffer<std::int64_t> offsets = upload(host_offsets);
  std::int64_t* pinned_offsets = nullptr;
  REDUCELAB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned_offsets), (num + 1) * 8));
  float* pinned = nullptr;
  REDUCELAB_CUDA_CHECK(
      cudaMallocHost(reinterpret_cast<void**>(&pinned), host.size() * sizeof(float)));
  const float* x = d.data();
  const std::int64_t* off = offsets.data();
  auto shifted = [](const void* p, std::size_t bytes) {
    return const_cast<char*>(static_cast<const char*>(p)) + bytes;
  };
  // The call each case makes: fixed-size or ragged segments of f32.
  auto call = [](Op op, DType dtype, const void* in, const void* y, std::size_t segments,
                 std::size_t length, void* result) {
    return [=] { reduce_segments(op, dtype, in, y, segments, length, result, nullptr); };
  };
  auto fixed = [&](Op op, const void* in, const void* y, void* result) {
    return call(op, DType::f32, in, y, num, size, result);
  };
  auto ragged = [&](Op op, const void* in, const void* y, const std::int64_t* offs, void* result) {
    return [=] { reduce_segments(op, DType::f32, in, y, num, offs, result, nullptr); };
  };
  const std::size_t huge = std::size_t{1} << 40;
  expect_invalid_argument(fixed(Op::sum, nullptr, nullptr, out.data()), "null input", "null");
  expect_invalid_argument(fixed(Op::sum, x, nullptr, nullptr), "null out", "null");
  expect_invalid_argument(fixed(Op::max, host.data(), nullptr, out.data()), "pageable input",
                          "host memory");
  expect_invalid_argument(fixed(Op::max, pinned, nullptr, out.data()), "pinned input",
                          "host memory");
  expect_invalid_argument(fixed(Op::max, x, nullptr, pinned), "host out", "host memory");
  expect_invalid_argument(fixed(Op::sum, shifted(x, 2), nullptr, out.data()), "misaligned input",
                          "aligned");
  expect_invalid_argument(fixed(Op::argmax, x, nullptr, shifted(arg_out.data(), 4)),
                          "misaligned out", "aligned");
  expect_invalid_argument(fixed(Op::sum, x, x, out.data()), "y for sum", "one array");
  expect_invalid_argument(fixed(Op::dot, x, nullptr, out.data()), "null y", "null");
  expect_invalid_argument(fixed(static_cast<Op>(99), x, nullptr, out.data()), "bad Op",
                          "invalid Op");
  expect_invalid_argument(call(Op::sum, static_cast<DType>(-1), x, nullptr, num, size, out.data()),
                          "bad DType", "invalid DType");
  expect_invalid_argument(call(Op::sum, DType::f32, x, nullptr, huge, huge, out.data()),
                          "overflow", "overflows");
  expect_invalid_argument(ragged(Op::sum, nullptr, nullptr, off, out.data()), "ragged null input",
                          "null");
  expect_invalid_argument(ragged(Op::dot, x, nullptr, off, out.data()), "ragged null y", "null");
  expect_invalid_argument(ragged(Op::min, x, nullptr, off, nullptr), "ragged null out", "null");
  expect_invalid_argument(ragged(Op::sum, host.data(), nullptr, off, out.data()),
                          "ragged pageable input", "host memory");
  expect_invalid_argument(ragged(Op::sum, x, nullptr, nullptr, out.data()), "null offsets",
                          "null");
  expect_invalid_argument(ragged(Op::sum, x, nullptr, host_offsets.data(), out.data()),
                          "pageable offsets", "host memory");
  expect_invalid_argument(ragged(Op::sum, x, nullptr, pinned_offsets, out.data()),
                          "pinned offsets", "host memory");
  expect_invalid_argument(
      ragged(Op::sum, x, nullptr, reinterpret_cast<const std::int64_t*>(shifted(off, 4)),
             out.data()),
      "misaligned offsets", "aligned");
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  // The context still works.
  const auto sums = run_fixed<float>(Op::sum, x, nullptr, num, size);
  std::vector<float> got(num);
  std::memcpy(got.data(), sums.data(), sums.size());
  EXPECT_EQ(got, std::vector<float>(num, static_cast<float>(size)));
  REDUCELAB_CUDA_CHECK(cudaFreeHost(pinned));
  REDUCELAB_CUDA_CHECK(cudaFreeHost(pinned_offsets));
}

// ---- more than 2^31 elements (label "large": ~9 GB of device memory, as much of host memory) ----

class SegmentLarge : public GpuTest {};

// Two segments of 2^31 + 5 f16 elements: more than 2^31 elements in one segment and in total,
// fixed-size (a group of blocks per segment) and ragged (the long kernel's slices, int64
// offsets), with the minimum and maximum at indices past 2^31 within their segment.
TEST_F(SegmentLarge, MoreThanTwoToThe31ElementsInOneSegment) {
  using T = __half;
  const std::size_t size = (std::size_t{1} << 31) + 5;
  const std::size_t n = 2 * size;
  auto h = bench::random_vector<T>(n, kSeed, Distribution::uniform);
  h[size + (std::size_t{1} << 31) + 1] = T(-7.0f);  // segment 1's minimum
  h[(std::size_t{1} << 31) + 3] = T(9.0f);          // segment 0's maximum
  const DeviceBuffer<T> d = upload(h);
  for (Op op : {Op::sum, Op::argmin, Op::argmax}) {
    EXPECT_EQ(check_segments<T>(op, h, h, fixed_segments(2, size),
                                run_fixed<T>(op, d.data(), nullptr, 2, size)),
              "")
        << "fixed " << to_string(op);
  }
  const std::vector<std::size_t> lengths{3, size - 3, 0, 8, size - 8};
  const DeviceBuffer<std::int64_t> off = upload(offsets_of<std::int64_t>(lengths, 0));
  for (Op op : {Op::sum, Op::argmin, Op::argmax}) {
    EXPECT_EQ(check_segments<T>(op, h, h, ragged_segments(lengths, 0),
                                run_ragged<T>(op, d.data(), nullptr, lengths.size(), off.data())),
              "")
        << "ragged " << to_string(op);
  }
}

}  // namespace
}  // namespace reducelab::test

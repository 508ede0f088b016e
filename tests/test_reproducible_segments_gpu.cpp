// The gpu_to_gpu mode over segments and axes (issue 14): every result of reduce_segments (fixed
// rows and ragged int32/int64 offsets) and of reduce_axes (rows, sliced rows, the last axes of a
// batch) has the bits of the CPU function over its segment alone, whatever the kernel the shape
// picks (teams of lanes, a lane, a warp, chunks folded across warps), the grid (forced through
// the test hook), the offset of the pointers and the stream; empty segments give the default
// mode's results; a decreasing pair of offsets is an empty segment and leaves the others right.

#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "bench/axis_reference.hpp"
#include "reduce/axis_plan.hpp"
#include "reduce/reproducible.hpp"
#include "reduce/reproducible_plan.hpp"
#include "reduce/scratch.hpp"
#include "reducelab/reducelab.hpp"

namespace reducelab::test {
namespace {

struct ForcedGrid {
  explicit ForcedGrid(unsigned grid) { detail::set_reproducible_launch({grid, 0}); }
  ~ForcedGrid() { detail::set_reproducible_launch({}); }
};

const Reduction kOps[] = {Reduction(Op::sum),   Reduction(Op::mean),     Reduction(Op::dot),
                          Reduction::norm(1),   Reduction::norm(2),      Reduction::var(1),
                          Reduction::std_mean(0), Reduction(Op::logsumexp)};

std::string name_of(const Reduction& r) {
  return std::string(to_string(r.op)) + " ord " + std::to_string(r.ord);
}

template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed, double scale = 1.0,
                             double shift = 0.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<T> x(n);
  for (auto& v : x) v = bench::from_double<T>(shift + scale * normal(rng));
  return x;
}

//! The CPU function over each segment [begins[s], begins[s] + lengths[s]) of hx (and hy).
template <class T>
std::vector<unsigned char> cpu_segments(const Reduction& r, const std::vector<T>& hx,
                                        const std::vector<T>& hy,
                                        const std::vector<std::size_t>& begins,
                                        const std::vector<std::size_t>& lengths) {
  const std::size_t bytes = result_size(r.op, dtype_of<T>::value);
  std::vector<unsigned char> out(bytes * begins.size());
  for (std::size_t s = 0; s < begins.size(); ++s) {
    if (lengths[s] == 0) continue;  // compared against the default mode apart
    reproducible_reduce_cpu(r, dtype_of<T>::value, hx.data() + begins[s],
                            r.op == Op::dot ? hy.data() + begins[s] : nullptr, lengths[s],
                            out.data() + s * bytes);
  }
  return out;
}

//! Compares segment by segment (skipping empty ones), naming the first that differs.
void expect_same_segments(const std::vector<unsigned char>& got,
                          const std::vector<unsigned char>& want,
                          const std::vector<std::size_t>& lengths, std::size_t bytes,
                          const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    if (lengths[s] == 0) continue;
    if (std::memcmp(got.data() + s * bytes, want.data() + s * bytes, bytes) != 0) {
      ADD_FAILURE() << what << ": segment " << s << " of length " << lengths[s]
                    << " differs from the CPU function";
      return;
    }
  }
}

//! Whether two results of `bytes` bytes (one or two values of stat_t<T>) are the same bits, or
//! both NaN value by value: the gpu_to_gpu mode writes the canonical NaN, the default mode's
//! empty mean and var a NaN of the hardware's (a NaN's payload is not part of either promise).
template <class T>
bool same_or_both_nan(const unsigned char* a, const unsigned char* b, std::size_t bytes) {
  using S = stat_t<T>;
  for (std::size_t at = 0; at < bytes; at += sizeof(S)) {
    S x{}, y{};
    std::memcpy(&x, a + at, sizeof(S));
    std::memcpy(&y, b + at, sizeof(S));
    if (std::memcmp(&x, &y, sizeof(S)) != 0 && !(std::isnan(x) && std::isnan(y))) return false;
  }
  return true;
}

template <class T>
class ReproducibleSegments : public GpuTest {};
using FloatTypes = ::testing::Types<float, double, __half, __nv_bfloat16>;
TYPED_TEST_SUITE(ReproducibleSegments, FloatTypes);

// rows x size: teams of 1..32 lanes (size <= P), a warp per row (up to 16 tiles), chunks folded
// across warps (fewer rows than the GPU holds warps, longer than 16 tiles), a single row.
struct Shape {
  std::size_t rows;
  std::size_t size;
};
const Shape kShapes[] = {{1000, 0},  {37, 1},     {513, 3},    {300, 8},    {129, 32},
                         {64, 100},  {33, 127},   {17, 128},   {9, 129},    {5, 1000},
                         {4, 4097},  {3, 70001},  {2, 300000}, {1, 65537},  {2000, 64},
                         {7, (std::size_t{1} << 20) + 3}};

TYPED_TEST(ReproducibleSegments, FixedRowsSameBitsAsTheCpu) {
  using T = TypeParam;
  const DType dtype = dtype_of<T>::value;
  for (const Shape& shape : kShapes) {
    const std::size_t n = shape.rows * shape.size;
    const std::vector<T> hx = random_values<T>(n, kSeed + n, 1.0, 2.0);
    const std::vector<T> hy = random_values<T>(n, kSeed + n + 1);
    std::vector<std::size_t> begins(shape.rows), lengths(shape.rows, shape.size);
    for (std::size_t s = 0; s < shape.rows; ++s) begins[s] = s * shape.size;
    const DeviceBuffer<T> dy = upload(hy, 0);
    const DeviceBuffer<T> dx0 = upload(hx, 0);
    const DeviceBuffer<T> dx3 = upload(hx, 3);
    for (const Reduction& r : kOps) {
      const std::size_t bytes = result_size(r.op, dtype);
      const std::vector<unsigned char> want = cpu_segments(r, hx, hy, begins, lengths);
      for (std::size_t offset : {std::size_t{0}, std::size_t{3}}) {
        const T* x = offset == 0 ? dx0.data() : dx3.data() + 3;
        for (unsigned grid : {0u, 1u, 7u, 132u}) {
          ForcedGrid forced(grid);
          const std::vector<unsigned char> got =
              poisoned_output(bytes * shape.rows, [&](void* out) {
                reduce_segments(r.reproducible(), dtype, x, r.op == Op::dot ? dy.data() : nullptr,
                                shape.rows, shape.size, out, nullptr);
              });
          expect_same_segments(got, want, lengths, bytes,
                               name_of(r) + " " + std::to_string(shape.rows) + " x " +
                                   std::to_string(shape.size) + " offset " +
                                   std::to_string(offset) + " grid " + std::to_string(grid));
        }
      }
    }
  }
}

// Lengths from 0 to 2^22 + 5 in one call, heavy-tailed, with offsets[0] > 0.
std::vector<std::size_t> ragged_lengths(std::uint64_t seed) {
  std::vector<std::size_t> lengths = {0,     1,     5,      31,    32, 33, 100, 513, 0, 5000,
                                      9000,  70000, 300000, 2,     0,  7,  128, 129, 4097};
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 400; ++i) lengths.push_back(rng() % 40);
  // Up to P of f16 (256) and past it: the var and logsumexp states' team rounds get groups of
  // 32 with several teams of every size.
  for (int i = 0; i < 160; ++i) lengths.push_back(rng() % 270);
  lengths.push_back((std::size_t{1} << 22) + 5);
  for (int i = 0; i < 50; ++i) lengths.push_back(rng() % 3000);
  lengths.push_back(200000);
  return lengths;
}

template <class T, class Offset>
void check_ragged(const std::vector<std::size_t>& lengths, std::size_t base, bool decreasing) {
  const DType dtype = dtype_of<T>::value;
  std::vector<std::size_t> begins(lengths.size());
  std::vector<Offset> offsets(lengths.size() + 1);
  std::size_t at = base;
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    begins[s] = at;
    offsets[s] = static_cast<Offset>(at);
    at += lengths[s];
  }
  offsets[lengths.size()] = static_cast<Offset>(at);
  std::vector<std::size_t> expected_lengths = lengths;
  if (decreasing) {
    // Segment 3 (31 elements) becomes offsets[4] < offsets[3]: an empty segment; segment 4 then
    // starts earlier and is longer.
    offsets[4] = offsets[3] - 1;
    expected_lengths[3] = 0;
    begins[4] = static_cast<std::size_t>(offsets[4]);
    expected_lengths[4] = static_cast<std::size_t>(offsets[5] - offsets[4]);
  }
  const std::vector<T> hx = random_values<T>(at, kSeed + at, 3.0, -1.0);
  const std::vector<T> hy = random_values<T>(at, kSeed + at + 1);
  const DeviceBuffer<T> dx = upload(hx);
  const DeviceBuffer<T> dy = upload(hy);
  const DeviceBuffer<Offset> doffsets = upload(offsets);
  for (const Reduction& r : kOps) {
    const std::size_t bytes = result_size(r.op, dtype);
    const std::vector<unsigned char> want = cpu_segments(r, hx, hy, begins, expected_lengths);
    for (unsigned grid : {0u, 1u, 7u, 132u, 8192u}) {
      ForcedGrid forced(grid);
      const std::vector<unsigned char> got = poisoned_output(bytes * lengths.size(), [&](void* out) {
        reduce_segments(r.reproducible(), dtype, dx.data(), r.op == Op::dot ? dy.data() : nullptr,
                        lengths.size(), doffsets.data(), out, nullptr);
      });
      expect_same_segments(got, want, expected_lengths, bytes,
                           name_of(r) + (sizeof(Offset) == 8 ? " int64" : " int32") +
                               " offsets, base " + std::to_string(base) + " grid " +
                               std::to_string(grid) + (decreasing ? " decreasing pair" : ""));
    }
  }
}

TYPED_TEST(ReproducibleSegments, RaggedSameBitsAsTheCpu) {
  using T = TypeParam;
  const std::vector<std::size_t> lengths = ragged_lengths(kSeed);
  check_ragged<T, std::int64_t>(lengths, 0, false);
  check_ragged<T, std::int32_t>(lengths, 5, false);
  check_ragged<T, std::int32_t>(lengths, 0, true);
}

TYPED_TEST(ReproducibleSegments, EmptySegmentsGiveTheDefaultResults) {
  using T = TypeParam;
  const DType dtype = dtype_of<T>::value;
  const std::vector<T> hx = random_values<T>(64, kSeed);
  const DeviceBuffer<T> dx = upload(hx);
  const std::vector<std::int64_t> offsets = {0, 0, 10, 10, 64, 64};
  const DeviceBuffer<std::int64_t> doffsets = upload(offsets);
  for (const Reduction& r : kOps) {
    const std::size_t bytes = result_size(r.op, dtype);
    auto run = [&](const Reduction& which) {
      return poisoned_output(bytes * 5, [&](void* out) {
        reduce_segments(which, dtype, dx.data(), r.op == Op::dot ? dx.data() : nullptr, 5,
                        doffsets.data(), out, nullptr);
      });
    };
    const std::vector<unsigned char> fixed = run(r.reproducible());
    const std::vector<unsigned char> plain = run(r);
    for (std::size_t s : {0u, 2u, 4u})
      EXPECT_TRUE(same_or_both_nan<T>(fixed.data() + s * bytes, plain.data() + s * bytes, bytes))
          << name_of(r) << " empty segment " << s;
    // Fixed-size rows of 0 elements too.
    const std::vector<unsigned char> rows = poisoned_output(bytes * 3, [&](void* out) {
      reduce_segments(r.reproducible(), dtype, dx.data(), r.op == Op::dot ? dx.data() : nullptr, 3,
                      std::size_t{0}, out, nullptr);
    });
    EXPECT_TRUE(same_or_both_nan<T>(rows.data(), plain.data(), bytes))
        << name_of(r) << " 0-wide rows";
  }
}

TYPED_TEST(ReproducibleSegments, AxesSameBitsAsTheCpu) {
  using T = TypeParam;
  const DType dtype = dtype_of<T>::value;
  // A 6 x 5 x 777 tensor: the last two axes (one contiguous run of 3,885 per result), the last
  // one, and all three (the whole array); and a sliced view, rows of 300 of a pitch of 777.
  const std::vector<T> hx = random_values<T>(6 * 5 * 777, kSeed + 7, 1.0, 0.5);
  const std::vector<T> hy = random_values<T>(6 * 5 * 777, kSeed + 8);
  const DeviceBuffer<T> dx = upload(hx, 1);
  const DeviceBuffer<T> dy = upload(hy, 1);
  const Layout tensor = Layout::contiguous({6, 5, 777});
  struct Case {
    Layout layout;
    AxisMask axes;
    std::vector<std::size_t> begins, lengths;
  };
  std::vector<Case> cases;
  {
    Case c{tensor, axis_mask({1, 2}), {}, {}};
    for (std::size_t s = 0; s < 6; ++s) { c.begins.push_back(s * 3885); c.lengths.push_back(3885); }
    cases.push_back(c);
  }
  {
    Case c{tensor, axis_mask({2}), {}, {}};
    for (std::size_t s = 0; s < 30; ++s) { c.begins.push_back(s * 777); c.lengths.push_back(777); }
    cases.push_back(c);
  }
  cases.push_back({tensor, axis_mask({0, 1, 2}), {0}, {6 * 5 * 777}});
  {
    Case c{Layout::strided({30, 300}, {777, 1}), axis_mask({1}), {}, {}};
    for (std::size_t s = 0; s < 30; ++s) { c.begins.push_back(s * 777); c.lengths.push_back(300); }
    cases.push_back(c);
  }
  for (const Case& c : cases) {
    for (const Reduction& r : kOps) {
      const std::size_t bytes = result_size(r.op, dtype);
      const std::vector<unsigned char> want = cpu_segments(r, hx, hy, c.begins, c.lengths);
      const std::vector<unsigned char> got = poisoned_output(bytes * c.begins.size(), [&](void* out) {
        reduce_axes(r.reproducible(), dtype, dx.data() + 1, r.op == Op::dot ? dy.data() + 1 : nullptr,
                    c.layout, c.axes, out, nullptr, nullptr);
      });
      expect_same_segments(got, want, c.lengths, bytes,
                           name_of(r) + " axes of " + std::to_string(c.begins.size()) + " results");
    }
  }
  // The whole array through reduce_axes has the bits of reduce().
  const Reduction sum = Reduction(Op::sum).reproducible();
  sum_t<T> whole{};
  reduce_to_host(sum, dtype, dx.data() + 1, nullptr, hx.size(), &whole);
  const std::vector<unsigned char> via_axes = poisoned_output(sizeof(whole), [&](void* out) {
    reduce_axes(sum, dtype, dx.data() + 1, nullptr, tensor, axis_mask({0, 1, 2}), out, nullptr,
                nullptr);
  });
  EXPECT_EQ(std::memcmp(via_axes.data(), &whole, sizeof(whole)), 0);
}

//! The CPU function over each result of reducing `axes` of the view (hx, layout) (and hy through
//! the same layout): result j (row-major over the kept axes in view order) of its elements in
//! row-major order of the reduced axes, written at out_at[j] results into the returned bytes
//! (`slots` results long).
template <class T>
std::vector<unsigned char> cpu_strided(const Reduction& r, const std::vector<T>& hx,
                                       const std::vector<T>& hy, const Layout& layout,
                                       AxisMask axes, const std::vector<std::size_t>& out_at,
                                       std::size_t slots) {
  AxisMask kept = 0;
  for (int k = 0; k < layout.rank; ++k)
    if (((axes >> k) & 1u) == 0) kept |= AxisMask{1} << k;
  const std::vector<std::int64_t> results = bench::axis_offsets(layout, kept);
  const std::vector<std::int64_t> elements = bench::axis_offsets(layout, axes);
  const std::size_t bytes = result_size(r.op, dtype_of<T>::value);
  std::vector<unsigned char> out(bytes * slots);
  std::vector<T> gx(elements.size()), gy(elements.size());
  for (std::size_t j = 0; j < results.size(); ++j) {
    for (std::size_t k = 0; k < elements.size(); ++k) {
      gx[k] = hx[static_cast<std::size_t>(results[j] + elements[k])];
      if (r.op == Op::dot) gy[k] = hy[static_cast<std::size_t>(results[j] + elements[k])];
    }
    reproducible_reduce_cpu(r, dtype_of<T>::value, gx.data(),
                            r.op == Op::dot ? gy.data() : nullptr, gx.size(),
                            out.data() + out_at[j] * bytes);
  }
  return out;
}

struct StridedCase {
  Layout layout;
  AxisMask axes;
};

//! reduce_axes(r.reproducible()) over the view `c` of x (and y) at one element past dx's (dy's)
//! start, into a contiguous output, against the CPU function over each result's elements.
template <class T>
void expect_strided_like_cpu(const Reduction& r, const std::vector<T>& hx,
                             const std::vector<T>& hy, const DeviceBuffer<T>& dx,
                             const DeviceBuffer<T>& dy, const StridedCase& c,
                             const std::string& label) {
  const DType dtype = dtype_of<T>::value;
  const detail::AxisView view = detail::canonicalize_axes(c.layout, c.axes, nullptr, true);
  std::vector<std::size_t> out_at(view.outputs);
  for (std::size_t j = 0; j < out_at.size(); ++j) out_at[j] = j;
  const std::vector<unsigned char> want =
      cpu_strided(r, hx, hy, c.layout, c.axes, out_at, out_at.size());
  const std::vector<unsigned char> got = poisoned_output(want.size(), [&](void* out) {
    reduce_axes(r.reproducible(), dtype, dx.data() + 1, r.op == Op::dot ? dy.data() + 1 : nullptr,
                c.layout, c.axes, out, nullptr, nullptr);
  });
  expect_same_segments(got, want, std::vector<std::size_t>(out_at.size(), 1),
                       result_size(r.op, dtype), label);
}

// Strided views (columns, a middle axis, both ends, a transposed view, columns long enough for
// the segments' tile and chunk paths) give each result the CPU function's bits over its elements
// in row-major order of the reduced axes: gathered in chunks of any size (the test hook forces
// 4 KB, so a call takes many), in place or through a transposed output, from a misaligned base.
TYPED_TEST(ReproducibleSegments, StridedAxesSameBitsAsTheCpu) {
  using T = TypeParam;
  const DType dtype = dtype_of<T>::value;
  const std::size_t n = 6 * 5 * 777;
  const std::vector<T> hx = random_values<T>(n, kSeed + 21, 1.0, 0.5);
  const std::vector<T> hy = random_values<T>(n, kSeed + 22);
  const DeviceBuffer<T> dx = upload(hx, 1);
  const DeviceBuffer<T> dy = upload(hy, 1);
  const StridedCase cases[] = {
      {Layout::contiguous({6, 5, 777}), axis_mask({0})},       // columns of 6
      {Layout::contiguous({6, 5, 777}), axis_mask({1})},       // a middle axis
      {Layout::contiguous({6, 5, 777}), axis_mask({0, 2})},    // both ends
      {Layout::strided({777, 30}, {1, 777}), axis_mask({1})},  // a transposed view's rows
      {Layout::contiguous({3885, 6}), axis_mask({0})},         // long columns: tiles
      {Layout::contiguous({23310, 1}), axis_mask({0})},        // one column: the scalar path
  };
  for (const std::uint64_t gather : {std::uint64_t{0}, std::uint64_t{4096}}) {
    detail::set_reproducible_launch({0, 0, gather});
    for (const StridedCase& c : cases)
      for (const Reduction& r : kOps)
        expect_strided_like_cpu(r, hx, hy, dx, dy, c,
                                name_of(r) + " strided " + std::to_string(&c - cases) + ", " +
                                    std::to_string(gather) + "-byte chunks");
    // A middle axis into a transposed output (6 x 777 results at a + 6 c): through scratch.
    const Layout tensor = Layout::contiguous({6, 5, 777});
    const Layout transposed = Layout::strided({6, 777}, {1, 6});
    std::vector<std::size_t> out_at(6 * 777);
    for (std::size_t a = 0; a < 6; ++a)
      for (std::size_t c = 0; c < 777; ++c) out_at[a * 777 + c] = a + 6 * c;
    for (const Reduction& r : kOps) {
      const std::size_t bytes = result_size(r.op, dtype);
      const std::vector<unsigned char> want =
          cpu_strided(r, hx, hy, tensor, axis_mask({1}), out_at, out_at.size());
      const std::vector<unsigned char> got = poisoned_output(want.size(), [&](void* out) {
        reduce_axes(r.reproducible(), dtype, dx.data() + 1, r.op == Op::dot ? dy.data() + 1 : nullptr,
                    tensor, axis_mask({1}), out, &transposed, nullptr);
      });
      expect_same_segments(got, want, std::vector<std::size_t>(out_at.size(), 1), bytes,
                           name_of(r) + " into a transposed output, " + std::to_string(gather) +
                               "-byte chunks");
    }
  }
  detail::set_reproducible_launch({});
  // A column of no elements: every result the default mode's empty one.
  const Reduction var = Reduction::var(1);
  const Layout empty = Layout::contiguous({0, 7});
  const std::size_t bytes = result_size(var.op, dtype);
  const std::vector<unsigned char> fixed = poisoned_output(7 * bytes, [&](void* out) {
    reduce_axes(var.reproducible(), dtype, dx.data(), nullptr, empty, axis_mask({0}), out,
                nullptr, nullptr);
  });
  const std::vector<unsigned char> plain = poisoned_output(7 * bytes, [&](void* out) {
    reduce_axes(var, dtype, dx.data(), nullptr, empty, axis_mask({0}), out, nullptr, nullptr);
  });
  EXPECT_TRUE(same_or_both_nan<T>(fixed.data(), plain.data(), 7 * bytes)) << "empty columns";
}

// Columns read where they lie (the plain terms over one reduced axis; reproducible_columns.cuh)
// in every chunking of their tiles: a block per result group and 16 tiles (grid hook 1), the
// library's choice, one tile per chunk (a large block target), and the gather (4 KB chunks):
// the CPU function's bits each time, with a partial last tile, 45 results (not a multiple of a
// block's 32), a misaligned base, a middle axis of 3 x 6,666 x 45 and a slice of the columns.
TYPED_TEST(ReproducibleSegments, StridedColumnsEveryChunkingSameBitsAsTheCpu) {
  using T = TypeParam;
  const std::size_t n = 20000 * 45;
  const std::vector<T> hx = random_values<T>(n, kSeed + 31, 1.0, 0.25);
  const std::vector<T> hy = random_values<T>(n, kSeed + 32);
  const DeviceBuffer<T> dx = upload(hx, 1);
  const DeviceBuffer<T> dy = upload(hy, 1);
  const StridedCase cases[] = {
      {Layout::contiguous({20000, 45}), axis_mask({0})},
      {Layout::contiguous({3, 6666, 45}), axis_mask({1})},
      {Layout::strided({19000, 40}, {45, 1}), axis_mask({0})},  // a slice: 40 of 45 columns
  };
  const detail::ReproducibleLaunch launches[] = {{1, 0, 0}, {0, 0, 0}, {50000, 0, 0}, {0, 0, 4096}};
  for (const StridedCase& c : cases) {
    for (const Reduction& r : kOps) {
      for (const detail::ReproducibleLaunch& launch : launches) {
        detail::set_reproducible_launch(launch);
        expect_strided_like_cpu(r, hx, hy, dx, dy, c,
                                name_of(r) + " columns " + std::to_string(&c - cases) + ", grid " +
                                    std::to_string(launch.grid) + ", gather " +
                                    std::to_string(launch.gather_bytes));
      }
      detail::set_reproducible_launch({});
    }
  }
}

// Columns long enough that each lane of a tile holds K = 8 elements (over 2^24 f32, 2^23 f64,
// 2^25 f16 and bf16): var's lanes merge a second batch into their groups (column_var_lanes),
// logsumexp raises its running max between two batches (column_lse_kernel), and the last tile
// stops inside the second batch (lanes 0..6 hold 6 elements, the others 5).
TYPED_TEST(ReproducibleSegments, LongColumnsManyBatchesPerLaneSameBitsAsTheCpu) {
  using T = TypeParam;
  const std::size_t lanes = 32 * (16 / sizeof(T));
  const std::size_t rows = 16384 * 8 * lanes + 5 * lanes + 7;
  ASSERT_EQ(detail::repro::plan_for(sizeof(T), rows).steps, 8u);
  const std::size_t n = rows * 2;
  const std::vector<T> hx = random_values<T>(n, kSeed + 33, 1.0, 2.0);
  const std::vector<T> hy = random_values<T>(n, kSeed + 34);
  const DeviceBuffer<T> dx = upload(hx, 1);
  const DeviceBuffer<T> dy = upload(hy, 1);
  const StridedCase c{Layout::contiguous({rows, 2}), axis_mask({0})};
  for (const Reduction& r : {Reduction(Op::sum), Reduction::norm(2), Reduction::var(1),
                             Reduction::std_mean(0), Reduction(Op::logsumexp)}) {
    for (const unsigned grid : {0u, 50000u}) {
      detail::set_reproducible_launch({grid, 0, 0});
      expect_strided_like_cpu(r, hx, hy, dx, dy, c,
                              name_of(r) + " long columns, grid " + std::to_string(grid));
    }
    detail::set_reproducible_launch({});
  }
}

TEST_F(GpuTest, ReproducibleSegmentsOnAnotherStreamAndInAGraph) {
  const std::size_t rows = 5, size = 70001;
  const std::vector<float> hx = random_values<float>(rows * size, kSeed + 11);
  const DeviceBuffer<float> dx = upload(hx);
  std::vector<float> want(rows);
  for (std::size_t s = 0; s < rows; ++s) want[s] = reproducible_var_cpu(hx.data() + s * size, size);
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DeviceBuffer<float> out(rows);
  reduce_segments(Reduction::var().reproducible(), DType::f32, dx.data(), nullptr, rows, size,
                  out.data(), stream);
  std::vector<float> got(rows);
  REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  REDUCELAB_CUDA_CHECK(cudaMemcpy(got.data(), out.data(), rows * sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_EQ(std::memcmp(got.data(), want.data(), rows * sizeof(float)), 0) << "another stream";
  // Captured into a graph and replayed twice.
  REDUCELAB_CUDA_CHECK(cudaMemset(out.data(), 0, rows * sizeof(float)));
  REDUCELAB_CUDA_CHECK(cudaDeviceSynchronize());  // the legacy stream's memset before `stream`
  cudaGraph_t graph = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  reduce_segments(Reduction::var().reproducible(), DType::f32, dx.data(), nullptr, rows, size,
                  out.data(), stream);
  REDUCELAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  REDUCELAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {
    REDUCELAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    REDUCELAB_CUDA_CHECK(
        cudaMemcpy(got.data(), out.data(), rows * sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT_EQ(std::memcmp(got.data(), want.data(), rows * sizeof(float)), 0) << "graph " << replay;
  }
  REDUCELAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  REDUCELAB_CUDA_CHECK(cudaGraphDestroy(graph));
  // Columns (the gather's scratch is a graph allocation too), captured and replayed twice.
  const Layout columns = Layout::contiguous({rows, size});
  std::vector<float> want_columns(size);
  for (std::size_t c = 0; c < size; ++c) {
    float column[rows];
    for (std::size_t s = 0; s < rows; ++s) column[s] = hx[s * size + c];
    want_columns[c] = reproducible_var_cpu(column, rows);
  }
  DeviceBuffer<float> out_columns(size);
  REDUCELAB_CUDA_CHECK(cudaMemset(out_columns.data(), 0, size * sizeof(float)));
  REDUCELAB_CUDA_CHECK(cudaDeviceSynchronize());
  REDUCELAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  reduce_axes(Reduction::var().reproducible(), DType::f32, dx.data(), nullptr, columns,
              axis_mask({0}), out_columns.data(), nullptr, stream);
  REDUCELAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  REDUCELAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<float> got_columns(size);
  for (int replay = 0; replay < 2; ++replay) {
    REDUCELAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    REDUCELAB_CUDA_CHECK(cudaMemcpy(got_columns.data(), out_columns.data(), size * sizeof(float),
                                    cudaMemcpyDeviceToHost));
    EXPECT_EQ(std::memcmp(got_columns.data(), want_columns.data(), size * sizeof(float)), 0)
        << "columns, graph " << replay;
  }
  REDUCELAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  REDUCELAB_CUDA_CHECK(cudaGraphDestroy(graph));
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

// The gather's scratch comes from the library's pool (scratch.hpp), which keeps it mapped after
// the call's synchronisation (the default pool would give it back) until release_workspaces().
TEST_F(GpuTest, ReproducibleStridedScratchIsKeptThenReleased) {
  const std::size_t rows = 300, size = 4099;
  const std::vector<float> hx = random_values<float>(rows * size, kSeed + 31);
  const DeviceBuffer<float> dx = upload(hx);
  // Two reduced axes that do not merge (30 x 10 x 4,099 over axes 0 and 2: 10 results of 30
  // runs of 4,099) are gathered into rows; one reduced axis is read in place.
  const Layout view = Layout::contiguous({30, 10, size});
  const std::size_t results = 10;
  DeviceBuffer<float> out(results);
  const auto gathered_var = [&] {
    reduce_axes(Reduction::var(1).reproducible(), DType::f32, dx.data(), nullptr, view,
                axis_mask({0, 2}), out.data(), nullptr, nullptr);
    std::vector<float> got(results);
    REDUCELAB_CUDA_CHECK(cudaMemcpy(got.data(), out.data(), results * sizeof(float),
                                    cudaMemcpyDeviceToHost));
    return got;
  };
  const std::vector<float> first = gathered_var();
  int device = 0;
  REDUCELAB_CUDA_CHECK(cudaGetDevice(&device));
  const cudaMemPool_t pool = detail::scratch_pool(device);
  std::uint64_t reserved = 0;
  REDUCELAB_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  EXPECT_GE(reserved, rows * size * sizeof(float)) << "the rows' scratch is kept after the call";
  release_workspaces();
  REDUCELAB_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  EXPECT_EQ(reserved, 0u) << "release_workspaces() gives it back";
  const std::vector<float> again = gathered_var();
  EXPECT_EQ(std::memcmp(again.data(), first.data(), results * sizeof(float)), 0) << "after release";
}

}  // namespace
}  // namespace reducelab::test

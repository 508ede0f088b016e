// The axis reductions (include/reducelab/axis.hpp): every op x type over views of rank 0 to 4 and
// every subset of their axes (no reduction included), contiguous, transposed, permuted, sliced,
// stepped, broadcast and overlapping views, a 3-D middle axis, awkward sizes along rows and
// columns, size-0 and size-1 axes, misaligned bases, results through contiguous, strided,
// transposed and keepdim out layouts; NaN in some results' slices only; the typed overload;
// Layout, axis_mask and reduced_layout; bitwise repeatability, another stream and graph capture;
// every error; and more than 2^31 elements in one reduced slice and in total (AxisLarge, run with
// the "large" tests only). Each result is checked against bench::axis_reference, and every byte of
// the output buffer that no result owns must keep its poison.
//
// Run with: reducelab_gpu_tests --gtest_filter='Axis*'

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/axis_reference.hpp"
#include "gpu_test.hpp"
#include "reducelab/reducelab.hpp"

namespace reducelab::test {
namespace {

using bench::all_axes;
using bench::axis_offsets;
using bench::AxisIndexWalk;
using bench::Distribution;

using AllTypes = ::testing::Types<float, double, __half, __nv_bfloat16, std::int32_t, std::int64_t,
                                  std::uint32_t, std::uint64_t>;
using FloatTypes = ::testing::Types<float, double, __half, __nv_bfloat16>;
using Sizes = std::vector<std::int64_t>;

// ---- views and out layouts ----------------------------------------------------------------------

Layout layout_of(const Sizes& sizes, const Sizes& strides) {
  Layout l;
  l.rank = static_cast<int>(sizes.size());
  for (int k = 0; k < l.rank; ++k) {
    l.sizes[k] = sizes[static_cast<std::size_t>(k)];
    l.strides[k] = strides[static_cast<std::size_t>(k)];
  }
  return l;
}

//! Strides of `sizes` stored with axis order[0] outermost and order[rank - 1] innermost, each
//! axis's extent padded by `pad` elements (a sliced view: the row pitch exceeds the row) and the
//! innermost `inner` elements apart. A size-0 axis counts as 1, so no stride is 0.
Sizes strides_for(const Sizes& sizes, const std::vector<int>& order, std::int64_t pad,
                  std::int64_t inner) {
  Sizes strides(sizes.size());
  std::int64_t stride = inner;
  for (auto k = order.rbegin(); k != order.rend(); ++k) {
    strides[static_cast<std::size_t>(*k)] = stride;
    stride *= std::max<std::int64_t>(sizes[static_cast<std::size_t>(*k)], 1) + pad;
  }
  return strides;
}

std::vector<int> identity_order(std::size_t rank) {
  std::vector<int> order(rank);
  for (std::size_t k = 0; k < rank; ++k) order[k] = static_cast<int>(k);
  return order;
}

//! How a view of given sizes lies in its buffer.
enum class ViewKind { contiguous, reversed, rotated, sliced, stepped };
constexpr ViewKind kViewKinds[] = {ViewKind::contiguous, ViewKind::reversed, ViewKind::rotated,
                                   ViewKind::sliced, ViewKind::stepped};

Layout view_of(const Sizes& sizes, ViewKind kind) {
  std::vector<int> order = identity_order(sizes.size());
  switch (kind) {
    case ViewKind::contiguous: return layout_of(sizes, strides_for(sizes, order, 0, 1));
    case ViewKind::reversed:  // the transpose of a contiguous array (column-major)
      std::reverse(order.begin(), order.end());
      return layout_of(sizes, strides_for(sizes, order, 0, 1));
    case ViewKind::rotated:  // axis 0 innermost in memory, the others in order
      std::rotate(order.begin(), order.begin() + (order.empty() ? 0 : 1), order.end());
      return layout_of(sizes, strides_for(sizes, order, 0, 1));
    case ViewKind::sliced: return layout_of(sizes, strides_for(sizes, order, 3, 1));
    case ViewKind::stepped: return layout_of(sizes, strides_for(sizes, order, 1, 2));  // x[..., ::2]
  }
  return {};
}

//! Elements of the buffer under a view: one past its last element's offset (0 if it is empty).
std::size_t span_of(const Layout& l) {
  std::int64_t last = 0;
  for (int k = 0; k < l.rank; ++k) {
    if (l.sizes[k] == 0) return 0;
    last += (l.sizes[k] - 1) * l.strides[k];
  }
  return static_cast<std::size_t>(last) + 1;
}

Sizes kept_sizes(const Layout& x, AxisMask axes) {
  Sizes sizes;
  for (int k = 0; k < x.rank; ++k)
    if ((axes >> k & 1u) == 0) sizes.push_back(x.sizes[k]);
  return sizes;
}

//! Where the results go: d_out contiguous (no out layout) or through one of these.
enum class OutForm { contiguous, every_third, column_major, keepdim };
constexpr OutForm kStridedOutForms[] = {OutForm::every_third, OutForm::column_major,
                                        OutForm::keepdim};

const char* to_string(OutForm form) {
  switch (form) {
    case OutForm::contiguous: return "contiguous";
    case OutForm::every_third: return "every 3rd slot";
    case OutForm::column_major: return "column-major with gaps";
    case OutForm::keepdim: return "keepdim, every 2nd slot";
  }
  return "?";
}

//! The out layout of `form` for reducing `axes` of x (none for OutForm::contiguous): kept axes
//! only (every_third, column_major) or every axis of x (keepdim: the reduced ones of size 1 and a
//! stride the call must ignore).
std::optional<Layout> out_layout(const Layout& x, AxisMask axes, OutForm form) {
  const Sizes kept = kept_sizes(x, axes);
  std::vector<int> order = identity_order(kept.size());
  switch (form) {
    case OutForm::contiguous: return std::nullopt;
    case OutForm::every_third: return layout_of(kept, strides_for(kept, order, 0, 3));
    case OutForm::column_major:
      std::reverse(order.begin(), order.end());
      return layout_of(kept, strides_for(kept, order, 1, 1));
    case OutForm::keepdim: {
      Sizes sizes(static_cast<std::size_t>(x.rank));
      for (int k = 0; k < x.rank; ++k) sizes[static_cast<std::size_t>(k)] = (axes >> k & 1u) ? 1 : x.sizes[k];
      Layout out = layout_of(sizes, strides_for(sizes, identity_order(sizes.size()), 0, 2));
      for (int k = 0; k < x.rank; ++k)
        if (axes >> k & 1u) out.strides[k] = 1000003;
      return out;
    }
  }
  return std::nullopt;
}

//! The slot (in results) of each result, in row-major order of the kept axes of x.
std::vector<std::int64_t> out_slots(const Layout& x, AxisMask axes, const Layout* out) {
  const AxisMask kept = ~axes & all_axes(x.rank);
  if (out == nullptr) {
    std::vector<std::int64_t> slots(static_cast<std::size_t>(AxisIndexWalk(x, kept).count()));
    for (std::size_t k = 0; k < slots.size(); ++k) slots[k] = static_cast<std::int64_t>(k);
    return slots;
  }
  // keepdim: x's rank, the reduced axes (size 1) skipped; else the kept axes alone.
  return out->rank == x.rank ? axis_offsets(*out, kept) : axis_offsets(*out, all_axes(out->rank));
}

std::string describe(const Layout& l) {
  std::ostringstream out;
  out << "[";
  for (int k = 0; k < l.rank; ++k) out << (k ? "," : "") << l.sizes[k];
  out << "]/[";
  for (int k = 0; k < l.rank; ++k) out << (k ? "," : "") << l.strides[k];
  out << "]";
  return out.str();
}

// ---- inputs, calls and checks ------------------------------------------------------------------

//! Host and device copies of the buffers under a view (x, and y for dot); the view's element 0 is
//! hx[0], at x_shift elements into the device allocation (a misaligned base for shifts 1..3).
template <class T>
struct Inputs {
  std::vector<T> hx, hy;
  DeviceBuffer<T> dx, dy;
  std::size_t x_shift = 0;
  std::size_t y_shift = 0;
  const T* x() const { return dx.data() + x_shift; }
  const T* y() const { return dy.data() + y_shift; }
};

template <class T>
Inputs<T> make_inputs(const Layout& view, std::uint64_t seed, Distribution distribution,
                      std::size_t x_shift, std::size_t y_shift) {
  Inputs<T> in;
  const std::size_t span = span_of(view);
  in.hx = bench::random_vector<T>(span, seed, distribution);
  in.hy = bench::random_vector<T>(span, seed + 1, distribution);
  in.dx = upload(in.hx, x_shift);
  in.dy = upload(in.hy, y_shift);
  in.x_shift = x_shift;
  in.y_shift = y_shift;
  return in;
}

//! Copies the host buffers of `in` to its device ones again (after the test changed them).
template <class T>
void reupload(Inputs<T>& in) {
  REDUCELAB_CUDA_CHECK(cudaMemcpy(in.dx.data() + in.x_shift, in.hx.data(), in.hx.size() * sizeof(T),
                                  cudaMemcpyHostToDevice));
  REDUCELAB_CUDA_CHECK(cudaMemcpy(in.dy.data() + in.y_shift, in.hy.data(), in.hy.size() * sizeof(T),
                                  cudaMemcpyHostToDevice));
}

//! Runs reduce_axes into a poisoned buffer of `bytes` bytes, its results starting `out_shift`
//! results into it, and returns the buffer.
template <class T>
std::vector<unsigned char> run_axes(Op op, const T* x, const T* y, const Layout& view,
                                    AxisMask axes, const Layout* out, std::size_t bytes,
                                    std::size_t out_shift = 0, cudaStream_t stream = nullptr) {
  const std::size_t shift = out_shift * result_size(op, dtype_of<T>::value);
  return poisoned_output(bytes, [&](void* d_out) {
    reduce_axes(op, dtype_of<T>::value, x, input_arrays(op) == 2 ? y : nullptr, view, axes,
                static_cast<unsigned char*>(d_out) + shift, out, stream);
  });
}

template <class T>
std::string label(Op op, const Layout& view, AxisMask axes, const Inputs<T>& in,
                  const std::string& out) {
  std::ostringstream text;
  text << reducelab::to_string(dtype_of<T>::value) << " " << reducelab::to_string(op) << " x "
       << describe(view) << " +" << in.x_shift << " (y +" << in.y_shift << ") axes 0x" << std::hex
       << axes << std::dec << ", out " << out;
  return text.str();
}

//! "" when a call of `op` over (in, view) reducing `axes` into a poisoned buffer through `out`
//! (contiguous if null), its results `out_shift` results into the buffer, writes every result as
//! bench::axis_reference has it (a result of no elements: exactly the empty result) and no other
//! byte; otherwise the first differences.
template <class T>
std::string check_axes(Op op, const Inputs<T>& in, const Layout& view, AxisMask axes,
                       const Layout* out, std::size_t out_shift = 0,
                       cudaStream_t stream = nullptr) {
  const bool dot = input_arrays(op) == 2;
  const auto refs =
      bench::axis_reference(op, in.hx.data(), dot ? in.hy.data() : nullptr, view, axes);
  std::vector<std::int64_t> slots = out_slots(view, axes, out);
  for (std::int64_t& slot : slots) slot += static_cast<std::int64_t>(out_shift);
  if (refs.size() != slots.size()) return "the reference and the out layout disagree";
  const std::size_t size = result_size(op, dtype_of<T>::value);
  const std::size_t end =
      slots.empty() ? 0 : static_cast<std::size_t>(*std::max_element(slots.begin(), slots.end())) + 1;
  const auto bytes = run_axes(op, in.x(), in.y(), view, axes, out, (end + 1) * size, out_shift,
                              stream);
  const std::vector<unsigned char> empty = empty_result<T>(op);
  std::vector<bool> owned(bytes.size(), false);
  std::ostringstream why;
  int wrong = 0;
  for (std::size_t k = 0; k < refs.size(); ++k) {
    const std::size_t at = static_cast<std::size_t>(slots[k]) * size;
    std::fill(owned.begin() + static_cast<std::ptrdiff_t>(at),
              owned.begin() + static_cast<std::ptrdiff_t>(at + size), true);
    std::string what = bench::check_result(refs[k], bytes.data() + at);
    // An empty sum is +0 exactly (all-zero bits); check_result accepts -0 too.
    if (refs[k].n == 0 && info(op).result == ResultKind::accumulator &&
        std::memcmp(bytes.data() + at, empty.data(), size) != 0)
      what += " not the empty result (+0)";
    if (!what.empty() && wrong++ < 4)
      why << " [result " << k << " of " << refs.size() << " (" << refs[k].n
          << " elements): " << what << "]";
  }
  for (std::size_t b = 0; b < bytes.size(); ++b) {
    if (owned[b] || bytes[b] == kPoison) continue;
    why << " [byte " << b << " of the out buffer is no result's but was written]";
    break;
  }
  return why.str();
}

//! Every op over `view`, reducing each mask of `masks`: into contiguous results, and through
//! one of the strided out forms in turn (misaligned by one result on every other call).
template <class T>
void check_ops(const Inputs<T>& in, const Layout& view, const std::vector<AxisMask>& masks) {
  std::size_t turn = 0;
  for (AxisMask axes : masks) {
    for (Op op : kCoreOps) {
      EXPECT_EQ(check_axes(op, in, view, axes, nullptr), "")
          << label(op, view, axes, in, "contiguous");
      const OutForm form = kStridedOutForms[turn % 3];
      const std::optional<Layout> out = out_layout(view, axes, form);
      const std::size_t shift = turn++ % 2;
      EXPECT_EQ(check_axes(op, in, view, axes, &*out, shift), "")
          << label(op, view, axes, in, to_string(form)) << " shifted by " << shift << " results";
    }
  }
}

std::vector<AxisMask> every_mask(int rank) {
  std::vector<AxisMask> masks;
  for (AxisMask axes = 0; axes <= all_axes(rank); ++axes) masks.push_back(axes);
  return masks;
}

// ---- shapes ------------------------------------------------------------------------------------

template <class T>
class AxisShapes : public GpuTest {};
TYPED_TEST_SUITE(AxisShapes, AllTypes);

// Ranks 1 to 4, every subset of the axes (0: no reduction), size-1 axes, each shape as three of
// the view kinds in turn (contiguous always), the base 0..3 elements off its allocation.
TYPED_TEST(AxisShapes, EveryAxisSubsetOfRanksOneToFour) {
  using T = TypeParam;
  const std::vector<Sizes> shapes{{33},         {4097},          {31, 33},      {3, 1000},
                                  {1000, 3},    {5, 7, 33},      {1, 7, 1},     {3, 4, 5, 33},
                                  {2, 1, 3, 31}};
  std::size_t turn = 0;
  for (const Sizes& sizes : shapes) {
    for (ViewKind kind : {ViewKind::contiguous, kViewKinds[1 + turn % 4],
                          kViewKinds[1 + (turn + 1) % 4]}) {
      const Layout view = view_of(sizes, kind);
      const std::uint64_t seed = kSeed + turn;
      // Small integers on every other view: many ties for argmin/argmax, exact float sums.
      const Distribution d = turn % 2 ? Distribution::small_integers : Distribution::uniform;
      const Inputs<T> in = make_inputs<T>(view, seed, d, turn % 4, (turn + 1) % 4);
      check_ops(in, view, every_mask(view.rank));
      ++turn;
    }
  }
}

// Rows and columns of awkward lengths: short and long rows, few and many columns, so that every
// kernel the planner picks (scalar, segmented, strided with and without split reduced axes) meets
// sizes off its thresholds; contiguous and one of transposed / sliced, misaligned bases.
TYPED_TEST(AxisShapes, AwkwardRowAndColumnSizes) {
  using T = TypeParam;
  // {33, 70000} comes second of its pair, so its other view is the transpose: 70000 rows of 33 in
  // memory.
  const std::vector<Sizes> shapes{{1, 1},      {1, 3},      {3, 1},      {1, 70000},
                                  {70000, 1},  {3, 70000},  {70000, 3},  {31, 4097},
                                  {4097, 31},  {33, 1000},  {1000, 33},  {1000, 1000},
                                  {4097, 3},   {33, 70000}, {3, 4097}};
  std::size_t turn = 0;
  for (const Sizes& sizes : shapes) {
    for (ViewKind kind :
         {ViewKind::contiguous, turn / 2 % 2 ? ViewKind::reversed : ViewKind::sliced}) {
      const Layout view = view_of(sizes, kind);
      const Distribution d = turn % 2 ? Distribution::uniform : Distribution::small_integers;
      const Inputs<T> in = make_inputs<T>(view, kSeed + 100 + turn, d, turn % 4, 3 - turn % 4);
      for (AxisMask axes : {AxisMask{1}, AxisMask{2}, AxisMask{3}})
        for (Op op : kCoreOps)
          EXPECT_EQ(check_axes(op, in, view, axes, nullptr), "")
              << label(op, view, axes, in, "contiguous");
      ++turn;
    }
  }
}

// The middle axis of a 3-D tensor (and its complement: the middle axis kept), contiguous and
// sliced, into contiguous results and keepdim or every-third-slot ones in turn.
TYPED_TEST(AxisShapes, MiddleAxisOf3D) {
  using T = TypeParam;
  const std::vector<Sizes> shapes{
      {3, 1000, 33}, {64, 31, 128}, {2, 4097, 3}, {100, 3, 1000}, {7, 70000, 2}, {1, 33, 1}};
  std::size_t turn = 0;
  for (const Sizes& sizes : shapes) {
    for (ViewKind kind : {ViewKind::contiguous, ViewKind::sliced}) {
      const Layout view = view_of(sizes, kind);
      const Inputs<T> in = make_inputs<T>(view, kSeed + 200 + turn, Distribution::uniform,
                                          1 + turn % 3, turn % 2);
      for (AxisMask axes : {AxisMask{2}, AxisMask{5}}) {
        for (Op op : kCoreOps) {
          const OutForm strided = (turn + static_cast<std::size_t>(op)) % 2
                                      ? OutForm::keepdim
                                      : OutForm::every_third;
          for (OutForm form : {OutForm::contiguous, strided}) {
            const std::optional<Layout> out = out_layout(view, axes, form);
            EXPECT_EQ(check_axes(op, in, view, axes, out ? &*out : nullptr), "")
                << label(op, view, axes, in, to_string(form));
          }
        }
      }
      ++turn;
    }
  }
}

// Reduced axes that do not merge, with contiguous runs of whole 16-byte vectors (the vector runs
// kernels: one, two and three reduced axes): 512 x 256 x 1,024 over axes 0 and 2 in small, runs
// of a single f16 vector, enough elements per result for the split fold, NCHW over N, H and W,
// axes 0, 2 and 4 of a 5-D tensor, and rows that do not merge (x[:, :, :48] of 8 x 16 x 64).
// Each aligned (vector loads) and one element off (element loads), into contiguous results and
// keepdim ones; ties on every other view for argmin/argmax.
TYPED_TEST(AxisShapes, NonAdjacentAxesReadAsVectorRuns) {
  using T = TypeParam;
  const std::vector<std::pair<Layout, AxisMask>> cases{
      {view_of({6, 5, 64}, ViewKind::contiguous), 0b101},
      {view_of({4, 3, 8}, ViewKind::contiguous), 0b101},
      {view_of({64, 3, 2048}, ViewKind::contiguous), 0b101},
      {view_of({4, 6, 8, 16}, ViewKind::contiguous), 0b1101},
      {view_of({3, 4, 5, 2, 16}, ViewKind::contiguous), 0b10101},
      {layout_of({8, 16, 48}, {1024, 64, 1}), 0b100}};
  std::size_t turn = 0;
  for (const auto& [view, axes] : cases) {
    for (std::size_t shift : {0, 1}) {
      const Distribution d = turn % 2 ? Distribution::small_integers : Distribution::uniform;
      const Inputs<T> in = make_inputs<T>(view, kSeed + 250 + turn, d, shift, shift);
      for (Op op : kCoreOps) {
        EXPECT_EQ(check_axes(op, in, view, axes, nullptr), "")
            << label(op, view, axes, in, "contiguous");
        const std::optional<Layout> out = out_layout(view, axes, OutForm::keepdim);
        EXPECT_EQ(check_axes(op, in, view, axes, &*out), "")
            << label(op, view, axes, in, "keepdim");
      }
      ++turn;
    }
  }
}

// Stride 0 (a broadcast axis, reduced or kept, or every axis), overlapping rows (windows of one
// array), and a broadcast middle axis: every element read as often as the view names it, and an
// argmin/argmax among copies of one value the first position.
TYPED_TEST(AxisShapes, BroadcastAndOverlappingViews) {
  using T = TypeParam;
  const std::vector<Layout> views{
      layout_of({5, 1000}, {0, 1}),     layout_of({1000, 7}, {1, 0}),
      layout_of({64, 100}, {3, 1}),     layout_of({4, 6, 50}, {50, 0, 1}),
      layout_of({33, 31}, {0, 0}),      layout_of({300, 5, 40}, {7, 0, 3}),
      layout_of({3, 2, 2, 70}, {70, 0, 1, 1})};
  std::size_t turn = 0;
  for (const Layout& view : views) {
    const Inputs<T> in = make_inputs<T>(view, kSeed + 300 + turn, Distribution::small_integers,
                                        turn % 4, (turn + 2) % 4);
    check_ops(in, view, every_mask(view.rank));
    ++turn;
  }
}

// A kept axis of size 0: no results, nothing written, and null pointers are fine. A reduced axis
// of size 0 (and a kept one of size > 0): every result is the empty result of segmented.hpp;
// nothing is read, so x and y may be null.
TYPED_TEST(AxisShapes, ZeroSizeAxes) {
  using T = TypeParam;
  DeviceBuffer<T> some(64);
  const std::vector<std::pair<Layout, AxisMask>> no_results{
      {view_of({0, 5}, ViewKind::contiguous), 2}, {view_of({0, 5}, ViewKind::contiguous), 0},
      {view_of({5, 0}, ViewKind::contiguous), 1}, {view_of({3, 0, 4}, ViewKind::sliced), 5},
      {view_of({0}, ViewKind::contiguous), 0},    {view_of({2, 3, 0}, ViewKind::reversed), 3}};
  for (const auto& [view, axes] : no_results) {
    for (Op op : kCoreOps) {
      const T* y = input_arrays(op) == 2 ? some.data() : nullptr;
      const auto bytes = run_axes<T>(op, some.data(), y, view, axes, nullptr, 64);
      EXPECT_EQ(bytes, std::vector<unsigned char>(64, kPoison))
          << to_string(op) << " x " << describe(view) << " axes " << axes;
      for (OutForm form : kStridedOutForms) {
        const std::optional<Layout> out = out_layout(view, axes, form);
        EXPECT_EQ(run_axes<T>(op, some.data(), y, view, axes, &*out, 64),
                  std::vector<unsigned char>(64, kPoison))
            << to_string(op) << " x " << describe(view) << " axes " << axes << " out "
            << to_string(form);
      }
      // Null x and out are fine when there is nothing to do (dot still gets a y: axis.hpp makes
      // a missing one an error of its own).
      reduce_axes(op, dtype_of<T>::value, nullptr, y, view, axes, nullptr, nullptr, nullptr);
    }
  }
  REDUCELAB_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::pair<Layout, AxisMask>> empty_slices{
      {view_of({5, 0}, ViewKind::contiguous), 2},  {view_of({0, 5}, ViewKind::reversed), 1},
      {view_of({3, 0, 4}, ViewKind::sliced), 2},   {view_of({0}, ViewKind::contiguous), 1},
      {view_of({4, 0}, ViewKind::contiguous), 3},  {view_of({2, 0, 1, 3}, ViewKind::rotated), 6}};
  for (const auto& [view, axes] : empty_slices) {
    Inputs<T> in;  // no elements: a null x (and a y for dot, see above)
    in.dy = DeviceBuffer<T>(16);
    for (Op op : kCoreOps) {
      EXPECT_EQ(check_axes(op, in, view, axes, nullptr), "")
          << label(op, view, axes, in, "contiguous");
      for (OutForm form : kStridedOutForms) {
        const std::optional<Layout> out = out_layout(view, axes, form);
        EXPECT_EQ(check_axes(op, in, view, axes, &*out), "")
            << label(op, view, axes, in, to_string(form));
      }
    }
  }
}

// Mask 0 reduces nothing: every element is copied through the op's result type exactly
// (sum_t<T> for sum, x * y for dot, T for min/max, {x, 0} for argmin/argmax), in row-major
// order of the view; a rank-0 view is one element.
TYPED_TEST(AxisShapes, NoReductionCopiesThroughTheResultType) {
  using T = TypeParam;
  const std::vector<Layout> views{view_of({33, 31}, ViewKind::reversed),
                                  view_of({3, 5, 7}, ViewKind::sliced),
                                  view_of({1000}, ViewKind::stepped), Layout::contiguous({}),
                                  Layout{}};
  std::size_t turn = 0;
  for (const Layout& view : views) {
    const Inputs<T> in = make_inputs<T>(view, kSeed + 400 + turn, Distribution::uniform,
                                        turn % 4, 0);
    ++turn;
    const std::vector<std::int64_t> offsets = axis_offsets(view, all_axes(view.rank));
    for (Op op : kCoreOps) {
      const std::size_t size = result_size(op, dtype_of<T>::value);
      const auto bytes =
          run_axes<T>(op, in.x(), in.y(), view, 0, nullptr, offsets.size() * size);
      int wrong = 0;
      for (std::size_t k = 0; k < offsets.size() && wrong < 3; ++k) {
        const T x = in.hx[static_cast<std::size_t>(offsets[k])];
        // The value (and the index 0 of argmin/argmax at byte 8), not ArgResult's padding.
        std::vector<unsigned char> want(size, 0);
        std::size_t value_size = sizeof(T);
        if (op == Op::sum) {
          value_size = sizeof(sum_t<T>);
          const sum_t<T> value = static_cast<sum_t<T>>(x);
          std::memcpy(want.data(), &value, sizeof(value));
        } else if (op == Op::dot) {
          value_size = sizeof(sum_t<T>);
          const T y = in.hy[static_cast<std::size_t>(offsets[k])];
          const sum_t<T> value = static_cast<sum_t<T>>(x) * static_cast<sum_t<T>>(y);
          std::memcpy(want.data(), &value, sizeof(value));
        } else {
          std::memcpy(want.data(), &x, sizeof(x));  // argmin/argmax: index 0 after it
        }
        const unsigned char* got = bytes.data() + k * size;
        const bool index_ok = info(op).result != ResultKind::value_index ||
                              std::memcmp(got + 8, want.data() + 8, 8) == 0;
        if (std::memcmp(got, want.data(), value_size) != 0 || !index_ok) {
          ADD_FAILURE() << label(op, view, 0, in, "contiguous") << ": result " << k
                        << " is not element " << k << " through the result type";
          ++wrong;
        }
      }
    }
  }
}

// The typed overload writes what the runtime-typed entry writes, with and without an out layout.
TYPED_TEST(AxisShapes, TypedOverloadMatchesTheRuntimeTypedEntry) {
  using T = TypeParam;
  const Layout view = view_of({31, 1000}, ViewKind::sliced);
  const Inputs<T> in = make_inputs<T>(view, kSeed + 500, Distribution::uniform, 1, 2);
  for (AxisMask axes : {AxisMask{1}, AxisMask{2}}) {
    const std::optional<Layout> out = out_layout(view, axes, OutForm::every_third);
    for (const Layout* o : {static_cast<const Layout*>(nullptr), &*out}) {
      for (Op op : kCoreOps) {
        const std::size_t bytes = 3 * 1000 * result_size(op, dtype_of<T>::value);
        const T* y = input_arrays(op) == 2 ? in.y() : nullptr;
        const auto typed = poisoned_output(bytes, [&](void* d_out) {
          if (o == nullptr) {
            reduce_axes<T>(op, in.x(), y, view, axes, d_out, nullptr);  // out defaults to null
          } else {
            reduce_axes<T>(op, in.x(), y, view, axes, d_out, nullptr, o);
          }
        });
        EXPECT_EQ(typed, run_axes<T>(op, in.x(), in.y(), view, axes, o, bytes))
            << label(op, view, axes, in, o == nullptr ? "contiguous" : "every 3rd slot");
      }
    }
  }
}

// ---- NaN ---------------------------------------------------------------------------------------

template <class T>
class AxisNaN : public GpuTest {};
TYPED_TEST_SUITE(AxisNaN, FloatTypes);

// One or two NaNs at random positions of every third result's reduced slice: those results' min
// and max are NaN, argmin/argmax give the first NaN's index within the slice (checked against the
// reference), their sums are NaN; every other result is unaffected. Rows, columns (few and many),
// a 3-D middle axis and two axes of a transposed view.
TYPED_TEST(AxisNaN, OnlyTheResultsWithNaN) {
  using T = TypeParam;
  const T nan = T(std::numeric_limits<float>::quiet_NaN());
  const std::vector<std::pair<Layout, AxisMask>> cases{
      {view_of({64, 1000}, ViewKind::contiguous), 2}, {view_of({64, 1000}, ViewKind::sliced), 1},
      {view_of({70000, 4}, ViewKind::contiguous), 1}, {view_of({8, 300, 40}, ViewKind::contiguous), 2},
      {view_of({1000, 33}, ViewKind::reversed), 1},   {view_of({6, 50, 70}, ViewKind::reversed), 5},
      {view_of({5, 7000}, ViewKind::contiguous), 3},
      // Axes 0 and 2 with runs of whole vectors: element loads (the base 3 elements off), then
      // vector runs (aligned).
      {view_of({16, 9, 64}, ViewKind::contiguous), 5},
      {view_of({16, 9, 64}, ViewKind::contiguous), 5}};
  std::size_t turn = 0;
  for (const auto& [view, axes] : cases) {
    Inputs<T> in = make_inputs<T>(view, kSeed + 600 + turn, Distribution::uniform, turn % 4, 0);
    ++turn;
    const std::vector<std::int64_t> kept = axis_offsets(view, ~axes & all_axes(view.rank));
    const std::vector<std::int64_t> reduced = axis_offsets(view, axes);
    std::mt19937_64 random(kSeed + turn);
    std::vector<bool> has_nan(kept.size(), false);
    for (std::size_t k = 0; k < kept.size(); k += 3) {
      for (std::size_t count = 0; count < 1 + k % 2; ++count)
        in.hx[static_cast<std::size_t>(kept[k] + reduced[random() % reduced.size()])] = nan;
      has_nan[k] = true;
    }
    reupload(in);
    for (Op op : {Op::min, Op::max, Op::argmin, Op::argmax})
      EXPECT_EQ(check_axes(op, in, view, axes, nullptr), "")
          << label(op, view, axes, in, "contiguous");
    const auto sums = run_axes<T>(Op::sum, in.x(), nullptr, view, axes, nullptr,
                                  kept.size() * sizeof(sum_t<T>));
    for (std::size_t k = 0; k < kept.size(); ++k) {
      sum_t<T> got;
      std::memcpy(&got, sums.data() + k * sizeof(got), sizeof(got));
      EXPECT_EQ(bench::is_nan(got), static_cast<bool>(has_nan[k]))
          << label(Op::sum, view, axes, in, "contiguous") << ": result " << k;
    }
  }
}

// ---- Layout, axis_mask, reduced_layout (host only) ---------------------------------------------

TEST(AxisLayout, ContiguousAndStrided) {
  const Layout l = Layout::contiguous({2, 3, 4});
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(describe(l), "[2,3,4]/[12,4,1]");
  EXPECT_EQ(l.count(), 24);
  const Layout scalar = Layout::contiguous({});
  EXPECT_EQ(scalar.rank, 0);
  EXPECT_EQ(scalar.count(), 1);
  EXPECT_EQ(Layout{}.count(), 1);
  EXPECT_EQ(Layout::contiguous({5, 0, 7}).count(), 0);
  EXPECT_EQ(Layout::contiguous({5, 0, 7}).rank, 3);
  const Layout eight = Layout::contiguous({1, 2, 1, 2, 1, 2, 1, 3});
  EXPECT_EQ(eight.rank, kMaxRank);
  EXPECT_EQ(eight.count(), 24);
  EXPECT_EQ(eight.strides[kMaxRank - 1], 1);
  EXPECT_EQ(eight.strides[kMaxRank - 2], 3);
  const Layout t = Layout::strided({4, 5}, {1, 4});
  EXPECT_EQ(describe(t), "[4,5]/[1,4]");
  EXPECT_EQ(t.count(), 20);
  EXPECT_EQ(describe(Layout::strided({3, 2}, {0, 7})), "[3,2]/[0,7]");
  expect_invalid_argument([] { (void)Layout::contiguous({1, 1, 1, 1, 1, 1, 1, 1, 1}); },
                          "contiguous rank 9", "rank");
  expect_invalid_argument([] { (void)Layout::contiguous({3, -1}); }, "contiguous negative size",
                          "size");
}

TEST(AxisLayout, AxisMask) {
  EXPECT_EQ(axis_mask({}), 0u);
  EXPECT_EQ(axis_mask({0, 2}), 5u);
  EXPECT_EQ(axis_mask({2, 0}), 5u);
  EXPECT_EQ(axis_mask({7}), 128u);
  EXPECT_EQ(axis_mask({-1}, 3), 4u);
  EXPECT_EQ(axis_mask({-3, -1}, 3), 5u);
  EXPECT_EQ(axis_mask({0, -1}, 4), 9u);
  EXPECT_EQ(axis_mask({1}, 2), 2u);
  EXPECT_EQ(axis_mask({}, 0), 0u);
  expect_invalid_argument([] { (void)axis_mask({kMaxRank}); }, "axis 8", "axis");
  expect_invalid_argument([] { (void)axis_mask({-1}); }, "axis -1 without a rank", "axis");
  expect_invalid_argument([] { (void)axis_mask({3}, 3); }, "axis 3 of rank 3", "axis");
  expect_invalid_argument([] { (void)axis_mask({-4}, 3); }, "axis -4 of rank 3", "axis");
}

TEST(AxisLayout, ReducedLayout) {
  const Layout x = Layout::contiguous({2, 3, 4});
  EXPECT_EQ(describe(reduced_layout(x, axis_mask({1}), false)), "[2,4]/[4,1]");
  const Layout keep = reduced_layout(x, axis_mask({1}), true);
  EXPECT_EQ(keep.rank, 3);
  EXPECT_EQ(keep.sizes[0], 2);
  EXPECT_EQ(keep.sizes[1], 1);
  EXPECT_EQ(keep.sizes[2], 4);
  EXPECT_EQ(keep.strides[0], 4);  // the size-1 axis's stride does not matter
  EXPECT_EQ(keep.strides[2], 1);
  EXPECT_EQ(reduced_layout(x, all_axes(3), false).rank, 0);
  EXPECT_EQ(reduced_layout(x, all_axes(3), false).count(), 1);
  const Layout all_keep = reduced_layout(x, all_axes(3), true);
  EXPECT_EQ(all_keep.rank, 3);
  EXPECT_EQ(all_keep.count(), 1);
  EXPECT_EQ(describe(reduced_layout(x, 0, false)), "[2,3,4]/[12,4,1]");
  EXPECT_EQ(describe(reduced_layout(x, 0, true)), "[2,3,4]/[12,4,1]");
  // The result is contiguous whatever the view's strides.
  EXPECT_EQ(describe(reduced_layout(view_of({6, 5, 7}, ViewKind::reversed), 4, false)),
            "[6,5]/[5,1]");
}

// ---- calls, streams and graphs -----------------------------------------------------------------

class AxisCalls : public GpuTest {};

// reduced_layout's layouts (keepdim or not) as `out` give the bytes of contiguous results.
TEST_F(AxisCalls, ReducedLayoutAsOutIsContiguous) {
  const Layout view = view_of({6, 50, 70}, ViewKind::sliced);
  const Inputs<float> in = make_inputs<float>(view, kSeed, Distribution::uniform, 1, 1);
  for (AxisMask axes : every_mask(3)) {
    for (Op op : {Op::sum, Op::argmax}) {
      const std::size_t bytes = 6 * 50 * 70 * result_size(op, DType::f32);
      const auto contiguous = run_axes<float>(op, in.x(), nullptr, view, axes, nullptr, bytes);
      for (bool keepdim : {false, true}) {
        const Layout out = reduced_layout(view, axes, keepdim);
        EXPECT_EQ(run_axes<float>(op, in.x(), nullptr, view, axes, &out, bytes), contiguous)
            << label(op, view, axes, in, keepdim ? "reduced_layout keepdim" : "reduced_layout");
      }
    }
  }
}

// The same call twice on the legacy default stream and once on a non-blocking stream gives the
// same bits (and results the reference accepts): rows, columns with few results (the reduced
// axis split across blocks), many columns, a middle axis, transposed axes.
TEST_F(AxisCalls, RepeatedCallsAreBitwiseEqualOnAnyStream) {
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::vector<std::pair<Layout, AxisMask>> cases{
      {view_of({3, (1 << 20) + 3}, ViewKind::contiguous), 2},
      {view_of({(1 << 20) + 3, 3}, ViewKind::contiguous), 1},
      {view_of({1000, 1000}, ViewKind::sliced), 1},
      {view_of({64, 3000, 5}, ViewKind::contiguous), 2},
      {view_of({30, 40, 500}, ViewKind::reversed), 5}};
  std::size_t turn = 0;
  for (const auto& [view, axes] : cases) {
    const Inputs<float> in = make_inputs<float>(view, kSeed + turn, Distribution::uniform,
                                                turn % 4, 1);
    ++turn;
    for (Op op : {Op::sum, Op::dot, Op::argmax}) {
      const std::size_t bytes = out_slots(view, axes, nullptr).size() * result_size(op, DType::f32);
      const auto first = run_axes<float>(op, in.x(), in.y(), view, axes, nullptr, bytes);
      EXPECT_EQ(run_axes<float>(op, in.x(), in.y(), view, axes, nullptr, bytes), first)
          << label(op, view, axes, in, "contiguous") << ", second call";
      EXPECT_EQ(run_axes<float>(op, in.x(), in.y(), view, axes, nullptr, bytes, 0, stream), first)
          << label(op, view, axes, in, "contiguous") << ", non-blocking stream";
      EXPECT_EQ(check_axes(op, in, view, axes, nullptr, 0, stream), "")
          << label(op, view, axes, in, "contiguous") << ", non-blocking stream";
    }
  }
  REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  release_workspace(stream);
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

// Captured calls (the graph owns their workspace) replay correctly, twice, with new input values
// between the replays: a column reduction split across blocks, rows, and a middle axis through a
// keepdim out layout.
TEST_F(AxisCalls, GraphCaptureAndReplay) {
  struct Captured {
    Op op;
    Layout view;
    AxisMask axes;
    std::optional<Layout> out;
    Inputs<float> in;
    DeviceBuffer<unsigned char> d_out;
  };
  std::vector<Captured> calls;
  auto add = [&](Op op, const Layout& view, AxisMask axes, OutForm form) {
    Captured c{op, view, axes, out_layout(view, axes, form), {}, {}};
    c.in = make_inputs<float>(view, kSeed, Distribution::uniform, 1, 0);
    const std::vector<std::int64_t> slots = out_slots(view, axes, c.out ? &*c.out : nullptr);
    c.d_out = DeviceBuffer<unsigned char>(
        (static_cast<std::size_t>(*std::max_element(slots.begin(), slots.end())) + 1) *
        result_size(op, DType::f32));
    calls.push_back(std::move(c));
  };
  add(Op::sum, view_of({300000, 4}, ViewKind::contiguous), 1, OutForm::contiguous);
  add(Op::argmin, view_of({8, 200003}, ViewKind::sliced), 2, OutForm::every_third);
  add(Op::dot, view_of({16, 5000, 9}, ViewKind::contiguous), 2, OutForm::keepdim);
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (const Captured& c : calls)
    reduce_axes(c.op, DType::f32, c.in.x(), input_arrays(c.op) == 2 ? c.in.y() : nullptr, c.view,
                c.axes, c.d_out.data(), c.out ? &*c.out : nullptr, stream);
  REDUCELAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  REDUCELAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {
    for (Captured& c : calls) {
      bench::fill_random(c.in.hx.data(), c.in.hx.size(), kSeed + 10 + replay, Distribution::uniform);
      reupload(c.in);
      REDUCELAB_CUDA_CHECK(cudaMemset(c.d_out.data(), kPoison, c.d_out.bytes()));
    }
    // The copies and memsets above ran on the legacy stream, which `stream` does not wait for.
    REDUCELAB_CUDA_CHECK(cudaDeviceSynchronize());
    REDUCELAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (const Captured& c : calls) {
      // The replay's results, checked as a direct call's: the direct call must write the same.
      std::vector<unsigned char> replayed(c.d_out.bytes());
      REDUCELAB_CUDA_CHECK(cudaMemcpy(replayed.data(), c.d_out.data(), replayed.size(),
                                      cudaMemcpyDeviceToHost));
      const Layout* out = c.out ? &*c.out : nullptr;
      EXPECT_EQ(check_axes(c.op, c.in, c.view, c.axes, out), "")
          << label(c.op, c.view, c.axes, c.in, "direct") << ", replay " << replay;
      EXPECT_EQ(run_axes<float>(c.op, c.in.x(), c.in.y(), c.view, c.axes, out, replayed.size()),
                replayed)
          << label(c.op, c.view, c.axes, c.in, "graph") << ", replay " << replay;
    }
  }
  REDUCELAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  REDUCELAB_CUDA_CHECK(cudaGraphDestroy(graph));
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

// ---- errors ------------------------------------------------------------------------------------

class AxisErrors : public GpuTest {};

TEST_F(AxisErrors, BadArgumentsThrowBeforeAnyLaunchAndTheContextStillWorks) {
  const Layout view = Layout::contiguous({64, 64});
  const AxisMask rows = 2;  // reduce axis 1: 64 results
  std::vector<float> host(64 * 64, 1.0f);
  const DeviceBuffer<float> d = upload(host);
  DeviceBuffer<float> out(64 + 4);
  DeviceBuffer<ArgResult<float>> arg_out(64);
  float* pinned = nullptr;
  REDUCELAB_CUDA_CHECK(
      cudaMallocHost(reinterpret_cast<void**>(&pinned), host.size() * sizeof(float)));
  const float* x = d.data();
  auto shifted = [](const void* p, std::size_t bytes) {
    return const_cast<char*>(static_cast<const char*>(p)) + bytes;
  };
  auto call = [](Op op, DType dtype, const void* in, const void* y, const Layout& v,
                 AxisMask axes, void* result, std::optional<Layout> o) {
    return [=] { reduce_axes(op, dtype, in, y, v, axes, result, o ? &*o : nullptr, nullptr); };
  };
  // f32 over `v` (default: the 64 x 64 view) reducing `axes` (default: rows).
  auto f32 = [&](Op op, const void* in, const void* y, void* result,
                 std::optional<Layout> o = std::nullopt, const Layout& v = Layout::contiguous({64, 64}),
                 AxisMask axes = 2) { return call(op, DType::f32, in, y, v, axes, result, o); };
  Layout rank9 = view;
  rank9.rank = 9;
  Layout rank_negative = view;
  rank_negative.rank = -1;
  constexpr std::int64_t kHuge = std::numeric_limits<std::int64_t>::max();

  expect_invalid_argument(f32(Op::sum, x, nullptr, out.data(), std::nullopt, rank9), "rank 9",
                          "rank");
  expect_invalid_argument(f32(Op::sum, x, nullptr, out.data(), std::nullopt, rank_negative, 0),
                          "rank -1", "rank");
  expect_invalid_argument(
      f32(Op::sum, x, nullptr, out.data(), std::nullopt, layout_of({64, -1}, {64, 1})),
      "negative size", "size");
  expect_invalid_argument(
      f32(Op::sum, x, nullptr, out.data(), std::nullopt, layout_of({64, 64}, {64, -1})),
      "negative stride", "stride");
  expect_invalid_argument(
      f32(Op::sum, x, nullptr, out.data(), std::nullopt, layout_of({2, 2}, {kHuge, 1}), 0),
      "last offset overflows", "overflow");
  expect_invalid_argument(f32(Op::sum, x, nullptr, out.data(), std::nullopt, view, 4),
                          "mask bit 2 of rank 2", "rank");
  expect_invalid_argument(f32(Op::max, x, nullptr, out.data(), std::nullopt, view, 1u << 31),
                          "mask bit 31 of rank 2", "rank");
  expect_invalid_argument(f32(Op::max, x, nullptr, out.data(), std::nullopt, Layout{}, 1),
                          "mask bit 0 of rank 0", "rank");
  expect_invalid_argument(
      f32(Op::sum, x, nullptr, out.data(), layout_of({64, 1, 1}, {1, 1, 1})), "out rank 3",
      "out");
  expect_invalid_argument(f32(Op::sum, x, nullptr, out.data(), Layout{}), "out rank 0", "out");
  expect_invalid_argument(f32(Op::sum, x, nullptr, out.data(), layout_of({63}, {1})),
                          "out size 63 for 64 results", "out");
  expect_invalid_argument(f32(Op::sum, x, nullptr, out.data(), layout_of({64, 2}, {1, 1})),
                          "keepdim out with a reduced axis of size 2", "out");
  expect_invalid_argument(f32(Op::sum, x, nullptr, out.data(), layout_of({65, 1}, {1, 1})),
                          "keepdim out with a kept axis of size 65", "out");
  expect_invalid_argument(f32(Op::sum, x, nullptr, out.data(), layout_of({64}, {0})),
                          "out stride 0 on an axis of size 64", "stride");
  expect_invalid_argument(f32(Op::sum, x, nullptr, out.data(), layout_of({64}, {-1})),
                          "negative out stride", "stride");
  expect_invalid_argument(f32(Op::sum, nullptr, nullptr, out.data()), "null x", "null");
  expect_invalid_argument(f32(Op::sum, x, nullptr, nullptr), "null out", "null");
  expect_invalid_argument(f32(Op::dot, x, nullptr, out.data()), "null y for dot", "null");
  expect_invalid_argument(f32(Op::sum, x, x, out.data()), "y for sum", "one array");
  expect_invalid_argument(f32(Op::argmin, x, x, arg_out.data()), "y for argmin", "one array");
  expect_invalid_argument(f32(Op::max, host.data(), nullptr, out.data()), "pageable x",
                          "host memory");
  expect_invalid_argument(f32(Op::max, pinned, nullptr, out.data()), "pinned x", "host memory");
  expect_invalid_argument(f32(Op::dot, x, pinned, out.data()), "pinned y", "host memory");
  expect_invalid_argument(f32(Op::max, x, nullptr, pinned), "pinned out", "host memory");
  expect_invalid_argument(f32(Op::sum, shifted(x, 2), nullptr, out.data()), "misaligned x",
                          "aligned");
  expect_invalid_argument(f32(Op::argmax, x, nullptr, shifted(arg_out.data(), 4)),
                          "misaligned out", "aligned");
  expect_invalid_argument(f32(Op::sum, x, nullptr, shifted(out.data(), 2)),
                          "misaligned out (sum)", "aligned");
  expect_invalid_argument(f32(static_cast<Op>(99), x, nullptr, out.data()), "bad Op",
                          "invalid Op");
  expect_invalid_argument(
      call(Op::sum, static_cast<DType>(-1), x, nullptr, view, rows, out.data(), std::nullopt),
      "bad DType", "invalid DType");
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  REDUCELAB_CUDA_CHECK(cudaDeviceSynchronize());
  // The context still works.
  const auto sums = run_axes<float>(Op::sum, x, nullptr, view, rows, nullptr, 64 * sizeof(float));
  std::vector<float> got(64);
  std::memcpy(got.data(), sums.data(), sums.size());
  EXPECT_EQ(got, std::vector<float>(64, 64.0f));
  REDUCELAB_CUDA_CHECK(cudaFreeHost(pinned));
}

// ---- more than 2^31 elements (label "large": ~17 GB of device memory, as much of host memory) ---

class AxisLarge : public GpuTest {};

// One f32 buffer of 2 x (2^31 + 5) small integers (float sums exact), seen three ways: two rows
// of 2^31 + 5 (reducing the rows), the same elements as [2^31 + 5, 2] (two interleaved columns
// of 2^31 + 5, reduced across blocks), and [4198404, 1023] (1023 columns of 4 M, more than 2^31
// elements in all). Minima and maxima planted past index 2^31 within their slice.
TEST_F(AxisLarge, MoreThanTwoToThe31ElementsInOneSliceAndInTotal) {
  const std::int64_t n = (std::int64_t{1} << 31) + 5;
  const std::size_t total = 2 * static_cast<std::size_t>(n);
  Inputs<float> in;
  in.hx = bench::random_vector<float>(total, kSeed, Distribution::small_integers);
  in.hx[(std::size_t{1} << 31) + 3] = 9.0f;                       // row 0's maximum
  in.hx[static_cast<std::size_t>(n) + (std::size_t{1} << 31) + 1] = -9.0f;  // row 1, column 0
  in.hx[(std::size_t{1} << 32) + 7] = -9.0f;                      // column 1's minimum
  in.dx = upload(in.hx);
  const std::int64_t columns = 1023;
  const std::vector<std::tuple<Layout, AxisMask, std::vector<Op>>> cases{
      {Layout::contiguous({2, n}), 2, {Op::sum, Op::argmin, Op::argmax}},
      {Layout::contiguous({n, 2}), 1, {Op::sum, Op::argmin, Op::argmax}},
      {Layout::contiguous({static_cast<std::int64_t>(total) / columns, columns}), 1,
       {Op::sum, Op::argmin}}};
  for (const auto& [view, axes, ops] : cases)
    for (Op op : ops)
      EXPECT_EQ(check_axes(op, in, view, axes, nullptr), "")
          << label(op, view, axes, in, "contiguous");
}

}  // namespace
}  // namespace reducelab::test

// The CPU side of the gpu_to_gpu mode: the order of reproducible_plan.hpp, in plain IEEE
// arithmetic, and the statistics of reproducible_stats.hpp (their exp, log and square roots from
// portable_math.hpp). Compiled with -ffp-contract=off (src/CMakeLists.txt): a fused multiply-add would
// round the dot's products differently from the GPU's __fmul_rn. x86-64 and AArch64 compute float
// and double in their own precision (SSE / NEON, never the x87's 80 bits).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "reduce/reproducible_plan.hpp"
#include "reduce/reproducible_stats.hpp"
#include "reducelab/error.hpp"
#include "reducelab/reproducible.hpp"

namespace reducelab {
namespace {

using detail::repro::Plan;
using detail::repro::plan_for;

template <class A>
A widen(float v) { return static_cast<A>(v); }
template <class A>
A widen(double v) { return static_cast<A>(v); }
template <class A>
A widen(__half v) { return static_cast<A>(__half2float(v)); }  // exact
template <class A>
A widen(__nv_bfloat16 v) {  // exact: the bf16's bits are a float's upper half
  std::uint16_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  const std::uint32_t word = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof(f));
  return static_cast<A>(f);
}

template <class A>
A canonical(A v) {
  if (v == v) return v;
  if constexpr (sizeof(A) == 4) {
    const std::uint32_t bits = 0x7fffffffu;
    std::memcpy(&v, &bits, sizeof(v));
  } else {
    const std::uint64_t bits = 0x7fffffffffffffffull;
    std::memcpy(&v, &bits, sizeof(v));
  }
  return v;
}

// The complete tree of adjacent pairs over v, padded with `identity` to a power of two; `merge`
// is the trees' "addition": lse_merge for logsumexp's tile pairs, var_merge_lanes and var_merge
// for var's groups, or (the second form) IEEE addition, padded with -0.
template <class A, class Merge>
A pairwise(std::vector<A>& v, Merge merge, A identity) {
  std::size_t size = 1;
  while (size < v.size()) size *= 2;
  v.resize(size, identity);
  for (; size > 1; size /= 2) {
    for (std::size_t j = 0; j < size / 2; ++j) {
      const A left = v[2 * j];
      const A right = v[2 * j + 1];
      v[j] = merge(left, right);
    }
  }
  return v[0];
}
template <class A>
A pairwise(std::vector<A>& v) {
  return pairwise(v, [](A a, A b) { return a + b; }, -A(0));
}

// The fixed-order sum of f(i) (the term of element i, in A) over [0, n), n >= 1.
template <class A, class F>
A fixed_order_sum_of(std::size_t element_size, std::size_t n, F&& f) {
  const Plan plan = plan_for(element_size, n);
  std::vector<A> tiles(plan.tiles);
  std::vector<A> lanes(plan.lanes);
  for (std::size_t t = 0; t < plan.tiles; ++t) {
    lanes.assign(plan.lanes, -A(0));
    const std::size_t first = t * plan.tile;
    for (std::size_t m = 0; m < plan.steps; ++m) {
      for (std::size_t l = 0; l < plan.lanes; ++l) {
        const std::size_t i = first + m * plan.lanes + l;
        if (i >= n) break;  // the rest of this step and the later steps are past the end
        lanes[l] = lanes[l] + f(i);
      }
    }
    tiles[t] = pairwise(lanes);
  }
  return pairwise(tiles);
}

// logsumexp's order (reproducible_stats.hpp): per tile a running max over batches of 4 steps,
// the lanes' sums rescaled where it grows, the tile's pair (max, tree of the lanes), the tiles'
// pairs merged in the tree. n >= 1.
template <class T, class A>
detail::repro::LseState<A> logsumexp_order(const T* x, std::size_t n) {
  namespace repro = detail::repro;
  constexpr std::size_t kBatch = repro::kMinSteps;
  const Plan plan = plan_for(sizeof(T), n);
  std::vector<repro::LseState<A>> tiles(plan.tiles);
  std::vector<A> lanes(plan.lanes);
  for (std::size_t t = 0; t < plan.tiles; ++t) {
    lanes.assign(plan.lanes, -A(0));
    A m = -std::numeric_limits<A>::infinity();
    const std::size_t first = t * plan.tile;
    for (std::size_t b = 0; b < plan.steps / kBatch; ++b) {
      const std::size_t lo = first + b * kBatch * plan.lanes;
      if (lo >= n) break;
      const std::size_t hi = std::min(lo + kBatch * plan.lanes, n);
      A batch = -std::numeric_limits<A>::infinity();
      for (std::size_t i = lo; i < hi; ++i) batch = repro::lse_max(batch, widen<A>(x[i]));
      const A next = repro::lse_max(m, batch);
      if (next != m) {
        const A scale = detail::portable::exp_rn(m - next);
        for (A& lane : lanes) lane = lane * scale;
        m = next;
      }
      const bool finite = repro::lse_finite(m);
      for (std::size_t i = lo; i < hi; ++i) {
        const A v = widen<A>(x[i]);
        A& lane = lanes[(i - first) % plan.lanes];
        lane = lane + (finite ? repro::lse_term(v, m) : repro::lse_nan_term(v));
      }
    }
    tiles[t] = {m, pairwise(lanes)};
  }
  return pairwise(tiles, &repro::lse_merge<A>, repro::lse_identity<A>());
}

// var's one-pass order (reproducible_stats.hpp): per tile, each lane's batches of 4 steps
// centred on the tile's first element and merged into the lane, the lanes' tree, then the tiles'
// tree; beside it each lane's plain sum, element by element as the sum's. n >= 1.
template <class T, class A>
detail::repro::VarState<A> var_order(const T* x, std::size_t n) {
  namespace repro = detail::repro;
  constexpr std::size_t kBatch = repro::kVarBatch;
  static_assert(kBatch == repro::kMinSteps, "a tile is whole batches");
  const Plan plan = plan_for(sizeof(T), n);
  std::vector<repro::VarState<A>> tiles(plan.tiles);
  std::vector<repro::VarState<A>> lanes(plan.lanes);
  std::vector<A> sums(plan.lanes);
  for (std::size_t t = 0; t < plan.tiles; ++t) {
    lanes.assign(plan.lanes, repro::var_identity<A>());
    sums.assign(plan.lanes, -A(0));
    const std::size_t first = t * plan.tile;
    const A shift = widen<A>(x[first]);
    for (std::size_t b = 0; b < plan.steps / kBatch; ++b) {
      for (std::size_t l = 0; l < plan.lanes; ++l) {
        A c[kBatch] = {};
        int k = 0;
        for (std::size_t m = b * kBatch; m < (b + 1) * kBatch; ++m) {
          const std::size_t i = first + m * plan.lanes + l;
          if (i >= n) break;
          const A v = widen<A>(x[i]);
          c[k++] = v - shift;
          sums[l] = sums[l] + v;
        }
        if (k > 0) lanes[l] = repro::var_merge_lanes(lanes[l], repro::var_batch(c, k));
      }
    }
    for (std::size_t l = 0; l < plan.lanes; ++l) lanes[l].sum = sums[l];
    tiles[t] = pairwise(lanes, &repro::var_merge_lanes<A>, repro::var_identity<A>());
    tiles[t].shift = shift;
  }
  return pairwise(tiles, &repro::var_merge<A>, repro::var_identity<A>());
}

template <class T, class A>
A fixed_order_sum(const T* x, const T* y, std::size_t n) {
  return fixed_order_sum_of<A>(sizeof(T), n, [&](std::size_t i) {
    A term = widen<A>(x[i]);
    if (y != nullptr) {
      const A other = widen<A>(y[i]);
      term = term * other;  // rounded: this file is compiled without contraction
    }
    return term;
  });
}

// The largest element (or |element|), NaN if any is NaN (the default kernel's, order-free),
// widened.
template <class T, class A>
A max_of(const T* x, std::size_t n, bool absolute) {
  A m = -std::numeric_limits<A>::infinity();
  for (std::size_t i = 0; i < n; ++i) {
    A v = widen<A>(x[i]);
    if (absolute) v = std::fabs(v);
    if (v != v) return v;
    if (v > m) m = v;
  }
  return m;
}

// The statistics of reproducible_stats.hpp, term for term as reproducible_stats.cuh, n >= 1.
// Writes the result (or the pair) to h_out.
template <class T>
void compute_statistic(const Reduction& r, const T* x, std::size_t n, void* h_out) {
  using A = sum_t<T>;
  namespace repro = detail::repro;
  namespace portable = detail::portable;
  switch (r.op) {
    case Op::norm: {
      if (r.ord == 1) {
        const A s = fixed_order_sum_of<A>(sizeof(T), n, [&](std::size_t i) {
          return std::fabs(widen<A>(x[i]));
        });
        const A out = canonical(s);
        std::memcpy(h_out, &out, sizeof(out));
        return;
      }
      using N = repro::norm2_acc_t<T>;
      N scale = 1;
      if constexpr (std::is_same_v<T, double>) scale = repro::norm2_scale(max_of<T, double>(x, n, true));
      const N s = fixed_order_sum_of<N>(sizeof(T), n, [&](std::size_t i) {
        N v = widen<N>(x[i]);
        if constexpr (std::is_same_v<T, double>) v = v * scale;
        return v * v;
      });
      N root = portable::sqrt_rn(s);
      if constexpr (std::is_same_v<T, double>) root = root * repro::norm2_unscale(scale);
      const A out = canonical(static_cast<A>(root));  // f32, bf16: the double root to float
      std::memcpy(h_out, &out, sizeof(out));
      return;
    }
    case Op::var: case Op::std: case Op::var_mean: case Op::std_mean: {
      const repro::VarState<A> total = var_order<T, A>(x, n);
      const A mean = canonical(total.sum / static_cast<A>(n));  // the gpu_to_gpu mean's bits
      A value = repro::finish_var(total.m2, repro::var_divisor<A>(n, r.correction));
      if (r.op == Op::std || r.op == Op::std_mean) value = portable::sqrt_rn(value);
      value = canonical(value);
      if (r.op == Op::var_mean || r.op == Op::std_mean) {
        const StatPair<A> pair{value, mean};
        std::memcpy(h_out, &pair, sizeof(pair));
      } else {
        std::memcpy(h_out, &value, sizeof(value));
      }
      return;
    }
    case Op::logsumexp: {
      const A out = repro::finish_logsumexp(logsumexp_order<T, A>(x, n));  // NaN: canonical
      std::memcpy(h_out, &out, sizeof(out));
      return;
    }
    default: break;
  }
}

// What the default kernel gives for no elements (the gpu_to_gpu mode runs it: it reads nothing).
template <class A>
void empty_statistic(Op op, void* h_out) {
  const A nan = canonical(std::numeric_limits<A>::quiet_NaN());
  switch (op) {
    case Op::norm: { const A zero = 0; std::memcpy(h_out, &zero, sizeof(zero)); return; }
    case Op::logsumexp: {
      const A minus_inf = -std::numeric_limits<A>::infinity();
      std::memcpy(h_out, &minus_inf, sizeof(minus_inf));
      return;
    }
    case Op::var_mean: case Op::std_mean: {
      const StatPair<A> pair{nan, nan};
      std::memcpy(h_out, &pair, sizeof(pair));
      return;
    }
    default: std::memcpy(h_out, &nan, sizeof(nan)); return;
  }
}

template <class T>
void compute(const Reduction& r, const void* h_x, const void* h_y, std::size_t n, void* h_out) {
  using A = sum_t<T>;
  const Op op = r.op;
  const T* x = static_cast<const T*>(h_x);
  if (op != Op::sum && op != Op::dot && op != Op::mean) {
    if (n == 0) {
      empty_statistic<A>(op, h_out);
    } else {
      compute_statistic<T>(r, x, n, h_out);
    }
    return;
  }
  const T* y = op == Op::dot ? static_cast<const T*>(h_y) : nullptr;
  A result = n == 0 ? A(0) : fixed_order_sum<T, A>(x, y, n);  // empty sum: +0, as reduce()
  if (op == Op::mean) result = result / static_cast<A>(n);    // empty: NaN
  result = canonical(result);
  std::memcpy(h_out, &result, sizeof(A));
}

void reject(const std::string& message) { throw Error(ErrorCode::invalid_argument, message); }

}  // namespace

void reproducible_reduce_cpu(Reduction r, DType dtype, const void* h_x, const void* h_y,
                             std::size_t n, void* h_out) {
  if (!is_valid(r.op) || !is_valid(dtype)) reject("reproducible_reduce_cpu: invalid Op or DType");
  const bool statistic = detail::repro::is_statistic(r.op);
  if (info(dtype).kind != DTypeKind::floating ||
      (r.op != Op::sum && r.op != Op::dot && r.op != Op::mean && !statistic))
    reject("reproducible_reduce_cpu: " + std::string(info(r.op).name) + " of " +
           std::string(info(dtype).name) +
           " is not computed here: it takes sum, dot, mean, var, std, var_mean, std_mean, "
           "logsumexp and norm of f32, f64, f16 and bf16 (the other ops are order-free: the "
           "default mode's bits)");
  if (r.op == Op::norm && !(r.ord == 1 || r.ord == 2))
    reject("reproducible_reduce_cpu: norm of ord " + std::to_string(r.ord) +
           " is not computed here: it takes ord 1 and 2 (ord 0, inf and -inf are order-free: "
           "the default mode's bits; reduce() takes no other ord)");
  if (takes_correction(r.op) && !(r.correction >= 0 && r.correction <= 9.0e15))
    reject("reproducible_reduce_cpu: " + std::string(info(r.op).name) +
           ": the correction must be a finite number >= 0, not " + std::to_string(r.correction));
  if (h_out == nullptr || (n > 0 && h_x == nullptr) ||
      (r.op == Op::dot && n > 0 && h_y == nullptr))
    reject("reproducible_reduce_cpu: a null pointer");
  if (r.op != Op::dot && h_y != nullptr)
    reject("reproducible_reduce_cpu: " + std::string(info(r.op).name) +
           " reads one array; pass a null second array");
  switch (dtype) {
    case DType::f32: compute<float>(r, h_x, h_y, n, h_out); break;
    case DType::f64: compute<double>(r, h_x, h_y, n, h_out); break;
    case DType::f16: compute<__half>(r, h_x, h_y, n, h_out); break;
    case DType::bf16: compute<__nv_bfloat16>(r, h_x, h_y, n, h_out); break;
    default: reject("reproducible_reduce_cpu: not a floating type");
  }
}

double reproducible_error_bound(DType dtype, std::size_t n, Op op) {
  if (!is_valid(dtype) || info(dtype).kind != DTypeKind::floating)
    reject("reproducible_error_bound: not a floating type");
  const int depth = detail::repro::depth_of(plan_for(size_of(dtype), n)) + (op == Op::dot ? 1 : 0);
  const double u = dtype == DType::f64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  return depth * u / (1 - depth * u);
}

}  // namespace reducelab

#pragma once
// The gpu_to_gpu statistics (issue 14): norm of ord 1 and 2, var, std, var_mean, std_mean and
// logsumexp, each "the fixed-order sum (reproducible_plan.hpp) of a term f(x_i)", with scalar
// work before it (an order-free max, or the fixed-order mean) and after it (a division, a square
// root, a log). This header holds what the GPU (reproducible_stats.cuh) and the CPU function
// (reproducible_cpu.cpp) must share bit for bit: the choice of the terms and accumulators, and
// the scalar work, written once as __host__ __device__ code in portable_math.hpp's operations.
//
// - norm ord 1: f(x) = |x| in sum_t<T>.
// - norm ord 2: f(x) = x x, then the correctly rounded square root. f16: in float (every square
//   of an f16 is exact and normal in float). f32 and bf16: in double (a float's square is exact
//   in double and never overflows or underflows it, as the default mode, which squares them in
//   double too), the square root in double, then rounded to float. f64: a square would overflow
//   above 2^511 and lose bits below 2^-511, so an order-free first pass finds m = max |x| (the
//   default kernel of norm ord inf), and f(x) = (s x)^2 with s a power of two chosen from m
//   alone (norm2_scale): s x is exact, and so is the scaling back.
// - var, std, var_mean, std_mean: two passes. The fixed-order mean m (the gpu_to_gpu mean, the
//   same bits as Op::mean), then f(x) = (x - m)^2 in sum_t<T>, divided by max(0, n - correction)
//   rounded to sum_t<T>; std is the correctly rounded square root of var. The mean written by
//   var_mean and std_mean is m.
// - logsumexp: M = max x_i (order-free: the default kernel of Op::max), f(x) = exp(x - M) with
//   portable_math.hpp's exp, in stat_t<T>, then M + log(sum) with its log. A NaN anywhere gives
//   NaN, else M = +inf gives +inf and all -inf gives -inf (the default mode's and torch's).
// Every result that is a NaN is written as the canonical NaN, as the sum's.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "reduce/portable_math.hpp"
#include "reduce/reproducible_plan.hpp"
#include "reducelab/op.hpp"
#include "reducelab/types.hpp"

namespace reducelab::detail::repro {

//! Where the first pass leaves its scalar (the mean, the max, max |x|) for the second: after the
//! tile and group partials in the workspace's partials region, past what the default kernels
//! (kMaxGrid x 16 bytes) and the fixed-order kernel (kMaxTiles x 8 + kMaxGroups x 8) use.
inline constexpr std::size_t kScalarOffset = kMaxTiles * 8 + kMaxGroups * 8;

//! The ops of this header (norm of ord 1 and 2 among them; the ord is checked apart).
constexpr bool is_statistic(Op op) {
  return op == Op::var || op == Op::std || op == Op::var_mean || op == Op::std_mean ||
         op == Op::logsumexp || op == Op::norm;
}

//! The accumulator of the ord 2 norm of T: double for f32 and bf16, sum_t<T> for f16 and f64.
template <class T>
using norm2_acc_t = std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, __nv_bfloat16>,
                                       double, sum_t<T>>;

//! The power of two s for f64's ord 2 norm from m = max |x|: 1 where no square of an element can
//! overflow a sum of up to 2^64 of them (m < 2^450) and the largest square is far from the
//! subnormals (m >= 2^-450, so squares lost below 2^-1022 are under 2^-122 of the sum), else
//! 2^-600 or 2^600 to bring m into that range; 1 for NaN, inf and 0 (their sums are NaN, inf, 0).
REDUCELAB_HD double norm2_scale(double m) {
  using portable::pow2;
  if (!(m == m) || m == portable::infinity<double>() || m == 0) return 1;
  if (m >= pow2<double>(450)) return pow2<double>(-600);
  if (m < pow2<double>(-450)) return pow2<double>(600);
  return 1;
}
//! 1 / norm2_scale(m), exact.
REDUCELAB_HD double norm2_unscale(double s) {
  using portable::pow2;
  if (s == pow2<double>(-600)) return pow2<double>(600);
  if (s == pow2<double>(600)) return pow2<double>(-600);
  return 1;
}

template <class A>
REDUCELAB_HD A canonical(A v) {
  return v == v ? v : portable::canonical_nan<A>();
}

//! The divisor of var: max(0, n - correction), in double, then rounded to A, as the default mode.
template <class A>
inline A var_divisor(std::uint64_t n, double correction) {
  const double divisor = static_cast<double>(n) - correction;
  return static_cast<A>(divisor > 0 ? divisor : 0.0);
}

//! var from the fixed-order sum of squared deviations (IEEE: 0 / 0 = NaN, s / 0 = inf).
template <class A>
REDUCELAB_HD A finish_var(A squares, A divisor) {
  return portable::div(squares, divisor);
}

//! logsumexp from the max M and the fixed-order sum of exp(x - M) (in [1, n] when M is finite).
template <class A>
REDUCELAB_HD A finish_logsumexp(A max, A sum) {
  if (!(portable::sub(max, max) == A(0))) return max;  // NaN, +inf, or -inf for all -inf
  return portable::add(max, portable::log_rn(sum));
}

}  // namespace reducelab::detail::repro

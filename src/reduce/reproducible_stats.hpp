#pragma once
// The gpu_to_gpu statistics (issue 14): norm of ord 1 and 2, each "the fixed-order sum
// (reproducible_plan.hpp) of a term f(x_i)", with scalar work before it (an order-free max |x|)
// and after it (a square root); var, std, var_mean and std_mean, one pass of centred batches and
// Chan's merges in the same lanes and tiles (below); and logsumexp, one pass in the same lanes
// and tiles with a running max (below), then a log. This
// header holds what the GPU (reproducible_stats.cuh) and the CPU function (reproducible_cpu.cpp)
// must share bit for bit: the choice of the terms and accumulators, and the scalar work, written
// once as __host__ __device__ code in portable_math.hpp's operations.
//
// - norm ord 1: f(x) = |x| in sum_t<T>.
// - norm ord 2: f(x) = x x, then the correctly rounded square root. f16: in float (every square
//   of an f16 is exact and normal in float). f32 and bf16: in double (a float's square is exact
//   in double and never overflows or underflows it, as the default mode, which squares them in
//   double too), the square root in double, then rounded to float. f64: a square would overflow
//   above 2^511 and lose bits below 2^-511, so the order is f(x) = (s x)^2 with s a power of two
//   chosen from m = max |x| alone (norm2_scale): s x is exact, and so is the scaling back. s is
//   one of three values, so the GPU reads the input once (since session 42; a max-first pass
//   before): it sums the three candidate terms x x, (2^-600 x)^2 and (2^600 x)^2, each in the
//   order, beside the order-free max (Norm2State), and the epilogue takes the sum that the max
//   selects. The CPU function takes the max first and sums one term: the same bits.
// - var, std, var_mean, std_mean: one pass (since session 32; two passes before: the mean, then
//   the sum of (x - mean)^2), in sum_t<T>. Tile t's centre is its first element K = x[t E]. Each
//   lane takes its elements in batches of 4 steps (kMinSteps), batch b being steps 4b .. 4b + 3
//   (those < n): var_batch centres them (x - K), takes their mean and the sum of squared
//   deviations from it, and var_merge_lanes merges the batch into the lane's running group. The
//   lanes' groups merge in the tile's tree of adjacent pairs (var_merge_lanes, symmetric), the
//   tiles' groups in the tiles' tree (var_merge: Chan's formula, the right group's mean moved to
//   the left one's centre). var = m2 / max(0, n - correction) rounded to sum_t<T>, std its
//   correctly rounded square root. Beside the groups each lane adds its elements one by one, as
//   the sum does, so the mean var_mean and std_mean write (that sum over n) is Op::mean's bits.
// - logsumexp: one pass, in the order's lanes and tiles, over batches of 4 steps (kMinSteps):
//   batch b of a tile holds its elements [t E + 4 b P, t E + 4 b P + 4 P). Each tile keeps a
//   running max M (from -inf) and P lane sums (from -0). For each batch: M' = the max of M and
//   the batch's elements (lse_max: a NaN does not count; order-free); where M' != M, every lane
//   sum is multiplied by exp(M - M') (one exp for the tile, one product per lane); then each lane
//   adds, step by step, lse_term(x, M') of its elements: exp(x - M') where M' is finite, else 0
//   (or the NaN of a NaN element). The tile's pair is (M, the tree of its lane sums); the tiles'
//   pairs merge in the order's tree by lse_merge (below), and the result is m + log(s). So an
//   element costs a subtraction, an exp and an addition, and the rescaling and the merges are
//   per batch and per tile. A NaN anywhere gives NaN, else a +inf gives +inf and all -inf gives
//   -inf (the default mode's and torch's). (Until session 31: two passes, an order-free max M,
//   then the fixed-order sum of exp(x - M), which read the input twice.)
// Every result that is a NaN is written as the canonical NaN, as the sum's.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "reduce/portable_math.hpp"
#include "reduce/reproducible_plan.hpp"
#include "reducelab/op.hpp"
#include "reducelab/types.hpp"

namespace reducelab::detail::repro {

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

//! f64's 2-norm in one pass: the three sums of the order's candidate terms, (s x)^2 for s = 1,
//! 2^-600 and 2^600 (norm2_scale's three values), each in the order's tree, and max |x|, which is
//! order-free. Merged component-wise (norm2_merge); the identity is (-0, -0, -0, 0). A NaN
//! element makes all three sums NaN, so the max's treatment of NaN cannot change the result.
template <class A>
struct Norm2State {
  using value_type = A;
  A unit;     //!< the sum of x x
  A down;     //!< the sum of (2^-600 x)^2: the one taken when m >= 2^450
  A up;       //!< the sum of (2^600 x)^2: the one taken when 0 < m < 2^-450
  A max_abs;  //!< m = max |x|
};

template <class A>
REDUCELAB_HD Norm2State<A> norm2_identity() {
  return {-A(0), -A(0), -A(0), A(0)};
}

//! Element x's three terms and |x|, each product one rounding (the powers of two scale exactly).
template <class A>
REDUCELAB_HD Norm2State<A> norm2_term(A x) {
  const A down = portable::mul(x, portable::pow2<A>(-600));
  const A up = portable::mul(x, portable::pow2<A>(600));
  return {portable::mul(x, x), portable::mul(down, down), portable::mul(up, up),
          portable::magnitude(x)};
}

template <class A>
REDUCELAB_HD Norm2State<A> norm2_merge(const Norm2State<A>& a, const Norm2State<A>& b) {
  return {portable::add(a.unit, b.unit), portable::add(a.down, b.down), portable::add(a.up, b.up),
          a.max_abs >= b.max_abs ? a.max_abs : b.max_abs};
}

//! The 2-norm from the merged state: the square root of the sum that norm2_scale(m) selects,
//! scaled back; a NaN as the canonical NaN.
REDUCELAB_HD double norm2_finish(const Norm2State<double>& total) {
  const double s = norm2_scale(total.max_abs);
  const double sum = s == 1 ? total.unit : (s < 1 ? total.down : total.up);
  const double value = portable::mul(portable::sqrt_rn(sum), norm2_unscale(s));
  return value == value ? value : portable::canonical_nan<double>();
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

// ---- var, std, var_mean, std_mean: one pass (session 32) ---------------------------------------

//! A group of elements in var's order: their count (exact: counts are integers far below 2^53),
//! the centre their mean is taken from (`shift`: the first element of their tile), their mean
//! minus the centre, the sum of their squared deviations from their mean, and their plain sum
//! in the sum's order (for the mean var_mean and std_mean write: the gpu_to_gpu mean's bits). No
//! elements: count 0, and the merges below return the other side unchanged.
template <class A>
struct VarState {
  using value_type = A;
  double count;
  A shift;
  A mean;
  A m2;
  A sum;
};

template <class A>
REDUCELAB_HD VarState<A> var_identity() {
  return {0.0, A(0), A(0), A(0), -A(0)};
}

//! Elements per batch of a lane: kMinSteps steps.
inline constexpr int kVarBatch = 4;

//! A batch of k (1..4) elements of one lane, centred on the tile's first element: c[i] = x_i -
//! shift, their sum in the tree ((c0 + c1) + (c2 + c3)) (an absent element is -0, so k = 3 gives
//! (c0 + c1) + c2), its mean s / k (exact for k = 1, 2, 4), and the same tree over (c[i] -
//! mean)^2. The sum of the batch's elements is not here: a lane adds them one by one, as the sum.
template <class A>
REDUCELAB_HD VarState<A> var_batch(const A (&c)[kVarBatch], int k) {
  using namespace portable;
  const A absent = -A(0);
  const A v1 = k > 1 ? c[1] : absent;
  const A v2 = k > 2 ? c[2] : absent;
  const A v3 = k > 3 ? c[3] : absent;
  const A s = add(add(c[0], v1), add(v2, v3));
  // s / k: a product with 1 / k (exact for 1, 2, 4: no division on the GPU), a division for 3.
  const A mean = k == 3 ? div(s, A(3)) : mul(s, k == 4 ? A(0.25) : k == 2 ? A(0.5) : A(1));
  auto square = [&](A v) {
    const A d = sub(v, mean);
    return mul(d, d);
  };
  const A e1 = k > 1 ? square(c[1]) : absent;
  const A e2 = k > 2 ? square(c[2]) : absent;
  const A e3 = k > 3 ? square(c[3]) : absent;
  return {static_cast<double>(k), A(0), mean, add(add(square(c[0]), e1), add(e2, e3)), -A(0)};
}

//! The weights of a merge of two groups of one tile with counts n_a and n_b: n_a, n_b, q = 1 / n
//! and n_a n_b q, each rounded once (the counts are exact integers).
template <class A>
struct VarWeights {
  A na, nb, q, w2;
};
//! A count's bits (counts are doubles holding exact integers).
REDUCELAB_HD long long count_bits(double n) {
#if defined(__CUDA_ARCH__)
  return __double_as_longlong(n);
#else
  long long bits;
  std::memcpy(&bits, &n, sizeof bits);
  return bits;
#endif
}
//! Whether a count n >= 1 is a power of two (no fraction bits).
REDUCELAB_HD bool is_power_of_two(double n) { return (count_bits(n) & ((1LL << 52) - 1)) == 0; }

//! 1 / n rounded once, for a count n >= 1: a power of two's is exact, 2^-e, and is built from
//! n's exponent without a division (every merge of two complete subtrees of a tile or of the
//! tiles' tree is one); other counts divide. The same bits either way.
template <class A>
REDUCELAB_HD A count_reciprocal(double n) {
  const long long bits = count_bits(n);
  if (is_power_of_two(n)) {
    // n = 2^e: bits = (1023 + e) 2^52, and 2^-e's are (1023 - e) 2^52.
    const long long inverse = (2046LL << 52) - bits;
#if defined(__CUDA_ARCH__)
    return static_cast<A>(__longlong_as_double(inverse));
#else
    double q;
    std::memcpy(&q, &inverse, sizeof q);
    return static_cast<A>(q);
#endif
  }
  return portable::div(A(1), static_cast<A>(n));
}

template <class A>
REDUCELAB_HD VarWeights<A> var_weights(double na, double nb) {
  using namespace portable;
  const A a = static_cast<A>(na);
  const A b = static_cast<A>(nb);
  const A q = count_reciprocal<A>(na + nb);
  return {a, b, q, mul(mul(a, b), q)};
}

//! The merged mean and m2 of two groups of one tile: (n_a mean_a + n_b mean_b) q and (m2_a + m2_b)
//! + d^2 (n_a n_b q), d = mean_b - mean_a. Symmetric in the two groups, bit for bit.
template <class A>
REDUCELAB_HD void var_merge_values(A& mean, A& m2, A mean_b, A m2_b, const VarWeights<A>& w) {
  using namespace portable;
  const A d = sub(mean_b, mean);
  const A merged = mul(add(mul(w.na, mean), mul(w.nb, mean_b)), w.q);
  m2 = add(add(m2, m2_b), mul(mul(d, d), w.w2));
  mean = merged;
}

//! The merge of two groups of one tile (the same centre): a lane's running group and its next
//! batch, and two lanes in the tile's tree (var_merge_values). Symmetric in its operands, bit for
//! bit (the warp's tree merges the same two values in either order), as the sum of the sums.
//! Every rounding is of the size of the spread: the means are relative to the centre.
template <class A>
REDUCELAB_HD VarState<A> var_merge_lanes(const VarState<A>& a, const VarState<A>& b) {
  if (a.count == 0) return b;
  if (b.count == 0) return a;
  VarState<A> out = a;
  var_merge_values(out.mean, out.m2, b.mean, b.m2, var_weights<A>(a.count, b.count));
  out.count = a.count + b.count;
  out.sum = portable::add(a.sum, b.sum);
  return out;
}

//! The merge of two tiles' groups, a the left (lower indices), in the tiles' tree: Chan's
//! formula with b's mean moved to a's centre, d = ((shift_b - shift_a) + mean_b) - mean_a, w =
//! n_b / n, mean = mean_a + d w, m2 = (m2_a + m2_b) + d^2 (n_a w); the centre stays a's. The
//! centres are elements, so their difference is of the size of the spread too (1e6 + N(0, 1)
//! costs no accuracy). Not symmetric: every tree over tiles takes its operands left to right.
template <class A>
REDUCELAB_HD VarState<A> var_merge(const VarState<A>& a, const VarState<A>& b) {
  using namespace portable;
  if (a.count == 0) return b;
  if (b.count == 0) return a;
  const double n = a.count + b.count;
  // n_b / n: 1/2 for equal counts, n_b 2^-e for n = 2^e (both exact, so the division's bits).
  const A w = a.count == b.count ? A(0.5)
              : is_power_of_two(n) ? mul(static_cast<A>(b.count), count_reciprocal<A>(n))
                                   : div(static_cast<A>(b.count), static_cast<A>(n));
  const A d = sub(add(sub(b.shift, a.shift), b.mean), a.mean);
  return {n, a.shift, add(a.mean, mul(d, w)),
          add(add(a.m2, b.m2), mul(mul(d, d), mul(static_cast<A>(a.count), w))),
          add(a.sum, b.sum)};
}

//! logsumexp's pair (m, s), worth s x e^m: a tile's (its max, its lane sums' tree), or, in the
//! segment kernels, element x as (x, 1) before its batch is summed. The identity (-inf, +0) is
//! what a masked element or the tree's padding is.
template <class A>
struct LseState {
  using value_type = A;
  A m;
  A s;
};

//! The batch max of logsumexp's order: IEEE maxNum (a NaN operand gives the other; fmax), so the
//! max of a set is its largest number whatever the order, and M never becomes NaN.
REDUCELAB_HD float lse_max(float a, float b) {
#if defined(__CUDA_ARCH__)
  return fmaxf(a, b);
#else
  return std::fmax(a, b);
#endif
}
REDUCELAB_HD double lse_max(double a, double b) {
#if defined(__CUDA_ARCH__)
  return fmax(a, b);
#else
  return std::fmax(a, b);
#endif
}

//! Whether the running max is finite (not -inf, +inf).
template <class A>
REDUCELAB_HD bool lse_finite(A m) {
  return portable::sub(m, m) == A(0);
}

//! Element x's term under a finite running max m: exp(x - m) (0 for x = -inf).
template <class A>
REDUCELAB_HD A lse_term(A x, A m) {
  return portable::exp_rn(portable::sub(x, m));
}

//! Element x's term under an infinite running max (the result is that max, or NaN): 0, or x where
//! x is NaN, so a NaN still reaches the result.
template <class A>
REDUCELAB_HD A lse_nan_term(A x) {
  return x == x ? A(0) : x;
}

template <class A>
REDUCELAB_HD LseState<A> lse_identity() {
  return {-portable::infinity<A>(), A(0)};
}

//! The merge of two pairs, the order's "addition" for logsumexp: with d = a.m - b.m (0 where the
//! two are equal, so that two equal infinities give 0, not NaN), the side with the larger m keeps
//! its s and the other's s is scaled by exp(-|d|), one rounding each for the difference, the exp
//! (portable_math.hpp), the product and the sum. Symmetric in its operands, bit for bit (the
//! warp's tree relies on it: every lane merges the same two values, in either order), and the
//! identity changes nothing. A NaN makes d, then s, NaN, and every later merge keeps s NaN.
template <class A>
REDUCELAB_HD LseState<A> lse_merge(const LseState<A>& a, const LseState<A>& b) {
  const A d = a.m == b.m ? A(0) : portable::sub(a.m, b.m);
  const A e = portable::exp_rn(-portable::magnitude(d));
  const bool a_larger = d >= A(0);  // false for NaN
  const A big = a_larger ? a.s : b.s;
  const A small = a_larger ? b.s : a.s;
  return {a_larger ? a.m : b.m, portable::add(big, portable::mul(small, e))};
}

//! logsumexp from the merged pair: NaN if either part is, m where m is infinite (+inf with a
//! +inf element, -inf for all -inf or none), else m + log(s).
template <class A>
REDUCELAB_HD A finish_logsumexp(const LseState<A>& p) {
  if (!(p.m == p.m) || !(p.s == p.s)) return portable::canonical_nan<A>();
  if (!(portable::sub(p.m, p.m) == A(0))) return p.m;
  return portable::add(p.m, portable::log_rn(p.s));
}

}  // namespace reducelab::detail::repro

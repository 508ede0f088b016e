#pragma once
// exp, log and the four operations for the gpu_to_gpu mode (issue 14): the same bits on every GPU
// and on the CPU. The GPU's expf/logf/__expf go through the MUFU unit (approximations that may
// change between architectures) and libm's differ between C libraries, so logsumexp's terms and
// its final log are computed here from IEEE round-to-nearest +, -, x, / and the fused
// multiply-add (IEEE 754-2008's fusedMultiplyAdd: one rounding of a x b + c, the same bits in
// every correct implementation), with the same constants and the same order on both sides:
// - on the GPU (__CUDA_ARCH__) every operation is an _rn intrinsic (__fmaf_rn, __fma_rn for the
//   fused ones), which the compiler never contracts or splits;
// - on the CPU the plain operators and std::fma, in a file compiled with -ffp-contract=off
//   (src/CMakeLists.txt sets it for every file that includes this one), in float or double (SSE
//   / NEON, never x87). std::fma is correctly rounded by the C++ standard (C's fma), with or
//   without the hardware instruction.
// Subnormals are kept (no flush to zero) on both sides. Conversions and comparisons are exact.
//
// Accuracy (tests/test_reproducible.cpp checks it against long double over the whole range):
// exp within 1.1 ulp of the exact value (the worst of 2 x 10^7 random arguments: 1.06 ulp in
// float, 0.98 in double; docs/results/h200-reproducible.md, session 30), log within 1 ulp, for
// float and double.

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define REDUCELAB_HD __host__ __device__ __forceinline__
#else
#define REDUCELAB_HD inline
#endif

namespace reducelab::detail::portable {

REDUCELAB_HD float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
REDUCELAB_HD double add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
REDUCELAB_HD float sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
REDUCELAB_HD double sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
REDUCELAB_HD float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
REDUCELAB_HD double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
REDUCELAB_HD float div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
REDUCELAB_HD double div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
//! a x b + c rounded once (IEEE fusedMultiplyAdd).
REDUCELAB_HD float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
REDUCELAB_HD double fma_rn(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
//! The correctly rounded square root (IEEE requires it; the GPU's sqrtf may not be, __fsqrt_rn is).
REDUCELAB_HD float sqrt_rn(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
REDUCELAB_HD double sqrt_rn(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

//! |a| (exact; the sign bit cleared).
REDUCELAB_HD float magnitude(float a) {
#if defined(__CUDA_ARCH__)
  return fabsf(a);
#else
  return std::fabs(a);
#endif
}
REDUCELAB_HD double magnitude(double a) {
#if defined(__CUDA_ARCH__)
  return fabs(a);
#else
  return std::fabs(a);
#endif
}

// The constants of each precision. ln2_hi has its low bits zero, so k x ln2_hi is exact for the
// k that occur (|k| < 2^8 in float, < 2^11 in double: Cody and Waite's reduction).
template <class A>
struct Constants;
template <>
struct Constants<float> {
  using Bits = std::uint32_t;
  static constexpr int kMantissa = 23;
  static constexpr int kBias = 127;
  static constexpr float kLn2Hi = 0.693145751953125f;        // 0x3f317200: 15 significant bits
  static constexpr float kLn2Lo = 1.428606765330187045e-06f;  // ln 2 - kLn2Hi
  static constexpr float kInvLn2 = 1.44269504088896341f;
  static constexpr float kShifter = 12582912.0f;  // 1.5 x 2^23: adding it rounds to an integer
  static constexpr float kExpMax = 88.72283905206835f;    // above: exp overflows
  static constexpr float kExpMin = -103.97208f;           // below: exp is 0 (under 2^-150)
  static constexpr float kExpFast = 86.5f;  // |x| <= it: k in [-125, 127], exp(x) normal
  static constexpr float kSqrtHalf = 0.70710678118654752f;
  static constexpr float kSubnormalScale = 16777216.0f;   // 2^24
  static constexpr int kSubnormalShift = 24;
};
template <>
struct Constants<double> {
  using Bits = std::uint64_t;
  static constexpr int kMantissa = 52;
  static constexpr int kBias = 1023;
  static constexpr double kLn2Hi = 6.93147180369123816490e-01;  // fdlibm's: 32 low bits zero
  static constexpr double kLn2Lo = 1.90821492927058770002e-10;
  static constexpr double kInvLn2 = 1.44269504088896338700e+00;
  static constexpr double kShifter = 6755399441055744.0;  // 1.5 x 2^52
  static constexpr double kExpMax = 709.782712893383973096;
  static constexpr double kExpMin = -745.1332191019412;   // below: exp is 0 (under 2^-1075)
  static constexpr double kExpFast = 708.0;  // |x| <= it: k in [-1021, 1022], exp(x) normal
  static constexpr double kSqrtHalf = 0.70710678118654752440;
  static constexpr double kSubnormalScale = 18014398509481984.0;  // 2^54
  static constexpr int kSubnormalShift = 54;
};

template <class A>
REDUCELAB_HD typename Constants<A>::Bits bits_of(A v) {
  typename Constants<A>::Bits b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}
template <class A>
REDUCELAB_HD A from_bits(typename Constants<A>::Bits b) {
  A v;
  std::memcpy(&v, &b, sizeof(v));
  return v;
}
template <class A>
REDUCELAB_HD A infinity() {
  using C = Constants<A>;
  return from_bits<A>(static_cast<typename C::Bits>(2 * C::kBias + 1) << C::kMantissa);
}
//! The canonical NaN the gpu_to_gpu mode writes (every bit but the sign set).
template <class A>
REDUCELAB_HD A canonical_nan() {
  return from_bits<A>(~typename Constants<A>::Bits(0) >> 1);
}
//! 2^e for a normal exponent e (kBias - 1 >= e >= 1 - kBias): exact.
template <class A>
REDUCELAB_HD A pow2(int e) {
  using C = Constants<A>;
  return from_bits<A>(static_cast<typename C::Bits>(e + C::kBias) << C::kMantissa);
}

//! exp(r) - 1 for |r| <= ln 2 / 2 + a little: Taylor's polynomial, r + r^2 (1/2 + r (1/6 +
//! ...)) with the bracket in Horner's order (fused multiply-adds for float), truncated where the
//! next term is under u / 8 (degree 7 for float, 13 for double). The coefficients are decimal
//! literals, which both compilers round correctly.
REDUCELAB_HD float expm1_reduced(float r) {
  float p = 1.98412698412698413e-04f;                 // 1/5040
  p = fma_rn(r, p, 1.38888888888888889e-03f);         // 1/720
  p = fma_rn(r, p, 8.33333333333333333e-03f);         // 1/120
  p = fma_rn(r, p, 4.16666666666666667e-02f);         // 1/24
  p = fma_rn(r, p, 1.66666666666666667e-01f);         // 1/6
  p = fma_rn(r, p, 0.5f);
  return fma_rn(mul(r, r), p, r);
}
// Double keeps separate multiplications and additions: with fused ones the compiler moved each
// 64-bit coefficient into a register pair per element (DFMA takes no 64-bit immediate) and the
// fixed-order kernel, capped at 40 registers, spilled. Measured on the H200 (session 30), f64
// logsumexp at 2^27 in the gpu_to_gpu mode: 863 us before, 1,135 with a fused polynomial, 742
// with this one (and the fused reduction and bit scaling of exp_rn); float's fused polynomial
// took f32 from 389 to 272 us.
REDUCELAB_HD double expm1_reduced(double r) {
  double p = 1.60590438368216146e-10;                 // 1/13!
  p = add(2.08767569878680990e-09, mul(r, p));        // 1/12!
  p = add(2.50521083854417188e-08, mul(r, p));        // 1/11!
  p = add(2.75573192239858907e-07, mul(r, p));        // 1/10!
  p = add(2.75573192239858907e-06, mul(r, p));        // 1/9!
  p = add(2.48015873015873016e-05, mul(r, p));        // 1/8!
  p = add(1.98412698412698413e-04, mul(r, p));        // 1/7!
  p = add(1.38888888888888889e-03, mul(r, p));        // 1/6!
  p = add(8.33333333333333333e-03, mul(r, p));        // 1/5!
  p = add(4.16666666666666667e-02, mul(r, p));        // 1/4!
  p = add(1.66666666666666667e-01, mul(r, p));        // 1/3!
  p = add(0.5, mul(r, p));
  return add(r, mul(mul(r, r), p));
}

//! exp(x), the same bits on every GPU and on the CPU. x = k ln 2 + r with k = round(x / ln 2)
//! (the shifter: t = x / ln 2 + 1.5 x 2^p rounded once, whose last bits are k) and |r| <= ln 2 / 2
//! + a little (Cody-Waite, two constants: x - k ln2_hi is exact, - k ln2_lo one rounding);
//! exp(r) = 1 + expm1_reduced(r); then the scaling by 2^k. Where |x| <= kExpFast the result is
//! normal and the scaling is an addition of k to the exponent's bits (exact: the bits of e x 2^k);
//! elsewhere exp(-inf) = 0, exp(inf) = inf, exp(NaN) = NaN, overflow gives inf, and a subnormal
//! result is one rounding (the scale split in two so that the first product stays normal). About
//! 16 operations where |x| <= kExpFast (the path logsumexp's terms take).
template <class A>
REDUCELAB_HD A exp_rn(A x) {
  using C = Constants<A>;
  using Bits = typename C::Bits;
  const A t = fma_rn(x, C::kInvLn2, C::kShifter);
  const A kd = sub(t, C::kShifter);  // k, exact for |k| < 2^22
  const A r = fma_rn(kd, -C::kLn2Lo, fma_rn(kd, -C::kLn2Hi, x));
  const A e = add(A(1), expm1_reduced(r));  // in [0.7, 1.42]
  if (magnitude(x) <= C::kExpFast) {  // false for NaN
    // t = 1.5 x 2^p + k in the binade of unit ulp: its bits minus the shifter's are k.
    const Bits k = bits_of(t) - bits_of(C::kShifter);  // modulo 2^bits, as the addition below
    return from_bits<A>(bits_of(e) + (k << C::kMantissa));
  }
  if (!(x == x)) return x;
  if (x > C::kExpMax) return infinity<A>();
  if (x < C::kExpMin) return A(0);
  const int k = static_cast<int>(kd);
  if (k >= 1 - C::kBias) {
    if (k < C::kBias) return mul(e, pow2<A>(k));
    return mul(mul(e, pow2<A>(k - 1)), A(2));  // k = kBias: 2^kBias is not a number
  }
  // Subnormal result: e x 2^(k + kMantissa + 1) is normal and exact, then one rounding.
  return mul(mul(e, pow2<A>(k + C::kMantissa + 1)), pow2<A>(-C::kMantissa - 1));
}

//! log(1 + f) - f + f^2 / 2 = s (f^2/2 + R(s^2)) with s = f / (2 + f): R is Taylor's series of
//! 2 atanh(s) / s - 2 in s^2, 2/3 s^2 + 2/5 s^4 + ..., |s| <= 0.172 (fdlibm's e_log.c form with
//! the Taylor coefficients, truncated where the next term is under u / 16).
REDUCELAB_HD float log_series(float z) {
  float p = 1.81818181818181818e-01f;            // 2/11
  p = add(2.22222222222222222e-01f, mul(z, p));  // 2/9
  p = add(2.85714285714285714e-01f, mul(z, p));  // 2/7
  p = add(4.0e-01f, mul(z, p));                  // 2/5
  p = add(6.66666666666666667e-01f, mul(z, p));  // 2/3
  return mul(z, p);
}
REDUCELAB_HD double log_series(double z) {
  double p = 8.69565217391304348e-02;            // 2/23
  p = add(9.52380952380952381e-02, mul(z, p));   // 2/21
  p = add(1.05263157894736842e-01, mul(z, p));   // 2/19
  p = add(1.17647058823529412e-01, mul(z, p));   // 2/17
  p = add(1.33333333333333333e-01, mul(z, p));   // 2/15
  p = add(1.53846153846153846e-01, mul(z, p));   // 2/13
  p = add(1.81818181818181818e-01, mul(z, p));   // 2/11
  p = add(2.22222222222222222e-01, mul(z, p));   // 2/9
  p = add(2.85714285714285714e-01, mul(z, p));   // 2/7
  p = add(4.0e-01, mul(z, p));                   // 2/5
  p = add(6.66666666666666667e-01, mul(z, p));   // 2/3
  return mul(z, p);
}

//! log(x), the same bits on every GPU and on the CPU. x = 2^k m with m in [sqrt(1/2), sqrt(2))
//! (from the bits; subnormals scaled up first), f = m - 1 (exact), and log(x) = k ln2_hi -
//! ((f^2/2 - (s (f^2/2 + R) + k ln2_lo)) - f) as fdlibm's e_log.c. log(0) = -inf, log(x < 0) =
//! NaN, log(inf) = inf, log(NaN) = NaN, log(1) = +0.
template <class A>
REDUCELAB_HD A log_rn(A x) {
  using C = Constants<A>;
  using Bits = typename C::Bits;
  if (!(x == x)) return x;
  if (x < A(0)) return canonical_nan<A>();
  if (x == A(0)) return -infinity<A>();
  if (x == infinity<A>()) return x;
  int k = 0;
  if (x < pow2<A>(1 - C::kBias)) {  // subnormal: exact scaling up
    x = mul(x, C::kSubnormalScale);
    k = -C::kSubnormalShift;
  }
  const Bits b = bits_of(x);
  const Bits mantissa_mask = (Bits(1) << C::kMantissa) - 1;
  k += static_cast<int>(b >> C::kMantissa) - C::kBias;
  A m = from_bits<A>((b & mantissa_mask) | (static_cast<Bits>(C::kBias) << C::kMantissa));  // [1, 2)
  if (m > A(2) * C::kSqrtHalf) {  // to [sqrt(1/2), sqrt(2)): exact halving
    m = mul(m, A(0.5));
    ++k;
  }
  const A f = sub(m, A(1));  // exact (Sterbenz)
  const A s = div(f, add(A(2), f));
  const A z = mul(s, s);
  const A r = log_series(z);
  const A hfsq = mul(mul(A(0.5), f), f);
  const A kd = static_cast<A>(k);
  // k ln2_hi - ((hfsq - (s (hfsq + R) + k ln2_lo)) - f)
  const A tail = sub(sub(hfsq, add(mul(s, add(hfsq, r)), mul(kd, C::kLn2Lo))), f);
  return sub(mul(kd, C::kLn2Hi), tail);
}

}  // namespace reducelab::detail::portable

#pragma once
// The statistics' traits (issue 12), in the shape of traits.cuh's: the same kernels read the data
// for them along whole arrays, axes and segments. A thread's elements come in increasing order,
// a 16-byte vector at a time where it can (update_vector) and one at a time at the ends and in
// the strided axis kernel (update).
//
// - var, std, var_mean, std_mean: Welford/Chan on centred data. Each thread centres its elements
//   on the first one it reads; a vector's (or, where a warp or fewer lanes read, a tile's of up
//   to 16 elements) mean and squared deviations are computed from its own centred elements
//   (their mean is a multiplication by 1/k, exact), then merged into the thread's state with
//   Chan's formula (one reciprocal per call); the lanes of a team (octets, warps, vector rows)
//   meet around one centre in plain sums (team_reduce); blocks and splits merge with Chan's
//   formula, moving one centre to the other. Data is never summed as
//   squares, and every rounding is of the size of the spread, not of the mean: a large mean
//   against a small spread costs no accuracy. The mean written out is the running sum divided by
//   the count, as mean() gives it (an infinity gives an infinite mean, not Welford's NaN).
// - norm: ord 1 sums |x|; ord 2 sums each vector's squares in float and the vectors in double
//   for f32 and bf16 (a vector whose squares leave float's range is squared in double: no square
//   of a float overflows or underflows a double), in float for f16 (whose squares all fit), and
//   with Blue's three scaled accumulators for f64; ord inf/-inf take max/min |x|; ord 0 counts
//   nonzeros.
// - logsumexp: a running max and the sum of exp(x - max), rescaled when the max grows; NaN, +inf
//   and all -inf follow torch.
// - count_nonzero, any, all: a 64-bit count of the elements whose bits other than the sign are
//   not all zero (NaN counts, -0.0 does not).
// - aminmax: min and max side by side, NaN-propagating.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <cuda/std/limits>

#include "device/ops.cuh"
#include "device/warp_reduce.cuh"
#include "reduce/traits.cuh"
#include "reduce/workspace.hpp"
#include "reducelab/types.hpp"

namespace reducelab::detail {

//! 1 / v for a count v >= 1, for Chan's weights: the hardware's approximate reciprocal (1 ulp)
//! for float, refined by two Newton steps to about an ulp for double. A weight an ulp off moves
//! the mean by an ulp of the step and m2 by an ulp of the between-group term, far inside the
//! tolerance; the IEEE reciprocals cost 10-20 instructions with their slow paths, and rows of
//! 1,024 floats, which merge 5 times per lane per row, read at 3,577 GB/s with them (sum: 4,128).
template <class A>
__device__ __forceinline__ A reciprocal(A v) {
  if constexpr (std::is_same_v<A, float>) {
    return __fdividef(1.0f, v);
  } else {
    double r = static_cast<double>(__fdividef(1.0f, static_cast<float>(v)));
    r = r * (2.0 - v * r);
    return r * (2.0 - v * r);
  }
}

template <class A>
__device__ __forceinline__ bool is_finite(A v) {
  return v - v == A(0);  // false for +-inf and NaN
}

//! part[j] += part[j + kWidth] for j < kWidth, then the same with half the width: a template
//! per level, so every index is a constant (a loop over the widths left 16-element tiles in local
//! memory: 64 bytes of stack in the f32 teams kernel, 128 in f16's).
template <int kWidth, class A, int kCount>
__device__ __forceinline__ void fold_halves(A (&part)[kCount]) {
  if constexpr (kWidth > 0) {
#pragma unroll
    for (int j = 0; j < kWidth; ++j) part[j] = part[j] + part[j + kWidth];
    fold_halves<kWidth / 2>(part);
  }
}

//! Pairwise sum of part[0, kCount), the order SumTraits::update_vector uses.
template <class A, int kCount>
__device__ __forceinline__ A pairwise_sum(A (&part)[kCount]) {
  fold_halves<kCount / 2>(part);
  return part[0];
}

//! One vector as a tile of one: update_vector of the traits that fold tiles (update_vectors).
template <class T, int kCount>
__device__ __forceinline__ const T (&as_tile(const T (&x)[kCount]))[1][kCount] {
  return reinterpret_cast<const T(&)[1][kCount]>(x);
}

// ---- var, std, var_mean, std_mean --------------------------------------------------------------

template <class A>
struct Moments {
  A count;  //!< elements merged (exact up to 2^24 in float; only Chan's weights read it)
  A shift;  //!< the centre: the first element merged (0 while there is none)
  A mean;   //!< the mean minus `shift`
  A m2;     //!< sum of squared deviations from the mean
  A sum;    //!< the plain sum, for the mean written out
};
static_assert(sizeof(Moments<double>) * kMaxGrid <= kPartialSlots * kPartialBytes,
              "the workspace's partials hold one accumulator per block of the largest grid");

template <class T>
struct MomentsTraits {
  using Elem = T;
  using A = sum_t<T>;  // float or double
  using Acc = Moments<A>;
  using State = Acc;
  using Out = A;
  static constexpr int kArrays = 1;
  static constexpr bool kFoldsTiles = true;  //!< the agent hands it whole tiles (update_vectors)

  __device__ static Acc identity() { return {A(0), A(0), A(0), A(0), -A(0)}; }
  __device__ static State start() { return identity(); }
  __device__ static Acc empty() { return {A(0), A(0), A(0), A(0), A(0)}; }
  __device__ static Acc shifted(Acc acc, std::int64_t) { return acc; }
  __device__ static Acc finish(State state, const T*) { return state; }

  //! Chan et al.'s merge of two groups of elements, b's mean moved to a's centre. The centres
  //! are elements, so their difference is of the size of the spread and so is every rounding
  //! here: the error does not grow with the mean (1e6 + N(0, 1), or two floats near 0.5 that
  //! differ in the third digit).
  __device__ static Acc combine(Acc a, Acc b) {
    if (b.count == A(0)) return a;
    if (a.count == A(0)) return b;
    const A n = a.count + b.count;
    const A delta = ((b.shift - a.shift) + b.mean) - a.mean;
    const A w = b.count * reciprocal(n);
    return {n, a.shift, a.mean + delta * w, a.m2 + b.m2 + delta * delta * (a.count * w),
            a.sum + b.sum};
  }
  //! Welford's step on the centred element, in West's form, m2 += delta (delta - delta / n):
  //! the rounding of the new mean does not enter m2.
  __device__ static void update(State& s, T x, T, std::size_t) {
    const A v = widen<A>(x);
    if (s.count == A(0)) s.shift = is_finite(v) ? v : A(0);  // see update_vectors
    s.count += A(1);
    const A delta = (v - s.shift) - s.mean;
    const A step = delta * reciprocal(s.count);
    s.mean += step;
    s.m2 += delta * (delta - step);
    s.sum += v;
  }
  //! A vector's elements, or a tile's (kVectors vectors a thread loaded together), centred and
  //! folded in two passes (their mean, then the squared deviations from it), then merged into
  //! the state with Chan's formula: one reciprocal per call. A tile of 4 f32 vectors costs ~76
  //! instructions this way against ~112 as four vectors (one merge each).
  template <int kVectors, int kCount>
  __device__ __forceinline__ static void update_vectors(State& s,
                                                        const T (&x)[kVectors][kCount]) {
    constexpr int kN = kVectors * kCount;
    A centred[kN];
    A part[kN];
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
#pragma unroll
      for (int j = 0; j < kCount; ++j) centred[v * kCount + j] = widen<A>(x[v][j]);
    }
    // The mean written out needs the elements' plain sum, and the centre (the thread's first
    // element) may be +-inf or NaN, which turns the centred elements into NaN. A tile takes a
    // finite centre (0 for a non-finite first element; the variance is NaN either way) and adds
    // its centred sum plus k x the centre. A single vector, which is all that block-wide teams
    // fold, adds the elements themselves: the select of a finite centre there took the
    // whole-array kernel of f32 var from 36 to 44 registers (3 blocks of 512 per SM down to 2,
    // 150 us instead of 127 at 2^27 on the H200), and 8 more additions for a 16-element tile
    // took f16 var on 1,024-element rows from 96 to 117 us. A thread's tiles come before its
    // single vectors (agent.cuh), so a centre set by a single vector never reaches a tile.
    constexpr bool kTile = kVectors > 1;
    A plain[kTile ? 1 : kN];
    if constexpr (!kTile) {
#pragma unroll
      for (int j = 0; j < kN; ++j) plain[j] = centred[j];
    }
    if (s.count == A(0)) s.shift = !kTile || is_finite(centred[0]) ? centred[0] : A(0);
#pragma unroll
    for (int j = 0; j < kN; ++j) part[j] = centred[j] = centred[j] - s.shift;
    const A sum = pairwise_sum(part);
    const A mean = sum * (A(1) / A(kN));  // a power of two: exact
    A m2 = A(0);
#pragma unroll
    for (int j = 0; j < kN; ++j) m2 += (centred[j] - mean) * (centred[j] - mean);
    const A n = s.count + A(kN);
    const A delta = mean - s.mean;
    const A w = A(kN) * reciprocal(n);
    s.mean += delta * w;
    s.m2 += m2 + delta * delta * (s.count * w);
    s.count = n;
    if constexpr (kTile) {
      s.sum += sum + A(kN) * s.shift;  // the elements' plain sum, rounded once more
    } else {
      s.sum += pairwise_sum(plain);
    }
  }
  template <int kCount>
  __device__ static void update_vector(State& s, const T (&x)[kCount], const T (&)[kCount],
                                       std::size_t) {
    update_vectors(s, as_tile(x));
  }
  //! The accumulators of aligned teams of `team` lanes (a power of two up to 32; all 32 lanes
  //! call) merged at once rather than by a tree of Chan merges: every lane's mean is moved to
  //! one centre (the shift of the team's first lane that holds elements), and the team adds
  //! count, count x mean and sum, then m2 + count (mean - team mean)^2, the exact decomposition
  //! of the squared deviations. 4 sums of a word (20 shuffles for a warp) against a tree's 5
  //! merges of 5 words with a reciprocal each. Every lane of a team ends with its result.
  __device__ __forceinline__ static Acc team_reduce(Acc acc, unsigned team) {
    const unsigned lane = threadIdx.x % device::kWarpSize;
    const unsigned held = __ballot_sync(device::kFullWarpMask, acc.count != A(0));
    const unsigned first = lane & ~(team - 1);
    const unsigned mine = team == device::kWarpSize ? held : (held >> first) & ((1u << team) - 1);
    const int from = mine != 0 ? static_cast<int>(first) + __ffs(mine) - 1 : static_cast<int>(lane);
    const A centre = __shfl_sync(device::kFullWarpMask, acc.shift, from);
    const A c = acc.count;
    const A d = c != A(0) ? (acc.shift - centre) + acc.mean : A(0);
    A n = c;
    A moment = c * d;
    A sum = acc.sum;
    for (unsigned mask = team / 2; mask > 0; mask /= 2) {
      n += __shfl_xor_sync(device::kFullWarpMask, n, mask);
      moment += __shfl_xor_sync(device::kFullWarpMask, moment, mask);
      sum += __shfl_xor_sync(device::kFullWarpMask, sum, mask);
    }
    const A mean = moment * reciprocal(n);  // NaN for an empty team: it returns its own acc
    const A e = d - mean;
    A m2 = c != A(0) ? acc.m2 + c * e * e : A(0);
    for (unsigned mask = team / 2; mask > 0; mask /= 2)
      m2 += __shfl_xor_sync(device::kFullWarpMask, m2, mask);
    if (mine == 0) return acc;
    return {n, centre, mean, m2, sum};
  }
  //! A row of `size` contiguous elements in shared memory (tile_rows_kernel), folded by an
  //! aligned team of `team` lanes (all 32 lanes of the warp call; `size` 0 for a team without a
  //! row) in two passes over it: the elements about the row's first one (0 where that is +-inf or
  //! NaN) summed, kUnroll at a time pairwise, lane `rank` taking elements rank, rank + team, ...,
  //! and the team's sum by a butterfly; then the squared deviations from that mean, added in
  //! turn (positive terms: no cancellation), and their butterfly. The textbook two-pass
  //! variance, about a centre of the size of the spread (so its error does not grow with the
  //! mean, as in update_vectors); in place of a Chan merge every kCount elements and
  //! team_reduce's moments butterfly, which left f32 var along rows of 50 at 149.0 M warp
  //! instructions against sum's 84.5 M, bound by issue (H200, session 26). Every lane of the team
  //! ends with the row's moments.
  template <int kUnroll>
  __device__ __forceinline__ static Acc team_row(const T* row, unsigned size, unsigned rank,
                                                 unsigned team) {
    A centre = size > 0 ? widen<A>(row[0]) : A(0);
    if (!is_finite(centre)) centre = A(0);
    A sum = A(0);
    unsigned i = rank;
    for (; i + (kUnroll - 1) * team < size; i += kUnroll * team) {
      A part[kUnroll];
#pragma unroll
      for (int c = 0; c < kUnroll; ++c) part[c] = widen<A>(row[i + c * team]) - centre;
      sum += pairwise_sum(part);
    }
    for (; i < size; i += team) sum += widen<A>(row[i]) - centre;
    for (unsigned mask = team / 2; mask > 0; mask /= 2)
      sum += __shfl_xor_sync(device::kFullWarpMask, sum, mask);
    const A n = A(size);
    const A mean = sum * reciprocal(n);  // about the centre; an ulp here is second order in m2
    A m2 = A(0);
    for (i = rank; i + (kUnroll - 1) * team < size; i += kUnroll * team) {
#pragma unroll
      for (int c = 0; c < kUnroll; ++c) {
        const A d = (widen<A>(row[i + c * team]) - centre) - mean;
        m2 += d * d;
      }
    }
    for (; i < size; i += team) {
      const A d = (widen<A>(row[i]) - centre) - mean;
      m2 += d * d;
    }
    for (unsigned mask = team / 2; mask > 0; mask /= 2)
      m2 += __shfl_xor_sync(device::kFullWarpMask, m2, mask);
    return {n, centre, mean, m2, sum + n * centre};
  }
  __device__ static void store(void* out, std::int64_t index, Acc acc, std::uint64_t count,
                               const Finish& finish) {
    // torch: var = m2 / max(0, n - correction); IEEE gives NaN for 0 / 0 and inf for m2 / 0.
    const double divisor = static_cast<double>(count) - finish.correction;
    const A var = acc.m2 / static_cast<A>(divisor > 0 ? divisor : 0.0);
    const A mean = acc.sum / static_cast<A>(count);
    switch (finish.op) {
      case Op::std: put<A>(out, index, sqrt(var)); break;
      case Op::var_mean: put(out, index, StatPair<A>{var, mean}); break;
      case Op::std_mean: put(out, index, StatPair<A>{sqrt(var), mean}); break;
      default: put<A>(out, index, var); break;
    }
  }
};

// ---- norm: ord 1 and 2 ---------------------------------------------------------------------------

template <class T>
struct AbsSumTraits {
  using Elem = T;
  using Acc = sum_t<T>;
  using State = Acc;
  using Out = stat_t<T>;
  static constexpr int kArrays = 1;
  __device__ static Acc identity() { return Acc(0); }
  __device__ static State start() { return identity(); }
  __device__ static Acc empty() { return identity(); }
  __device__ static Acc shifted(Acc acc, std::int64_t) { return acc; }
  __device__ static Acc finish(State state, const T*) { return state; }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
  __device__ static void update(Acc& acc, T x, T, std::size_t) { acc += fabs(widen<Acc>(x)); }
  template <int kCount>
  __device__ static void update_vector(Acc& acc, const T (&x)[kCount], const T (&)[kCount],
                                       std::size_t) {
    Acc part[kCount];
#pragma unroll
    for (int j = 0; j < kCount; ++j) part[j] = fabs(widen<Acc>(x[j]));
    acc += pairwise_sum(part);
  }
  __device__ static void store(void* out, std::int64_t index, Acc acc, std::uint64_t,
                               const Finish&) {
    put<Out>(out, index, static_cast<Out>(acc));
  }
};

//! Blue's accumulators for the 2-norm of doubles (as LAPACK's dnrm2 since 3.10): |x| above
//! kBig is summed scaled down by kScaleBig, below kSmall scaled up by kScaleSmall, the rest as
//! is, so no square overflows or underflows (and tiny ones are not lost against a zero sum).
struct BlueSums {
  double small;
  double medium;
  double big;
};

template <class T>
struct SquareSumTraits {
  using Elem = T;
  static constexpr bool kBlue = std::is_same_v<T, double>;
  // f16's squares lie in [2^-48, 2^32]: float holds them; float's and bf16's need double.
  using Sum = std::conditional_t<std::is_same_v<T, __half>, float, double>;
  using Acc = std::conditional_t<kBlue, BlueSums, Sum>;
  using State = Acc;
  using Out = stat_t<T>;
  static constexpr int kArrays = 1;
  // Blue's constants for binary64: 2^ceil((emin - 1) / 2), 2^floor((emax - digits + 1) / 2) and
  // the scalings that bring the squares of the extremes into range.
  static constexpr double kSmall = 0x1p-511;
  static constexpr double kBig = 0x1p+486;
  static constexpr double kScaleSmall = 0x1p+537;
  static constexpr double kScaleBig = 0x1p-538;

  __device__ static Acc identity() {
    if constexpr (kBlue) {
      return {0.0, 0.0, 0.0};
    } else {
      return Acc(0);
    }
  }
  __device__ static State start() { return identity(); }
  __device__ static Acc empty() { return identity(); }
  __device__ static Acc shifted(Acc acc, std::int64_t) { return acc; }
  __device__ static Acc finish(State state, const T*) { return state; }
  __device__ static Acc combine(Acc a, Acc b) {
    if constexpr (kBlue) {
      return {a.small + b.small, a.medium + b.medium, a.big + b.big};
    } else {
      return a + b;
    }
  }
  __device__ static void add(Acc& acc, T x) {
    if constexpr (kBlue) {
      const double a = fabs(x);
      if (a > kBig) {
        const double scaled = a * kScaleBig;
        acc.big += scaled * scaled;
      } else if (a < kSmall) {
        const double scaled = a * kScaleSmall;
        acc.small += scaled * scaled;
      } else {
        acc.medium += a * a;  // NaN lands here
      }
    } else {
      const Sum v = static_cast<Sum>(widen<float>(x));
      acc += v * v;
    }
  }
  __device__ static void update(Acc& acc, T x, T, std::size_t) { add(acc, x); }
  template <int kCount>
  __device__ static void update_vector(Acc& acc, const T (&x)[kCount], const T (&)[kCount],
                                       std::size_t) {
    if constexpr (kBlue) {
#pragma unroll
      for (int j = 0; j < kCount; ++j) add(acc, x[j]);
    } else {
      float part[kCount];
#pragma unroll
      for (int j = 0; j < kCount; ++j) {
        const float v = widen<float>(x[j]);
        part[j] = v * v;
      }
      const float partial = pairwise_sum(part);
      if constexpr (std::is_same_v<Sum, float>) {
        acc += partial;
      } else if (partial >= 0x1p-60f && partial <= cuda::std::numeric_limits<float>::max()) {
        // The vector's squares in float, its sum added in double: one conversion and one
        // double add per vector instead of one per element (f32 2^27: 133.4 us with squares in
        // double, sum 125.8). No square overflowed (the sum is finite), and squares that
        // underflowed are below 2^-83 of it.
        acc += static_cast<double>(partial);
      } else {
        // An infinity or NaN, a square past float's range, or squares so small that some may
        // have underflowed: this vector again in double.
        double exact[kCount];
#pragma unroll
        for (int j = 0; j < kCount; ++j) {
          const double v = static_cast<double>(widen<float>(x[j]));
          exact[j] = v * v;
        }
        acc += pairwise_sum(exact);
      }
    }
  }
  __device__ static Out finalize(Acc acc) {
    if constexpr (kBlue) {
      // LAPACK's combination: the big sum wins (medium scaled into it); else the small one is
      // combined with the medium one through the larger of their roots.
      if (acc.big > 0 || acc.big != acc.big) {
        if (acc.medium > 0 || acc.medium != acc.medium)
          acc.big += (acc.medium * kScaleBig) * kScaleBig;
        return sqrt(acc.big) / kScaleBig;
      }
      if (acc.small > 0) {
        if (acc.medium > 0 || acc.medium != acc.medium) {
          const double medium = sqrt(acc.medium);
          const double small = sqrt(acc.small) / kScaleSmall;
          const double low = small < medium ? small : medium;
          const double high = small < medium ? medium : small;
          const double ratio = low / high;
          return high * sqrt(1.0 + ratio * ratio);
        }
        return sqrt(acc.small) / kScaleSmall;
      }
      return sqrt(acc.medium);
    } else {
      return static_cast<Out>(sqrt(acc));
    }
  }
  __device__ static void store(void* out, std::int64_t index, Acc acc, std::uint64_t,
                               const Finish&) {
    put<Out>(out, index, finalize(acc));
  }
};

// ---- norm: ord inf and -inf ----------------------------------------------------------------------

//! max |x| (ord inf; 0 for no elements) or min |x| (ord -inf; +inf for no elements), NaN if any
//! element is NaN: min/max's traits over |x|, with 0 as max's identity (no |x| is below it) and
//! the statistic's result type.
template <class T, class Extremum>
struct AbsExtremumTraits : ExtremumTraits<T, Extremum> {
  using Acc = compare_t<T>;
  using State = Acc;
  using Out = stat_t<T>;
  static constexpr bool kIsMax = std::is_same_v<Extremum, device::Max>;
  __device__ static Acc identity() {
    return kIsMax ? Acc(0) : cuda::std::numeric_limits<Acc>::infinity();
  }
  __device__ static State start() { return identity(); }
  __device__ static Acc empty() { return identity(); }
  __device__ static void update(Acc& acc, T x, T, std::size_t) {
    acc = Extremum{}(acc, fabs(widen<Acc>(x)));
  }
  template <int kCount>
  __device__ static void update_vector(Acc& acc, const T (&x)[kCount], const T (&)[kCount],
                                       std::size_t) {
    // |x| by clearing the sign bits of the whole vector; NaN stays NaN.
    using Word = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned>;
    constexpr Word kMask = sizeof(T) == 8   ? 0x7fffffffffffffffull
                           : sizeof(T) == 4 ? Word(0x7fffffffu)
                                            : Word(0x7fff7fffu);
    Word words[16 / sizeof(Word)];
    memcpy(words, x, 16);
#pragma unroll
    for (int w = 0; w < static_cast<int>(16 / sizeof(Word)); ++w) words[w] &= kMask;
    T magnitude[kCount];
    memcpy(magnitude, words, 16);
    acc = Extremum{}(acc, vector_extremum<Extremum>(magnitude));
  }
  __device__ static void store(void* out, std::int64_t index, Acc acc, std::uint64_t,
                               const Finish&) {
    put<Out>(out, index, static_cast<Out>(acc));
  }
};

// ---- count_nonzero, any, all, norm ord 0 --------------------------------------------------------

template <class T>
struct CountTraits {
  using Elem = T;
  using Acc = std::uint64_t;
  using State = Acc;
  static constexpr int kArrays = 1;
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t,
                                  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint16_t>>;
  //! Every bit but the sign's, for the floating types; every bit for the integers.
  static constexpr Bits kMagnitude = is_floating_v<T>
                                          ? static_cast<Bits>(cuda::std::numeric_limits<Bits>::max() >> 1)
                                          : cuda::std::numeric_limits<Bits>::max();

  __device__ static unsigned nonzero(T x) {
    Bits bits;
    memcpy(&bits, &x, sizeof(T));
    return (bits & kMagnitude) != 0 ? 1u : 0u;
  }
  __device__ static Acc identity() { return 0; }
  __device__ static State start() { return 0; }
  __device__ static Acc empty() { return 0; }
  __device__ static Acc shifted(Acc acc, std::int64_t) { return acc; }
  __device__ static Acc finish(State state, const T*) { return state; }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
  __device__ static void update(Acc& acc, T x, T, std::size_t) { acc += nonzero(x); }
  template <int kCount>
  __device__ static void update_vector(Acc& acc, const T (&x)[kCount], const T (&)[kCount],
                                       std::size_t) {
    unsigned count = 0;
#pragma unroll
    for (int j = 0; j < kCount; ++j) count += nonzero(x[j]);
    acc += count;
  }
  __device__ static void store(void* out, std::int64_t index, Acc acc, std::uint64_t count,
                               const Finish& finish) {
    switch (finish.op) {
      case Op::any: put<bool>(out, index, acc != 0); break;
      case Op::all: put<bool>(out, index, acc == count); break;
      case Op::norm: put<stat_t<T>>(out, index, static_cast<stat_t<T>>(acc)); break;
      default: put<std::int64_t>(out, index, static_cast<std::int64_t>(acc)); break;
    }
  }
};

// ---- logsumexp -----------------------------------------------------------------------------------

template <class A>
struct RunningExp {
  A max;  //!< the largest element so far (NaN-propagating); -inf for none
  A sum;  //!< sum of exp(x - max) while max is finite
};

template <class T>
struct LogSumExpTraits {
  using Elem = T;
  using A = stat_t<T>;
  using Acc = RunningExp<A>;
  using State = Acc;
  using Out = A;
  static constexpr int kArrays = 1;
  //! Whole tiles from the agent (update_vectors) for float sums; f64's tiles of inlined double
  //! exponentials spilled 240 bytes in the vector rows kernel (ptxas), so it takes vectors.
  static constexpr bool kFoldsTiles = std::is_same_v<A, float>;

  //! exp(d) for d <= 0 (or NaN): exp2 of d log2(e) for float, whose rounding of the product is
  //! an error of the size of the rounding of x - max (stats_reference.hpp's bound covers both).
  //! (exp2(x log2(e) - max log2(e)) in one FFMA would save an instruction, but the rounding of
  //! max log2(e) scales every term alike, by up to |max| eps: too much for large elements.)
  //! The float form is one ex2.approx.ftz (2 ulp, as exp2f's ex2.approx): results below 2^-126
  //! flush to zero, which moves a sum of at least 1 by less than 2^-126 per term, where exp2f
  //! spends instructions keeping them subnormal.
  __device__ static A ex(A d) {
    if constexpr (std::is_same_v<A, float>) {
      float r;
      asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d * 1.4426950408889634f));
      return r;
    } else {
      return exp(d);
    }
  }
  __device__ static Acc identity() { return {-cuda::std::numeric_limits<A>::infinity(), A(0)}; }
  __device__ static State start() { return identity(); }
  __device__ static Acc empty() { return identity(); }
  __device__ static Acc shifted(Acc acc, std::int64_t) { return acc; }
  __device__ static Acc finish(State state, const T*) { return state; }
  __device__ static Acc combine(Acc a, Acc b) {
    const A max = device::Max{}(a.max, b.max);
    // max -inf: both empty or all -inf (sums 0); +inf or NaN: the result, whatever the sums.
    if (!is_finite(max)) return {max, A(0)};
    return {max, a.sum * ex(a.max - max) + b.sum * ex(b.max - max)};
  }
  __device__ static void update(State& s, T x, T, std::size_t) {
    const A v = widen<A>(x);
    const A max = device::Max{}(s.max, v);
    if (is_finite(max)) {
      if (max != s.max) s.sum *= ex(s.max - max);
      s.sum += ex(v - max);
    }
    s.max = max;
  }
  //! A vector's, or a tile's (up to 16 elements), max and exponentials: one rescale per call.
  template <int kVectors, int kCount>
  __device__ __forceinline__ static void update_vectors(State& s,
                                                        const T (&x)[kVectors][kCount]) {
    constexpr int kN = kVectors * kCount;
    A value[kN];
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
#pragma unroll
      for (int j = 0; j < kCount; ++j) value[v * kCount + j] = widen<A>(x[v][j]);
    }
    A max = s.max;
#pragma unroll
    for (int j = 0; j < kN; ++j) max = device::Max{}(max, value[j]);
    if (is_finite(max)) {
      // The running sum is rescaled only when the max grew (rarely, after the first vectors).
      if (max != s.max) s.sum *= ex(s.max - max);
      A part[kN];
#pragma unroll
      for (int j = 0; j < kN; ++j) part[j] = ex(value[j] - max);
      s.sum += pairwise_sum(part);
    }
    s.max = max;
  }
  template <int kCount>
  __device__ __forceinline__ static void update_vector(State& s, const T (&x)[kCount],
                                                       const T (&)[kCount], std::size_t) {
    update_vectors(s, as_tile(x));
  }
  //! Aligned teams of `team` lanes (all 32 lanes call): the team's max by a butterfly, then each
  //! lane's sum rescaled to it (one exponential, none on a lane that holds the max) and added by
  //! a butterfly, instead of a tree of merges with two exponentials each. Every lane of a team
  //! ends with its result.
  __device__ __forceinline__ static Acc team_reduce(Acc acc, unsigned team) {
    A max = acc.max;
    for (unsigned mask = team / 2; mask > 0; mask /= 2)
      max = device::Max{}(max, __shfl_xor_sync(device::kFullWarpMask, max, mask));
    // A lane with no elements (max -inf, sum 0) adds 0; a non-finite team max ignores the sums.
    A sum = acc.max == max ? acc.sum : acc.sum * ex(acc.max - max);
    for (unsigned mask = team / 2; mask > 0; mask /= 2)
      sum += __shfl_xor_sync(device::kFullWarpMask, sum, mask);
    return {max, is_finite(max) ? sum : A(0)};
  }
  __device__ static Out finalize(Acc acc) {
    if (!is_finite(acc.max)) return acc.max;  // NaN, +inf, or -inf for all -inf / none
    return acc.max + log(acc.sum);            // sum in [1, n]
  }
  __device__ static void store(void* out, std::int64_t index, Acc acc, std::uint64_t,
                               const Finish&) {
    put<Out>(out, index, finalize(acc));
  }
};

// ---- aminmax -------------------------------------------------------------------------------------

template <class V>
struct LowHigh {
  V min;
  V max;
};

template <class T>
struct MinMaxTraits {
  using Elem = T;
  using V = compare_t<T>;
  using Acc = LowHigh<V>;
  using State = Acc;
  using Out = MinMax<T>;
  static constexpr int kArrays = 1;
  __device__ static Acc identity() {
    return {device::Min::template identity<V>(), device::Max::template identity<V>()};
  }
  __device__ static State start() { return identity(); }
  __device__ static Acc empty() { return identity(); }
  __device__ static Acc shifted(Acc acc, std::int64_t) { return acc; }
  __device__ static Acc finish(State state, const T*) { return state; }
  __device__ static Acc combine(Acc a, Acc b) {
    return {device::Min{}(a.min, b.min), device::Max{}(a.max, b.max)};
  }
  __device__ static void update(Acc& acc, T x, T, std::size_t) {
    const V v = widen<V>(x);
    acc.min = device::Min{}(acc.min, v);
    acc.max = device::Max{}(acc.max, v);
  }
  template <int kCount>
  __device__ static void update_vector(Acc& acc, const T (&x)[kCount], const T (&)[kCount],
                                       std::size_t) {
    acc.min = device::Min{}(acc.min, vector_extremum<device::Min>(x));
    acc.max = device::Max{}(acc.max, vector_extremum<device::Max>(x));
  }
  __device__ static void store(void* out, std::int64_t index, Acc acc, std::uint64_t,
                               const Finish&) {
    put(out, index, Out{narrow<T>(acc.min), narrow<T>(acc.max)});
  }
};

// ---- which traits implement which op ------------------------------------------------------------

template <class Traits>
struct TraitsTag {
  using type = Traits;
};

//! Calls f(TraitsTag<Traits>{}) with the traits that compute `r` on T (mean shares sum's, std
//! var's, any and all count_nonzero's, norm's depend on ord). The caller has validated r for T
//! (validate.hpp): the statistics of real values are not instantiated for the integers.
template <class T, class F>
void dispatch_traits(const Reduction& r, F&& f) {
  switch (r.op) {
    case Op::sum: return f(TraitsTag<SumTraits<T, 1>>{});
    case Op::dot: return f(TraitsTag<SumTraits<T, 2>>{});
    case Op::min: return f(TraitsTag<ExtremumTraits<T, device::Min>>{});
    case Op::max: return f(TraitsTag<ExtremumTraits<T, device::Max>>{});
    case Op::argmin: return f(TraitsTag<ArgTraits<T, true>>{});
    case Op::argmax: return f(TraitsTag<ArgTraits<T, false>>{});
    case Op::count_nonzero:
    case Op::any:
    case Op::all: return f(TraitsTag<CountTraits<T>>{});
    case Op::aminmax: return f(TraitsTag<MinMaxTraits<T>>{});
    default: break;
  }
  if constexpr (is_floating_v<T>) {
    switch (r.op) {
      case Op::mean: return f(TraitsTag<SumTraits<T, 1>>{});
      case Op::var:
      case Op::std:
      case Op::var_mean:
      case Op::std_mean: return f(TraitsTag<MomentsTraits<T>>{});
      case Op::logsumexp: return f(TraitsTag<LogSumExpTraits<T>>{});
      case Op::norm:
        if (r.ord == 0) return f(TraitsTag<CountTraits<T>>{});
        if (r.ord == 1) return f(TraitsTag<AbsSumTraits<T>>{});
        if (r.ord == 2) return f(TraitsTag<SquareSumTraits<T>>{});
        if (r.ord > 0) return f(TraitsTag<AbsExtremumTraits<T, device::Max>>{});
        return f(TraitsTag<AbsExtremumTraits<T, device::Min>>{});
      default: break;
    }
  }
}

//! The store() arguments of `r`.
inline Finish finish_of(const Reduction& r) { return {r.op, r.correction}; }

}  // namespace reducelab::detail

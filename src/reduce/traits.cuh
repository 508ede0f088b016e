#pragma once
// What each op does to each type: the accumulator, its identity, how an element (or a 16-byte
// vector of elements) updates it, how two accumulators combine, and the result written out.
//
// Element order: every thread visits its elements in increasing index order (head, body, tail),
// so argmin/argmax update with a strict comparison inside a thread and break ties by index only
// when combining threads and blocks.
//
// For the segmented reduce (segmented.cuh) each traits also says what an empty segment gives
// (empty()) and how a partial of a piece that starts `by` elements into its segment is made
// relative to the segment (shifted()).
//
// store(out, index, acc, count, finish) writes result number `index` of the array `out`: the
// op in `finish` says which result, since one traits serves several ops (mean is sum's traits
// divided by the count, std is var's, any/all count nonzeros), and `count` is the number of
// elements the result reduced. The statistics' traits are in stats_traits.cuh.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <cuda/std/limits>

#include "device/ops.cuh"
#include "device/vector_load.cuh"
#include "reducelab/op.hpp"
#include "reducelab/types.hpp"

namespace reducelab::detail {

//! What store() needs from the call besides the accumulator and the count.
struct Finish {
  Op op;              //!< the op the call computes, of those the traits serve
  double correction;  //!< var, std, var_mean, std_mean: the divisor is max(0, count - correction)
};

//! Result number `index` of the array `out` of R.
template <class R>
__device__ __forceinline__ void put(void* out, std::int64_t index, const R& value) {
  static_cast<R*>(out)[index] = value;
}

// The type min/max/argmin/argmax compare in: float for the 16-bit floats, else the type itself.
template <class T> struct compare_type { using type = T; };
template <> struct compare_type<__half> { using type = float; };
template <> struct compare_type<__nv_bfloat16> { using type = float; };
template <class T> using compare_t = typename compare_type<T>::type;

template <class R, class T>
__device__ __forceinline__ R widen(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return static_cast<R>(__half2float(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return static_cast<R>(__bfloat162float(v));
  } else {
    return static_cast<R>(v);
  }
}

template <class T>
__device__ __forceinline__ T narrow(compare_t<T> v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);  // exact: v came from a __half
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    // Exact truncation: v came from a bf16, so its low 16 bits are zero. __float2bfloat16_rn
    // would turn every NaN into 0x7fff, and argmin/argmax return the stored element's bits.
    return __ushort_as_bfloat16(static_cast<unsigned short>(__float_as_uint(v) >> 16));
  } else {
    return v;
  }
}

// widen/narrow that keep every bit of a 16-bit NaN (payload and sign), for argmin/argmax, whose
// value must be the stored element: the float conversions may return a canonical NaN. Off the
// hot path (once per thread and per result), so the plain conversions stay in the loops.
template <class V, class T>
__device__ __forceinline__ V widen_exact(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    const unsigned bits = __half_as_ushort(v);
    if ((bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0)
      return __uint_as_float(((bits & 0x8000u) << 16) | 0x7f800000u | ((bits & 0x3ffu) << 13));
  }
  return widen<V>(v);
}

template <class T>
__device__ __forceinline__ T narrow_exact(compare_t<T> v) {
  if constexpr (std::is_same_v<T, __half>) {
    const unsigned bits = __float_as_uint(v);
    if (v != v)
      return __ushort_as_half(static_cast<unsigned short>(((bits >> 16) & 0x8000u) | 0x7c00u |
                                                          ((bits >> 13) & 0x3ffu)));
  }
  return narrow<T>(v);
}

template <class V>
__device__ __forceinline__ bool is_nan(V v) {
  if constexpr (cuda::std::numeric_limits<V>::has_quiet_NaN) {
    return v != v;
  } else {
    return false;
  }
}

// Extremum of a 16-byte vector in the compare type, NaN-propagating. The 16-bit floats reduce in
// pairs with one packed instruction per two elements (sm_80+) before widening.
template <class Extremum, class T, int kCount>
__device__ __forceinline__ compare_t<T> vector_extremum(const T (&x)[kCount]) {
  constexpr bool kIsMax = std::is_same_v<Extremum, device::Max>;
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    using Pair = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    Pair pair[kCount / 2];
    memcpy(pair, x, sizeof(pair));
#pragma unroll
    for (int width = kCount / 4; width > 0; width /= 2) {
#pragma unroll
      for (int j = 0; j < width; ++j)
        pair[j] = kIsMax ? __hmax2_nan(pair[j], pair[j + width]) : __hmin2_nan(pair[j], pair[j + width]);
    }
    return Extremum{}(widen<float>(pair[0].x), widen<float>(pair[0].y));
  } else {
    compare_t<T> part[kCount];
#pragma unroll
    for (int j = 0; j < kCount; ++j) part[j] = widen<compare_t<T>>(x[j]);
#pragma unroll
    for (int width = kCount / 2; width > 0; width /= 2) {
#pragma unroll
      for (int j = 0; j < width; ++j) part[j] = Extremum{}(part[j], part[j + width]);
    }
    return part[0];
  }
}

// ---- sum and dot ---------------------------------------------------------------------------

template <class T, int kInputs>
struct SumTraits {
  using Elem = T;
  using Acc = sum_t<T>;
  using State = Acc;  // what a thread carries through its loop
  using Out = sum_t<T>;
  static constexpr int kArrays = kInputs;
  // -0.0 for the floating types: the IEEE additive identity (-0 + x == x for every x, +0 too),
  // so a sum of only -0.0 gives -0.0 as a sequential IEEE sum does; 0 for the integers.
  __device__ static Acc identity() {
    if constexpr (cuda::std::numeric_limits<Acc>::is_iec559) {
      return -Acc(0);
    } else {
      return Acc(0);
    }
  }
  __device__ static State start() { return identity(); }
  // +0 for the floating types, as reduce() gives for n == 0 (all-zero bits in every type).
  __device__ static Acc empty() { return Acc(0); }
  __device__ static Acc shifted(Acc acc, std::int64_t) { return acc; }
  __device__ static Acc finish(State state, const T*) { return state; }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
  __device__ static void update(Acc& acc, T x, T y, std::size_t) {
    if constexpr (kInputs == 2) {
      acc += widen<Acc>(x) * widen<Acc>(y);
    } else {
      acc += widen<Acc>(x);
    }
  }
  template <int kCount>
  __device__ static void update_vector(Acc& acc, const T (&x)[kCount], const T (&y)[kCount],
                                       std::size_t) {
    // Pairwise inside the vector: shorter dependency chains, same order every call.
    Acc part[kCount];
#pragma unroll
    for (int j = 0; j < kCount; ++j) {
      if constexpr (kInputs == 2) {
        part[j] = widen<Acc>(x[j]) * widen<Acc>(y[j]);
      } else {
        part[j] = widen<Acc>(x[j]);
      }
    }
#pragma unroll
    for (int width = kCount / 2; width > 0; width /= 2) {
#pragma unroll
      for (int j = 0; j < width; ++j) part[j] = part[j] + part[j + width];
    }
    acc += part[0];
  }
  __device__ static Out finalize(Acc acc) { return acc; }
  // mean is the sum divided by the count (NaN for no elements: 0 / 0), in the accumulation type.
  __device__ static void store(void* out, std::int64_t index, Acc acc, std::uint64_t count,
                               const Finish& finish) {
    if constexpr (cuda::std::numeric_limits<Acc>::is_iec559) {
      if (finish.op == Op::mean) {
        put(out, index, acc / static_cast<Acc>(count));
        return;
      }
    }
    put<Out>(out, index, finalize(acc));
  }
};

// ---- min and max ---------------------------------------------------------------------------

template <class T, class Extremum>
struct ExtremumTraits {
  using Elem = T;
  using Acc = compare_t<T>;
  using State = Acc;
  using Out = T;
  static constexpr int kArrays = 1;
  __device__ static Acc identity() { return Extremum::template identity<Acc>(); }
  __device__ static State start() { return identity(); }
  // The identity: +inf (min) or -inf (max), the integer type's largest or lowest value.
  __device__ static Acc empty() { return identity(); }
  __device__ static Acc shifted(Acc acc, std::int64_t) { return acc; }
  __device__ static Acc finish(State state, const T*) { return state; }
  __device__ static Acc combine(Acc a, Acc b) { return Extremum{}(a, b); }
  __device__ static void update(Acc& acc, T x, T, std::size_t) {
    acc = Extremum{}(acc, widen<Acc>(x));
  }
  template <int kCount>
  __device__ static void update_vector(Acc& acc, const T (&x)[kCount], const T (&)[kCount],
                                       std::size_t) {
    acc = Extremum{}(acc, vector_extremum<Extremum>(x));
  }
  __device__ static Out finalize(Acc acc) { return narrow<T>(acc); }
  __device__ static void store(void* out, std::int64_t index, Acc acc, std::uint64_t,
                               const Finish&) {
    put<Out>(out, index, finalize(acc));
  }
};

// ---- argmin and argmax ---------------------------------------------------------------------

template <class V>
struct ArgAcc {
  V value;
  std::int64_t index;
};

inline constexpr std::int64_t kNoIndex = cuda::std::numeric_limits<std::int64_t>::max();

template <class T, bool kIsMin>
struct ArgTraits {
  using Elem = T;
  using V = compare_t<T>;
  using Acc = ArgAcc<V>;
  using Out = ArgResult<T>;
  using Extremum = std::conditional_t<kIsMin, device::Min, device::Max>;
  static constexpr int kArrays = 1;
  static constexpr int kCount = 16 / sizeof(T);

  // A thread's state: the best value so far and where it is. When it came from a 16-byte
  // vector, `index` is the vector's first element and the element inside is found once, in
  // finish(), by reading that vector again. So the hot loop does no per-element work (one vector
  // extremum, one comparison, three predicated moves) and the state stays small enough to keep
  // full occupancy.
  struct State {
    V value;
    std::int64_t index;
    bool in_vector;
  };

  __device__ static Acc identity() { return {Extremum::template identity<V>(), kNoIndex}; }
  __device__ static State start() { return {Extremum::template identity<V>(), kNoIndex, false}; }
  // The value identity and index -1: no element.
  __device__ static Acc empty() { return {Extremum::template identity<V>(), -1}; }
  __device__ static Acc shifted(Acc acc, std::int64_t by) {
    if (acc.index != kNoIndex) acc.index += by;
    return acc;
  }
  // Strictly better, NaN beating any number: the rule inside one thread's increasing indices.
  __device__ static bool better(V candidate, V current) {
    if constexpr (kIsMin) {
      return candidate < current || (is_nan(candidate) && !is_nan(current));
    } else {
      return candidate > current || (is_nan(candidate) && !is_nan(current));
    }
  }
  // Across threads: better value wins, equal values (or two NaNs) keep the smaller index.
  __device__ static Acc combine(Acc a, Acc b) {
    if (better(b.value, a.value)) return b;
    if (better(a.value, b.value)) return a;
    return b.index < a.index ? b : a;
  }
  __device__ static void update(State& s, T x, T, std::size_t index) {
    const V v = widen_exact<V>(x);
    if (better(v, s.value) || s.index == kNoIndex) {
      s.value = v;
      s.index = static_cast<std::int64_t>(index);
      s.in_vector = false;
    }
  }
  __device__ static void update_vector(State& s, const T (&x)[kCount], const T (&)[kCount],
                                       std::size_t first_index) {
    const V best = vector_extremum<Extremum>(x);
    if (better(best, s.value) || s.index == kNoIndex) {
      s.value = best;
      s.index = static_cast<std::int64_t>(first_index);
      s.in_vector = true;
    }
  }
  //! The first element of a vector equal to its extremum `best` (any NaN for a NaN), with the
  //! bits of that element and its position in the vector: what finish() and
  //! update_vector_found() look for in a winning vector.
  __device__ static Acc first_equal(const T (&x)[kCount], V best) {
    int position = kCount - 1;
    T chosen = x[kCount - 1];
#pragma unroll
    for (int j = kCount - 1; j >= 0; --j) {
      const V v = widen<V>(x[j]);
      if (v == best || (is_nan(v) && is_nan(best))) {
        position = j;
        chosen = x[j];
      }
    }
    return {widen_exact<V>(chosen), position};
  }
  //! update_vector where `first_index` is not the vector's offset from the x that finish() is
  //! given (the axis kernel's vector runs, whose index is the flat one over several axes): a
  //! vector that wins has its first element equal to the extremum found at once, from the
  //! registers, as finish() would, so the state never holds a vector. Only a winning vector
  //! (rare after the first few) pays for the search. x[j] is element first_index + j x stride
  //! (stride > 0: tile_rows_kernel gathers a lane's elements `team` apart), so the first equal
  //! one in x is the one of the smallest index.
  __device__ static void update_vector_found(State& s, const T (&x)[kCount],
                                             std::size_t first_index, std::size_t stride = 1) {
    const V best = vector_extremum<Extremum>(x);
    if (better(best, s.value) || s.index == kNoIndex) {
      const Acc found = first_equal(x, best);
      s.value = found.value;
      s.index = static_cast<std::int64_t>(first_index + found.index * stride);
      s.in_vector = false;
    }
  }
  // `x` is the input: the winning vector starts at x + s.index, 16-byte aligned. The value
  // returned is the element found there, so the result's value has the bits of the element at
  // its index (with +0 and -0 tied, or NaNs of other payloads, the vector's extremum may not).
  __device__ static Acc finish(const State& s, const T* x) {
    if (!s.in_vector) return {s.value, s.index};
    T element[kCount];
    const uint4 raw = *reinterpret_cast<const uint4*>(x + s.index);
    memcpy(element, &raw, 16);
    const Acc found = first_equal(element, s.value);
    return {found.value, s.index + found.index};
  }
  __device__ static Out finalize(Acc acc) { return {narrow_exact<T>(acc.value), acc.index}; }
  // All 16 bytes, padding zeroed: results compare bitwise and no byte is left uninitialised.
  __device__ static void store(void* out, std::int64_t index, Acc acc, std::uint64_t,
                               const Finish&) {
    unsigned words[4] = {0, 0, 0, 0};
    const T value = narrow_exact<T>(acc.value);
    memcpy(words, &value, sizeof(T));
    memcpy(words + 2, &acc.index, 8);
    uint2* target = static_cast<uint2*>(out) + 2 * index;  // ArgResult is 8-byte aligned
    target[0] = make_uint2(words[0], words[1]);
    target[1] = make_uint2(words[2], words[3]);
  }
};

//! argmin/argmax (ArgTraits and the traits built on it): their update_vector keeps the winning
//! vector for finish() to read again at x + index, so a kernel whose index is not the element's
//! offset from x (several axes; elements gathered from shared memory) folds them with
//! update_vector_found or one element at a time instead.
template <class Traits, class = void>
struct is_arg_traits : std::false_type {};
template <class Traits>
struct is_arg_traits<Traits, std::void_t<decltype(&Traits::update_vector_found)>>
    : std::true_type {};

}  // namespace reducelab::detail

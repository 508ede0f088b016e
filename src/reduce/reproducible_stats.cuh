#pragma once
// The gpu_to_gpu statistics on the GPU (reproducible_stats.hpp says what each computes): the
// terms f(x) that reproducible_kernel (reproducible.cuh) sums in the fixed order, and the
// epilogues that turn the total into the result. A term binds once per thread at the kernel's
// start (none reads anything now: every statistic of a whole array is one pass).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "reduce/reproducible.cuh"
#include "reduce/reproducible_stats.hpp"

namespace reducelab::detail::repro {

__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }

// ---- Terms: apply<A>(x, y) is f(x) in A, exactly as reproducible_cpu.cpp computes it --------

struct AbsTerm {  // norm ord 1
  __device__ AbsTerm bind() const { return *this; }
  template <class A, class T>
  __device__ __forceinline__ A apply(T x, T) const {
    return fabs(widen<A>(x));  // exact
  }
};

struct SquareTerm {  // norm ord 2, f32, f16, bf16
  __device__ SquareTerm bind() const { return *this; }
  template <class A, class T>
  __device__ __forceinline__ A apply(T x, T) const {
    const A v = widen<A>(x);
    return mul(v, v);
  }
};

struct ScaledSquareTerm {  // norm ord 2, f64, along segments: (s x)^2, s = norm2_scale(max |x|)
  double scale;             // of the segment, from its first pass
  __device__ ScaledSquareTerm bind() const { return *this; }
  template <class A, class T>
  __device__ __forceinline__ A apply(T x, T) const {
    const A v = mul(widen<A>(x), scale);
    return mul(v, v);
  }
};

struct Norm2Term {  // norm ord 2, f64, whole arrays: the three candidate terms and |x| in one
                    // pass (Norm2State, reproducible_stats.hpp)
  __device__ Norm2Term bind() const { return *this; }
  template <class A, class T>
  __device__ __forceinline__ A apply(T x, T) const {
    return norm2_term(widen<typename A::value_type>(x));
  }
};

template <bool kWithSum>
struct VarTerm {  // var's one pass (var_tile_partial): names the op; kSum: var_mean and std_mean,
                  // whose mean is the plain sum's
  static constexpr bool kSum = kWithSum;
  __device__ VarTerm bind() const { return *this; }
};

struct LseTerm {  // logsumexp: names the op; the kernels read the elements themselves
                 // (lse_tile_partial, element_value), so it has no term
  __device__ LseTerm bind() const { return *this; }
};

// ---- Epilogues: what the block that folds the last partial writes ------------------------------

template <class A>
struct NormEpilogue {  // ord 1: the sum; ord 2 (f32, f16, bf16): its square root, as Out
  void* out;
  bool root;
  bool to_float;  // f32 and bf16's ord 2: the double root rounded to float
  __device__ void operator()(A total) const {
    const A value = root ? portable::sqrt_rn(total) : total;
    if (to_float) {
      put<float>(out, 0, canonical(static_cast<float>(value)));
    } else {
      put<A>(out, 0, canonical(value));
    }
  }
};

struct Norm2Epilogue {  // f64's ord 2: the sum that max |x| selects, its root, scaled back
  void* out;
  __device__ void operator()(const Norm2State<double>& total) const {
    put<double>(out, 0, norm2_finish(total));
  }
};

template <class A>
struct VarEpilogue {
  void* out;
  std::uint64_t n;
  A divisor;  // var_divisor(n, correction)
  Op op;
  __device__ void operator()(const VarState<A>& total) const {
    A value = finish_var(total.m2, divisor);
    if (op == Op::std || op == Op::std_mean) value = portable::sqrt_rn(value);
    value = canonical(value);
    if (op == Op::var_mean || op == Op::std_mean) {
      // The mean: the plain sum over n, as Op::mean (ResultEpilogue) gives it.
      put(out, 0, StatPair<A>{value, canonical(divide(total.sum, static_cast<A>(n)))});
    } else {
      put<A>(out, 0, value);
    }
  }
};

template <class A>
struct LogSumExpEpilogue {
  void* out;
  __device__ void operator()(const LseState<A>& total) const {
    put<A>(out, 0, finish_logsumexp(total));  // a NaN is canonical already
  }
};

}  // namespace reducelab::detail::repro

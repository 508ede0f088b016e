#pragma once
// Reduction operators and their identities, shared by the ladder and the production kernels.
//
// Min and Max propagate NaN the way PyTorch does: once a NaN is seen it wins every later
// comparison. For integers `a != a` is false and folds away; for float on sm_80+ it is one
// min.NaN / max.NaN instruction.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <type_traits>

namespace reducelab::device {

struct Sum {
  template <class T>
  __host__ __device__ __forceinline__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
  template <class T>
  __host__ __device__ static constexpr T identity() {
    return T(0);
  }
};

struct Min {
  template <class T>
  __host__ __device__ __forceinline__ T operator()(const T& a, const T& b) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same_v<T, float>) {  // one instruction instead of compare + select
      float r;
      asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
      return r;
    }
#endif
    return (a < b || a != a) ? a : b;
  }
  template <class T>
  __host__ __device__ static constexpr T identity() {
    if constexpr (cuda::std::numeric_limits<T>::has_infinity) {
      return cuda::std::numeric_limits<T>::infinity();
    } else {
      return cuda::std::numeric_limits<T>::max();
    }
  }
};

struct Max {
  template <class T>
  __host__ __device__ __forceinline__ T operator()(const T& a, const T& b) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same_v<T, float>) {
      float r;
      asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
      return r;
    }
#endif
    return (a > b || a != a) ? a : b;
  }
  template <class T>
  __host__ __device__ static constexpr T identity() {
    if constexpr (cuda::std::numeric_limits<T>::has_infinity) {
      return -cuda::std::numeric_limits<T>::infinity();
    } else {
      return cuda::std::numeric_limits<T>::lowest();
    }
  }
};

}  // namespace reducelab::device

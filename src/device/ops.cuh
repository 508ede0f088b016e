#pragma once
// Reduction operators and their identities, shared by the ladder and the production kernels.
//
// Min and Max propagate NaN the way PyTorch does: once a NaN is seen it wins every later
// comparison. For integers `a != a` is false and folds away.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/cstdint>
#include <cuda/std/limits>

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

#pragma once
//! \file types.hpp
//! Result and accumulation types of reducelab's reductions.

#include <cstdint>
#include <type_traits>

#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"

namespace reducelab {

//! Type in which sum and dot accumulate and which they return:
//! float -> float, double -> double, __half and __nv_bfloat16 -> float (never accumulated in
//! 16 bits), int32_t -> int64_t, uint32_t -> uint64_t, int64_t -> int64_t, uint64_t -> uint64_t.
//! Integer sums wrap modulo 2^64 (two's complement), exactly and independent of order.
//! Read from kDTypes' sum_dtype column.
template <class T>
using sum_t = type_of<info(dtype_of<T>::value).sum_dtype>;

//! Result of argmin and argmax: the extreme value and the index of its first occurrence.
template <class T>
struct alignas(8) ArgResult {
  T value;
  std::int64_t index;
};
static_assert(sizeof(ArgResult<double>) == 16 && sizeof(ArgResult<__half>) == 16);

//! Type the statistics (mean, var, std, norm, logsumexp) accumulate in and return: float for
//! float, __half and __nv_bfloat16 (f32 accumulation, as torch), double for double. Except the
//! 2-norm of float and __nv_bfloat16, which sums its squares in double (each 16-byte vector's in
//! float first, where they fit) so that no square overflows or underflows, and returns float.
//! mean, var, std, norm and logsumexp take no integer types.
template <class T>
using stat_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

//! Result of var_mean and std_mean, in torch's order: {var or std, mean}.
template <class S>
struct StatPair {
  S first;   //!< var (var_mean) or std (std_mean)
  S mean;
};
static_assert(sizeof(StatPair<float>) == 8 && sizeof(StatPair<double>) == 16);

//! Result of aminmax.
template <class T>
struct MinMax {
  T min;
  T max;
};

//! Whether `op` takes elements of `dtype` (the statistics of real values take only the floating
//! types).
constexpr bool takes(Op op, DType dtype) {
  return info(op).integers || info(dtype).kind == DTypeKind::floating;
}

//! Bytes of the result of `op` on elements of `dtype` (both valid): what a stream-ordered call
//! writes at d_out and a synchronous one at h_out.
constexpr std::size_t result_size(Op op, DType dtype) {
  const std::size_t statistic = dtype == DType::f64 ? 8 : 4;
  switch (info(op).result) {
    case ResultKind::accumulator: return size_of(info(dtype).sum_dtype);
    case ResultKind::element: return size_of(dtype);
    case ResultKind::value_index: return sizeof(ArgResult<double>);  // 16 for every T
    case ResultKind::statistic: return statistic;
    case ResultKind::statistic_pair: return 2 * statistic;
    case ResultKind::count: return sizeof(std::int64_t);
    case ResultKind::boolean: return sizeof(bool);
    case ResultKind::min_max: return 2 * size_of(dtype);
  }
  return 0;
}
//! Alignment the result pointer must have: its size, but 8 for ArgResult and the element's or
//! the statistic's for the pairs.
constexpr std::size_t result_alignment(Op op, DType dtype) {
  switch (info(op).result) {
    case ResultKind::value_index: return alignof(ArgResult<double>);
    case ResultKind::statistic_pair:
    case ResultKind::min_max: return result_size(op, dtype) / 2;
    default: return result_size(op, dtype);
  }
}
static_assert(sizeof(bool) == 1, "any and all write one byte per result");

}  // namespace reducelab

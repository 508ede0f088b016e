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

//! Bytes of the result of `op` on elements of `dtype` (both valid): what a stream-ordered call
//! writes at d_out and a synchronous one at h_out.
constexpr std::size_t result_size(Op op, DType dtype) {
  switch (info(op).result) {
    case ResultKind::accumulator: return size_of(info(dtype).sum_dtype);
    case ResultKind::element: return size_of(dtype);
    case ResultKind::value_index: return sizeof(ArgResult<double>);  // 16 for every T
  }
  return 0;
}
//! Alignment the result pointer must have.
constexpr std::size_t result_alignment(Op op, DType dtype) {
  return info(op).result == ResultKind::value_index ? alignof(ArgResult<double>)
                                                    : result_size(op, dtype);
}

}  // namespace reducelab

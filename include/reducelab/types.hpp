#pragma once
//! \file types.hpp
//! Result and accumulation types of reducelab's reductions.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace reducelab {

//! True for the element types reducelab reduces: float, double, __half, __nv_bfloat16,
//! int32_t, int64_t, uint32_t, uint64_t.
template <class T>
inline constexpr bool is_supported_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, __half> ||
    std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, std::int32_t> ||
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint32_t> ||
    std::is_same_v<T, std::uint64_t>;

namespace detail {
template <class T> struct sum_type { using type = T; };
template <> struct sum_type<__half> { using type = float; };
template <> struct sum_type<__nv_bfloat16> { using type = float; };
template <> struct sum_type<std::int32_t> { using type = std::int64_t; };
template <> struct sum_type<std::uint32_t> { using type = std::uint64_t; };
}  // namespace detail

//! Type in which sum and dot accumulate and which they return:
//! float -> float, double -> double, __half and __nv_bfloat16 -> float (never accumulated in
//! 16 bits), int32_t -> int64_t, uint32_t -> uint64_t, int64_t -> int64_t, uint64_t -> uint64_t.
//! Integer sums wrap modulo 2^64 (two's complement), exactly and independent of order.
template <class T>
using sum_t = typename detail::sum_type<T>::type;

//! Result of argmin and argmax: the extreme value and the index of its first occurrence.
template <class T>
struct alignas(8) ArgResult {
  T value;
  std::int64_t index;
};

}  // namespace reducelab

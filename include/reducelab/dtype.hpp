#pragma once
//! \file dtype.hpp
//! Element types, by name, and a dispatcher from a run-time DType to a compile-time type.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace reducelab {

enum class DType { f32, f64, f16, bf16, i32, i64, u32, u64 };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16,
                                       DType::i32, DType::i64, DType::u32, DType::u64};

std::string_view to_string(DType dtype);
//! Parses "f32", "float", "f64", "double", "f16", "half", "bf16", "i32", "int32", ... ;
//! throws reducelab::Error on anything else.
DType parse_dtype(std::string_view text);
std::size_t size_of(DType dtype);

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<__half> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<__nv_bfloat16> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<std::uint32_t> { static constexpr DType value = DType::u32; };
template <> struct dtype_of<std::uint64_t> { static constexpr DType value = DType::u64; };

template <class T>
inline constexpr bool is_floating_v = dtype_of<T>::value == DType::f32 ||
                                      dtype_of<T>::value == DType::f64 ||
                                      dtype_of<T>::value == DType::f16 ||
                                      dtype_of<T>::value == DType::bf16;

//! Calls f(T{}) with T the C++ type of `dtype`; returns what f returns.
template <class F>
decltype(auto) dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f64: return std::forward<F>(f)(double{});
    case DType::f16: return std::forward<F>(f)(__half{});
    case DType::bf16: return std::forward<F>(f)(__nv_bfloat16{});
    case DType::i32: return std::forward<F>(f)(std::int32_t{});
    case DType::i64: return std::forward<F>(f)(std::int64_t{});
    case DType::u32: return std::forward<F>(f)(std::uint32_t{});
    case DType::u64: return std::forward<F>(f)(std::uint64_t{});
    case DType::f32:
    default: return std::forward<F>(f)(float{});
  }
}

}  // namespace reducelab

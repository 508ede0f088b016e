#pragma once
//! \file dtype.hpp
//! The element types reducelab reduces, described once (kDTypes), with the C++ type of each
//! (DTypeList) and a dispatcher from a run-time DType to that type. Adding a type means a row
//! here and an entry in DTypeList, its accumulation type in types.hpp, one explicit instantiation
//! file (src/reduce/instantiate_*.cu) and its random generator (src/bench/random.hpp).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

namespace reducelab {

//! The order of the enumerators is the order of kDTypes and DTypeList.
enum class DType : int { f32, f64, f16, bf16, i32, i64, u32, u64 };

enum class DTypeKind : int { floating, signed_integer, unsigned_integer };

struct DTypeInfo {
  DType dtype;
  std::string_view name;      //!< how the CLI, the results files and the bindings spell it
  std::size_t size;           //!< bytes per element
  DTypeKind kind;
  DType sum_dtype;            //!< what sum and dot accumulate in and return (types.hpp: sum_t)
  std::string_view cpp_name;  //!< the C++ type
  std::array<std::string_view, 2> aliases;  //!< other spellings the parser accepts
};

inline constexpr DTypeInfo kDTypes[] = {
    {DType::f32, "f32", 4, DTypeKind::floating, DType::f32, "float", {"float", "float32"}},
    {DType::f64, "f64", 8, DTypeKind::floating, DType::f64, "double", {"double", "float64"}},
    {DType::f16, "f16", 2, DTypeKind::floating, DType::f32, "__half", {"half", "float16"}},
    {DType::bf16, "bf16", 2, DTypeKind::floating, DType::f32, "__nv_bfloat16", {"bfloat16", ""}},
    {DType::i32, "i32", 4, DTypeKind::signed_integer, DType::i64, "int32_t", {"int32", ""}},
    {DType::i64, "i64", 8, DTypeKind::signed_integer, DType::i64, "int64_t", {"int64", ""}},
    {DType::u32, "u32", 4, DTypeKind::unsigned_integer, DType::u64, "uint32_t", {"uint32", ""}},
    {DType::u64, "u64", 8, DTypeKind::unsigned_integer, DType::u64, "uint64_t", {"uint64", ""}},
};
inline constexpr std::size_t kDTypeCount = sizeof(kDTypes) / sizeof(kDTypes[0]);

template <class... Ts>
struct TypeList {
  static constexpr std::size_t size = sizeof...(Ts);
};
//! The C++ type of each DType, in enum order.
using DTypeList = TypeList<float, double, __half, __nv_bfloat16, std::int32_t, std::int64_t,
                           std::uint32_t, std::uint64_t>;

namespace detail {
template <std::size_t I, class List> struct type_at;
template <std::size_t I, class T, class... Ts>
struct type_at<I, TypeList<T, Ts...>> : type_at<I - 1, TypeList<Ts...>> {};
template <class T, class... Ts>
struct type_at<0, TypeList<T, Ts...>> { using type = T; };

template <class T, class List> struct index_of;
template <class T, class... Ts>
struct index_of<T, TypeList<T, Ts...>> : std::integral_constant<std::size_t, 0> {};
template <class T, class U, class... Ts>
struct index_of<T, TypeList<U, Ts...>>
    : std::integral_constant<std::size_t, 1 + index_of<T, TypeList<Ts...>>::value> {};

template <class T, class List> struct contains;
template <class T, class... Ts>
struct contains<T, TypeList<Ts...>> : std::bool_constant<(std::is_same_v<T, Ts> || ...)> {};

constexpr bool dtypes_in_enum_order() {
  for (std::size_t i = 0; i < kDTypeCount; ++i)
    if (static_cast<std::size_t>(kDTypes[i].dtype) != i) return false;
  return true;
}
static_assert(dtypes_in_enum_order(), "kDTypes must list the types in the order of DType");
static_assert(DTypeList::size == kDTypeCount, "DTypeList must have one type per row of kDTypes");
}  // namespace detail

//! True for the element types reducelab reduces (the types of DTypeList).
template <class T>
inline constexpr bool is_supported_v = detail::contains<T, DTypeList>::value;

//! The C++ type of a DType.
template <DType D>
using type_of = typename detail::type_at<static_cast<std::size_t>(D), DTypeList>::type;

//! The DType of a supported C++ type.
template <class T>
struct dtype_of {
  static_assert(is_supported_v<T>,
                "reducelab reduces float, double, __half, __nv_bfloat16, int32_t, int64_t, "
                "uint32_t and uint64_t");
  static constexpr DType value = static_cast<DType>(detail::index_of<T, DTypeList>::value);
};

//! True for the enumerators of DType.
constexpr bool is_valid(DType dtype) {
  return static_cast<int>(dtype) >= 0 && static_cast<std::size_t>(dtype) < kDTypeCount;
}
//! The row of kDTypes for `dtype`; `dtype` must be valid.
constexpr const DTypeInfo& info(DType dtype) { return kDTypes[static_cast<std::size_t>(dtype)]; }

template <class T>
inline constexpr bool is_floating_v = info(dtype_of<T>::value).kind == DTypeKind::floating;

//! Every type, in table order.
inline constexpr auto kAllDTypes = [] {
  std::array<DType, kDTypeCount> out{};
  for (std::size_t i = 0; i < kDTypeCount; ++i) out[i] = kDTypes[i].dtype;
  return out;
}();

//! The type's name ("?" for an invalid value).
constexpr std::string_view to_string(DType dtype) {
  return is_valid(dtype) ? info(dtype).name : "?";
}
//! Parses a name or alias ("f32", "float", "float32", ...; case-insensitive); throws
//! reducelab::Error naming the valid names.
DType parse_dtype(std::string_view text);
//! Bytes per element.
constexpr std::size_t size_of(DType dtype) { return info(dtype).size; }

namespace detail {
template <class F, std::size_t... I>
decltype(auto) dispatch_dtype_impl(DType dtype, F&& f, std::index_sequence<I...>) {
  using R = decltype(std::forward<F>(f)(typename type_at<0, DTypeList>::type{}));
  if constexpr (std::is_void_v<R>) {
    ((static_cast<std::size_t>(dtype) == I
          ? (std::forward<F>(f)(typename type_at<I, DTypeList>::type{}), true)
          : false) ||
     ...);
  } else {
    R result{};
    ((static_cast<std::size_t>(dtype) == I
          ? (result = std::forward<F>(f)(typename type_at<I, DTypeList>::type{}), true)
          : false) ||
     ...);
    return result;
  }
}
}  // namespace detail

//! Calls f(T{}) with T the C++ type of `dtype` (which must be valid); returns what f returns
//! (a default-constructible type, or void).
template <class F>
decltype(auto) dispatch_dtype(DType dtype, F&& f) {
  return detail::dispatch_dtype_impl(dtype, std::forward<F>(f),
                                     std::make_index_sequence<kDTypeCount>{});
}

}  // namespace reducelab

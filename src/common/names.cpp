// Names of ops and dtypes, for the command line and the results files.

#include <algorithm>
#include <cctype>
#include <string>

#include "common/text.hpp"
#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"
#include "reducelab/error.hpp"

namespace reducelab {
namespace detail {
std::string to_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}
}  // namespace detail

std::string_view to_string(Op op) {
  switch (op) {
    case Op::sum: return "sum";
    case Op::min: return "min";
    case Op::max: return "max";
    case Op::dot: return "dot";
    case Op::argmin: return "argmin";
    case Op::argmax: return "argmax";
  }
  return "?";
}

Op parse_op(std::string_view text) {
  const std::string name = detail::to_lower(text);
  for (Op op : kAllOps)
    if (name == to_string(op)) return op;
  throw Error(ErrorCode::invalid_argument,
              "unknown op '" + std::string(text) + "' (expected sum, min, max, dot, argmin or argmax)");
}

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u32: return "u32";
    case DType::u64: return "u64";
  }
  return "?";
}

DType parse_dtype(std::string_view text) {
  const std::string name = detail::to_lower(text);
  struct Alias { const char* name; DType dtype; };
  static constexpr Alias kAliases[] = {
      {"f32", DType::f32}, {"float", DType::f32}, {"float32", DType::f32},
      {"f64", DType::f64}, {"double", DType::f64}, {"float64", DType::f64},
      {"f16", DType::f16}, {"half", DType::f16}, {"float16", DType::f16},
      {"bf16", DType::bf16}, {"bfloat16", DType::bf16},
      {"i32", DType::i32}, {"int32", DType::i32}, {"i64", DType::i64}, {"int64", DType::i64},
      {"u32", DType::u32}, {"uint32", DType::u32}, {"u64", DType::u64}, {"uint64", DType::u64}};
  for (const Alias& alias : kAliases)
    if (name == alias.name) return alias.dtype;
  throw Error(ErrorCode::invalid_argument, "unknown dtype '" + std::string(text) +
                                               "' (expected f32, f64, f16, bf16, i32, i64, u32 "
                                               "or u64)");
}

std::size_t size_of(DType dtype) {
  return dispatch_dtype(dtype, [](auto value) { return sizeof(value); });
}

}  // namespace reducelab

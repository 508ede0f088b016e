#pragma once
//! \file op.hpp
//! The reductions reducelab knows, described once. Name parsing, result layout, the CLI's help,
//! the benchmark, the test lists and the bindings all read kOps; adding an op means a row here,
//! its traits (src/reduce/traits.cuh), its CPU reference (src/bench/reference.hpp) and its CUB
//! baseline (src/bench/cub_baseline.cu), plus a typed convenience call in reduce.hpp.

#include <array>
#include <cstddef>
#include <string_view>

namespace reducelab {

//! The order of the enumerators is the order of kOps.
enum class Op : int { sum, min, max, dot, argmin, argmax };

//! What a reduction returns for element type T (types.hpp names the types).
enum class ResultKind : int {
  accumulator,  //!< sum_t<T>, the type it accumulates in (sum, dot)
  element,      //!< T itself (min, max)
  value_index,  //!< ArgResult<T>: the extreme value and the index of its first occurrence
};

//! What a reduction of zero elements does.
enum class EmptyRule : int {
  zero,   //!< gives 0 (all-zero bits in every result type): sum, dot
  error,  //!< throws reducelab::Error: an empty input has no extremum
};

struct OpInfo {
  Op op;
  std::string_view name;     //!< how the CLI, the results files and the bindings spell it
  int inputs;                //!< arrays read: 2 for dot (x and y), else 1
  ResultKind result;
  EmptyRule empty;
  bool in_ladder;            //!< the teaching ladder (src/ladder) implements it on float
  std::string_view summary;  //!< one line for help texts
};

inline constexpr OpInfo kOps[] = {
    {Op::sum, "sum", 1, ResultKind::accumulator, EmptyRule::zero, true, "sum of the elements"},
    {Op::min, "min", 1, ResultKind::element, EmptyRule::error, true,
     "smallest element (NaN if any is NaN)"},
    {Op::max, "max", 1, ResultKind::element, EmptyRule::error, true,
     "largest element (NaN if any is NaN)"},
    {Op::dot, "dot", 2, ResultKind::accumulator, EmptyRule::zero, true,
     "sum of x[i] * y[i] over two arrays"},
    {Op::argmin, "argmin", 1, ResultKind::value_index, EmptyRule::error, false,
     "smallest element and its first index (of the first NaN, if any)"},
    {Op::argmax, "argmax", 1, ResultKind::value_index, EmptyRule::error, false,
     "largest element and its first index (of the first NaN, if any)"},
};
inline constexpr std::size_t kOpCount = sizeof(kOps) / sizeof(kOps[0]);

namespace detail {
constexpr bool ops_in_enum_order() {
  for (std::size_t i = 0; i < kOpCount; ++i)
    if (static_cast<std::size_t>(kOps[i].op) != i) return false;
  return true;
}
static_assert(ops_in_enum_order(), "kOps must list the ops in the order of enum class Op");

template <bool kLadderOnly>
constexpr std::size_t count_ops() {
  std::size_t count = 0;
  for (const OpInfo& info : kOps) count += (!kLadderOnly || info.in_ladder) ? 1 : 0;
  return count;
}

template <bool kLadderOnly>
constexpr std::array<Op, count_ops<kLadderOnly>()> list_ops() {
  std::array<Op, count_ops<kLadderOnly>()> out{};
  std::size_t next = 0;
  for (const OpInfo& info : kOps)
    if (!kLadderOnly || info.in_ladder) out[next++] = info.op;
  return out;
}
}  // namespace detail

//! True for the enumerators of Op (an Op cast from an out-of-range integer is not).
constexpr bool is_valid(Op op) {
  return static_cast<int>(op) >= 0 && static_cast<std::size_t>(op) < kOpCount;
}
//! The row of kOps for `op`; `op` must be valid.
constexpr const OpInfo& info(Op op) { return kOps[static_cast<std::size_t>(op)]; }

//! Every op, in table order.
inline constexpr auto kAllOps = detail::list_ops<false>();
//! The ops the ladder implements on float.
inline constexpr auto kLadderOps = detail::list_ops<true>();

//! The op's name ("?" for an invalid value).
constexpr std::string_view to_string(Op op) { return is_valid(op) ? info(op).name : "?"; }
//! Parses an op name (case-insensitive); throws reducelab::Error naming the valid names.
Op parse_op(std::string_view text);
//! Number of input arrays the op reads (2 for dot).
constexpr int input_arrays(Op op) { return info(op).inputs; }

}  // namespace reducelab

#pragma once
//! \file op.hpp
//! The reductions reducelab knows.
//! The ladder implements the first four on float; the production library implements all six on
//! every supported type.

#include <string>
#include <string_view>

namespace reducelab {

enum class Op { sum, min, max, dot, argmin, argmax };

inline constexpr Op kAllOps[] = {Op::sum, Op::min, Op::max, Op::dot, Op::argmin, Op::argmax};
inline constexpr Op kLadderOps[] = {Op::sum, Op::min, Op::max, Op::dot};

std::string_view to_string(Op op);
//! Parses an op name (case-insensitive); throws reducelab::Error on anything else.
Op parse_op(std::string_view text);
//! Number of input arrays the op reads (2 for dot).
constexpr int input_arrays(Op op) { return op == Op::dot ? 2 : 1; }

}  // namespace reducelab

#pragma once
// Argument checks shared by the runtime-typed entry points (dispatch.cpp, segmented.cpp), run
// before anything is launched.

#include <cstddef>
#include <string>

#include "common/pointer_check.hpp"
#include "reducelab/axis.hpp"
#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"

namespace reducelab::detail {

//! Throws reducelab::Error (invalid_argument) with `message`.
[[noreturn]] void reject(const std::string& message);

//! Throws reducelab::Error unless 0 <= rank <= kMaxRank (axis.hpp).
void require_rank(int rank);

//! Throws reducelab::Error for an invalid Op or DType value (one cast from a bad integer), for a
//! second array given to an op that reads one, for an integer type given to a statistic of real
//! values, and for a correction or an ord the op does not take.
void require_valid_op(const Reduction& r, DType dtype, const void* d_y);

//! Every pointer of a call that reads n elements of x (and y for dot) and writes `out`, in one
//! batch of queries (pointer_check.hpp).
void require_pointers(Op op, DType dtype, const void* d_x, const void* d_y, std::size_t n,
                      const PointerArg& out, int device);

}  // namespace reducelab::detail

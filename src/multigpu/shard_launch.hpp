#pragma once
// Typed launchers of the sharded reduce's kernels (state_kernels.cuh), one explicit
// instantiation file per family of types (instantiate_*.cu), as reduce/launch.hpp does for the
// single-GPU kernels. Arguments are validated by the caller (sharded.cpp).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "reduce/workspace.hpp"
#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"

namespace reducelab::detail {

//! The empty rule of a call, as the fold applies it to a global count of zero.
enum class FoldEmpty : int {
  zero,       //!< sum, dot: all-zero bytes
  undefined,  //!< min, max, argmin, argmax, aminmax, norm ord +-inf: Traits::empty()
  value,      //!< the statistics: store() of rank 0's state of nothing
};

//! The fold's rule for a global count of zero.
inline FoldEmpty fold_empty_of(const Reduction& r) {
  if (info(r.op).empty == EmptyRule::zero) return FoldEmpty::zero;
  if (info(r.op).empty == EmptyRule::error) return FoldEmpty::undefined;
  if (r.op == Op::norm && (r.ord > 2 || r.ord < 0)) return FoldEmpty::undefined;  // +-inf
  return FoldEmpty::value;
}

//! What the fold reports besides the result (read back by the synchronous form).
struct FoldInfo {
  std::uint64_t total;   //!< elements of all shards (row 0's, for rows)
  std::uint64_t agreed;  //!< 1 when every rank made the same call and none rejected it
};

//! The state of x[0, n) (any n) into the kWholeSlotBytes slot at d_state.
template <class T>
void launch_shard_state(const Reduction& r, const T* x, const T* y, std::size_t n, void* d_state,
                        const WorkspaceView& workspace, cudaStream_t stream);

//! Bytes of one row's state slot for `r` on T.
template <class T>
std::size_t row_slot_bytes(const Reduction& r);

//! The states of rows >= 1 rows of cols >= 1 elements (row-major, pitch cols) into compact
//! slots at d_states.
template <class T>
void launch_row_states(const Reduction& r, const T* x, const T* y, std::size_t rows,
                       std::size_t cols, void* d_states, const WorkspaceView& workspace,
                       cudaStream_t stream);

//! The states of rows pieces of no elements.
template <class T>
void launch_empty_row_states(const Reduction& r, std::size_t rows, void* d_states,
                             cudaStream_t stream);

//! Folds `ranks` slots per row (rank q, row i at d_slots + (q * rows + i) * stride) in rank
//! order into `rows` results at d_out; row 0's count and agreement to d_info when not null.
template <class T>
void launch_fold(const Reduction& r, const void* d_slots, std::size_t stride, int ranks,
                 std::size_t rows, void* d_out, FoldInfo* d_info, cudaStream_t stream);

// ---- the dtype-dispatched forms (shard_state.cpp, in the core library; sharded.cpp uses them) --

//! The checks of this rank's own arguments (op, type, pointers; d_out only if writes_out),
//! for `form` ("reduce_sharded", ...) in its messages. Throws reducelab::Error.
void require_call(const Reduction& r, DType dtype, const void* d_x, const void* d_y,
                  std::size_t n, const void* d_out, bool writes_out, int device,
                  const char* form);

//! launch_shard_state for a runtime dtype.
void launch_state(const Reduction& r, DType dtype, const void* d_x, const void* d_y,
                  std::size_t n, void* d_slot, const WorkspaceView& ws, cudaStream_t stream);

//! launch_fold for a runtime dtype.
void fold(const Reduction& r, DType dtype, const void* d_slots, std::size_t stride, int ranks,
          std::size_t rows, void* d_out, FoldInfo* d_info, cudaStream_t stream);

}  // namespace reducelab::detail

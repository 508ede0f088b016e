#pragma once
//! \file multigpu.hpp
//! Reductions over an array sharded across GPUs (issue 15): every rank passes its local shard
//! and an NCCL communicator, and every rank receives the global result. Part of the optional
//! target reducelab::nccl (built when CMake finds NCCL, option REDUCELAB_WITH_NCCL); the core
//! library reducelab::reducelab never needs NCCL.
//!
//! How it works: each rank reduces its shard on its GPU with the production kernels into a
//! fixed-size partial state (the kernels' own accumulator: a sum, a NaN-propagating extremum,
//! value + index, Welford/Chan moments, the running max and sum of logsumexp, a count...) and
//! its element count; one ncclAllGather of kShardStateBytes per rank puts every rank's state on
//! every GPU; one tiny kernel folds them in rank order and writes the result. So the cost is the
//! local reduce plus one all-gather of ranks x 64 bytes, and every rank gets the same bits.
//!
//! Semantics: exactly those of reduce() (reduce.hpp) on the concatenation of the shards in rank
//! order (rank 0's elements first), with these additions:
//! - Shards may have any length, each rank its own, 0 included. argmin/argmax return the index in
//!   the concatenation: a rank's element i has the global index (elements of the ranks before
//!   it) + i. Ties, across ranks too, go to the lowest global index; NaN on any rank gives NaN,
//!   at the first NaN's global index.
//! - Result types and sizes: result_size(op, dtype), as one GPU. The same NaN rules.
//! - Empty input: only the global count matters. sum and dot of no elements anywhere give 0, the
//!   statistics their documented value (NaN mean, -inf logsumexp, true all, ...). min, max,
//!   argmin, argmax, aminmax and norm of ord +-inf of no elements anywhere are undefined, as on
//!   one GPU; since no rank knows that before the collective, the stream-ordered form then writes
//!   the segmented reduce's empty result (segmented.hpp: the identity, index -1) and the
//!   synchronous form throws reducelab::Error on every rank.
//! - Determinism: each rank's state is the deterministic result of one kernel (reduce.hpp) and
//!   the states are combined in rank order by one thread, so the same shards on the same GPUs
//!   give the same bits on every call and on every rank. With one rank the result has the bits
//!   of reduce() on the same array. The gpu_to_gpu mode (reproducible.hpp) is taken by the ops
//!   whose result does not depend on the order (order-free ops and the integer types); the
//!   fixed-order floating ops (sum, dot, mean and the statistics) throw reducelab::Error (not
//!   built yet: docs/notebook/multigpu.md says what it needs).
//! - Calls are collective: every rank of `comm` must make the same call (op, parameters, dtype,
//!   and for rows the same row count) in the same order, as every NCCL collective. A rank whose
//!   arguments are rejected (null or host pointer, invalid op) still takes part in the collective
//!   with a state marked "rejected" and then throws, so the other ranks do not hang: their
//!   result is all bits set (NaN for floating results, -1 for integers and indices), and the
//!   synchronous form throws on them too. Ranks that disagree on op or dtype get the same.
//!   Errors that leave no communicator to talk through (a null comm, one with an asynchronous
//!   error, the current device is not the communicator's) throw before any work.
//! - Streams: stream-ordered, nothing allocated on the whole-array path (the states live in the
//!   library's per-stream workspace, reduce.hpp), capturable into a CUDA graph as NCCL allows.
//!   Issue one rank's calls on one stream from one thread at a time (NCCL's rule too).
//! - Errors: reducelab::Error; NCCL failures carry the call, ncclGetErrorString and
//!   ncclGetLastError (ErrorCode::cuda_error).

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>

#include "reducelab/dtype.hpp"
#include "reducelab/error.hpp"
#include "reducelab/op.hpp"
#include "reducelab/shard.hpp"
#include "reducelab/types.hpp"

namespace reducelab {

//! The global reduction of the sharded array, all-reduce: this rank's shard is d_x[0..n) (and
//! d_y[0..n) for dot; null otherwise) on the current device, which must be the device of
//! `comm`; every rank gets result_size(r.op, dtype) bytes at d_out (device memory).
//! Stream-ordered on `stream`.
void reduce_sharded(Reduction r, DType dtype, const void* d_x, const void* d_y, std::size_t n,
                    void* d_out, ncclComm_t comm, cudaStream_t stream);

//! The same, only rank `root` receives the result (d_out may be null on the others, and is not
//! written there): the states travel by grouped ncclSend/ncclRecv to the root instead of an
//! all-gather, and only the root folds.
void reduce_sharded_root(Reduction r, DType dtype, const void* d_x, const void* d_y,
                         std::size_t n, void* d_out, int root, ncclComm_t comm,
                         cudaStream_t stream);

//! The synchronous form: writes result_size(r.op, dtype) bytes to host memory h_out after
//! synchronising `stream`. Throws (on every rank) for a globally empty min/max/argmin/argmax/
//! aminmax/norm-inf, and where a rank rejected its arguments or the ranks disagree on the call.
void reduce_sharded_to_host(Reduction r, DType dtype, const void* d_x, const void* d_y,
                            std::size_t n, void* h_out, ncclComm_t comm,
                            cudaStream_t stream = nullptr);

//! Rows sharded along their length, reduced along it (the sharded axis is the reduced one):
//! this rank holds `rows` rows of its own length `cols` (row-major and contiguous: row i is
//! d_x[i * cols, (i + 1) * cols), and d_y the same for dot), each global row is the
//! concatenation of the ranks' pieces in rank order, and every rank gets one result per row at
//! d_out[0..rows) (result_size(r.op, dtype) bytes each; argmin/argmax: the index in the global
//! row). Every rank passes the same `rows`; `cols` may differ and be 0. The per-row states of
//! all rows travel in one ncclAllGather, and one kernel folds every row. A row empty on every
//! rank gets the segmented reduce's empty result (segmented.hpp), as an empty segment does.
//! Allocates its states (ranks x rows x at most 56 bytes) stream-ordered (cudaMallocAsync).
void reduce_rows_sharded(Reduction r, DType dtype, const void* d_x, const void* d_y,
                         std::size_t rows, std::size_t cols, void* d_out, ncclComm_t comm,
                         cudaStream_t stream);

}  // namespace reducelab

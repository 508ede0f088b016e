#pragma once
//! \file shard.hpp
//! The two halves of a reduction over an array sharded across GPUs, without any transport: each
//! rank reduces its shard to a fixed-size partial state, the states travel to every rank (or to
//! one) by whatever the caller uses (NCCL: multigpu.hpp does it in one call; torch.distributed:
//! the Python package's reducelab.distributed; MPI), and a fold combines them in rank order into
//! the result reduce() would give on the concatenation of the shards. Part of the core library
//! (no NCCL needed). The semantics (NaN, empty input, global indices, ties, determinism) are
//! multigpu.hpp's; a rank whose arguments are rejected throws here before writing its state.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"

namespace reducelab {

//! Bytes of one rank's partial state of a whole-array reduction, for every op and type: what
//! each rank contributes to the all-gather (and what reduce_to_shard_state writes).
inline constexpr std::size_t kShardStateBytes = 64;

//! This rank's partial state of d_x[0..n) (d_y for dot): kShardStateBytes bytes to device
//! memory d_state (8-byte aligned). Any n, 0 included. Stream-ordered.
void reduce_to_shard_state(Reduction r, DType dtype, const void* d_x, const void* d_y,
                           std::size_t n, void* d_state, cudaStream_t stream);

//! Folds `ranks` states (d_states: ranks x kShardStateBytes bytes, rank 0 first, as
//! reduce_to_shard_state wrote them) in rank order into the result at d_out, as reduce_sharded
//! does after its all-gather. Stream-ordered.
void fold_shard_states(Reduction r, DType dtype, const void* d_states, int ranks, void* d_out,
                       cudaStream_t stream);

}  // namespace reducelab

#pragma once
// Typed launchers of the production kernels, one explicit instantiation file per family of
// types (instantiate_*.cu for the scalar reduce, instantiate_segmented_*.cu for the segmented
// one) so the build compiles them in parallel.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "reduce/workspace.hpp"
#include "reducelab/op.hpp"

namespace reducelab::detail {

//! Launches the one kernel of `op` on T. Arguments are already validated and n >= 1.
template <class T>
void launch_typed(Op op, const T* x, const T* y, std::size_t n, void* d_out,
                  const WorkspaceView& workspace, cudaStream_t stream);

//! Launches the segmented reduce of `op` on T over num_segments >= 1 fixed-size segments
//! (segmented.cuh). Arguments are already validated.
template <class T>
void launch_fixed_segments(Op op, const T* x, const T* y, std::size_t num_segments,
                           std::size_t segment_size, void* d_out, const WorkspaceView& workspace,
                           cudaStream_t stream);

//! The same over num_segments >= 1 ragged segments; Offset is std::int32_t or std::int64_t.
template <class T, class Offset>
void launch_ragged_segments(Op op, const T* x, const T* y, std::size_t num_segments,
                            const Offset* offsets, void* d_out, const WorkspaceView& workspace,
                            cudaStream_t stream);

}  // namespace reducelab::detail

#pragma once
// Typed launchers of the production kernel, one explicit instantiation file per family of
// types (instantiate_*.cu) so the build compiles them in parallel.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "reduce/workspace.hpp"
#include "reducelab/op.hpp"

namespace reducelab::detail {

//! Launches the one kernel of `op` on T. Arguments are already validated and n >= 1.
template <class T>
void launch_typed(Op op, const T* x, const T* y, std::size_t n, void* d_out,
                  const WorkspaceView& workspace, cudaStream_t stream);

}  // namespace reducelab::detail

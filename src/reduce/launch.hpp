#pragma once
// Typed launchers of the production kernels, one explicit instantiation file per family of
// types (instantiate_*.cu for the scalar reduce, instantiate_segmented_*.cu for the segmented
// one, instantiate_axis_*.cu for the strided axis kernel) so the build compiles them in parallel.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "reduce/workspace.hpp"
#include "reducelab/op.hpp"

namespace reducelab::detail {

//! Launches the one kernel of `op` on T. Arguments are already validated and n >= 1.
template <class T>
void launch_typed(const Reduction& r, const T* x, const T* y, std::size_t n, void* d_out,
                  const WorkspaceView& workspace, cudaStream_t stream);

//! Launches the segmented reduce of `op` on T over num_segments >= 1 fixed-size segments
//! (segmented.cuh): segment s is x[s x pitch, s x pitch + segment_size), its result goes to
//! d_out + s x out_stride results. Arguments are already validated.
template <class T>
void launch_fixed_segments(const Reduction& r, const T* x, const T* y, std::size_t num_segments,
                           std::size_t segment_size, std::size_t pitch, void* d_out,
                           std::size_t out_stride, const WorkspaceView& workspace,
                           cudaStream_t stream);

//! The same over num_segments >= 1 ragged segments; Offset is std::int32_t or std::int64_t.
template <class T, class Offset>
void launch_ragged_segments(const Reduction& r, const T* x, const T* y, std::size_t num_segments,
                            const Offset* offsets, void* d_out, const WorkspaceView& workspace,
                            cudaStream_t stream);

class HostTable;
struct ListShape;

//! Launches the reduce of a list of count >= 1 tensors of a one-array op on T (tensors.hpp,
//! segmented.cuh), its table built on the host (tensor_table.hpp): one result per tensor to
//! d_out, the list's total to d_total when not null.
template <class T>
void launch_tensors(const Reduction& r, HostTable& table, std::uint64_t total_count,
                    const ListShape& shape, void* d_out, void* d_total,
                    const WorkspaceView& workspace, cudaStream_t stream);

struct AxisView;

//! Launches the strided axis kernel of `op` on T over a canonical view with at least one result
//! (axis_plan.hpp, axis.cuh). Arguments are already validated.
template <class T>
void launch_axes(const Reduction& r, const T* x, const T* y, const AxisView& view, void* d_out,
                 const WorkspaceView& workspace, cudaStream_t stream);

}  // namespace reducelab::detail

// Explicit instantiations of the production launcher for the int32 types.

#include "reduce/launch.cuh"

namespace reducelab::detail {
template void launch_typed<std::int32_t>(const Reduction&, const std::int32_t*, const std::int32_t*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_typed<std::uint32_t>(const Reduction&, const std::uint32_t*, const std::uint32_t*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
}  // namespace reducelab::detail

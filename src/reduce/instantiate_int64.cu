// Explicit instantiations of the production launcher for the int64 types.

#include "reduce/launch.cuh"

namespace reducelab::detail {
template void launch_typed<std::int64_t>(const Reduction&, const std::int64_t*, const std::int64_t*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_typed<std::uint64_t>(const Reduction&, const std::uint64_t*, const std::uint64_t*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
}  // namespace reducelab::detail

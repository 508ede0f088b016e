// Explicit instantiations of the production launcher for the floating types.

#include "reduce/launch.cuh"

namespace reducelab::detail {
template void launch_typed<float>(const Reduction&, const float*, const float*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_typed<double>(const Reduction&, const double*, const double*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
}  // namespace reducelab::detail

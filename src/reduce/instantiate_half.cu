// Explicit instantiations of the production launcher for the half types.

#include "reduce/launch.cuh"

namespace reducelab::detail {
template void launch_typed<__half>(const Reduction&, const __half*, const __half*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_typed<__nv_bfloat16>(const Reduction&, const __nv_bfloat16*, const __nv_bfloat16*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
}  // namespace reducelab::detail

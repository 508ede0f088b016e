// Explicit instantiations of the sharded reduce's launchers for the floating types.

#include "multigpu/state_kernels.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_SHARDS(float)
REDUCELAB_INSTANTIATE_SHARDS(double)
}  // namespace reducelab::detail

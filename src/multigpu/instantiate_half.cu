// Explicit instantiations of the sharded reduce's launchers for the half types.

#include "multigpu/state_kernels.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_SHARDS(__half)
REDUCELAB_INSTANTIATE_SHARDS(__nv_bfloat16)
}  // namespace reducelab::detail

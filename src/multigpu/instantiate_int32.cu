// Explicit instantiations of the sharded reduce's launchers for the int32 types.

#include "multigpu/state_kernels.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_SHARDS(std::int32_t)
REDUCELAB_INSTANTIATE_SHARDS(std::uint32_t)
}  // namespace reducelab::detail

// Explicit instantiations of the sharded reduce's launchers for the int64 types.

#include "multigpu/state_kernels.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_SHARDS(std::int64_t)
REDUCELAB_INSTANTIATE_SHARDS(std::uint64_t)
}  // namespace reducelab::detail

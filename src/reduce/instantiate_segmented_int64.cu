// Explicit instantiations of the segmented launchers for the int64 types.

#include "reduce/segmented.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_SEGMENTED(std::int64_t)
REDUCELAB_INSTANTIATE_SEGMENTED(std::uint64_t)
}  // namespace reducelab::detail

// Explicit instantiations of the segmented launchers for the int32 types.

#include "reduce/segmented.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_SEGMENTED(std::int32_t)
REDUCELAB_INSTANTIATE_SEGMENTED(std::uint32_t)
}  // namespace reducelab::detail

// Explicit instantiations of the axis launcher for the int32 types.

#include "reduce/axis.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_AXES(std::int32_t)
REDUCELAB_INSTANTIATE_AXES(std::uint32_t)
}  // namespace reducelab::detail

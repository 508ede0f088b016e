// Explicit instantiations of the axis launcher for the int64 types.

#include "reduce/axis.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_AXES(std::int64_t)
REDUCELAB_INSTANTIATE_AXES(std::uint64_t)
}  // namespace reducelab::detail

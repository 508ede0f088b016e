// Explicit instantiations of the axis launcher for the floating types.

#include "reduce/axis.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_AXES(float)
REDUCELAB_INSTANTIATE_AXES(double)
}  // namespace reducelab::detail

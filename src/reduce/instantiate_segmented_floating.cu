// Explicit instantiations of the segmented launchers for the floating types.

#include "reduce/segmented.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_SEGMENTED(float)
REDUCELAB_INSTANTIATE_SEGMENTED(double)
}  // namespace reducelab::detail

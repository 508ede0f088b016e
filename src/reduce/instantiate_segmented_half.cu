// Explicit instantiations of the segmented launchers for the half types.

#include "reduce/segmented.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_SEGMENTED(__half)
REDUCELAB_INSTANTIATE_SEGMENTED(__nv_bfloat16)
}  // namespace reducelab::detail

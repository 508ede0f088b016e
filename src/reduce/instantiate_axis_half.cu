// Explicit instantiations of the axis launcher for the half types.

#include "reduce/axis.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_AXES(__half)
REDUCELAB_INSTANTIATE_AXES(__nv_bfloat16)
}  // namespace reducelab::detail

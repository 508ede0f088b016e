// The gpu_to_gpu mode over segments (reproducible_segments_launch.cuh) for f16 and bf16.

#include "reduce/reproducible_segments_launch.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_REPRO_SEGMENTS(__half)
REDUCELAB_INSTANTIATE_REPRO_SEGMENTS(__nv_bfloat16)
}  // namespace reducelab::detail

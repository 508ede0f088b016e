// The gpu_to_gpu mode over segments (reproducible_segments_launch.cuh) for f32 and f64.

#include "reduce/reproducible_segments_launch.cuh"

namespace reducelab::detail {
REDUCELAB_INSTANTIATE_REPRO_SEGMENTS(float)
REDUCELAB_INSTANTIATE_REPRO_SEGMENTS(double)
}  // namespace reducelab::detail

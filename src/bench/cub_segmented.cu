// CUB's DeviceSegmentedReduce baseline over rows and offsets (make_cub_segmented_reduce).

#include "bench/cub_baseline.cuh"

namespace reducelab::bench {

std::unique_ptr<CubSegmentedReduce> make_cub_segmented_reduce(Op op, DType dtype,
                                                              std::size_t num_segments,
                                                              std::size_t segment_size,
                                                              const std::int64_t* d_offsets) {
  using namespace cub_detail;
  return dispatch_dtype(dtype, [&](auto value) -> std::unique_ptr<CubSegmentedReduce> {
    using T = decltype(value);
    return std::make_unique<CubSegmentedImpl<T, Contiguous>>(op, num_segments, segment_size,
                                                             d_offsets);
  });
}

}  // namespace reducelab::bench

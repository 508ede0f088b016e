// CUB's DeviceSegmentedReduce through a strided iterator (make_cub_strided_reduce).

#include "bench/cub_baseline.cuh"

namespace reducelab::bench {

std::unique_ptr<CubSegmentedReduce> make_cub_strided_reduce(Op op, DType dtype,
                                                            const AxisWalk& walk,
                                                            std::size_t results) {
  using namespace cub_detail;
  return dispatch_dtype(dtype, [&](auto value) -> std::unique_ptr<CubSegmentedReduce> {
    using T = decltype(value);
    return std::make_unique<CubSegmentedImpl<T, Strided>>(
        op, results, static_cast<std::size_t>(walk.reduced_count), nullptr, Strided{walk});
  });
}

}  // namespace reducelab::bench

// CUB's DeviceReduce baseline (cub_baseline.hpp: make_cub_reduce).

#include "bench/cub_baseline.cuh"

namespace reducelab::bench {

std::unique_ptr<CubReduce> make_cub_reduce(Op op, DType dtype, std::size_t n) {
  using namespace cub_detail;
  return dispatch_dtype(dtype, [&](auto value) -> std::unique_ptr<CubReduce> {
    using T = decltype(value);
    return std::make_unique<CubReduceImpl<T>>(op, n);
  });
}

}  // namespace reducelab::bench

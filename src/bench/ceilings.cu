// The two ceilings the plots draw: the time of an empty kernel call (the launch-latency floor of
// any one-kernel reduction) and the bandwidth of a large device-to-device copy.

#include "bench/stats.hpp"
#include "bench/suite.hpp"
#include "bench/timer.hpp"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"

namespace reducelab::bench {
namespace {
__global__ void empty_kernel() {}
}  // namespace

Ceilings measure_ceilings(int reps) {
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Ceilings out;
  try {
    const auto launch = time_calls(
        [](int, cudaStream_t s) {
          empty_kernel<<<1, 32, 0, s>>>();
          REDUCELAB_CHECK_LAUNCH("empty_kernel");
        },
        5, reps, stream);
    out.launch_us = summarize(launch).median_us;
    constexpr std::size_t kBytes = std::size_t{1} << 30;  // 1 GiB each way, far beyond L2
    DeviceBuffer<unsigned char> src(kBytes);
    DeviceBuffer<unsigned char> dst(kBytes);
    REDUCELAB_CUDA_CHECK(cudaMemsetAsync(src.data(), 1, kBytes, stream));
    const auto copy = time_calls(
        [&](int, cudaStream_t s) {
          REDUCELAB_CUDA_CHECK(
              cudaMemcpyAsync(dst.data(), src.data(), kBytes, cudaMemcpyDeviceToDevice, s));
        },
        2, reps, stream);
    out.copy_gbps = gbps(2.0 * kBytes, summarize(copy).median_us);
  } catch (...) {
    (void)cudaStreamDestroy(stream);
    throw;
  }
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
  return out;
}

}  // namespace reducelab::bench

#include "bench/timer.hpp"

#include "common/cuda_check.hpp"

namespace reducelab::bench {
namespace {
struct Event {
  cudaEvent_t event = nullptr;
  Event() { REDUCELAB_CUDA_CHECK(cudaEventCreate(&event)); }
  ~Event() { (void)cudaEventDestroy(event); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};
}  // namespace

std::vector<double> time_calls(const std::function<void(int, cudaStream_t)>& call, int warmup,
                               int reps, cudaStream_t stream) {
  for (int i = 0; i < warmup; ++i) call(i, stream);
  REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  Event start;
  Event stop;
  std::vector<double> samples;
  samples.reserve(reps);
  for (int rep = 0; rep < reps; ++rep) {
    REDUCELAB_CUDA_CHECK(cudaEventRecord(start.event, stream));
    call(rep, stream);
    REDUCELAB_CUDA_CHECK(cudaEventRecord(stop.event, stream));
    REDUCELAB_CUDA_CHECK(cudaEventSynchronize(stop.event));
    float ms = 0;
    REDUCELAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event, stop.event));
    samples.push_back(static_cast<double>(ms) * 1e3);
  }
  return samples;
}

}  // namespace reducelab::bench

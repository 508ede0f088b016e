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

std::vector<double> time_calls(const TimedCall& call, int warmup, int reps, cudaStream_t stream) {
  return time_interleaved({call}, warmup, reps, stream).front();
}

std::vector<std::vector<double>> time_interleaved(const std::vector<TimedCall>& calls, int warmup,
                                                  int reps, cudaStream_t stream,
                                                  const Prepare& prepare) {
  for (const TimedCall& call : calls)
    for (int i = 0; i < warmup; ++i) call(i, stream);
  REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  Event start;
  Event stop;
  std::vector<std::vector<double>> samples(calls.size());
  for (auto& s : samples) s.reserve(reps);
  for (int rep = 0; rep < reps; ++rep) {
    for (std::size_t c = 0; c < calls.size(); ++c) {
      if (prepare) {
        prepare(stream);
        REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
      }
      REDUCELAB_CUDA_CHECK(cudaEventRecord(start.event, stream));
      calls[c](rep, stream);
      REDUCELAB_CUDA_CHECK(cudaEventRecord(stop.event, stream));
      REDUCELAB_CUDA_CHECK(cudaEventSynchronize(stop.event));
      float ms = 0;
      REDUCELAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event, stop.event));
      samples[c].push_back(static_cast<double>(ms) * 1e3);
    }
  }
  return samples;
}

}  // namespace reducelab::bench

#pragma once
// Event timing of one call as a user sees it.

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

namespace reducelab::bench {

//! Runs `call(rep, stream)` `warmup` times untimed, then `reps` times, each between two CUDA
//! events on an idle stream, synchronising after each. So each sample is one whole call: its
//! launch latency, every kernel it runs and the gaps between them. Returns microseconds.
std::vector<double> time_calls(const std::function<void(int rep, cudaStream_t stream)>& call,
                               int warmup, int reps, cudaStream_t stream);

}  // namespace reducelab::bench

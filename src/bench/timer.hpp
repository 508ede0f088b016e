#pragma once
// Event timing of one call as a user sees it.

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

namespace reducelab::bench {

using TimedCall = std::function<void(int rep, cudaStream_t stream)>;
using Prepare = std::function<void(cudaStream_t stream)>;

//! Runs `call(rep, stream)` `warmup` times untimed, then `reps` times, each between two CUDA
//! events on an idle stream, synchronising after each. So each sample is one whole call: its
//! launch latency, every kernel it runs and the gaps between them. Returns microseconds.
std::vector<double> time_calls(const TimedCall& call, int warmup, int reps, cudaStream_t stream);

//! The same for several calls taken in turn (rep 0 of each, then rep 1 of each, ...), so a drift
//! of the machine during the run falls on all of them alike. `prepare`, when set, runs before
//! each timed call and is waited for, untimed. Returns one sample list per call.
std::vector<std::vector<double>> time_interleaved(const std::vector<TimedCall>& calls, int warmup,
                                                  int reps, cudaStream_t stream,
                                                  const Prepare& prepare = {});

}  // namespace reducelab::bench

#pragma once
// The benchmark loop shared by `reducelab bench` and `reducelab sweep`: for each size, random
// inputs from a printed seed, the CPU reference, then every implementation (ladder rungs, CUB,
// reducelab) checked against the reference and, only if right, timed.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/random.hpp"
#include "bench/report.hpp"
#include "common/device_info.hpp"
#include "ladder/ladder.hpp"
#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"

namespace reducelab::bench {

struct SuiteConfig {
  Op op = Op::sum;
  DType dtype = DType::f32;
  std::vector<std::size_t> sizes{std::size_t{1} << 27};
  std::vector<const ladder::Rung*> rungs;  //!< timed only for f32 and the ladder's four ops
  bool cub = true;
  bool production = true;
  int reps = 50;
  int warmup = 5;
  bool time = true;  //!< false: run and check each implementation once, no timing (profiling)
  std::uint64_t seed = kDefaultSeed;
};

//! Called with one line of progress (the caller decides whether to show it).
using Progress = std::function<void(const std::string& line)>;

//! How the L2 is kept cold, for the results files.
std::string l2_policy_text(const DeviceInfo& device);
//! How one sample is timed, for the results files.
std::string timing_text();

//! Runs the suite on the current device. Throws reducelab::Error when a size does not fit in free
//! device memory (checked before anything is allocated) or on a CUDA failure. A wrong result is
//! not an exception: its row gets status "wrong result: ..." and no time.
std::vector<Measurement> run_suite(const SuiteConfig& config, const DeviceInfo& device,
                                   const Progress& progress);

//! Device bytes the suite needs for one size (input copies for a cold L2, workspaces).
std::size_t suite_device_bytes(const SuiteConfig& config, const DeviceInfo& device, std::size_t n);

//! Median time of an empty kernel call and GB/s of a large device-to-device copy (read + write),
//! the two ceilings drawn in the plots.
struct Ceilings {
  double launch_us = 0;
  double copy_gbps = 0;
};
Ceilings measure_ceilings(int reps);

// Pieces of run_suite that the segmented suite (segmented_suite.hpp) shares.
namespace detail {
//! Input copies to rotate through so that every timed call reads from DRAM, not L2.
std::size_t input_copies(std::size_t set_bytes, const DeviceInfo& device);
std::size_t round_up(std::size_t value, std::size_t to);
//! "1.23 GB".
std::string format_gb(double bytes);
//! Throws reducelab::Error (invalid_argument) naming `what` unless `needed` bytes are free.
void require_free_memory(std::size_t needed, const std::string& what);
//! A non-blocking stream of the current device for the lifetime of the object.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t stream = nullptr;
};
}  // namespace detail

}  // namespace reducelab::bench

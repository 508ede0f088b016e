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
  double correction = 1;  //!< var, std, var_mean, std_mean (Reduction::correction)
  double ord = 2;         //!< norm (Reduction::ord)
  Reduction reduction() const { return {op, correction, ord}; }
  DType dtype = DType::f32;
  std::vector<std::size_t> sizes{std::size_t{1} << 27};
  std::vector<const ladder::Rung*> rungs;  //!< timed only for f32 and the ladder's four ops
  bool cub = true;
  bool production = true;
  //! Also the production call in the gpu_to_gpu mode (issue 14), in a row of its own beside the
  //! default one, for the ops that have a fixed order (sum, dot, mean of the floating types).
  bool gpu_to_gpu = false;
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
//! Uploads `bytes` of `host` to d_copies, then copies them on the device to each of the
//! copies - 1 places after it, `stride_bytes` apart: the rotating inputs of a cold-L2 timing.
void upload_copies(void* d_copies, const void* host, std::size_t bytes, std::size_t stride_bytes,
                   std::size_t copies);
//! "1.23 GB".
std::string format_gb(double bytes);
//! Throws reducelab::Error (invalid_argument) naming `what` unless `needed` bytes are free.
void require_free_memory(std::size_t needed, const std::string& what);
//! One implementation on one problem, correct first: check_then_time() poisons `poison_bytes`
//! at d_out, runs `checked` once, copies `host_bytes` of d_out to `host` and asks `check` what is
//! wrong ("" when nothing is); only then, if the config times, `timed(copy, stream)` is timed with
//! the input copies taken in turn.
struct Trial {
  void* d_out = nullptr;
  std::size_t poison_bytes = 0;
  void* host = nullptr;
  std::size_t host_bytes = 0;
  std::size_t copies = 1;
  std::function<void(cudaStream_t)> checked;
  std::function<void(std::size_t copy, cudaStream_t)> timed;
  std::function<std::string()> check;
};
//! Runs `trial` and fills m's status, or its time and derived figures.
void check_then_time(const Trial& trial, const SuiteConfig& config, const DeviceInfo& device,
                     Measurement& m, cudaStream_t stream);
//! "[2/3] sum f32 N=2^27 CUB: 123.4 us" (or the row's status); `problem` is "N=2^27" or a shape.
std::string progress_line(std::size_t done, std::size_t total, const Measurement& m,
                          const std::string& problem);
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

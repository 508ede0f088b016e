#include "bench/suite.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "bench/cub_baseline.hpp"
#include "bench/random.hpp"
#include "bench/reference.hpp"
#include "bench/stats_check.hpp"
#include "bench/timer.hpp"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "reduce/reproducible.hpp"
#include "reducelab/reduce.hpp"

namespace reducelab::bench {
namespace {

constexpr std::size_t kSlotBytes = 16;   // the largest result: ArgResult<int64_t>
constexpr std::size_t kCopyAlign = 256;  // every input copy starts on the same alignment

std::size_t l2_bytes(const DeviceInfo& device) {
  return device.l2_bytes > 0 ? device.l2_bytes : std::size_t{64} << 20;
}

using detail::round_up;
using detail::Stream;

std::size_t copies_for(std::size_t set_bytes, const DeviceInfo& device) {
  return detail::input_copies(set_bytes, device);
}

struct Candidate {
  std::string impl;
  std::string kind;
  std::string change;
  // The path a user takes, with every argument check: run once and compared to the reference.
  std::function<void(const void*, const void*, void*, cudaStream_t)> checked;
  // The path that is timed (the same call, minus the ladder's host-side validation).
  std::function<void(const void*, const void*, void*, cudaStream_t)> timed;
};

std::string production_name(Op op) { return "reducelab::" + std::string(to_string(op)); }

bool ladder_applies(const SuiteConfig& config) {
  return config.dtype == DType::f32 && ladder::supports(config.op) && !config.rungs.empty();
}

std::size_t ladder_workspace_elems(const SuiteConfig& config, std::size_t n) {
  std::size_t elems = 0;
  if (ladder_applies(config))
    for (const ladder::Rung* rung : config.rungs) elems = std::max(elems, rung->workspace_elems(n));
  return elems;
}

template <class T>
std::vector<Measurement> run_size(const SuiteConfig& config, const DeviceInfo& device,
                                  std::size_t n, cudaStream_t stream, const Progress& progress) {
  const int arrays = input_arrays(config.op);
  const std::size_t set_bytes = n * sizeof(T) * arrays;
  const std::size_t copies = copies_for(set_bytes, device);
  const std::size_t stride = round_up(n * sizeof(T), kCopyAlign) / sizeof(T);

  std::vector<T> hx = random_vector<T>(n, config.seed, Distribution::uniform);
  std::vector<T> hy;
  if (arrays == 2) hy = random_vector<T>(n, config.seed + 1, Distribution::uniform);
  // The reference, worked out once before anything runs: reference() for the core ops, the
  // statistics' long-double reference for the others.
  const Reduction reduction = config.reduction();
  const bool statistic = is_statistic(config.op);
  Reference<T> ref;
  std::optional<StatisticCheck<T>> statistic_check;
  if (statistic) {
    statistic_check.emplace(reduction, hx.data(), n);
  } else {
    ref = reference(config.op, hx.data(), hy.empty() ? nullptr : hy.data(), n);
  }
  auto check = [&](const void* raw) {
    return statistic ? (*statistic_check)(raw) : check_result(ref, raw);
  };

  DeviceBuffer<T> dx(stride * copies);
  DeviceBuffer<T> dy(arrays == 2 ? stride * copies : 0);
  detail::upload_copies(dx.data(), hx.data(), n * sizeof(T), stride * sizeof(T), copies);
  if (arrays == 2)
    detail::upload_copies(dy.data(), hy.data(), n * sizeof(T), stride * sizeof(T), copies);
  DeviceBuffer<unsigned char> slot(kSlotBytes);
  DeviceBuffer<float> ladder_workspace(ladder_workspace_elems(config, n));

  std::vector<Candidate> candidates;
  if (ladder_applies(config)) {
    for (const ladder::Rung* rung : config.rungs) {
      auto problem = [op = config.op, n, ws = ladder_workspace.data()](const void* x, const void* y,
                                                                       void* out) {
        return ladder::Problem{static_cast<const float*>(x), static_cast<const float*>(y), n, op,
                               static_cast<float*>(out), ws};
      };
      candidates.push_back(
          {rung->id, "ladder", rung->change,
           [rung, problem](const void* x, const void* y, void* out, cudaStream_t s) {
             ladder::run(*rung, problem(x, y, out), s);
           },
           [rung, problem](const void* x, const void* y, void* out, cudaStream_t s) {
             rung->launch(problem(x, y, out), s);
           }});
    }
  }
  std::shared_ptr<CubReduce> cub;
  if (config.cub) {
    if (statistic) {
      cub = make_cub_statistic(reduction, config.dtype, n);
    } else {
      cub = make_cub_reduce(config.op, config.dtype, n);
    }
  }
  if (cub) {
    auto call = [cub](const void* x, const void* y, void* out, cudaStream_t s) {
      cub->run(x, y, out, s);
    };
    candidates.push_back({"CUB", "cub", cub->call(), call, call});
  }
#if REDUCELAB_HAVE_CCCL_FIXED
  // CUB's own gpu_to_gpu (a newer CCCL's, REDUCELAB_CCCL_INCLUDE) beside ours, where it has one.
  if (config.cub && config.gpu_to_gpu && cub_gpu_to_gpu_supports(config.op, config.dtype)) {
    std::shared_ptr<CubReduce> fixed = make_cub_gpu_to_gpu_sum(config.dtype, n);
    auto call = [fixed](const void* x, const void* y, void* out, cudaStream_t s) {
      fixed->run(x, y, out, s);
    };
    candidates.push_back({cub_gpu_to_gpu_impl(), "cub", fixed->call(), call, call});
  }
#endif
  if (config.production) {
    // The runtime-typed entry, the one every binding calls.
    auto call = [reduction, dtype = config.dtype, n](const void* x, const void* y, void* out,
                                                     cudaStream_t s) {
      reducelab::reduce(reduction, dtype, x, input_arrays(reduction.op) == 2 ? y : nullptr, n, out,
                        s);
    };
    candidates.push_back({"reducelab", "production", production_name(config.op), call, call});
  }
  // Every op and type with a fixed-order kernel (sum, dot, mean, var, std, var_mean, std_mean,
  // logsumexp, norm of ord 1 and 2 of the floating types); the order-free ones run the default
  // kernels in both modes, so a second row would measure the same kernel twice.
  const bool fixed_order = reducelab::detail::has_fixed_order(reduction, config.dtype) &&
                           !reducelab::detail::order_free(reduction, config.dtype);
  if (config.gpu_to_gpu && fixed_order) {
    // The same entry in the gpu_to_gpu mode: its cost is this row over the one above.
    auto call = [reduction = reduction.reproducible(), dtype = config.dtype, n](
                    const void* x, const void* y, void* out, cudaStream_t s) {
      reducelab::reduce(reduction, dtype, x, input_arrays(reduction.op) == 2 ? y : nullptr, n, out,
                        s);
    };
    candidates.push_back({"reducelab gpu_to_gpu", "production", production_name(config.op), call,
                          call});
  }

  std::vector<Measurement> rows;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    Measurement m;
    m.impl = c.impl;
    m.kind = c.kind;
    m.change = c.change;
    m.op = std::string(to_string(config.op));
    m.dtype = std::string(to_string(config.dtype));
    m.n = n;
    m.bytes = static_cast<double>(set_bytes);

    // Correct first: poison the result slot, run once, compare with the reference.
    unsigned char host_slot[kSlotBytes];
    detail::Trial trial;
    trial.d_out = slot.data();
    trial.poison_bytes = kSlotBytes;
    trial.host = host_slot;
    trial.host_bytes = kSlotBytes;
    trial.copies = copies;
    trial.checked = [&](cudaStream_t s) { c.checked(dx.data(), dy.data(), slot.data(), s); };
    trial.timed = [&](std::size_t k, cudaStream_t s) {
      c.timed(dx.data() + k * stride, arrays == 2 ? dy.data() + k * stride : nullptr, slot.data(),
              s);
    };
    trial.check = [&] { return check(host_slot); };
    detail::check_then_time(trial, config, device, m, stream);
    rows.push_back(m);
    if (progress)
      progress(detail::progress_line(i + 1, candidates.size(), m, "N=" + format_count(n)));
  }
  return rows;
}

}  // namespace

namespace detail {

std::size_t input_copies(std::size_t set_bytes, const DeviceInfo& device) {
  const std::size_t l2 = l2_bytes(device);
  if (set_bytes >= 2 * l2) return 1;
  return (3 * l2 + set_bytes - 1) / std::max<std::size_t>(set_bytes, 1);
}

std::size_t round_up(std::size_t value, std::size_t to) { return (value + to - 1) / to * to; }

void upload_copies(void* d_copies, const void* host, std::size_t bytes, std::size_t stride_bytes,
                   std::size_t copies) {
  auto* base = static_cast<unsigned char*>(d_copies);
  REDUCELAB_CUDA_CHECK(cudaMemcpy(base, host, bytes, cudaMemcpyHostToDevice));
  for (std::size_t k = 1; k < copies; ++k)
    REDUCELAB_CUDA_CHECK(
        cudaMemcpy(base + k * stride_bytes, base, bytes, cudaMemcpyDeviceToDevice));
}

std::string format_gb(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2f GB", bytes / 1e9);
  return buffer;
}

void require_free_memory(std::size_t needed, const std::string& what) {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  REDUCELAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (needed > free_bytes)
    throw Error(ErrorCode::invalid_argument, what + " needs " + format_gb(needed) +
                                                 " of device memory but only " +
                                                 format_gb(free_bytes) + " are free");
}

void check_then_time(const Trial& trial, const SuiteConfig& config, const DeviceInfo& device,
                     Measurement& m, cudaStream_t stream) {
  REDUCELAB_CUDA_CHECK(cudaMemsetAsync(trial.d_out, 0xA5, trial.poison_bytes, stream));
  trial.checked(stream);
  if (trial.host_bytes > 0)
    REDUCELAB_CUDA_CHECK(cudaMemcpyAsync(trial.host, trial.d_out, trial.host_bytes,
                                         cudaMemcpyDeviceToHost, stream));
  REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::string why = trial.check();
  if (!why.empty()) {
    m.status = "wrong result: " + why;
    return;
  }
  if (!config.time) return;
  const auto samples = time_calls(
      [&](int rep, cudaStream_t s) { trial.timed(static_cast<std::size_t>(rep) % trial.copies, s); },
      config.warmup, config.reps, stream);
  m.time = summarize(samples);
  finish(m, device.peak_gbps);
}

std::string progress_line(std::size_t done, std::size_t total, const Measurement& m,
                          const std::string& problem) {
  return "[" + std::to_string(done) + "/" + std::to_string(total) + "] " + m.op + " " + m.dtype +
         " " + problem + " " + m.impl + ": " +
         (m.status == "ok" ? format_time(m.time.median_us) : m.status);
}

Stream::Stream() { REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
Stream::~Stream() { (void)cudaStreamDestroy(stream); }

}  // namespace detail

std::string l2_policy_text(const DeviceInfo& device) {
  const double l2_mb = static_cast<double>(l2_bytes(device)) / 1e6;
  char buffer[256];
  std::snprintf(buffer, sizeof(buffer),
                "inputs under 2x L2 (%.0f MB) rotate among copies spanning >= 3x L2, one copy per "
                "call; larger inputs are one copy, read once per call",
                2 * l2_mb);
  return buffer;
}

std::string timing_text() {
  return "CUDA events around one call on an idle stream, synchronised after each; median of the "
         "samples after warm-up calls";
}

std::size_t suite_device_bytes(const SuiteConfig& config, const DeviceInfo& device,
                               std::size_t n) {
  const std::size_t element = size_of(config.dtype);
  const int arrays = input_arrays(config.op);
  const std::size_t copies = copies_for(n * element * arrays, device);
  const std::size_t inputs = round_up(n * element, kCopyAlign) * copies * arrays;
  return inputs + ladder_workspace_elems(config, n) * sizeof(float) + (std::size_t{64} << 20);
}

std::vector<Measurement> run_suite(const SuiteConfig& config, const DeviceInfo& device,
                                   const Progress& progress) {
  REDUCELAB_CUDA_CHECK(cudaSetDevice(device.ordinal));
  for (std::size_t n : config.sizes) {
    if (n == 0) throw Error(ErrorCode::invalid_argument, "benchmark sizes must be >= 1");
    detail::require_free_memory(suite_device_bytes(config, device, n),
                                "N = " + format_count(n) + " " +
                                    std::string(to_string(config.dtype)) + " " +
                                    std::string(to_string(config.op)));
  }
  Stream stream;
  std::vector<Measurement> rows;
  for (std::size_t n : config.sizes) {
    auto part = dispatch_dtype(config.dtype, [&](auto value) {
      using T = decltype(value);
      return run_size<T>(config, device, n, stream.stream, progress);
    });
    rows.insert(rows.end(), part.begin(), part.end());
  }
  return rows;
}

}  // namespace reducelab::bench

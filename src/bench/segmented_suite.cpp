#include "bench/segmented_suite.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "bench/cub_baseline.hpp"
#include "bench/random.hpp"
#include "bench/reference.hpp"
#include "bench/timer.hpp"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "reducelab/error.hpp"
#include "reducelab/segmented.hpp"
#include "reducelab/types.hpp"

namespace reducelab::bench {
namespace {

constexpr std::size_t kSlotBytes = 16;   // the largest result: ArgResult<T>
constexpr std::size_t kCopyAlign = 256;  // every input copy starts on the same alignment

struct SegmentedCandidate {
  std::string impl;
  std::string kind;
  std::string change;
  std::size_t result_bytes = 0;  // per segment, in the candidate's own layout
  bool check_empty = true;       // CUB's empty-segment results follow CUB's conventions
  std::function<void(const void*, const void*, void*, cudaStream_t)> call;
  std::function<void(const unsigned char*, std::size_t, unsigned char*)> to_slot;
};

// The CPU reference of every segment, segments shared among threads in turn. An empty segment's
// extremum is the identity reduce_segments documents (its index stays -1).
template <class T>
std::vector<Reference<T>> segment_references(Op op, const T* x, const T* y,
                                             const std::vector<std::int64_t>& offsets) {
  const std::size_t count = offsets.size() - 1;
  std::vector<Reference<T>> refs(count);
  auto work = [&](std::size_t first, std::size_t step) {
    for (std::size_t s = first; s < count; s += step) {
      const std::size_t begin = static_cast<std::size_t>(offsets[s]);
      const std::size_t length = static_cast<std::size_t>(offsets[s + 1] - offsets[s]);
      refs[s] = reference(op, x + begin, y == nullptr ? nullptr : y + begin, length);
      if (length == 0 && op != Op::sum && op != Op::dot) refs[s].extremum = empty_extremum<T>(op);
    }
  };
  const std::size_t threads = std::min<std::size_t>(
      std::max<std::size_t>(count, 1), std::max(1u, std::min(16u, std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t, threads);
  work(0, threads);
  for (std::thread& thread : pool) thread.join();
  return refs;
}

// "" when every segment matches its reference, else how many do not and the first one's detail.
template <class T>
std::string check_segments(const std::vector<Reference<T>>& refs,
                           const std::vector<unsigned char>& results,
                           const SegmentedCandidate& c) {
  std::size_t wrong = 0;
  std::string first;
  for (std::size_t s = 0; s < refs.size(); ++s) {
    if (refs[s].n == 0 && !c.check_empty) continue;
    unsigned char slot[kSlotBytes] = {};
    c.to_slot(results.data(), s, slot);
    std::string why = check_result(refs[s], slot);
    if (why.empty()) continue;
    if (wrong++ == 0) first = "segment " + std::to_string(s) + " (" +
                              std::to_string(refs[s].n) + " elements): " + why;
  }
  if (wrong == 0) return "";
  return std::to_string(wrong) + " of " + std::to_string(refs.size()) + " segments, " + first;
}

std::size_t largest_segment(const std::vector<std::int64_t>& offsets) {
  std::int64_t largest = 0;
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s)
    largest = std::max(largest, offsets[s + 1] - offsets[s]);
  return static_cast<std::size_t>(largest);
}

template <class T>
std::vector<Measurement> run_shape(const SuiteConfig& config, const SegmentSpec& shape,
                                   const std::vector<std::int64_t>& offsets,
                                   const DeviceInfo& device, cudaStream_t stream,
                                   const Progress& progress) {
  const int arrays = input_arrays(config.op);
  const std::size_t count = shape.count;
  const std::size_t n = static_cast<std::size_t>(offsets.back());
  const std::size_t copies = detail::input_copies(n * sizeof(T) * arrays, device);
  const std::size_t stride = detail::round_up(std::max<std::size_t>(n, 1) * sizeof(T), kCopyAlign) / sizeof(T);
  const std::size_t result_size = reducelab::result_size(config.op, config.dtype);

  std::vector<T> hx = random_vector<T>(n, config.seed, Distribution::uniform);
  std::vector<T> hy;
  if (arrays == 2) hy = random_vector<T>(n, config.seed + 1, Distribution::uniform);
  const std::vector<Reference<T>> refs =
      segment_references(config.op, hx.data(), hy.empty() ? nullptr : hy.data(), offsets);

  DeviceBuffer<T> dx(stride * copies);
  DeviceBuffer<T> dy(arrays == 2 ? stride * copies : 0);
  detail::upload_copies(dx.data(), hx.data(), n * sizeof(T), stride * sizeof(T), copies);
  if (arrays == 2)
    detail::upload_copies(dy.data(), hy.data(), n * sizeof(T), stride * sizeof(T), copies);
  DeviceBuffer<std::int64_t> d_offsets(shape.ragged() ? offsets.size() : 0);
  if (shape.ragged())
    REDUCELAB_CUDA_CHECK(cudaMemcpy(d_offsets.data(), offsets.data(),
                                    offsets.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  DeviceBuffer<unsigned char> d_results(std::max<std::size_t>(count, 1) * kSlotBytes);

  std::vector<SegmentedCandidate> candidates;
  std::shared_ptr<CubSegmentedReduce> cub;
  // CUB's ArgMin/ArgMax give int indices; its other entries take the int64 offsets.
  const bool cub_fits = !(config.op == Op::argmin || config.op == Op::argmax) ||
                        largest_segment(offsets) <= static_cast<std::size_t>(INT_MAX);
  if (config.cub && cub_fits) {
    cub = make_cub_segmented_reduce(config.op, config.dtype, count, shape.size,
                                    shape.ragged() ? d_offsets.data() : nullptr);
    candidates.push_back(
        {"CUB", "cub", cub->call(), cub->result_bytes(), false,
         [cub](const void* x, const void* y, void* out, cudaStream_t s) { cub->run(x, y, out, s); },
         [cub](const unsigned char* results, std::size_t s, unsigned char* slot) {
           cub->to_slot(results, s, slot);
         }});
  }
  if (config.production) {
    const Op op = config.op;
    const DType dtype = config.dtype;
    const std::size_t size = shape.size;
    const std::int64_t* offsets_ptr = shape.ragged() ? d_offsets.data() : nullptr;
    candidates.push_back(
        {"reducelab", "production",
         "reducelab::reduce_segments (" + std::string(shape.ragged() ? "int64 offsets" : "fixed size") + ")",
         result_size, true,
         [=](const void* x, const void* y, void* out, cudaStream_t s) {
           const void* second = input_arrays(op) == 2 ? y : nullptr;
           if (offsets_ptr != nullptr) {
             reducelab::reduce_segments(op, dtype, x, second, count, offsets_ptr, out, s);
           } else {
             reducelab::reduce_segments(op, dtype, x, second, count, size, out, s);
           }
         },
         [result_size](const unsigned char* results, std::size_t s, unsigned char* slot) {
           std::memcpy(slot, results + s * result_size, result_size);
         }});
  }

  auto row = [&](const std::string& impl, const std::string& kind, const std::string& change) {
    Measurement m;
    m.impl = impl;
    m.kind = kind;
    m.change = change;
    m.op = std::string(to_string(config.op));
    m.dtype = std::string(to_string(config.dtype));
    m.n = n;
    m.shape = shape.text();
    // Read: every input element once and, for ragged segments, the offsets; written: the results.
    m.bytes = static_cast<double>(n * sizeof(T) * arrays) +
              (shape.ragged() ? static_cast<double>(offsets.size() * sizeof(std::int64_t)) : 0.0) +
              static_cast<double>(count * result_size);
    return m;
  };
  std::vector<Measurement> rows;
  if (config.cub && !cub_fits) {
    Measurement m = row("CUB", "cub", "cub::DeviceSegmentedReduce::" +
                                          std::string(config.op == Op::argmin ? "ArgMin" : "ArgMax"));
    m.status = "not run: CUB's segmented " + m.op + " gives int indices and a segment exceeds 2^31 - 1";
    rows.push_back(m);
  }
  std::vector<unsigned char> host_results;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const SegmentedCandidate& c = candidates[i];
    Measurement m = row(c.impl, c.kind, c.change);

    // Correct first: poison the results, run once, compare every segment with its reference.
    host_results.assign(count * c.result_bytes, 0);
    detail::Trial trial;
    trial.d_out = d_results.data();
    trial.poison_bytes = d_results.size();
    trial.host = host_results.data();
    trial.host_bytes = host_results.size();
    trial.copies = copies;
    trial.checked = [&](cudaStream_t s) { c.call(dx.data(), dy.data(), d_results.data(), s); };
    trial.timed = [&](std::size_t k, cudaStream_t s) {
      c.call(dx.data() + k * stride, arrays == 2 ? dy.data() + k * stride : nullptr,
             d_results.data(), s);
    };
    trial.check = [&] { return check_segments(refs, host_results, c); };
    detail::check_then_time(trial, config, device, m, stream);
    rows.push_back(m);
    if (progress) progress(detail::progress_line(i + 1, candidates.size(), m, m.shape));
  }
  return rows;
}

}  // namespace

std::vector<Measurement> run_segmented_suite(const SuiteConfig& config, const SegmentSpec& shape,
                                             const DeviceInfo& device, const Progress& progress) {
  REDUCELAB_CUDA_CHECK(cudaSetDevice(device.ordinal));
  const std::vector<std::int64_t> offsets = segment_offsets(shape);
  const std::size_t n = static_cast<std::size_t>(offsets.back());
  const std::size_t element = size_of(config.dtype);
  const int arrays = input_arrays(config.op);
  const std::size_t copies = detail::input_copies(n * element * arrays, device);
  const std::size_t needed =
      detail::round_up(std::max<std::size_t>(n, 1) * element, kCopyAlign) * copies * arrays +
      offsets.size() * sizeof(std::int64_t) + std::max<std::size_t>(shape.count, 1) * kSlotBytes +
      (std::size_t{64} << 20);
  detail::require_free_memory(needed, "segments " + shape.text() + " " +
                                          std::string(to_string(config.dtype)) + " " +
                                          std::string(to_string(config.op)));
  detail::Stream stream;
  return dispatch_dtype(config.dtype, [&](auto value) {
    using T = decltype(value);
    return run_shape<T>(config, shape, offsets, device, stream.stream, progress);
  });
}

}  // namespace reducelab::bench

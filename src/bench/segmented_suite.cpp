#include "bench/segmented_suite.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "bench/axis_reference.hpp"
#include "bench/cub_baseline.hpp"
#include "bench/random.hpp"
#include "bench/reference.hpp"
#include "bench/stats_check.hpp"
#include "bench/timer.hpp"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "reduce/reproducible.hpp"
#include "reducelab/axis.hpp"
#include "reducelab/error.hpp"
#include "reducelab/segmented.hpp"
#include "reducelab/tensors.hpp"
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
  bool with_total = false;  // a list's total follows the segments' results (checked last)
};

// Calls work(s) for every segment s in [0, count), segments shared among up to 16 threads in turn.
template <class Work>
void for_each_segment(std::size_t count, Work work) {
  const std::size_t threads = std::min<std::size_t>(
      std::max<std::size_t>(count, 1), std::max(1u, std::min(16u, std::thread::hardware_concurrency())));
  auto run = [&](std::size_t first) {
    for (std::size_t s = first; s < count; s += threads) work(s);
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(run, t);
  run(0);
  for (std::thread& thread : pool) thread.join();
}

// The CPU reference of every segment. An empty segment's extremum is the identity
// reduce_segments documents (its index stays -1).
template <class T>
std::vector<Reference<T>> segment_references(Op op, const T* x, const T* y,
                                             const std::vector<std::int64_t>& offsets) {
  std::vector<Reference<T>> refs(offsets.size() - 1);
  for_each_segment(refs.size(), [&](std::size_t s) {
    const std::size_t begin = static_cast<std::size_t>(offsets[s]);
    const std::size_t length = static_cast<std::size_t>(offsets[s + 1] - offsets[s]);
    refs[s] = reference(op, x + begin, y == nullptr ? nullptr : y + begin, length);
    if (length == 0 && op != Op::sum && op != Op::dot) refs[s].extremum = empty_extremum<T>(op);
  });
  return refs;
}

// What every segment's result must be: the core ops' References, or a statistic's checks.
template <class T>
struct SegmentChecks {
  std::vector<Reference<T>> refs;                         // core ops
  std::vector<std::optional<StatisticCheck<T>>> checks;   // statistics
  std::vector<std::size_t> lengths;
  bool has_total = false;  // the last check is a list's total over every segment

  std::size_t count() const { return lengths.size(); }
  std::string operator()(std::size_t s, const unsigned char* slot) const {
    return checks.empty() ? check_result(refs[s], slot) : (*checks[s])(slot);
  }
};

// The checks of a statistic r over the segments of `offsets`.
template <class T>
SegmentChecks<T> statistic_checks(const Reduction& r, const T* x,
                                  const std::vector<std::int64_t>& offsets) {
  SegmentChecks<T> out;
  const std::size_t count = offsets.size() - 1;
  out.checks.resize(count);
  out.lengths.resize(count);
  for_each_segment(count, [&](std::size_t s) {
    out.lengths[s] = static_cast<std::size_t>(offsets[s + 1] - offsets[s]);
    out.checks[s].emplace(r, x + static_cast<std::size_t>(offsets[s]), out.lengths[s], true);
  });
  return out;
}

template <class T>
SegmentChecks<T> core_checks(std::vector<Reference<T>> refs) {
  SegmentChecks<T> out;
  for (const Reference<T>& r : refs) out.lengths.push_back(r.n);
  out.refs = std::move(refs);
  return out;
}

// "" when every segment matches its reference, else how many do not and the first one's detail.
template <class T>
std::string check_segments(const SegmentChecks<T>& checks,
                           const std::vector<unsigned char>& results,
                           const SegmentedCandidate& c) {
  std::size_t wrong = 0;
  std::string first;
  const std::size_t count = checks.count() - (checks.has_total && !c.with_total ? 1 : 0);
  for (std::size_t s = 0; s < count; ++s) {
    if (checks.lengths[s] == 0 && !c.check_empty) continue;
    unsigned char slot[kSlotBytes] = {};
    c.to_slot(results.data(), s, slot);
    std::string why = checks(s, slot);
    if (why.empty()) continue;
    const bool total = checks.has_total && s + 1 == checks.count();
    if (wrong++ == 0)
      first = (total ? std::string("the total") : "segment " + std::to_string(s)) + " (" +
              std::to_string(checks.lengths[s]) + " elements): " + why;
  }
  if (wrong == 0) return "";
  return std::to_string(wrong) + " of " + std::to_string(count) + " results, " + first;
}

std::size_t largest_segment(const std::vector<std::int64_t>& offsets) {
  std::int64_t largest = 0;
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s)
    largest = std::max(largest, offsets[s + 1] - offsets[s]);
  return static_cast<std::size_t>(largest);
}

// The random inputs of one problem on the host, and the copies on the device that the timed
// calls rotate through (a cold L2).
template <class T>
struct Inputs {
  Inputs(const SuiteConfig& config, std::size_t n, const DeviceInfo& device)
      : arrays(input_arrays(config.op)),
        copies(detail::input_copies(n * sizeof(T) * arrays, device)),
        stride(detail::round_up(std::max<std::size_t>(n, 1) * sizeof(T), kCopyAlign) / sizeof(T)),
        hx(random_vector<T>(n, config.seed, Distribution::uniform)),
        dx(stride * copies),
        dy(arrays == 2 ? stride * copies : 0) {
    if (arrays == 2) hy = random_vector<T>(n, config.seed + 1, Distribution::uniform);
    detail::upload_copies(dx.data(), hx.data(), n * sizeof(T), stride * sizeof(T), copies);
    if (arrays == 2)
      detail::upload_copies(dy.data(), hy.data(), n * sizeof(T), stride * sizeof(T), copies);
  }
  const T* host_y() const { return hy.empty() ? nullptr : hy.data(); }

  int arrays;
  std::size_t copies;
  std::size_t stride;  // elements between copies
  std::vector<T> hx;
  std::vector<T> hy;
  DeviceBuffer<T> dx;
  DeviceBuffer<T> dy;
};

// Throws unless the inputs, their copies, `extra` bytes and the results fit in free memory.
void require_memory(const SuiteConfig& config, std::size_t n, std::size_t results,
                    std::size_t extra, const DeviceInfo& device, const std::string& what) {
  const std::size_t element = size_of(config.dtype);
  const int arrays = input_arrays(config.op);
  const std::size_t copies = detail::input_copies(n * element * arrays, device);
  const std::size_t needed =
      detail::round_up(std::max<std::size_t>(n, 1) * element, kCopyAlign) * copies * arrays +
      extra + std::max<std::size_t>(results, 1) * kSlotBytes + (std::size_t{64} << 20);
  detail::require_free_memory(needed, what + " " + std::string(to_string(config.dtype)) + " " +
                                          std::string(to_string(config.op)));
}

// A CUB candidate named `impl`, or (in `rows`) why it is not run: CUB's segmented ArgMin/ArgMax
// give int indices, and its fixed-size overloads (`fixed`) take an int segment size.
void add_cub(const SuiteConfig& config, std::size_t largest, const Measurement& row,
             const std::function<std::shared_ptr<CubSegmentedReduce>()>& make,
             std::vector<SegmentedCandidate>& candidates, std::vector<Measurement>& rows,
             const std::string& impl = "CUB", bool fixed = false) {
  if (!config.cub) return;
  const bool arg = config.op == Op::argmin || config.op == Op::argmax;
  if ((arg || fixed) && largest > static_cast<std::size_t>(INT_MAX)) {
    Measurement m = row;
    m.impl = impl;
    m.kind = "cub";
    if (fixed) {
      m.change = "cub::DeviceSegmentedReduce (fixed size)";
      m.status = "not run: CUB's fixed-size overloads take an int segment size and a segment "
                 "exceeds 2^31 - 1";
    } else {
      m.change = "cub::DeviceSegmentedReduce::" +
                 std::string(config.op == Op::argmin ? "ArgMin" : "ArgMax");
      m.status =
          "not run: CUB's segmented " + m.op + " gives int indices and a segment exceeds 2^31 - 1";
    }
    rows.push_back(m);
    return;
  }
  std::shared_ptr<CubSegmentedReduce> cub = make();
  candidates.push_back(
      {impl, "cub", cub->call(), cub->result_bytes(), false,
       [cub](const void* x, const void* y, void* out, cudaStream_t s) { cub->run(x, y, out, s); },
       [cub](const unsigned char* results, std::size_t s, unsigned char* slot) {
         cub->to_slot(results, s, slot);
       }});
}

using Call = std::function<void(const void*, const void*, void*, cudaStream_t)>;

// reducelab's candidate: `call` gets y only for an op that reads it; results in its own layout.
SegmentedCandidate production(const SuiteConfig& config, std::string change, Call call) {
  const std::size_t result_size = reducelab::result_size(config.op, config.dtype);
  const bool reads_y = input_arrays(config.op) == 2;
  return {"reducelab", "production", std::move(change), result_size, true,
          [call, reads_y](const void* x, const void* y, void* out, cudaStream_t s) {
            call(x, reads_y ? y : nullptr, out, s);
          },
          [result_size](const unsigned char* results, std::size_t s, unsigned char* slot) {
            std::memcpy(slot, results + s * result_size, result_size);
          }};
}

// reducelab::reduce_axes over the contiguous view of `shape`.
SegmentedCandidate reduce_axes_candidate(const SuiteConfig& config, const AxisShape& shape,
                                         const Reduction& op) {
  const DType dtype = config.dtype;
  const Layout layout = shape.layout();
  const AxisMask mask = shape.mask;
  return production(config, "reducelab::reduce_axes",
                    [=](const void* x, const void* y, void* out, cudaStream_t s) {
                      reducelab::reduce_axes(op, dtype, x, y, layout, mask, out, nullptr, s);
                    });
}

// The row every candidate's measurement starts from: the problem, and its bytes (every input
// element read once, `extra` bytes read besides, every result written).
Measurement problem_row(const SuiteConfig& config, std::size_t n, std::size_t results,
                        double extra) {
  Measurement m;
  m.op = std::string(to_string(config.op));
  m.dtype = std::string(to_string(config.dtype));
  m.n = n;
  m.kept = results;
  m.bytes = static_cast<double>(n * size_of(config.dtype) * input_arrays(config.op)) + extra +
            static_cast<double>(results * reducelab::result_size(config.op, config.dtype));
  return m;
}

// Each candidate correct first: the results poisoned, one run, every result compared with its
// reference; then the right ones timed. Rows are appended to `rows`.
template <class T>
void check_then_time_all(const SuiteConfig& config, const Inputs<T>& in,
                         const SegmentChecks<T>& refs,
                         const std::vector<SegmentedCandidate>& candidates, const Measurement& row,
                         const DeviceInfo& device, cudaStream_t stream, const Progress& progress,
                         std::vector<Measurement>& rows) {
  const std::size_t count = refs.count();
  DeviceBuffer<unsigned char> d_results(std::max<std::size_t>(count, 1) * kSlotBytes);
  std::vector<unsigned char> host_results;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const SegmentedCandidate& c = candidates[i];
    Measurement m = row;
    m.impl = c.impl;
    m.kind = c.kind;
    m.change = c.change;
    host_results.assign(count * c.result_bytes, 0);
    detail::Trial trial;
    trial.d_out = d_results.data();
    trial.poison_bytes = d_results.size();
    trial.host = host_results.data();
    trial.host_bytes = host_results.size();
    trial.copies = in.copies;
    trial.checked = [&](cudaStream_t s) {
      c.call(in.dx.data(), in.dy.data(), d_results.data(), s);
    };
    trial.timed = [&](std::size_t k, cudaStream_t s) {
      c.call(in.dx.data() + k * in.stride, in.arrays == 2 ? in.dy.data() + k * in.stride : nullptr,
             d_results.data(), s);
    };
    trial.check = [&] { return check_segments(refs, host_results, c); };
    detail::check_then_time(trial, config, device, m, stream);
    rows.push_back(m);
    const std::string problem = m.axes.empty() ? m.shape : m.shape + " axes " + m.axes;
    if (progress) progress(detail::progress_line(i + 1, candidates.size(), m, problem));
  }
}

// Segments of `shape`; reducelab's row calls reduce_axes over `axes` when given (the same rows
// as a row-major array), else reduce_segments.
template <class T>
std::vector<Measurement> run_shape(const SuiteConfig& config, const SegmentSpec& shape,
                                   const std::vector<std::int64_t>& offsets,
                                   const AxisShape* axes, const DeviceInfo& device,
                                   cudaStream_t stream, const Progress& progress,
                                   bool tensors = false) {
  const std::size_t count = shape.count;
  const std::size_t n = static_cast<std::size_t>(offsets.back());
  const Inputs<T> in(config, n, device);
  const bool statistic = is_statistic(config.op);
  auto checks_of = [&](const std::vector<std::int64_t>& at) {
    return statistic
               ? statistic_checks(config.reduction(), in.hx.data(), at)
               : core_checks(segment_references(config.op, in.hx.data(), in.host_y(), at));
  };
  SegmentChecks<T> refs = checks_of(offsets);
  if (tensors) {  // a list's checks end with its total: the op over the whole concatenation
    SegmentChecks<T> total = checks_of({0, offsets.back()});
    refs.lengths.push_back(total.lengths[0]);
    if (statistic) {
      refs.checks.push_back(std::move(total.checks[0]));
    } else {
      refs.refs.push_back(std::move(total.refs[0]));
    }
    refs.has_total = true;
  }
  // A list's lengths also go to reduce_segments as ragged offsets, fixed-size ones included: the
  // same kernels as the list, which reads a table of pointers instead.
  const bool with_offsets = shape.ragged() || tensors;
  DeviceBuffer<std::int64_t> d_offsets(with_offsets ? offsets.size() : 0);
  if (with_offsets)
    REDUCELAB_CUDA_CHECK(cudaMemcpy(d_offsets.data(), offsets.data(),
                                    offsets.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  const std::int64_t* offsets_ptr = shape.ragged() ? d_offsets.data() : nullptr;
  const std::int64_t* list_offsets = with_offsets ? d_offsets.data() : nullptr;

  // Read besides the inputs: the offsets of ragged segments.
  Measurement row = problem_row(
      config, n, count,
      shape.ragged() ? static_cast<double>(offsets.size() * sizeof(std::int64_t)) : 0.0);
  row.shape = axes != nullptr ? axes->text() : tensors ? "tensors " + shape.text() : shape.text();
  row.axes = axes != nullptr ? axes->axes_text() : "";
  row.reduced = shape.ragged() ? 0 : shape.size;

  std::vector<SegmentedCandidate> candidates;
  std::vector<Measurement> rows;
  // CUB's segmented reduce has no statistics: their rows compare with reducelab's own sum.
  if (!statistic)
    add_cub(config, largest_segment(offsets), row,
            [&] {
              return make_cub_segmented_reduce(config.op, config.dtype, count, shape.size,
                                               offsets_ptr);
            },
            candidates, rows);
#if REDUCELAB_HAVE_CCCL_FIXED
  // Fixed rows again through a newer CCCL's fixed-size overloads (REDUCELAB_CCCL_INCLUDE), after
  // the toolkit's CUB, which stays the table's "time / CUB" reference.
  if (!shape.ragged() && !statistic) {
    add_cub(config, shape.size, row,
            [&] {
              return make_cub_fixed_segmented_reduce(config.op, config.dtype, count, shape.size);
            },
            candidates, rows, cub_fixed_impl(), true);
  }
#endif
  if (config.production && tensors) {
    // The list: each tensor a (pointer, length) pair into the input copy, and the total after
    // the per-tensor results.
    const Reduction op = config.reduction();
    const DType dtype = config.dtype;
    const std::size_t result_size = reducelab::result_size(op.op, dtype);
    auto spans = std::make_shared<std::vector<TensorSpan>>(count);
    SegmentedCandidate list = production(
        config, "reducelab::reduce_tensors (a list of pointers, per-tensor results + total)",
        [=](const void* x, const void*, void* out, cudaStream_t s) {
          const auto* base = static_cast<const T*>(x);
          for (std::size_t i = 0; i < count; ++i)
            (*spans)[i] = {base + offsets[i], static_cast<std::size_t>(offsets[i + 1] - offsets[i])};
          reducelab::reduce_tensors(op, dtype, spans->data(), count, out,
                                    static_cast<unsigned char*>(out) + count * result_size, s);
        });
    list.with_total = true;
    candidates.push_back(list);
    if (!shape.ragged()) {
      candidates.push_back(production(
          config, "reducelab::reduce_segments (int64 offsets)",
          [=](const void* x, const void* y, void* out, cudaStream_t s) {
            reducelab::reduce_segments(op, dtype, x, y, count, list_offsets, out, s);
          }));
    }
  }
  // The default mode, then (--determinism gpu_to_gpu, an op with a fixed order) the same call in
  // the gpu_to_gpu mode: its cost is that row over the default one.
  const bool fixed_order = reducelab::detail::has_fixed_order(config.reduction(), config.dtype) &&
                           !reducelab::detail::order_free(config.reduction(), config.dtype);
  for (const bool reproducible : {false, true}) {
    if (!config.production || (reproducible && !(config.gpu_to_gpu && fixed_order))) continue;
    const Reduction op = reproducible ? config.reduction().reproducible() : config.reduction();
    SegmentedCandidate candidate;
    if (axes != nullptr) {
      candidate = reduce_axes_candidate(config, *axes, op);
    } else {
      const DType dtype = config.dtype;
      const std::size_t size = shape.size;
      candidate = production(
          config,
          "reducelab::reduce_segments (" +
              std::string(shape.ragged() ? "int64 offsets" : "fixed size") + ")",
          [=](const void* x, const void* y, void* out, cudaStream_t s) {
            if (offsets_ptr != nullptr) {
              reducelab::reduce_segments(op, dtype, x, y, count, offsets_ptr, out, s);
            } else {
              reducelab::reduce_segments(op, dtype, x, y, count, size, out, s);
            }
          });
    }
    if (reproducible) candidate.impl = "reducelab gpu_to_gpu";
    candidates.push_back(candidate);
  }
  check_then_time_all(config, in, refs, candidates, row, device, stream, progress, rows);
  return rows;
}

// An axis set that is not rows: reduce_axes against CUB through a strided iterator.
template <class T>
std::vector<Measurement> run_strided(const SuiteConfig& config, const AxisShape& shape,
                                     const DeviceInfo& device, cudaStream_t stream,
                                     const Progress& progress) {
  const std::size_t n = shape.elements();
  const std::size_t count = shape.results();
  const AxisWalk walk = shape.walk();
  const bool statistic = is_statistic(config.op);
  const Inputs<T> in(config, n, device);
  SegmentChecks<T> refs;
  if (statistic) {
    // Each result's elements gathered in row-major order of the reduced axes, then checked as
    // the segments of that copy (BatchNorm's var over N, H and W, for one).
    const Layout layout = shape.layout();
    const AxisMask kept_axes = ~shape.mask & all_axes(layout.rank);
    const std::vector<std::int64_t> kept = axis_offsets(layout, kept_axes);
    const std::vector<std::int64_t> reduced = axis_offsets(layout, shape.mask);
    std::vector<T> gathered(kept.size() * reduced.size());
    std::vector<std::int64_t> offsets(kept.size() + 1);
    for (std::size_t k = 0; k < kept.size(); ++k) {
      offsets[k] = static_cast<std::int64_t>(k * reduced.size());
      T* to = gathered.data() + k * reduced.size();
      for (std::size_t r = 0; r < reduced.size(); ++r)
        to[r] = in.hx[static_cast<std::size_t>(kept[k] + reduced[r])];
    }
    offsets[kept.size()] = static_cast<std::int64_t>(gathered.size());
    refs = statistic_checks(config.reduction(), gathered.data(), offsets);
  } else {
    refs = core_checks(
        axis_reference(config.op, in.hx.data(), in.host_y(), shape.layout(), shape.mask));
  }

  Measurement row = problem_row(config, n, count, 0.0);
  row.shape = shape.text();
  row.axes = shape.axes_text();
  row.reduced = shape.reduced();

  std::vector<SegmentedCandidate> candidates;
  std::vector<Measurement> rows;
  if (!statistic)  // CUB's strided baseline reduces with a binary op: no statistics
    add_cub(config, shape.reduced(), row,
            [&] { return make_cub_strided_reduce(config.op, config.dtype, walk, count); },
            candidates, rows);
  // The default mode, then (--determinism gpu_to_gpu) the fixed order, which gathers each
  // chunk of results into rows first (reproducible_strided.hpp): its cost is that row over the
  // default one.
  const bool fixed_order = reducelab::detail::has_fixed_order(config.reduction(), config.dtype) &&
                           !reducelab::detail::order_free(config.reduction(), config.dtype);
  for (const bool reproducible : {false, true}) {
    if (!config.production || (reproducible && !(config.gpu_to_gpu && fixed_order))) continue;
    SegmentedCandidate candidate = reduce_axes_candidate(
        config, shape, reproducible ? config.reduction().reproducible() : config.reduction());
    if (reproducible) candidate.impl = "reducelab gpu_to_gpu";
    candidates.push_back(candidate);
  }
  check_then_time_all(config, in, refs, candidates, row, device, stream, progress, rows);
  return rows;
}

}  // namespace

std::vector<Measurement> run_segmented_suite(const SuiteConfig& config, const SegmentSpec& shape,
                                             const DeviceInfo& device, const Progress& progress,
                                             const AxisShape* axes) {
  REDUCELAB_CUDA_CHECK(cudaSetDevice(device.ordinal));
  const std::vector<std::int64_t> offsets = segment_offsets(shape);
  const std::size_t n = static_cast<std::size_t>(offsets.back());
  require_memory(config, n, shape.count, offsets.size() * sizeof(std::int64_t), device,
                 axes != nullptr ? "shape " + axes->text() : "segments " + shape.text());
  detail::Stream stream;
  return dispatch_dtype(config.dtype, [&](auto value) {
    using T = decltype(value);
    return run_shape<T>(config, shape, offsets, axes, device, stream.stream, progress);
  });
}

std::vector<Measurement> run_tensor_suite(const SuiteConfig& config, const SegmentSpec& shape,
                                          const DeviceInfo& device, const Progress& progress) {
  REDUCELAB_CUDA_CHECK(cudaSetDevice(device.ordinal));
  if (input_arrays(config.op) != 1)
    throw Error(ErrorCode::invalid_argument,
                std::string(to_string(config.op)) + " reads two arrays; a list of tensors takes "
                                                    "the ops that read one");
  const std::vector<std::int64_t> offsets = segment_offsets(shape);
  const std::size_t n = static_cast<std::size_t>(offsets.back());
  require_memory(config, n, shape.count + 1, offsets.size() * sizeof(std::int64_t), device,
                 "tensors " + shape.text());
  detail::Stream stream;
  return dispatch_dtype(config.dtype, [&](auto value) {
    using T = decltype(value);
    return run_shape<T>(config, shape, offsets, nullptr, device, stream.stream, progress, true);
  });
}

std::vector<Measurement> run_axis_suite(const SuiteConfig& config, const AxisShape& shape,
                                        const DeviceInfo& device, const Progress& progress) {
  if (shape.rows()) return run_segmented_suite(config, shape.segments(), device, progress, &shape);
  REDUCELAB_CUDA_CHECK(cudaSetDevice(device.ordinal));
  require_memory(config, shape.elements(), shape.results(), 0, device, "shape " + shape.text());
  detail::Stream stream;
  return dispatch_dtype(config.dtype, [&](auto value) {
    using T = decltype(value);
    return run_strided<T>(config, shape, device, stream.stream, progress);
  });
}

}  // namespace reducelab::bench

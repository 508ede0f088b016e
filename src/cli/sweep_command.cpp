// reducelab sweep: sizes 2^from..2^to for the chosen rungs, CUB and reducelab; CSV and JSON with
// the GPU, driver, CUDA version, commit, date and L2 policy, for scripts/plot.py. With
// --segment-sizes: the segment size swept at a fixed --total, reducelab against CUB. With
// --axis-sweep rows|columns: the row length or the kept columns of a 2-D array swept at a fixed
// --total, reducelab::reduce_axes against CUB.

#include <cuda_runtime_api.h>

#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/segmented_suite.hpp"
#include "bench/suite.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "reducelab/error.hpp"

namespace reducelab::cli {
namespace {

struct SweepOptions : MeasureOptions {
  int from = 10;
  int to = 30;
  int step = 1;
  bool no_ceilings = false;
  bool from_given = false;  // --from and --to default differently in an axis sweep
  bool to_given = false;
  std::string segment_sizes;
  std::string axis_sweep;
  std::string total;  // --segment-sizes: 2^27 when not given; --axis-sweep needs it
};

// One point of a sweep: its progress label and the suite that measures it.
struct Point {
  std::string label;
  std::function<std::vector<bench::Measurement>(const bench::SuiteConfig&, const DeviceInfo&)> run;
};

void run_sweep(const SweepOptions& o) {
  // Every argument and output path is checked before the device is touched.
  const bool sizes_swept = o.segment_sizes.empty() && o.axis_sweep.empty();
  if (sizes_swept && o.from > o.to)
    throw Error(ErrorCode::invalid_argument, "--from must not exceed --to");
  const MeasurePlan plan = check_measure_options(o);
  bench::SuiteConfig base = plan.suite;
  base.sizes.clear();
  for (int k = o.from; k <= o.to; k += o.step) base.sizes.push_back(std::size_t{1} << k);
  // Segmented or axes: the segment size or the 2-D shape swept at a fixed total, instead of the
  // whole-array sizes.
  if (!o.total.empty() && o.segment_sizes.empty() && o.axis_sweep.empty())
    throw Error(ErrorCode::invalid_argument, "--total requires --segment-sizes or --axis-sweep");
  if (!o.axis_sweep.empty() && o.total.empty())
    throw Error(ErrorCode::invalid_argument,
                "--axis-sweep needs --total N, the elements of every shape (e.g. 2^27)");
  std::vector<Point> points;
  if (!o.segment_sizes.empty()) {
    for (const bench::SegmentSpec& shape :
         parse_segment_sizes(o.segment_sizes, parse_count(o.total.empty() ? "2^27" : o.total)))
      points.push_back({shape.text(), [shape](const bench::SuiteConfig& c, const DeviceInfo& d) {
                          return bench::run_segmented_suite(c, shape, d, nullptr);
                        }});
  }
  if (!o.axis_sweep.empty()) {
    const auto given = [](bool is_given, int value) {
      return is_given ? std::optional<int>(value) : std::nullopt;
    };
    for (const bench::AxisShape& shape :
         parse_axis_sweep(o.axis_sweep, parse_count(o.total), given(o.from_given, o.from),
                          given(o.to_given, o.to)))
      points.push_back({shape.text() + " axes " + shape.axes_text(),
                        [shape](const bench::SuiteConfig& c, const DeviceInfo& d) {
                          return bench::run_axis_suite(c, shape, d, nullptr);
                        }});
  }
  for (std::size_t n : sizes_swept ? base.sizes : std::vector<std::size_t>{})
    points.push_back({"N=" + bench::format_count(n),
                      [n](bench::SuiteConfig c, const DeviceInfo& d) {
                        c.sizes = {n};
                        return bench::run_suite(c, d, nullptr);
                      }});
  const std::vector<Op>& ops = plan.ops;
  const std::vector<DType>& dtypes = plan.dtypes;

  const DeviceInfo device = query_device(o.device);
  if (cudaSetDevice(device.ordinal) != cudaSuccess)
    throw Error(ErrorCode::no_device, "cannot select CUDA device " + std::to_string(device.ordinal));
  // Refuse sizes that cannot fit before spending any time (run_suite checks again per size;
  // the segmented and axis suites check each shape).
  for (DType dtype : sizes_swept ? dtypes : std::vector<DType>{}) {
    for (Op op : ops) {
      if (!takes(op, dtype)) continue;
      bench::SuiteConfig config = base;
      config.op = op;
      config.dtype = dtype;
      std::size_t free_bytes = 0;
      std::size_t total_bytes = 0;
      if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) break;
      const std::size_t needed = bench::suite_device_bytes(config, device, base.sizes.back());
      if (needed > free_bytes)
        throw Error(ErrorCode::invalid_argument,
                    "2^" + std::to_string(o.to) + " " + std::string(to_string(dtype)) + " " +
                        std::string(to_string(op)) + " needs " + std::to_string(needed >> 20) +
                        " MiB of device memory but only " + std::to_string(free_bytes >> 20) +
                        " MiB are free; lower --to");
    }
  }
  std::cout << "# reducelab sweep\n\n" << describe_device(device) << "\n" << std::flush;

  bench::Context context = make_context("sweep", device, o.seed, o.reps, o.warmup);
  if (!o.no_ceilings) {
    const bench::Ceilings ceilings = bench::measure_ceilings(o.reps);
    context.launch_us = ceilings.launch_us;
    context.copy_gbps = ceilings.copy_gbps;
    std::cout << "empty kernel call " << bench::format_time(ceilings.launch_us)
              << ", device-to-device copy " << static_cast<long>(ceilings.copy_gbps)
              << " GB/s (read + write)\n";
  }

  ProgressPrinter progress;
  std::vector<bench::Measurement> rows;
  std::size_t total = 0;
  for (DType dtype : dtypes)
    for (Op op : ops) total += takes(op, dtype) ? points.size() : 0;
  std::size_t done = 0;
  for (DType dtype : dtypes) {
    for (Op op : ops) {
      if (!takes(op, dtype)) continue;  // a statistic of real values and an integer type
      for (const Point& point : points) {
        bench::SuiteConfig config = base;
        config.op = op;
        config.dtype = dtype;
        progress.bar(done, total, std::string(to_string(op)) + " " +
                                      std::string(to_string(dtype)) + " " + point.label);
        const auto part = point.run(config, device);
        rows.insert(rows.end(), part.begin(), part.end());
        ++done;
      }
    }
  }
  progress.bar(done, total, "done");
  progress.finish();
  std::cout << bench::render_table(rows) << std::flush;
  write_outputs(o.csv, o.json, context, rows);
  fail_on_wrong_results(rows);
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Bandwidth against size: 2^from..2^to for the chosen rungs, CUB and reducelab");
  cmd->add_option("--from", options->from,
                  "smallest size, log2 (--axis-sweep: row length or column count)")
      ->check(CLI::Range(0, 40))
      ->capture_default_str();
  cmd->add_option("--to", options->to,
                  "largest size, log2 (--axis-sweep: row length or column count)")
      ->check(CLI::Range(0, 40))
      ->capture_default_str();
  cmd->add_option("--step", options->step, "log2 step")->check(CLI::Range(1, 40))->capture_default_str();
  CLI::Option* sizes = cmd->add_option(
      "--segment-sizes", options->segment_sizes,
      "segmented sweep instead: the segment sizes (a comma list, or all: 4,8,32,256,1024,4096,"
      "2^16,2^20), each as fixed:(TOTAL/SIZE)xSIZE, reducelab::reduce_segments against CUB's "
      "DeviceSegmentedReduce");
  CLI::Option* axis_sweep = cmd->add_option(
      "--axis-sweep", options->axis_sweep,
      "axis sweep instead, reducelab::reduce_axes against CUB, at a fixed --total: rows, "
      "(TOTAL/L)xL reduced along axis 1 for row lengths L = 2^from..2^to (default 4..TOTAL); "
      "columns, (TOTAL/K)xK reduced along axis 0 for kept columns K = 2^from..2^to (default "
      "1..2^22), CUB through a strided iterator");
  sizes->excludes(axis_sweep);
  cmd->add_option("--total", options->total,
                  "elements of every shape of a --segment-sizes (default 2^27) or --axis-sweep "
                  "sweep");
  add_measure_options(*cmd, *options, kTakesOpList | kTakesDTypes | kTakesTiming | kTakesTables);
  cmd->add_flag("--no-ceilings", options->no_ceilings,
                "skip measuring the launch latency and copy bandwidth ceilings");
  cmd->callback([options, cmd] {
    options->from_given = cmd->count("--from") > 0;
    options->to_given = cmd->count("--to") > 0;
    run_sweep(*options);
  });
}

}  // namespace reducelab::cli

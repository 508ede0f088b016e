// reducelab bench: the article's table on this GPU. By default N = 2^27 fp32 sum: every ladder
// rung, CUB and reducelab, each checked against the CPU reference, then timed. With --segments:
// one result per segment, reducelab::reduce_segments against CUB. With --shape/--axis: an N-d
// array reduced along axes, reducelab::reduce_axes against CUB.

#include <fstream>
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

struct BenchOptions : MeasureOptions {
  std::string n = "2^27";
  std::string segments;
  std::string tensors;
  std::string shape;
  std::string axis = "-1";
};

void run_bench(const BenchOptions& o) {
  // Every argument and output path is checked before the device is touched.
  const std::size_t n = parse_count(o.n);
  std::optional<bench::SegmentSpec> segments;
  if (!o.segments.empty()) segments = parse_segments(o.segments);
  std::optional<bench::SegmentSpec> tensors;
  if (!o.tensors.empty()) tensors = parse_segments(o.tensors, "--tensors");
  std::optional<bench::AxisShape> shape;
  if (!o.shape.empty()) shape = parse_axis_shape(o.shape, o.axis);
  const MeasurePlan plan = check_measure_options(o);

  const DeviceInfo device = query_device(o.device);
  std::cout << "# reducelab bench\n\n" << describe_device(device) << "\n\n"
            << "seed " << o.seed << ", " << o.reps << " timed calls per row after " << o.warmup
            << " warm-up calls; " << bench::timing_text() << "; " << bench::l2_policy_text(device)
            << ".\n" << std::flush;

  ProgressPrinter progress;
  std::vector<bench::Measurement> rows;
  for (DType dtype : plan.dtypes) {
    for (Op op : plan.ops) {
      if (!takes(op, dtype)) continue;  // a statistic of real values and an integer type
      bench::SuiteConfig config = plan.suite;
      config.sizes = {n};
      config.op = op;
      config.dtype = dtype;
      const bench::Progress show = [&](const std::string& line) { progress(line); };
      // Segmented and axes: reducelab against CUB's DeviceSegmentedReduce (no ladder rows).
      if (tensors && input_arrays(op) != 1) continue;  // a list reads one array per tensor
      const auto part = segments ? bench::run_segmented_suite(config, *segments, device, show)
                        : tensors  ? bench::run_tensor_suite(config, *tensors, device, show)
                        : shape    ? bench::run_axis_suite(config, *shape, device, show)
                                   : bench::run_suite(config, device, show);
      rows.insert(rows.end(), part.begin(), part.end());
    }
  }
  progress.finish();
  const std::string table = bench::render_table(rows);
  std::cout << table << std::flush;

  const bench::Context context = make_context("bench", device, o.seed, o.reps, o.warmup);
  write_outputs(o.csv, o.json, context, rows);
  if (!o.markdown.empty()) {
    std::ofstream out = open_output(o.markdown);
    out << describe_device(device) << "\n\ncommit " << context.commit << ", " << context.date
        << "; seed " << o.seed << ", " << o.reps << " timed calls per row; " << context.timing
        << "; " << context.l2_policy << ".\n" << table;
  }
  fail_on_wrong_results(rows);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "The article's table on this GPU: ladder rungs, CUB and reducelab, checked then timed");
  CLI::Option* n = cmd->add_option("--n", options->n, "elements: 134217728, 2^27, 1<<27 or 2^20+3")
                       ->capture_default_str();
  CLI::Option* segments = cmd->add_option(
      "--segments", options->segments,
      "segmented reduction, one result per segment, against CUB's DeviceSegmentedReduce: "
      "fixed:NUMxSIZE (NUM rows of SIZE elements), ragged:heavy:N:MEAN (N segments, "
      "heavy-tailed lengths of mean MEAN: lognormal/Pareto mix, fixed seed) or "
      "ragged:uniform:N:MAX (lengths uniform in [0, MAX]); e.g. fixed:2^22x32");
  CLI::Option* shape = cmd->add_option(
      "--shape", options->shape,
      "a row-major array AxBxC... (rank 1 to 8) reduced along --axis by reducelab::reduce_axes "
      "against CUB's DeviceSegmentedReduce: over the rows when the last axes are reduced "
      "(4194304x32 --axis 1), else through a strided input iterator (columns, a middle axis)");
  CLI::Option* axis = cmd->add_option("--axis", options->axis,
                                      "the axes --shape reduces, a comma list (0, -1, 0,2); "
                                      "negative axes count from the end")
                          ->capture_default_str();
  CLI::Option* tensors = cmd->add_option(
      "--tensors", options->tensors,
      "many tensors in one call (reducelab::reduce_tensors: per-tensor results and the total), "
      "their lengths given as --segments gives segments: fixed:1000x2^17 (1,000 tensors of 2^17 "
      "elements), ragged:heavy:N:MEAN, ragged:uniform:N:MAX");
  segments->excludes(n)->excludes(shape)->excludes(tensors);
  tensors->excludes(n)->excludes(shape);
  shape->excludes(n);
  axis->needs(shape);
  add_measure_options(*cmd, *options,
                      kTakesOpList | kTakesDTypes | kTakesTiming | kTakesTables | kTakesMarkdown);
  cmd->callback([options] { run_bench(*options); });
}

}  // namespace reducelab::cli

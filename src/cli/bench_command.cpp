// reducelab bench: the article's table on this GPU. By default N = 2^27 fp32 sum: every ladder
// rung, CUB and reducelab, each checked against the CPU reference, then timed.

#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench/suite.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "reducelab/error.hpp"

namespace reducelab::cli {
namespace {

struct BenchOptions : MeasureOptions {
  std::string n = "2^27";
};

void run_bench(const BenchOptions& o) {
  // Every argument and output path is checked before the device is touched.
  const std::size_t n = parse_count(o.n);
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
      bench::SuiteConfig config = plan.suite;
      config.sizes = {n};
      config.op = op;
      config.dtype = dtype;
      const auto part = bench::run_suite(config, device, [&](const std::string& line) { progress(line); });
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
  cmd->add_option("--n", options->n, "elements: 134217728, 2^27, 1<<27 or 2^20+3")->capture_default_str();
  add_measure_options(*cmd, *options,
                      kTakesOpList | kTakesDTypes | kTakesTiming | kTakesTables | kTakesMarkdown);
  cmd->callback([options] { run_bench(*options); });
}

}  // namespace reducelab::cli

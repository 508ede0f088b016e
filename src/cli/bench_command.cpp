// reducelab bench: the article's table on this GPU. By default N = 2^27 fp32 sum: every ladder
// rung, CUB and reducelab, each checked against the CPU reference, then timed.

#include <fstream>
#include <iostream>
#include <memory>

#include "bench/suite.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "reducelab/error.hpp"

namespace reducelab::cli {
namespace {

struct BenchOptions {
  std::string n = "2^27";
  std::string ops = "sum";
  std::string dtypes = "f32";
  std::string rungs = "all";
  int reps = 50;
  int warmup = 5;
  std::uint64_t seed = 20261130;
  int device = 0;
  bool no_cub = false;
  bool no_production = false;
  std::string csv;
  std::string json;
  std::string markdown;
};

std::string rung_help() {
  std::string text = "ladder rungs: all, none, or a list such as V0,V3,V7 (";
  for (const ladder::Rung& rung : ladder::rungs()) text += std::string(rung.id) + " " + rung.name + "; ";
  text.resize(text.size() - 2);
  return text + ")";
}

void run_bench(const BenchOptions& o) {
  bench::SuiteConfig base;
  base.sizes = {parse_count(o.n)};
  if (o.rungs != "none") base.rungs = ladder::parse_rung_list(o.rungs);
  base.cub = !o.no_cub;
  base.production = !o.no_production;
  base.reps = o.reps;
  base.warmup = o.warmup;
  base.seed = o.seed;
  const std::vector<Op> ops = parse_ops(o.ops);
  const std::vector<DType> dtypes = parse_dtypes(o.dtypes);

  const DeviceInfo device = query_device(o.device);
  std::cout << "# reducelab bench\n\n" << describe_device(device) << "\n\n"
            << "seed " << o.seed << ", " << o.reps << " timed calls per row after " << o.warmup
            << " warm-up calls; " << bench::timing_text() << "; " << bench::l2_policy_text(device)
            << ".\n" << std::flush;

  ProgressPrinter progress;
  std::vector<bench::Measurement> rows;
  for (DType dtype : dtypes) {
    for (Op op : ops) {
      bench::SuiteConfig config = base;
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
    std::ofstream out(o.markdown);
    if (!out) throw Error(ErrorCode::invalid_argument, "cannot write '" + o.markdown + "'");
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
  cmd->add_option("--op", options->ops, "sum, min, max, dot, argmin, argmax, a comma list, or all")
      ->capture_default_str();
  cmd->add_option("--dtype", options->dtypes,
                  "f32, f64, f16, bf16, i32, i64, u32, u64, a comma list, or all (the ladder is f32 only)")
      ->capture_default_str();
  cmd->add_option("--rungs", options->rungs, rung_help())->capture_default_str();
  cmd->add_option("--reps", options->reps, "timed calls per row; the table shows their median")
      ->check(CLI::Range(20, 1000000))
      ->capture_default_str();
  cmd->add_option("--warmup", options->warmup, "untimed calls before timing")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--seed", options->seed, "seed of the random inputs")->capture_default_str();
  cmd->add_option("--device", options->device, "CUDA device ordinal")->capture_default_str();
  cmd->add_flag("--no-cub", options->no_cub, "leave out the CUB row");
  cmd->add_flag("--no-production", options->no_production, "leave out the reducelab row");
  cmd->add_option("--csv", options->csv, "also write the rows as CSV to this file");
  cmd->add_option("--json", options->json, "also write the rows and their context as JSON to this file");
  cmd->add_option("--md", options->markdown, "also write the markdown table to this file");
  cmd->callback([options] { run_bench(*options); });
}

}  // namespace reducelab::cli

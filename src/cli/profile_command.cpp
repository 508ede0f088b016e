// reducelab profile: every rung (and CUB and reducelab) under Nsight Compute with
// --clock-control none, then the rung x counter table and the article's bottleneck claims
// checked against the counters. The program profiles itself: ncu runs the hidden subcommand
// `profile-target`, which runs each implementation exactly once on checked inputs.

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "bench/profile.hpp"
#include "bench/suite.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "reducelab/error.hpp"

namespace reducelab::cli {
namespace {

constexpr const char* kRawCsvFlag = "--raw-csv";

// One op, one size, f32 (the ladder's type): what the counters are compared on.
struct ProfileOptions : MeasureOptions {
  std::string n = "2^24";
  std::string ncu;
  std::string csv_out;  // the raw ncu CSV, for the record
};

std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

// Runs a shell command, returns its stdout; throws with the command on failure.
std::string capture(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw Error(ErrorCode::invalid_argument, "cannot run: " + command);
  std::string out;
  std::array<char, 4096> buffer{};
  while (const std::size_t got = fread(buffer.data(), 1, buffer.size(), pipe.get())) out.append(buffer.data(), got);
  const int status = pclose(pipe.release());
  if (status != 0)
    throw Error(ErrorCode::invalid_argument,
                "command failed (status " + std::to_string(status) + "): " + command + "\n" + out);
  return out;
}

std::string find_ncu(const std::string& given) {
  namespace fs = std::filesystem;
  auto executable = [](const fs::path& p) { return !p.empty() && access(p.c_str(), X_OK) == 0; };
  if (!given.empty()) {
    if (executable(given)) return given;
    throw Error(ErrorCode::invalid_argument, "--ncu '" + given + "' is not an executable");
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (executable(fs::path(dir) / "ncu")) return (fs::path(dir) / "ncu").string();
  }
  for (const char* candidate : {"/usr/local/cuda/bin/ncu", "/usr/local/cuda/nsight-compute/ncu"})
    if (executable(candidate)) return candidate;
  std::error_code ec;
  if (fs::is_directory("/opt/nvidia/nsight-compute", ec)) {
    for (const auto& entry : fs::directory_iterator("/opt/nvidia/nsight-compute", ec))
      if (executable(entry.path() / "ncu")) return (entry.path() / "ncu").string();
  }
  throw Error(ErrorCode::invalid_argument,
              "Nsight Compute (ncu) not found on PATH, in /usr/local/cuda/bin or "
              "/opt/nvidia/nsight-compute; install it or pass --ncu PATH");
}

std::string self_executable() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error(ErrorCode::invalid_argument, "cannot locate the reducelab executable");
  return path.string();
}

void run_profile(const ProfileOptions& o) {
  // Every argument, output path and ncu itself are checked before the device is queried.
  const std::size_t n = parse_count(o.n);
  const MeasurePlan plan = check_measure_options(o);
  check_output_path(kRawCsvFlag, o.csv_out);
  const Op op = plan.ops.front();
  const DType dtype = plan.dtypes.front();
  const std::string ncu = find_ncu(o.ncu);
  const DeviceInfo device = query_device(o.device);  // a clear error without a GPU

  // Keep only the metrics this ncu knows, so one renamed counter does not sink the run.
  const std::string known = capture(quote(ncu) + " --query-metrics 2>&1");
  std::string metrics;
  std::vector<std::string> missing;
  for (const auto& spec : bench::profile_metrics()) {
    const std::string base = bench::metric_base_name(spec.name);
    if (known.find(base) == std::string::npos) {
      missing.push_back(spec.name);
      continue;
    }
    metrics += (metrics.empty() ? "" : ",") + std::string(spec.name);
  }

  const auto dir = std::filesystem::temp_directory_path() / ("reducelab-profile-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string report = (dir / "profile").string();
  std::ostringstream target;
  target << quote(self_executable()) << " profile-target --n " << n << " --op " << to_string(op)
         << " --rungs " << quote(o.rungs) << " --seed " << o.seed << " --device " << o.device
         << (o.no_cub ? " --no-cub" : "") << (o.no_production ? " --no-production" : "");
  std::cerr << "profiling with " << ncu << " (this replays every kernel once per counter pass)..."
            << std::endl;
  capture(quote(ncu) + " --clock-control none --metrics " + metrics + " -f -o " + quote(report) +
          " " + target.str() + " 2>&1");
  const std::string csv = capture(quote(ncu) + " --import " + quote(report + ".ncu-rep") +
                                  " --csv --page raw --print-units base --print-kernel-base demangled 2>/dev/null");
  std::filesystem::remove_all(dir);

  const auto impls = bench::aggregate_ncu_csv(csv, n);
  const auto checks = bench::check_bottlenecks(impls);
  std::ostringstream text;
  text << describe_device(device) << "\n\nNsight Compute counters, " << to_string(op) << " "
       << to_string(dtype) << ", N = " << bench::format_count(n)
       << ", --clock-control none, commit " << REDUCELAB_GIT_COMMIT << ", " << bench::utc_now()
       << ". Per implementation, counters summed (time-weighted for "
       << "percentages) over all its kernels (every pass).\n\n"
       << bench::render_profile(impls, checks);
  if (!missing.empty()) {
    text << "\nCounters this ncu does not offer (left out):";
    for (const auto& m : missing) text << " " << m;
    text << "\n";
  }
  std::cout << text.str() << std::flush;
  if (!o.markdown.empty()) open_output(o.markdown) << text.str();
  if (!o.csv_out.empty()) open_output(o.csv_out) << csv;
}

// Runs each implementation once (checked against the reference) and nothing else, so the
// profile holds exactly their kernels.
void run_profile_target(const ProfileOptions& o) {
  const std::size_t n = parse_count(o.n);
  const MeasurePlan plan = check_measure_options(o);
  const DeviceInfo device = query_device(o.device);
  bench::SuiteConfig config = plan.suite;
  config.sizes = {n};
  config.op = plan.ops.front();
  config.dtype = plan.dtypes.front();
  config.time = false;
  const auto rows = bench::run_suite(config, device, nullptr);
  for (const auto& row : rows)
    if (row.status != "ok") throw Error(ErrorCode::cuda_error, row.impl + ": " + row.status);
}

// What profile and the profile-target it hands to ncu both take.
void add_profile_options(CLI::App& cmd, ProfileOptions& o, unsigned taken) {
  cmd.add_option("--n", o.n, "elements: 16777216, 2^24, 1<<24 or 2^20+3")->capture_default_str();
  add_measure_options(cmd, o, taken);
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto options = std::make_shared<ProfileOptions>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Nsight Compute counters per rung, and the article's bottleneck claims checked");
  add_profile_options(*cmd, *options, kTakesMarkdown);
  cmd->add_option("--ncu", options->ncu, "path of ncu (default: found on PATH)");
  cmd->add_option(kRawCsvFlag, options->csv_out, "also write ncu's raw CSV to this file");
  cmd->callback([options] { run_profile(*options); });

  auto target_options = std::make_shared<ProfileOptions>();
  CLI::App* target = app.add_subcommand("profile-target", "");  // hidden: what ncu runs
  target->group("");
  add_profile_options(*target, *target_options, 0);
  target->callback([target_options] { run_profile_target(*target_options); });
}

}  // namespace reducelab::cli

#pragma once
// Parsing and printing shared by the subcommands (tested on the CPU in tests/test_options.cpp):
// the options of the measuring commands, the checks that run before any device work, and how a
// usage error reaches the user.

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/axes.hpp"
#include "bench/random.hpp"
#include "bench/report.hpp"
#include "bench/segments.hpp"
#include "bench/suite.hpp"
#include "ladder/ladder.hpp"
#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"

namespace reducelab::cli {

//! Exit status of a usage error: a bad command line, value or output path (nothing was run).
inline constexpr int kUsageExit = 2;
//! Exit status of a run that failed: no device, a CUDA error, a wrong result.
inline constexpr int kFailureExit = 1;

//! Which of the shared options a command takes, as bits of `taken`. Every measuring command takes
//! --op, --rungs, --seed, --device, --no-cub and --no-production.
enum MeasureOption : unsigned {
  kTakesOpList = 1u << 0,    //!< --op is a comma list or all (without it: exactly one op)
  kTakesDTypes = 1u << 1,    //!< --dtype
  kTakesTiming = 1u << 2,    //!< --reps and --warmup
  kTakesTables = 1u << 3,    //!< --csv and --json
  kTakesMarkdown = 1u << 4,  //!< --md
};

//! The options bench, sweep and profile share, as typed; each command's options derive from it.
struct MeasureOptions {
  unsigned taken = 0;  //!< the MeasureOption bits add_measure_options() registered
  std::string ops{to_string(Op::sum)};
  std::string dtypes{to_string(DType::f32)};
  std::string rungs = "all";
  int reps = 50;
  int warmup = 5;
  std::uint64_t seed = bench::kDefaultSeed;
  int device = 0;
  bool no_cub = false;
  bool no_production = false;
  std::string determinism{to_string(Determinism::run_to_run)};
  std::string csv;
  std::string json;
  std::string markdown;
};

//! Registers the shared options `taken` (MeasureOption bits) on `command`, bound to `options`:
//! the one place their names, help texts, defaults and ranges are written.
void add_measure_options(CLI::App& command, MeasureOptions& options, unsigned taken);

//! The shared options parsed and checked.
struct MeasurePlan {
  std::vector<Op> ops;
  std::vector<DType> dtypes;
  //! rungs, cub, production, reps, warmup and seed set; sizes, op and dtype are the command's.
  bench::SuiteConfig suite;
};

//! Parses every list and checks every output path, so that a command can call it before it
//! queries the device. Throws reducelab::Error (invalid_argument) naming the flag.
MeasurePlan check_measure_options(const MeasureOptions& options);

//! Throws reducelab::Error (invalid_argument) naming `flag` and `path` unless the file can be
//! written: its directory exists and is writable, and an existing file is writable and not a
//! directory. Creates and truncates nothing, so a run that fails later leaves old results alone.
//! An empty path (the output not asked for) passes.
void check_output_path(std::string_view flag, const std::string& path);

//! Opens `path` for writing; throws reducelab::Error if it cannot.
std::ofstream open_output(const std::string& path);

//! "all", "none" (no ladder rows) or a list of rung ids such as "V0,V7".
std::vector<const ladder::Rung*> parse_rungs(std::string_view text);

//! Help text of --rungs, from the registry: "ladder rungs: all, ... (V0 naive tree; ...)".
std::string rungs_help(bool none_allowed);

//! Parses the command line with `app` (whose callbacks run the command) and returns the exit
//! status. --help and --version print to `out` and return 0. A usage error (CLI11's parse errors,
//! reducelab::Error with invalid_argument) is one line "reducelab: ..." on `err`, with a
//! suggestion for a command or option one or two edits from a real one, and returns kUsageExit;
//! any other failure prints its message and returns kFailureExit.
int run_app(CLI::App& app, int argc, const char* const* argv, std::ostream& out, std::ostream& err);

//! Element counts as people write them: "134217728", "2^27", "1<<27", "2^20+3", "2^24 + 7".
//! Throws reducelab::Error on anything else, on 0 when `allow_zero` is false, and on overflow.
std::size_t parse_count(std::string_view text, bool allow_zero = false);

//! Segment shapes (bench/segments.hpp): "fixed:NUMxSIZE", "ragged:heavy:N:MEAN" or
//! "ragged:uniform:N:MAX", every number as parse_count() reads it and at least 1 ("2^22x32").
//! Throws reducelab::Error (invalid_argument), one line naming the spec, on anything else.
bench::SegmentSpec parse_segments(std::string_view text, std::string_view flag = "--segments");
//! `--shape AxBxC --axis LIST`: a row-major array of rank 1..8 (sizes as parse_count() reads
//! them, each at least 1, at most 2^62 elements in all) reduced along the comma list of axes
//! (each in -rank..rank-1, negative from the end as torch's dim, no axis twice). Throws
//! reducelab::Error (invalid_argument), one line naming the flag and its value, on anything else.
bench::AxisShape parse_axis_shape(std::string_view shape, std::string_view axes);

//! `sweep --segment-sizes LIST --total N`: fixed:(N / SIZE)xSIZE for each SIZE of the comma list
//! (counts as parse_count() reads them; "all": 4,8,32,256,1024,4096,2^16,2^20), in list order.
//! Throws reducelab::Error (invalid_argument) naming the flag when a size is 0 or exceeds N.
std::vector<bench::SegmentSpec> parse_segment_sizes(std::string_view sizes, std::size_t total);

//! `sweep --axis-sweep rows|columns --total N [--from A --to B]`: rows: (N / L) x L reduced along
//! axis 1 for row lengths L = 2^A..2^B (default 2^2..the largest power of two <= N); columns:
//! (N / K) x K reduced along axis 0 for kept columns K = 2^A..2^B (default 2^0..2^22, capped at
//! N). Throws reducelab::Error (invalid_argument) naming the flag for another sweep name, A > B,
//! or 2^B > N.
std::vector<bench::AxisShape> parse_axis_sweep(std::string_view sweep, std::size_t total,
                                               std::optional<int> from, std::optional<int> to);

//! "all" (every op), or a comma list of ops and groups: "sum", "sum,dot", "core" (sum, min, max,
//! dot, argmin, argmax), "stats" (the statistics), "sum,stats", "any,all" (the op all).
std::vector<Op> parse_ops(std::string_view text);
//! "f32", "f16,bf16" or "all" (all eight types).
std::vector<DType> parse_dtypes(std::string_view text);

//! One line naming the GPU and its theoretical peak, printed above every table.
std::string describe_device(const DeviceInfo& device);

//! The results context for `command` on `device` (commit, date, L2 policy, timing method).
bench::Context make_context(const std::string& command, const DeviceInfo& device,
                            std::uint64_t seed, int reps, int warmup);

//! Writes CSV and/or JSON files (empty path: skipped). Throws reducelab::Error if a file cannot
//! be written (check_output_path() has checked the paths before the run).
void write_outputs(const std::string& csv_path, const std::string& json_path,
                   const bench::Context& context, const std::vector<bench::Measurement>& rows);

//! Throws reducelab::Error naming how many rows gave a wrong result (the table says which).
void fail_on_wrong_results(const std::vector<bench::Measurement>& rows);

//! Progress on stderr, but only once a run has taken more than a second.
class ProgressPrinter {
 public:
  ProgressPrinter();
  void operator()(const std::string& line);
  //! "[#####.....] 12/40 " style bar for a known total.
  void bar(std::size_t done, std::size_t total, const std::string& label);
  void finish();

 private:
  bool visible() const;
  std::chrono::steady_clock::time_point start_;
  bool printed_ = false;
};

}  // namespace reducelab::cli

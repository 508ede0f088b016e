#pragma once
// Parsing and printing shared by the subcommands (tested on the CPU in tests/test_options.cpp).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/report.hpp"
#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"

namespace reducelab::cli {

//! Element counts as people write them: "134217728", "2^27", "1<<27", "2^20+3", "2^24 + 7".
//! Throws reducelab::Error on anything else, on 0 when `allow_zero` is false, and on overflow.
std::size_t parse_count(std::string_view text, bool allow_zero = false);

//! "sum", "sum,dot" or "all" (all six ops).
std::vector<Op> parse_ops(std::string_view text);
//! "f32", "f16,bf16" or "all" (all eight types).
std::vector<DType> parse_dtypes(std::string_view text);

//! One line naming the GPU and its theoretical peak, printed above every table.
std::string describe_device(const DeviceInfo& device);

//! The results context for `command` on `device` (commit, date, L2 policy, timing method).
bench::Context make_context(const std::string& command, const DeviceInfo& device,
                            std::uint64_t seed, int reps, int warmup);

//! Writes CSV and/or JSON files (empty path: skipped). Throws reducelab::Error if a file cannot
//! be written.
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

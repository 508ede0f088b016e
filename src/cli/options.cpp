#include "cli/options.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <unistd.h>

#include "bench/suite.hpp"
#include "reducelab/error.hpp"
#include "reducelab/version.hpp"

namespace reducelab::cli {
namespace {

[[noreturn]] void bad_count(std::string_view text, const std::string& why) {
  throw Error(ErrorCode::invalid_argument,
              "bad element count '" + std::string(text) + "': " + why +
                  " (write e.g. 134217728, 2^27, 1<<27 or 2^20+3)");
}

std::size_t checked_power(std::string_view text, unsigned long long exponent) {
  if (exponent >= 64) bad_count(text, "2^" + std::to_string(exponent) + " does not fit in 64 bits");
  return std::size_t{1} << exponent;
}

// One term: digits, "2^k" or "1<<k".
std::size_t parse_term(std::string_view whole, std::string_view term) {
  if (term.empty()) bad_count(whole, "empty term");
  auto digits = [&](std::string_view s) {
    if (s.empty() || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
      bad_count(whole, "'" + std::string(s) + "' is not a number");
    unsigned long long value = 0;
    for (char c : s) {
      if (value > (std::numeric_limits<unsigned long long>::max() - (c - '0')) / 10)
        bad_count(whole, "too large");
      value = value * 10 + static_cast<unsigned long long>(c - '0');
    }
    return value;
  };
  if (const auto caret = term.find('^'); caret != std::string_view::npos) {
    if (term.substr(0, caret) != "2") bad_count(whole, "only powers of two are accepted with ^");
    return checked_power(whole, digits(term.substr(caret + 1)));
  }
  if (const auto shift = term.find("<<"); shift != std::string_view::npos) {
    if (term.substr(0, shift) != "1") bad_count(whole, "only 1<<k is accepted");
    return checked_power(whole, digits(term.substr(shift + 2)));
  }
  return static_cast<std::size_t>(digits(term));
}

std::string strip_spaces(std::string_view text) {
  std::string out;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  return out;
}

template <class T, class Parse, class All>
std::vector<T> parse_list(std::string_view text, Parse parse, const All& all) {
  const std::string compact = strip_spaces(text);
  std::vector<T> out;
  if (compact == "all") return std::vector<T>(std::begin(all), std::end(all));
  std::size_t start = 0;
  while (start <= compact.size()) {
    const std::size_t comma = std::min(compact.find(',', start), compact.size());
    if (comma > start) {
      const T value = parse(std::string_view(compact).substr(start, comma - start));
      if (std::find(out.begin(), out.end(), value) == out.end()) out.push_back(value);
    }
    start = comma + 1;
  }
  if (out.empty()) throw Error(ErrorCode::invalid_argument, "empty list '" + std::string(text) + "'");
  return out;
}

}  // namespace

std::size_t parse_count(std::string_view text, bool allow_zero) {
  const std::string compact = strip_spaces(text);
  if (compact.empty()) bad_count(text, "empty");
  std::size_t total = 0;
  std::size_t start = 0;
  while (start <= compact.size()) {
    const std::size_t plus = std::min(compact.find('+', start), compact.size());
    const std::size_t term = parse_term(text, std::string_view(compact).substr(start, plus - start));
    if (term > std::numeric_limits<std::size_t>::max() - total) bad_count(text, "too large");
    total += term;
    start = plus + 1;
  }
  if (total == 0 && !allow_zero) bad_count(text, "must be at least 1");
  return total;
}

std::vector<Op> parse_ops(std::string_view text) {
  return parse_list<Op>(text, [](std::string_view s) { return parse_op(s); }, kAllOps);
}

std::vector<DType> parse_dtypes(std::string_view text) {
  return parse_list<DType>(text, [](std::string_view s) { return parse_dtype(s); }, kAllDTypes);
}

std::string describe_device(const DeviceInfo& d) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer),
                "%s (GPU %d, sm_%d%d, %d SMs, %.0f MB L2, %.0f GB), driver %s, CUDA runtime %s; "
                "theoretical peak %.0f GB/s (%d MHz x %d-bit bus x 2)",
                d.name.c_str(), d.ordinal, d.cc_major, d.cc_minor, d.sm_count, d.l2_bytes / 1e6,
                d.total_memory / 1e9, d.driver.c_str(), d.cuda_runtime.c_str(), d.peak_gbps,
                d.memory_clock_khz / 1000, d.bus_width_bits);
  return buffer;
}

bench::Context make_context(const std::string& command, const DeviceInfo& device,
                            std::uint64_t seed, int reps, int warmup) {
  bench::Context context;
  context.command = command;
  context.version = REDUCELAB_VERSION_STRING;
  context.commit = REDUCELAB_GIT_COMMIT;
  context.date = bench::utc_now();
  context.device = device;
  context.l2_policy = bench::l2_policy_text(device);
  context.timing = bench::timing_text();
  context.seed = seed;
  context.reps = reps;
  context.warmup = warmup;
  return context;
}

void write_outputs(const std::string& csv_path, const std::string& json_path,
                   const bench::Context& context, const std::vector<bench::Measurement>& rows) {
  auto open = [](const std::string& path) {
    std::ofstream out(path);
    if (!out) throw Error(ErrorCode::invalid_argument, "cannot write '" + path + "'");
    return out;
  };
  if (!csv_path.empty()) {
    std::ofstream out = open(csv_path);
    bench::write_csv(out, context, rows);
  }
  if (!json_path.empty()) {
    std::ofstream out = open(json_path);
    out << bench::to_json(context, rows).dump(2) << "\n";
  }
}

void fail_on_wrong_results(const std::vector<bench::Measurement>& rows) {
  std::size_t wrong = 0;
  for (const auto& row : rows) wrong += row.status != "ok";
  if (wrong > 0)
    throw Error(ErrorCode::cuda_error,
                std::to_string(wrong) + " implementation(s) gave wrong results (see the table)");
}

ProgressPrinter::ProgressPrinter() : start_(std::chrono::steady_clock::now()) {}

bool ProgressPrinter::visible() const {
  return std::chrono::steady_clock::now() - start_ > std::chrono::seconds(1);
}

void ProgressPrinter::operator()(const std::string& line) {
  if (!visible()) return;
  std::cerr << line << std::endl;
  printed_ = true;
}

void ProgressPrinter::bar(std::size_t done, std::size_t total, const std::string& label) {
  if (!visible() || total == 0) return;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total);
  std::string line = "\r[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] " +
                     std::to_string(done) + "/" + std::to_string(total) + " " + label;
  if (line.size() < 100) line += std::string(100 - line.size(), ' ');
  if (isatty(STDERR_FILENO)) {
    std::cerr << line << std::flush;
  } else {
    std::cerr << line.substr(1) << "\n";
  }
  printed_ = true;
}

void ProgressPrinter::finish() {
  if (printed_ && isatty(STDERR_FILENO)) std::cerr << "\n";
  printed_ = false;
}

}  // namespace reducelab::cli

#include "cli/options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>

#include "common/text.hpp"
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

// The output flags, named once for their registration and for the path checks' messages.
constexpr const char* kCsvFlag = "--csv";
constexpr const char* kJsonFlag = "--json";
constexpr const char* kMarkdownFlag = "--md";

// "sum (sum of the elements), min (...), ...": every op of kOps with its summary.
std::string op_help(bool list) {
  std::string text = list ? "reductions: all (every op), or a comma list of ops and the groups "
                            "core (the first six) and stats (the statistics) from: "
                          : "the reduction, one of: ";
  for (const OpInfo& op : kOps) {
    if (op.op != kOps[0].op) text += ", ";
    text += std::string(op.name) + " (" + std::string(op.summary) + ")";
  }
  return text + "; the ladder rows exist for " + ladder::supported_ops_text() + " only";
}

std::string dtype_help() {
  std::string text = "element types, a comma list or all of: ";
  for (const DTypeInfo& dtype : kDTypes) {
    if (dtype.dtype != kDTypes[0].dtype) text += ", ";
    text += dtype.name;
  }
  return text + "; the ladder rows exist for " + std::string(to_string(DType::f32)) + " only";
}

// CLI11's messages are one line today; make sure of it, since the contract is one line.
std::string one_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::string out;
  for (char c : text) out += c == '\n' ? std::string("; ") : std::string(1, c);
  return out;
}

bool starts_with_dash(const std::string& arg) { return !arg.empty() && arg[0] == '-'; }

// "unknown option '--rep' for bench (did you mean '--reps'?); see 'reducelab bench --help'".
// `command` is null at the top level.
std::string unknown_option_message(const CLI::App& options, const CLI::App* command,
                                   const std::string& arg) {
  const std::string name = arg.substr(0, arg.find('='));
  // Long names compared without their dashes, which would make "--md" look close to "--to".
  std::vector<std::string> long_names;
  for (const CLI::Option* option : options.get_options())
    for (const std::string& long_name : option->get_lnames()) long_names.push_back(long_name);
  const std::vector<std::string_view> candidates(long_names.begin(), long_names.end());
  const std::string bare = name.substr(std::min(name.find_first_not_of('-'), name.size()));
  std::string message = "unknown option '" + name + "'";
  if (command != nullptr) message += " for " + command->get_name();
  const std::string guess = detail::closest_match(bare, candidates);
  if (!guess.empty()) message += " (did you mean '--" + guess + "'?)";
  return message + "; see 'reducelab" + (command != nullptr ? " " + command->get_name() : "") +
         " --help'";
}

std::string unknown_command_message(const CLI::App& app, const std::string& arg) {
  std::vector<std::string_view> names;
  // Hidden commands (an empty group, such as profile-target) are not offered.
  for (const CLI::App* command :
       app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); }))
    names.emplace_back(command->get_name());
  if (arg.empty()) {
    std::string message = "no command given; expected one of:";
    for (std::string_view name : names) message += " " + std::string(name);
    return message;
  }
  return detail::unknown_name_message("command", arg, names);
}

// One line for a CLI11 parse error: unknown commands and options get a suggestion; the rest
// keep CLI11's message ("--reps: Value 3 not in range 20 to 1000000"), after the command.
std::string usage_error_line(const CLI::App& app, const CLI::ParseError& error) {
  // The command the parse reached: a mistyped option is one of its options.
  const CLI::App* reached = &app;
  while (!reached->get_subcommands().empty()) reached = reached->get_subcommands().front();
  const CLI::App* command = reached == &app ? nullptr : reached;
  // Leftover arguments explain an ExtrasError, and the "subcommand required" error when the
  // first word named no command. (By type: CLI11 names an ExtrasError after the command.)
  const bool extras_error = dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr;
  const bool no_command =
      command == nullptr && dynamic_cast<const CLI::RequiredError*>(&error) != nullptr;
  if (extras_error || no_command) {
    const std::vector<std::string> extras = app.remaining(true);
    const auto option = std::find_if(extras.begin(), extras.end(), starts_with_dash);
    if (option != extras.end())
      return "reducelab: " + unknown_option_message(*reached, command, *option);
    if (command == nullptr)
      return "reducelab: " + unknown_command_message(app, extras.empty() ? "" : extras.front());
  }
  const std::string where = command == nullptr ? "" : command->get_name() + ": ";
  return "reducelab: " + where + one_line(error.what());
}

}  // namespace

void add_measure_options(CLI::App& command, MeasureOptions& o, unsigned taken) {
  o.taken = taken;
  command.add_option("--op", o.ops, op_help((taken & kTakesOpList) != 0))->capture_default_str();
  if (taken & kTakesDTypes)
    command.add_option("--dtype", o.dtypes, dtype_help())->capture_default_str();
  command.add_option("--rungs", o.rungs, rungs_help(true))->capture_default_str();
  if (taken & kTakesTiming) {
    command.add_option("--reps", o.reps, "timed calls per row; the table shows their median")
        ->check(CLI::Range(20, 1000000))
        ->capture_default_str();
    command.add_option("--warmup", o.warmup, "untimed calls before timing")
        ->check(CLI::Range(1, 10000))
        ->capture_default_str();
  }
  command.add_option("--seed", o.seed, "seed of the random inputs")->capture_default_str();
  // How many devices there are is known only once the device is queried; a sign is wrong now.
  const CLI::Validator ordinal(
      [](std::string& value) {
        return value.rfind('-', 0) == 0 ? "Value " + value + " is negative: devices count from 0"
                                        : std::string();
      },
      "ORDINAL");
  command.add_option("--device", o.device, "CUDA device ordinal")
      ->check(ordinal)
      ->capture_default_str();
  command.add_flag("--no-cub", o.no_cub, "leave out the CUB row");
  command.add_flag("--no-production", o.no_production, "leave out the reducelab row");
  command
      .add_option("--determinism", o.determinism,
                  "gpu_to_gpu: also a reducelab row in the reproducible mode (sum, dot, mean, "
                  "var, std, var_mean, std_mean, logsumexp and norm of the floating types), "
                  "beside the default run_to_run one")
      ->check(CLI::IsMember({std::string(to_string(Determinism::run_to_run)),
                             std::string(to_string(Determinism::gpu_to_gpu))}))
      ->capture_default_str();
  if (taken & kTakesTables) {
    command.add_option(kCsvFlag, o.csv, "also write the rows as CSV to this file");
    command.add_option(kJsonFlag, o.json,
                       "also write the rows and their context as JSON to this file");
  }
  if (taken & kTakesMarkdown)
    command.add_option(kMarkdownFlag, o.markdown, "also write the markdown tables to this file");
}

MeasurePlan check_measure_options(const MeasureOptions& o) {
  MeasurePlan plan;
  // profile measures one op: "sum,dot" is an unknown op there, not a list.
  plan.ops = (o.taken & kTakesOpList) != 0 ? parse_ops(o.ops) : std::vector<Op>{parse_op(o.ops)};
  plan.dtypes = parse_dtypes(o.dtypes);
  plan.suite.rungs = parse_rungs(o.rungs);
  plan.suite.cub = !o.no_cub;
  plan.suite.production = !o.no_production;
  plan.suite.gpu_to_gpu = o.determinism == to_string(Determinism::gpu_to_gpu);
  plan.suite.reps = o.reps;
  plan.suite.warmup = o.warmup;
  plan.suite.seed = o.seed;
  check_output_path(kCsvFlag, o.csv);
  check_output_path(kJsonFlag, o.json);
  check_output_path(kMarkdownFlag, o.markdown);
  return plan;
}

void check_output_path(std::string_view flag, const std::string& path) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  auto fail = [&](const std::string& why) {
    throw Error(ErrorCode::invalid_argument, std::string(flag) + " '" + path + "': " + why);
  };
  auto denied = [] { return std::string(std::strerror(errno)); };
  std::error_code ec;
  const fs::file_status file = fs::status(path, ec);
  if (fs::exists(file)) {
    if (fs::is_directory(file)) fail("is a directory, not a file");
    if (access(path.c_str(), W_OK) != 0) fail("cannot be written (" + denied() + ")");
    return;
  }
  if (file.type() != fs::file_type::not_found) fail("cannot be checked (" + ec.message() + ")");
  fs::path directory = fs::path(path).parent_path();
  if (directory.empty()) directory = ".";
  const fs::file_status parent = fs::status(directory, ec);
  if (!fs::exists(parent)) fail("directory '" + directory.string() + "' does not exist");
  if (!fs::is_directory(parent)) fail("'" + directory.string() + "' is not a directory");
  if (access(directory.c_str(), W_OK | X_OK) != 0)
    fail("cannot create a file in '" + directory.string() + "' (" + denied() + ")");
}

std::ofstream open_output(const std::string& path) {
  std::ofstream out(path);
  if (!out) throw Error(ErrorCode::invalid_argument, "cannot write '" + path + "'");
  return out;
}

std::vector<const ladder::Rung*> parse_rungs(std::string_view text) {
  if (detail::to_lower(strip_spaces(text)) == "none") return {};
  return ladder::parse_rung_list(strip_spaces(text));
}

std::string rungs_help(bool none_allowed) {
  std::string text = none_allowed ? "ladder rungs: all, none, or a list such as V0,V3,V7 ("
                                  : "ladder rungs: all, or a list such as V0,V3,V7 (";
  for (const ladder::Rung& rung : ladder::rungs())
    text += std::string(rung.id) + " " + rung.name + "; ";
  text.resize(text.size() - 2);
  return text + ")";
}

int run_app(CLI::App& app, int argc, const char* const* argv, std::ostream& out,
            std::ostream& err) {
  try {
    app.parse(argc, argv);
    return 0;
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive as "errors" with exit code 0: CLI11 prints them.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e, out, err);
    err << usage_error_line(app, e) << std::endl;
    return kUsageExit;
  } catch (const Error& e) {
    if (e.code() == ErrorCode::invalid_argument) {
      err << one_line(e.what()) << std::endl;
      return kUsageExit;
    }
    err << e.what() << std::endl;
    return kFailureExit;
  } catch (const std::exception& e) {
    err << "reducelab: " << e.what() << std::endl;
    return kFailureExit;
  }
}

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

namespace {

[[noreturn]] void bad_segments(std::string_view flag, std::string_view text, const std::string& why) {
  throw Error(ErrorCode::invalid_argument, "bad " + std::string(flag) + " '" + std::string(text) +
                                               "': " + why);
}

// A count inside a spec; parse_count's message without its "reducelab: " prefix.
std::size_t spec_count(std::string_view flag, std::string_view text, std::string_view part) {
  try {
    return parse_count(part);
  } catch (const Error& e) {
    std::string why = e.what();
    if (why.rfind("reducelab: ", 0) == 0) why.erase(0, std::strlen("reducelab: "));
    bad_segments(flag, text, why);
  }
}

// At most 2^62 elements in all (and no overflow of NUM x SIZE).
void check_total(std::string_view flag, std::string_view text, const bench::SegmentSpec& spec) {
  constexpr std::size_t kLimit = std::size_t{1} << 62;
  if (spec.count > kLimit / spec.size) bad_segments(flag, text, "more than 2^62 elements in all");
}

// "NUMxSIZE" into spec.count and spec.size.
void parse_rows(std::string_view flag, std::string_view text, std::string_view rows,
                bench::SegmentSpec& spec) {
  const std::size_t x = rows.find('x');
  if (x == std::string_view::npos)
    bad_segments(flag, text, "expected NUMxSIZE (rows x elements per row), e.g. 4194304x32");
  spec.count = spec_count(flag, text, rows.substr(0, x));
  spec.size = spec_count(flag, text, rows.substr(x + 1));
  check_total(flag, text, spec);
}

}  // namespace

bench::SegmentSpec parse_segments(std::string_view text, std::string_view flag) {
  const std::string_view kFlag = flag;
  const std::string compact = strip_spaces(text);
  const std::string_view spec_text(compact);
  const std::string expected =
      "expected fixed:NUMxSIZE, ragged:heavy:N:MEAN or ragged:uniform:N:MAX";
  bench::SegmentSpec spec;
  if (spec_text.rfind("fixed:", 0) == 0) {
    spec.kind = bench::SegmentKind::fixed;
    parse_rows(kFlag, text, spec_text.substr(6), spec);
    return spec;
  }
  if (spec_text.rfind("ragged:", 0) != 0) bad_segments(kFlag, text, expected);
  std::string_view rest = spec_text.substr(7);
  if (rest.rfind("heavy:", 0) == 0) {
    spec.kind = bench::SegmentKind::ragged_heavy;
    rest.remove_prefix(6);
  } else if (rest.rfind("uniform:", 0) == 0) {
    spec.kind = bench::SegmentKind::ragged_uniform;
    rest.remove_prefix(8);
  } else {
    bad_segments(kFlag, text, "ragged segments are heavy:N:MEAN or uniform:N:MAX");
  }
  const std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos || rest.find(':', colon + 1) != std::string_view::npos)
    bad_segments(kFlag, text, expected);
  spec.count = spec_count(kFlag, text, rest.substr(0, colon));
  spec.size = spec_count(kFlag, text, rest.substr(colon + 1));
  check_total(kFlag, text, spec);
  return spec;
}

bench::AxisShape parse_axis_shape(std::string_view shape, std::string_view axes) {
  constexpr std::string_view kShape = "--shape";
  constexpr std::string_view kAxis = "--axis";
  const std::string sizes = strip_spaces(shape);
  const std::size_t rank =
      static_cast<std::size_t>(std::count(sizes.begin(), sizes.end(), 'x')) + 1;
  if (rank > static_cast<std::size_t>(kMaxRank))
    bad_segments(kShape, shape, "rank " + std::to_string(rank) + " is above " +
                                    std::to_string(kMaxRank) + " (write AxBxC, at most " +
                                    std::to_string(kMaxRank) + " sizes)");
  bench::AxisShape out;
  std::size_t elements = 1;
  for (std::size_t start = 0; start <= sizes.size();) {
    const std::size_t x = std::min(sizes.find('x', start), sizes.size());
    const std::size_t size =
        spec_count(kShape, shape, std::string_view(sizes).substr(start, x - start));
    if (size > (std::size_t{1} << 62) / elements)
      bad_segments(kShape, shape, "more than 2^62 elements in all");
    elements *= size;
    out.sizes.push_back(size);
    start = x + 1;
  }
  const int r = static_cast<int>(rank);
  const std::string list = strip_spaces(axes);
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    const std::size_t digits = item.rfind('-', 0) == 0 ? 1 : 0;
    if (item.size() == digits || item.size() > digits + 2 ||
        !std::all_of(item.begin() + digits, item.end(),
                     [](unsigned char c) { return std::isdigit(c); }))
      bad_segments(kAxis, axes, "expected a comma list of axes such as 1, -1 or 0,2");
    const int axis = std::stoi(item);
    if (axis < -r || axis >= r)
      bad_segments(kAxis, axes, "axis " + item + " is out of range for the rank-" +
                                    std::to_string(r) + " --shape " + sizes + " (axes " +
                                    std::to_string(-r) + ".." + std::to_string(r - 1) + ")");
    const AxisMask bit = AxisMask{1} << (axis < 0 ? axis + r : axis);
    if (out.mask & bit)
      bad_segments(kAxis, axes, "axis " + std::to_string(axis < 0 ? axis + r : axis) +
                                    " is listed twice");
    out.mask |= bit;
    start = comma + 1;
  }
  return out;
}

std::vector<bench::SegmentSpec> parse_segment_sizes(std::string_view sizes, std::size_t total) {
  static constexpr std::size_t kDefaultSizes[] = {4,    8,    32,        256,
                                                  1024, 4096, 1u << 16, 1u << 20};
  const std::vector<std::size_t> list = parse_list<std::size_t>(
      sizes, [](std::string_view s) { return parse_count(s); }, kDefaultSizes);
  std::vector<bench::SegmentSpec> specs;
  for (std::size_t size : list) {
    if (size > total)
      throw Error(ErrorCode::invalid_argument,
                  "--segment-sizes: " + std::to_string(size) + " exceeds --total " +
                      std::to_string(total));
    specs.push_back({bench::SegmentKind::fixed, total / size, size});
  }
  return specs;
}

std::vector<bench::AxisShape> parse_axis_sweep(std::string_view sweep, std::size_t total,
                                               std::optional<int> from, std::optional<int> to) {
  const std::string name = detail::to_lower(strip_spaces(sweep));
  const bool rows = name == "rows";
  if (!rows && name != "columns")
    throw Error(ErrorCode::invalid_argument,
                "bad --axis-sweep '" + std::string(sweep) + "': expected rows or columns");
  int top = 0;  // the largest power of two within the total
  while (top < 62 && (std::size_t{2} << top) <= total) ++top;
  const int lo = from.value_or(rows ? 2 : 0);
  const int hi = to.value_or(rows ? top : std::min(22, top));
  if (lo > hi)
    throw Error(ErrorCode::invalid_argument,
                "--axis-sweep " + name + ": --from " + std::to_string(lo) +
                    " must not exceed --to " + std::to_string(hi));
  if (hi > top)
    throw Error(ErrorCode::invalid_argument,
                "--axis-sweep " + name + ": 2^" + std::to_string(hi) + " " +
                    (rows ? "elements per row" : "columns") + " exceed --total " +
                    std::to_string(total));
  std::vector<bench::AxisShape> shapes;
  for (int k = lo; k <= hi; ++k) {
    const std::size_t inner = std::size_t{1} << k;  // the row length: reduced or kept
    shapes.push_back({{total / inner, inner}, rows ? AxisMask{2} : AxisMask{1}});
  }
  return shapes;
}

std::vector<Op> parse_ops(std::string_view text) {
  // "all" alone is every op; in a list it is the op all (torch.all). Each other item is an op
  // or a group (core, stats), in order, without repeats.
  const std::string compact = detail::to_lower(strip_spaces(text));
  if (compact == "all") return {kAllOps.begin(), kAllOps.end()};
  std::vector<Op> out;
  auto add = [&out](Op op) {
    if (std::find(out.begin(), out.end(), op) == out.end()) out.push_back(op);
  };
  std::size_t start = 0;
  while (start <= compact.size()) {
    const std::size_t comma = std::min(compact.find(',', start), compact.size());
    const std::string item = compact.substr(start, comma - start);
    if (item == "core") {
      for (Op op : kCoreOps) add(op);
    } else if (item == "stats") {
      for (Op op : kStatisticOps) add(op);
    } else if (!item.empty()) {
      add(parse_op(item));
    }
    start = comma + 1;
  }
  if (out.empty()) throw Error(ErrorCode::invalid_argument, "empty list '" + std::string(text) + "'");
  return out;
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
  if (!csv_path.empty()) {
    std::ofstream out = open_output(csv_path);
    bench::write_csv(out, context, rows);
  }
  if (!json_path.empty()) {
    std::ofstream out = open_output(json_path);
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

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/suite.hpp"
#include "cli/options.hpp"
#include "reducelab/error.hpp"

namespace reducelab::cli {
namespace {

// An app shaped like reducelab's: the three measuring commands with the shared options each
// takes (and bench's own --n), a hidden command, and explain's --rungs. Each callback checks its
// options as the real commands do before they touch a device, then records that it got there.
struct TestApp {
  CLI::App app{"test"};
  MeasureOptions bench;
  MeasureOptions sweep;
  MeasureOptions profile;
  MeasureOptions hidden;
  std::string n;
  std::string explain_rungs = "all";
  std::vector<std::string> reached;  // the commands whose checks passed ("the device query")

  TestApp() {
    app.require_subcommand(1);
    app.set_version_flag("--version", "1.2.3");
    add("bench", bench, kTakesOpList | kTakesDTypes | kTakesTiming | kTakesTables | kTakesMarkdown)
        ->add_option("--n", n);
    add("sweep", sweep, kTakesOpList | kTakesDTypes | kTakesTiming | kTakesTables);
    add("profile", profile, kTakesMarkdown);
    add("profile-target", hidden, 0)->group("");
    CLI::App* explain = app.add_subcommand("explain", "the model");
    explain->add_option("--rungs", explain_rungs, rungs_help(false));
    explain->callback([this] {
      ladder::parse_rung_list(explain_rungs);
      reached.push_back("explain");
    });
  }

  CLI::App* add(const std::string& name, MeasureOptions& options, unsigned taken) {
    CLI::App* command = app.add_subcommand(name, name);
    add_measure_options(*command, options, taken);
    command->callback([this, name, &options] {
      check_measure_options(options);
      reached.push_back(name);
    });
    return command;
  }

  // Runs the command line; `out` and `err` receive what the user would see.
  int run(std::vector<std::string> args) {
    args.insert(args.begin(), "reducelab");
    std::vector<const char*> argv;
    for (const std::string& arg : args) argv.push_back(arg.c_str());
    out.str("");
    err.str("");
    return run_app(app, static_cast<int>(argv.size()), argv.data(), out, err);
  }
  std::ostringstream out;
  std::ostringstream err;
};

// The usage-error contract, on a fresh app (CLI11 keeps the values of an earlier parse):
// nothing on stdout, one line on stderr starting "reducelab: ", exit 2, no command reached.
void expect_usage_error(const std::vector<std::string>& args, const std::string& wanted) {
  TestApp t;
  const int status = t.run(args);
  const std::string err = t.err.str();
  EXPECT_EQ(status, kUsageExit) << err;
  EXPECT_EQ(t.out.str(), "");
  EXPECT_EQ(err.rfind("reducelab: ", 0), 0u) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find(wanted), std::string::npos) << "'" << wanted << "' not in: " << err;
  EXPECT_TRUE(t.reached.empty()) << err;
}

TEST(ParseCount, AcceptsTheWaysPeopleWriteSizes) {
  EXPECT_EQ(parse_count("134217728"), std::size_t{1} << 27);
  EXPECT_EQ(parse_count("2^27"), std::size_t{1} << 27);
  EXPECT_EQ(parse_count("1<<27"), std::size_t{1} << 27);
  EXPECT_EQ(parse_count("2^20+3"), (std::size_t{1} << 20) + 3);
  EXPECT_EQ(parse_count(" 2^24 + 7 "), (std::size_t{1} << 24) + 7);
  EXPECT_EQ(parse_count("2^31+5"), (std::size_t{1} << 31) + 5);
  EXPECT_EQ(parse_count("0", true), 0u);
}

TEST(ParseCount, RejectsNonsenseWithAClearError) {
  for (const char* bad : {"", "abc", "3^4", "2^", "2^64", "1<<70", "0", "-5", "1e6", "2^27+", "99999999999999999999999"}) {
    try {
      parse_count(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("bad element count"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseLists, OpsAndDtypes) {
  EXPECT_EQ(parse_ops("sum"), std::vector<Op>{Op::sum});
  EXPECT_EQ(parse_ops("sum, dot,sum"), (std::vector<Op>{Op::sum, Op::dot}));
  EXPECT_EQ(parse_ops("all").size(), kOpCount);
  EXPECT_EQ(parse_ops("core").size(), 6u);
  EXPECT_EQ(parse_ops("stats").size(), kStatisticOps.size());
  // Groups expand in place, without repeats.
  const std::vector<Op> mixed = parse_ops("sum, Stats,mean,core");
  EXPECT_EQ(mixed.size(), kOpCount);
  EXPECT_EQ(mixed[0], Op::sum);
  EXPECT_EQ(mixed[1], Op::mean);
  // In a list, all is the op.
  EXPECT_EQ(parse_ops("any,all"), (std::vector<Op>{Op::any, Op::all}));
  EXPECT_EQ(parse_dtypes("f16,bf16"), (std::vector<DType>{DType::f16, DType::bf16}));
  EXPECT_EQ(parse_dtypes("float"), std::vector<DType>{DType::f32});
  EXPECT_EQ(parse_dtypes("all").size(), 8u);
  EXPECT_THROW(parse_ops("average"), Error);
  EXPECT_THROW(parse_dtypes("f8"), Error);
  EXPECT_THROW(parse_ops(","), Error);
}

TEST(Names, RoundTrip) {
  for (Op op : kAllOps) EXPECT_EQ(parse_op(to_string(op)), op);
  for (DType d : kAllDTypes) EXPECT_EQ(parse_dtype(to_string(d)), d);
  EXPECT_EQ(size_of(DType::f16), 2u);
  EXPECT_EQ(size_of(DType::u64), 8u);
  EXPECT_EQ(input_arrays(Op::dot), 2);
  EXPECT_EQ(input_arrays(Op::argmax), 1);
}

// ---- The shared options -----------------------------------------------------------------

TEST(SharedOptions, ParseTheSameInEveryMeasuringCommand) {
  const std::vector<std::string> shared = {
      "--op", "max",      "--rungs", "V0,v7",    "--seed",
      "7",    "--device", "1",       "--no-cub", "--no-production"};
  for (const std::string command : {"bench", "sweep", "profile", "profile-target"}) {
    TestApp t;
    std::vector<std::string> args = {command};
    args.insert(args.end(), shared.begin(), shared.end());
    ASSERT_EQ(t.run(args), 0) << command << ": " << t.err.str();
    ASSERT_EQ(t.reached, std::vector<std::string>{command});
    const MeasureOptions& o = command == "bench"     ? t.bench
                              : command == "sweep"   ? t.sweep
                              : command == "profile" ? t.profile
                                                     : t.hidden;
    EXPECT_EQ(o.ops, "max") << command;
    EXPECT_EQ(o.rungs, "V0,v7") << command;
    EXPECT_EQ(o.seed, 7u) << command;
    EXPECT_EQ(o.device, 1) << command;
    EXPECT_TRUE(o.no_cub) << command;
    EXPECT_TRUE(o.no_production) << command;
    const MeasurePlan plan = check_measure_options(o);
    EXPECT_EQ(plan.ops, std::vector<Op>{Op::max}) << command;
    ASSERT_EQ(plan.suite.rungs.size(), 2u) << command;
    EXPECT_EQ(std::string(plan.suite.rungs[1]->id), "V7") << command;
    EXPECT_EQ(plan.suite.seed, 7u) << command;
    EXPECT_FALSE(plan.suite.cub) << command;
    EXPECT_FALSE(plan.suite.production) << command;
  }
}

TEST(SharedOptions, EachCommandTakesOnlyItsOwn) {
  TestApp t;
  expect_usage_error({"profile", "--reps", "50"}, "unknown option '--reps' for profile");
  expect_usage_error({"profile", "--dtype", "f16"}, "unknown option '--dtype' for profile");
  expect_usage_error({"sweep", "--md", "x.md"}, "unknown option '--md' for sweep");
  // profile measures one op; bench and sweep take lists.
  expect_usage_error({"profile", "--op", "sum,dot"}, "unknown op 'sum,dot'");
  EXPECT_EQ(t.run({"bench", "--op", "sum,dot", "--dtype", "all", "--reps", "20"}), 0)
      << t.err.str();
  EXPECT_EQ(check_measure_options(t.bench).dtypes.size(), kDTypeCount);
}

TEST(SharedOptions, OneSeedEverywhere) {
  EXPECT_EQ(bench::kDefaultSeed, 20261130u);
  EXPECT_EQ(MeasureOptions{}.seed, bench::kDefaultSeed);
  EXPECT_EQ(bench::SuiteConfig{}.seed, bench::kDefaultSeed);
  TestApp t;
  for (const char* command : {"bench", "sweep", "profile"}) ASSERT_EQ(t.run({command}), 0);
  EXPECT_EQ(t.bench.seed, bench::kDefaultSeed);
  EXPECT_EQ(t.sweep.seed, bench::kDefaultSeed);
  EXPECT_EQ(t.profile.seed, bench::kDefaultSeed);
}

TEST(SharedOptions, HelpListsEveryOpAndDtypeFromTheTables) {
  TestApp t;
  EXPECT_EQ(t.run({"bench", "--help"}), 0);
  const std::string help = t.out.str();
  for (const OpInfo& op : kOps) {
    EXPECT_NE(help.find(std::string(op.name) + " (" + std::string(op.summary) + ")"),
              std::string::npos)
        << op.name;
  }
  std::string dtypes;
  for (const DTypeInfo& dtype : kDTypes)
    dtypes += (dtypes.empty() ? "" : ", ") + std::string(dtype.name);
  EXPECT_NE(help.find(dtypes), std::string::npos) << dtypes;
  EXPECT_NE(help.find("the ladder rows exist for " + ladder::supported_ops_text() + " only"),
            std::string::npos);
  for (const ladder::Rung& rung : ladder::rungs())
    EXPECT_NE(help.find(std::string(rung.id) + " " + rung.name), std::string::npos) << rung.id;
  EXPECT_EQ(t.err.str(), "");
}

// ---- Usage errors: one line, exit 2, a suggestion for a close typo ------------------------

TEST(UsageErrors, TypoedCommandGetsASuggestion) {
  expect_usage_error({"bnech"}, "unknown command 'bnech' (did you mean 'bench'?)");
  expect_usage_error({"explian"}, "did you mean 'explain'?");
  // The hidden command is never offered: the list ends with explain.
  expect_usage_error({"xyz"}, "expected one of: bench sweep profile explain\n");
  expect_usage_error({}, "no command given");
}

TEST(UsageErrors, TypoedOptionGetsASuggestion) {
  expect_usage_error({"bench", "--rep", "50"},
                     "unknown option '--rep' for bench (did you mean '--reps'?)");
  expect_usage_error({"sweep", "--no-cu"}, "did you mean '--no-cub'?");
  expect_usage_error({"explain", "--rung", "V1"}, "did you mean '--rungs'?");
  expect_usage_error({"bench", "--jsn=x.json"}, "did you mean '--json'?");
  expect_usage_error({"--bogus"}, "unknown option '--bogus'; see 'reducelab --help'");
  // Only a close name is offered: "--md" is two edits from "--to", but so is every two-letter
  // name from every other.
  expect_usage_error({"sweep", "--md", "x.md"},
                     "unknown option '--md' for sweep; see 'reducelab sweep --help'");
}

TEST(UsageErrors, OutOfRangeAndMissingValuesNameTheFlag) {
  expect_usage_error({"bench", "--reps", "3"},
                     "reducelab: bench: --reps: Value 3 not in range 20 to 1000000");
  expect_usage_error({"sweep", "--warmup", "0"}, "--warmup: Value 0 not in range 1 to 10000");
  expect_usage_error({"bench", "--reps"}, "--reps");
  expect_usage_error({"bench", "--seed", "abc"}, "--seed");
  expect_usage_error({"profile", "--device", "-1"}, "--device");
}

TEST(UsageErrors, UnknownNamesSuggestAndListTheValidOnes) {
  expect_usage_error({"bench", "--op", "sun"}, "unknown op 'sun' (did you mean 'sum'?)");
  expect_usage_error({"sweep", "--dtype", "f23"}, "did you mean 'f32'?");
  expect_usage_error({"bench", "--rungs", "V0,V33"},
                     "unknown rung 'V33' (did you mean 'V3'?); expected one of: V0 V1 V2 V3 V4 "
                     "V5 V6 V7 all");
  expect_usage_error({"explain", "--rungs", "al"}, "did you mean 'all'?");
}

TEST(UsageErrors, HelpAndVersionPrintNormally) {
  TestApp t;
  EXPECT_EQ(t.run({"--version"}), 0);
  EXPECT_EQ(t.out.str(), "1.2.3\n");
  EXPECT_EQ(t.run({"--help"}), 0);
  EXPECT_NE(t.out.str().find("bench"), std::string::npos);
  EXPECT_EQ(t.err.str(), "");
}

TEST(UsageErrors, RunFailuresAreNotUsageErrors) {
  CLI::App app{"test"};
  app.add_subcommand("bench", "")->callback([] {
    throw Error(ErrorCode::no_device, "no CUDA device: none here");
  });
  const char* argv[] = {"reducelab", "bench"};
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run_app(app, 2, argv, out, err), kFailureExit);
  EXPECT_EQ(err.str(), "reducelab: no CUDA device: none here\n");
}

// ---- Output paths, checked before a run -----------------------------------------------------

class OutputPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("reducelab-test-options-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(OutputPaths, MissingDirectoryIsOneLineNamingFlagAndPathBeforeTheRun) {
  expect_usage_error({"bench", "--json", "/nonexistent-dir/x.json"},
                     "reducelab: --json '/nonexistent-dir/x.json': directory "
                     "'/nonexistent-dir' does not exist");
  expect_usage_error({"sweep", "--csv", path("no/such/dir.csv")}, "--csv '");
  expect_usage_error({"profile", "--md", path("missing/x.md")}, "--md '");
}

TEST_F(OutputPaths, DirectoriesAndFilesUnderAFileAreRefused) {
  std::ofstream(path("plain")) << "x";
  try {
    check_output_path("--csv", dir_.string());
    ADD_FAILURE() << "a directory was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  try {
    check_output_path("--md", path("plain") + "/x.md");
    ADD_FAILURE() << "a path under a file was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("is not a directory"), std::string::npos) << e.what();
  }
}

TEST_F(OutputPaths, WritablePathsPassAndNothingIsCreatedOrTruncated) {
  check_output_path("--json", "");  // not asked for
  check_output_path("--json", path("new.json"));
  EXPECT_FALSE(std::filesystem::exists(path("new.json")));
  std::ofstream(path("old.csv")) << "old results\n";
  check_output_path("--csv", path("old.csv"));
  std::ifstream in(path("old.csv"));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "old results");
  if (getuid() != 0) {  // root writes anything: the permission check only bites for others
    std::filesystem::permissions(
        dir_, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    EXPECT_THROW(check_output_path("--csv", path("x.csv")), Error);
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all);
  }
}

TEST(ParseRungs, NoneAllAndLists) {
  EXPECT_TRUE(parse_rungs("none").empty());
  EXPECT_TRUE(parse_rungs("None").empty());
  EXPECT_EQ(parse_rungs("all").size(), ladder::rungs().size());
  EXPECT_EQ(parse_rungs("V1, V2").size(), 2u);
  EXPECT_THROW(parse_rungs("V1,V9"), Error);
}

}  // namespace
}  // namespace reducelab::cli

// ---- Segment shapes (bench --segments / --shape) ----------------------------------------------

namespace reducelab::cli {
namespace {

TEST(ParseSegments, FixedRaggedAndShape) {
  const bench::SegmentSpec fixed = parse_segments("fixed:4194304x32");
  EXPECT_EQ(fixed.kind, bench::SegmentKind::fixed);
  EXPECT_EQ(fixed.count, 4194304u);
  EXPECT_EQ(fixed.size, 32u);
  EXPECT_EQ(fixed.text(), "fixed:4194304x32");
  EXPECT_EQ(parse_segments("fixed:2^22x2^5").text(), "fixed:4194304x32");

  const bench::SegmentSpec heavy = parse_segments("ragged:heavy:2^17:1024");
  EXPECT_EQ(heavy.kind, bench::SegmentKind::ragged_heavy);
  EXPECT_EQ(heavy.count, std::size_t{1} << 17);
  EXPECT_EQ(heavy.size, 1024u);
  EXPECT_EQ(heavy.text(), "ragged:heavy:131072:1024");

  const bench::SegmentSpec uniform = parse_segments("ragged:uniform:1000:64");
  EXPECT_EQ(uniform.kind, bench::SegmentKind::ragged_uniform);
  EXPECT_EQ(uniform.text(), "ragged:uniform:1000:64");

}

TEST(ParseSegments, BadSpecsAreOneLineNamingTheSpec) {
  for (const char* bad : {"fixed:12", "fixed:x32", "fixed:12x", "fixed:0x32", "fixed:12x0",
                          "ragged:heavy:10", "ragged:heavy:10:0", "ragged:zipf:10:4",
                          "ragged:uniform:a:4", "ragged:uniform:1:2:3", "rows:4x4", "",
                          "fixed:2^40x2^30"}) {
    try {
      parse_segments(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_EQ(what.rfind("reducelab: ", 0), 0u) << what;
      EXPECT_EQ(what.find("reducelab: ", 1), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find(std::string("'") + bad + "'"), std::string::npos) << what;
    }
  }
}

// ---- N-d shapes and axes (bench --shape AxBxC --axis LIST, sweep --axis-sweep) ----------------

TEST(ParseAxisShape, ShapesAndAxes) {
  const bench::AxisShape rows = parse_axis_shape("4194304x32", "1");
  EXPECT_EQ(rows.sizes, (std::vector<std::size_t>{4194304, 32}));
  EXPECT_EQ(rows.mask, 2u);
  EXPECT_EQ(rows.text(), "4194304x32");
  EXPECT_EQ(rows.axes_text(), "1");
  EXPECT_TRUE(rows.rows());
  EXPECT_EQ(rows.segments().text(), "fixed:4194304x32");  // the segmented suite's shape

  EXPECT_EQ(parse_axis_shape("64x1024", "-1").mask, 2u);  // the default: the last axis
  EXPECT_EQ(parse_axis_shape("2^15 x 2^12", "0").text(), "32768x4096");
  EXPECT_FALSE(parse_axis_shape("32768x4096", "0").rows());
  const bench::AxisShape several = parse_axis_shape("8x16x32", "0, 2");
  EXPECT_EQ(several.mask, 5u);
  EXPECT_EQ(several.axes_text(), "0,2");
  EXPECT_EQ(parse_axis_shape("8x16x32", "-3,-1").mask, 5u);
  EXPECT_EQ(parse_axis_shape("2^27", "0").sizes.size(), 1u);
  EXPECT_EQ(parse_axis_shape("1x2^27", "1").segments().text(), "fixed:1x134217728");
  EXPECT_EQ(parse_axis_shape("2x2x2x2x2x2x2x2", "7").sizes.size(), 8u);
}

TEST(ParseAxisShape, BadShapesAndAxesAreOneLineNamingTheFlag) {
  const std::pair<const char*, const char*> bad[] = {
      {"64x", "1"},           {"x64", "0"},          {"64x0", "1"},
      {"2^40x2^30", "1"},     {"1x1x1x1x1x1x1x1x1", "0"},  // rank 9
      {"64x1024", "2"},       {"64x1024", "-3"},     {"64x1024", "0,0"},
      {"64x1024", "1,-1"},    {"64x1024", ""},       {"64x1024", "a"},
      {"64x1024", "1,"},      {"64x1024", "--1"},    {"64", "1"}};
  for (const auto& [shape, axes] : bad) {
    try {
      parse_axis_shape(shape, axes);
      ADD_FAILURE() << "'" << shape << "' --axis '" << axes << "' was accepted";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_EQ(what.rfind("reducelab: bad --", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  auto message = [](const char* shape, const char* axes) {
    try {
      parse_axis_shape(shape, axes);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message("64x1024", "2").find("axis 2 is out of range for the rank-2 --shape 64x1024 "
                                         "(axes -2..1)"),
            std::string::npos);
  EXPECT_NE(message("64x1024", "1,-1").find("axis 1 is listed twice"), std::string::npos);
  EXPECT_NE(message("1x1x1x1x1x1x1x1x1", "0").find("rank 9 is above 8"), std::string::npos);
}

TEST(ParseAxisShape, SweepsOfRowsAndColumns) {
  const std::size_t total = std::size_t{1} << 27;
  const auto rows = parse_axis_sweep("rows", total, std::nullopt, std::nullopt);
  ASSERT_EQ(rows.size(), 26u);  // L = 2^2 .. 2^27
  EXPECT_EQ(rows.front().text(), "33554432x4");
  EXPECT_EQ(rows.back().text(), "1x134217728");
  for (const bench::AxisShape& shape : rows) {
    EXPECT_EQ(shape.axes_text(), "1");
    EXPECT_TRUE(shape.rows());
  }
  const auto columns = parse_axis_sweep("columns", total, std::nullopt, std::nullopt);
  ASSERT_EQ(columns.size(), 23u);  // K = 2^0 .. 2^22
  EXPECT_EQ(columns.front().text(), "134217728x1");
  EXPECT_EQ(columns.back().text(), "32x4194304");
  EXPECT_EQ(columns.back().axes_text(), "0");
  EXPECT_EQ(columns.back().results(), std::size_t{1} << 22);
  EXPECT_FALSE(columns.back().rows());
  const auto some = parse_axis_sweep("Columns", 1000, 3, 5);  // N / K rounds down
  ASSERT_EQ(some.size(), 3u);
  EXPECT_EQ(some.front().text(), "125x8");
  EXPECT_EQ(some.back().text(), "31x32");
  EXPECT_EQ(parse_axis_sweep("columns", 16, std::nullopt, std::nullopt).size(), 5u);  // to 2^4
  EXPECT_THROW(parse_axis_sweep("diagonal", total, std::nullopt, std::nullopt), Error);
  EXPECT_THROW(parse_axis_sweep("rows", total, 5, 4), Error);
  EXPECT_THROW(parse_axis_sweep("rows", 1000, std::nullopt, 10), Error);  // 2^10 > 1000
}

TEST(ParseSegments, SweepSizesAtAFixedTotal) {
  const auto specs = parse_segment_sizes("4, 32,2^10", std::size_t{1} << 27);
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].text(), "fixed:33554432x4");
  EXPECT_EQ(specs[1].text(), "fixed:4194304x32");
  EXPECT_EQ(specs[2].text(), "fixed:131072x1024");
  EXPECT_EQ(parse_segment_sizes("all", std::size_t{1} << 27).size(), 8u);
  EXPECT_EQ(parse_segment_sizes("3", 10).front().text(), "fixed:3x3");  // rounds down
  EXPECT_THROW(parse_segment_sizes("0", 10), Error);
  EXPECT_THROW(parse_segment_sizes("16", 10), Error);
  EXPECT_THROW(parse_segment_sizes("4,,x", 10), Error);
}

TEST(SegmentOffsets, FixedAndUniformLengths) {
  const auto fixed = bench::segment_offsets(parse_segments("fixed:5x3"));
  EXPECT_EQ(fixed, (std::vector<std::int64_t>{0, 3, 6, 9, 12, 15}));
  const auto uniform = bench::segment_offsets(parse_segments("ragged:uniform:10000:64"));
  ASSERT_EQ(uniform.size(), 10001u);
  EXPECT_EQ(uniform[0], 0);
  std::int64_t longest = 0;
  bool empty = false;
  for (std::size_t s = 0; s + 1 < uniform.size(); ++s) {
    const std::int64_t length = uniform[s + 1] - uniform[s];
    ASSERT_GE(length, 0);
    ASSERT_LE(length, 64);
    longest = std::max(longest, length);
    empty = empty || length == 0;
  }
  EXPECT_EQ(longest, 64);
  EXPECT_TRUE(empty);
  EXPECT_EQ(uniform, bench::segment_offsets(parse_segments("ragged:uniform:10000:64")));
}

TEST(SegmentOffsets, HeavyTailHasTheMeanAndSegmentsOverAMillion) {
  const bench::SegmentSpec spec = parse_segments("ragged:heavy:2^17:2^10");
  const auto offsets = bench::segment_offsets(spec);
  ASSERT_EQ(offsets.size(), spec.count + 1);
  EXPECT_EQ(offsets.front(), 0);
  EXPECT_EQ(offsets.back(), std::int64_t{1} << 27);  // exactly N x MEAN
  std::int64_t longest = 0;
  std::size_t over_million = 0;
  std::size_t short_ones = 0;
  for (std::size_t s = 0; s < spec.count; ++s) {
    const std::int64_t length = offsets[s + 1] - offsets[s];
    ASSERT_GE(length, 0) << s;
    longest = std::max(longest, length);
    over_million += length > (std::int64_t{1} << 20);
    short_ones += length < 1024;
  }
  EXPECT_GT(over_million, 0u) << "longest " << longest;
  EXPECT_GT(short_ones, spec.count / 2);  // most segments are below the mean
  EXPECT_EQ(offsets, bench::segment_offsets(spec));  // a fixed seed: the same shape every run
}

}  // namespace
}  // namespace reducelab::cli

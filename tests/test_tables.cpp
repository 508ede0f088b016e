// The op and dtype tables (op.hpp, dtype.hpp) and what reads them, on the CPU: names and aliases
// round-trip, typos get a suggestion, result layout follows the table, and a library call without
// a GPU says why in one line a user can act on.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/device_info.hpp"
#include "common/text.hpp"
#include "reducelab/reducelab.hpp"

namespace reducelab {
namespace {

TEST(OpTable, EveryNameRoundTripsAndIsUnique) {
  std::set<std::string_view> names;
  for (const OpInfo& op : kOps) {
    EXPECT_EQ(parse_op(op.name), op.op);
    EXPECT_EQ(to_string(op.op), op.name);
    EXPECT_TRUE(names.insert(op.name).second) << op.name;
    EXPECT_EQ(input_arrays(op.op), op.op == Op::dot ? 2 : 1);
  }
  EXPECT_EQ(parse_op("ArgMax"), Op::argmax);
  EXPECT_EQ(kAllOps.size(), kOpCount);
  for (Op op : kLadderOps) EXPECT_TRUE(info(op).in_ladder);
  EXPECT_FALSE(is_valid(static_cast<Op>(kOpCount)));
  EXPECT_EQ(to_string(static_cast<Op>(-3)), "?");
}

TEST(DTypeTable, EveryNameAndAliasRoundTrips) {
  for (const DTypeInfo& d : kDTypes) {
    EXPECT_EQ(parse_dtype(d.name), d.dtype);
    for (std::string_view alias : d.aliases)
      if (!alias.empty()) EXPECT_EQ(parse_dtype(alias), d.dtype) << alias;
    EXPECT_EQ(size_of(d.dtype), d.size);
    dispatch_dtype(d.dtype, [&](auto value) {
      using T = decltype(value);
      EXPECT_EQ(sizeof(T), d.size) << d.name;
      EXPECT_EQ(dtype_of<T>::value, d.dtype);
      EXPECT_EQ(sizeof(sum_t<T>), size_of(d.sum_dtype));
      EXPECT_EQ(is_floating_v<T>, d.kind == DTypeKind::floating);
    });
  }
  EXPECT_EQ(parse_dtype("FLOAT16"), DType::f16);
}

TEST(Tables, ResultLayoutFollowsTheOpAndTheType) {
  EXPECT_EQ(result_size(Op::sum, DType::f16), 4u);   // f16 sums in f32
  EXPECT_EQ(result_size(Op::sum, DType::u32), 8u);   // 32-bit integer sums in 64 bits
  EXPECT_EQ(result_size(Op::dot, DType::f64), 8u);
  EXPECT_EQ(result_size(Op::min, DType::bf16), 2u);
  EXPECT_EQ(result_size(Op::argmin, DType::f16), 16u);
  EXPECT_EQ(result_alignment(Op::argmax, DType::i32), 8u);
  EXPECT_EQ(result_alignment(Op::max, DType::f64), 8u);
  for (Op op : kAllOps)
    for (DType dtype : kAllDTypes) EXPECT_LE(result_size(op, dtype), 16u);
  // The statistics: float for the 32- and 16-bit floats, double for f64; pairs of them.
  EXPECT_EQ(result_size(Op::var, DType::bf16), 4u);
  EXPECT_EQ(result_size(Op::logsumexp, DType::f64), 8u);
  EXPECT_EQ(result_size(Op::var_mean, DType::f32), 8u);
  EXPECT_EQ(result_size(Op::std_mean, DType::f64), 16u);
  EXPECT_EQ(result_alignment(Op::std_mean, DType::f64), 8u);
  EXPECT_EQ(result_size(Op::count_nonzero, DType::u32), 8u);
  EXPECT_EQ(result_size(Op::any, DType::f64), 1u);
  EXPECT_EQ(result_size(Op::aminmax, DType::f16), 4u);
  EXPECT_EQ(result_alignment(Op::aminmax, DType::f16), 2u);
  EXPECT_EQ(sizeof(StatPair<double>), 16u);
  EXPECT_EQ(sizeof(MinMax<__half>), 4u);
}

TEST(Tables, CoreAndStatisticsSplitTheOps) {
  EXPECT_EQ(kCoreOps.size() + kStatisticOps.size(), kOpCount);
  for (Op op : kCoreOps) EXPECT_TRUE(info(op).integers) << to_string(op);
  // The statistics of real values take the floating types only; the counts and aminmax all.
  for (Op op : {Op::mean, Op::var, Op::std, Op::var_mean, Op::std_mean, Op::norm, Op::logsumexp}) {
    EXPECT_FALSE(takes(op, DType::i32)) << to_string(op);
    EXPECT_TRUE(takes(op, DType::bf16)) << to_string(op);
  }
  for (Op op : {Op::count_nonzero, Op::any, Op::all, Op::aminmax})
    for (DType dtype : kAllDTypes) EXPECT_TRUE(takes(op, dtype)) << to_string(op);
  EXPECT_TRUE(takes_correction(Op::std_mean));
  EXPECT_FALSE(takes_correction(Op::norm));
  // An Op converts to a Reduction with the defaults: torch's correction 1, the 2-norm.
  const Reduction r = Op::var;
  EXPECT_EQ(r.correction, 1.0);
  EXPECT_EQ(Reduction::norm(1).ord, 1.0);
  EXPECT_EQ(Reduction::var(0).correction, 0.0);
}

TEST(Tables, TyposGetASuggestion) {
  auto message = [](auto&& parse) {
    try {
      parse();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string op = message([] { parse_op("argmxa"); });
  EXPECT_NE(op.find("did you mean 'argmax'"), std::string::npos) << op;
  EXPECT_NE(op.find("sum min max dot argmin argmax"), std::string::npos) << op;
  const std::string dtype = message([] { parse_dtype("bf61"); });
  EXPECT_NE(dtype.find("did you mean 'bf16'"), std::string::npos) << dtype;
  const std::string far = message([] { parse_op("histogram"); });
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
  EXPECT_EQ(detail::edit_distance("bench", "bnech"), 1u);  // one transposition
  EXPECT_EQ(detail::closest_match("sweeep", {"bench", "sweep", "explain"}), "sweep");
}

// Without a GPU (CI), a library call fails with ErrorCode::no_device, one line that says what is
// missing, and no source path of ours. With a GPU the call succeeds instead: nothing to check.
TEST(Errors, NoDeviceSaysWhyWithoutSourcePaths) {
  std::string reason;
  if (cuda_device_count(&reason) > 0) GTEST_SKIP() << "a GPU is present";
  EXPECT_NE(reason.find("driver"), std::string::npos) << reason;
  int fake = 0;
  try {
    (void)reducelab::sum(&fake, 1);
    ADD_FAILURE() << "no error without a GPU";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ErrorCode::no_device) << what;
    EXPECT_EQ(what.rfind("reducelab: no CUDA device: ", 0), 0u) << what;
    EXPECT_NE(what.find("driver"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    for (const char* internal : {".cpp", ".hpp", ".cu", "src/"})
      EXPECT_EQ(what.find(internal), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace reducelab

#include <gtest/gtest.h>

#include "cli/options.hpp"
#include "reducelab/error.hpp"

namespace reducelab::cli {
namespace {

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
  EXPECT_EQ(parse_ops("all").size(), 6u);
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

}  // namespace
}  // namespace reducelab::cli

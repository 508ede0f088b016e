#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "bench/profile.hpp"
#include "reducelab/error.hpp"

namespace reducelab::bench {
namespace {

TEST(Profile, CsvQuotingAndLineEnds) {
  const auto rows = parse_csv("a,\"b,c\",\"say \"\"hi\"\"\"\r\n1,2,3\n\n4,,6");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"a", "b,c", "say \"hi\""}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"4", "", "6"}));
}

TEST(Profile, KernelNamesMapToImplementations) {
  EXPECT_EQ(impl_of_kernel("void reducelab::ladder::<unnamed>::v0_naive_tree_kernel<reducelab::device::Sum, "
                           "reducelab::ladder::detail::Load1>(T2, unsigned long, float *)"),
            "V0");
  EXPECT_EQ(impl_of_kernel("void reducelab::ladder::<unnamed>::v7_vector_grid_stride_kernel<...>"), "V7");
  EXPECT_EQ(impl_of_kernel("void reducelab::detail::reduce_kernel<reducelab::detail::SumTraits<float, 1>, 512, 4>"),
            "reducelab");
  // As ncu prints it: the function's own namespace dropped (the first H200 profile lost this row).
  EXPECT_EQ(impl_of_kernel("void reduce_kernel<reducelab::detail::ArgTraits<float, true>, 256, 8, "
                           "(reducelab::device::LoadHint)1, true>(reducelab::detail::KernelArgs<T1::Elem>)"),
            "reducelab");
  // As ncu printed it on the H200 (the inner namespace dropped): the second profile lost the row.
  EXPECT_EQ(impl_of_kernel("void reducelab::reduce_kernel<reducelab::SumTraits<float, 1>, 512, 4, 1, 1>"
                           "(reducelab::KernelArgs<T1::Elem>)"),
            "reducelab");
  // Function base names only (ncu's default for some reports).
  EXPECT_EQ(impl_of_kernel("reduce_kernel"), "reducelab");
  EXPECT_EQ(impl_of_kernel("DeviceReduceKernel"), "CUB");
  EXPECT_EQ(impl_of_kernel("v6_warp_shuffle_kernel"), "V6");
  EXPECT_EQ(impl_of_kernel("void cub::CUB_300001_SM_900::detail::reduce::DeviceReduceKernel<...>"), "CUB");
  EXPECT_EQ(impl_of_kernel("void at::native::reduce_kernel<...>"), "");
  EXPECT_EQ(metric_base_name("dram__bytes_read.sum"), "dram__bytes_read");
}

// Two V0 kernels (pass 1 and a partials pass), one V1 kernel, one foreign kernel, a units row.
const char* const kCsv =
    "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes_read.sum\","
    "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"smsp__inst_executed.sum\","
    "\"smsp__thread_inst_executed_pred_on.sum\",\"smsp__inst_executed_op_shared_ld.sum\","
    "\"smsp__inst_executed_op_shared_st.sum\",\"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum\","
    "\"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum\",\"smsp__inst_executed_op_global_ld.sum\"\n"
    "\"\",\"\",\"ns\",\"byte\",\"%\",\"inst\",\"inst\",\"inst\",\"inst\",\"\",\"\",\"inst\"\n"
    "\"0\",\"void v0_naive_tree_kernel<A>(x)\",\"900\",\"4,000\",\"10\",\"100\",\"1600\",\"10\",\"10\",\"10\",\"10\",\"32\"\n"
    "\"1\",\"void v0_naive_tree_kernel<B>(x)\",\"100\",\"0\",\"20\",\"10\",\"320\",\"0\",\"0\",\"0\",\"0\",\"0\"\n"
    "\"2\",\"void v1_interleaved_kernel<A>(x)\",\"500\",\"4000\",\"30\",\"100\",\"3200\",\"10\",\"10\",\"30\",\"10\",\"32\"\n"
    "\"3\",\"void something_else(x)\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n";

TEST(Profile, AggregatesPassesAndDerivesTheFigures) {
  const auto impls = aggregate_ncu_csv(kCsv, 1024);
  ASSERT_EQ(impls.size(), 2u);
  const ImplCounters& v0 = impls[0];
  EXPECT_EQ(v0.impl, "V0");
  EXPECT_EQ(v0.kernels, 2);
  EXPECT_DOUBLE_EQ(v0.time_us, 1.0);
  EXPECT_DOUBLE_EQ(v0.dram_gbps, 4.0);                        // 4000 bytes / 1000 ns
  EXPECT_DOUBLE_EQ(v0.dram_pct, (10.0 * 900 + 20.0 * 100) / 1000);  // time-weighted
  EXPECT_DOUBLE_EQ(v0.warp_efficiency_pct, 100.0 * 1920 / (32.0 * 110));
  EXPECT_DOUBLE_EQ(v0.bank_conflict_degree, 1.0);
  EXPECT_DOUBLE_EQ(v0.global_loads_per_element, 1.0);
  const ImplCounters& v1 = impls[1];
  EXPECT_DOUBLE_EQ(v1.bank_conflict_degree, 2.0);  // 40 wavefronts for 20 instructions
  EXPECT_DOUBLE_EQ(v1.warp_efficiency_pct, 100.0);

  const auto checks = check_bottlenecks(impls);
  ASSERT_FALSE(checks.empty());
  EXPECT_EQ(checks[0].rung, "V1");
  EXPECT_EQ(checks[0].bottleneck, "warp divergence");
  EXPECT_TRUE(checks[0].removed);  // 54.5% -> 100%
  const std::string text = render_profile(impls, checks);
  EXPECT_NE(text.find("| V1 | warp divergence | warp execution efficiency % |"), std::string::npos) << text;
  EXPECT_NE(text.find("| yes |"), std::string::npos);
}

TEST(Profile, CsvWithoutKernelColumnIsAnError) {
  EXPECT_THROW(aggregate_ncu_csv("a,b\n1,2\n", 10), Error);
}

// ncu's own CSV from the H200 (`reducelab profile --n 2^24 --raw-csv`, commit 594cf64): every
// implementation, the production kernel included, is found under the names ncu really prints.
TEST(Profile, RealH200CsvHasEveryImplementation) {
  std::ifstream file(std::string(REDUCELAB_TEST_DATA) + "/h200-ncu-sum-f32-2p24.csv");
  ASSERT_TRUE(file) << "missing test data";
  std::stringstream csv;
  csv << file.rdbuf();
  const auto impls = aggregate_ncu_csv(csv.str(), std::size_t{1} << 24);
  std::vector<std::string> names;
  for (const auto& impl : impls) names.push_back(impl.impl);
  EXPECT_EQ(names, (std::vector<std::string>{"V0", "V1", "V2", "V3", "V4", "V5", "V6", "V7", "CUB",
                                             "reducelab"}));
  EXPECT_EQ(impls.back().kernels, 1);  // one kernel per call
  EXPECT_GT(impls.back().dram_pct, 50.0);
}

}  // namespace
}  // namespace reducelab::bench

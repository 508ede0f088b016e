#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "bench/report.hpp"
#include "bench/stats.hpp"
#include "reducelab/error.hpp"

namespace reducelab::bench {
namespace {

Measurement row(const std::string& impl, const std::string& kind, double median_us) {
  Measurement m;
  m.impl = impl;
  m.kind = kind;
  m.change = "change of " + impl;
  m.op = "sum";
  m.dtype = "f32";
  m.n = std::size_t{1} << 27;
  m.bytes = 536870912.0;
  m.time.samples = 50;
  m.time.median_us = median_us;
  finish(m, 4814.4);
  return m;
}

TEST(Stats, MedianAndNoise) {
  const Summary odd = summarize({5, 1, 3});
  EXPECT_EQ(odd.median_us, 3);
  EXPECT_EQ(odd.samples, 3u);
  const Summary even = summarize({4, 1, 3, 2});
  EXPECT_EQ(even.median_us, 2.5);
  EXPECT_EQ(even.min_us, 1);
  EXPECT_EQ(even.max_us, 4);
  EXPECT_NEAR(summarize({10, 10, 10}).noise_pct, 0.0, 1e-12);
  EXPECT_NEAR(summarize({9, 11}).noise_pct, 100.0 * std::sqrt(2.0) / 10.0, 1e-9);
  EXPECT_THROW(summarize({}), Error);
}

TEST(Report, BandwidthArithmetic) {
  const Measurement m = row("V7", "ladder", 127.6);
  EXPECT_NEAR(m.gbps, 536870912.0 / 127.6e-6 / 1e9, 1e-9);
  EXPECT_NEAR(m.peak_pct, 100.0 * m.gbps / 4814.4, 1e-9);
  EXPECT_EQ(gbps(1e9, 1e6), 1.0);
}

TEST(Report, Formatting) {
  EXPECT_EQ(format_count(std::size_t{1} << 27), "2^27");
  EXPECT_EQ(format_count(1), "2^0");
  EXPECT_EQ(format_count((1 << 20) + 3), "1048579");
  EXPECT_EQ(format_time(127.64), "127.6 us");
  EXPECT_EQ(format_time(1234.5), "1.234 ms");
  EXPECT_EQ(format_time(12345.0), "12.345 ms");
}

TEST(Report, TableShowsSpeedupOverV0AndTimeRelativeToCub) {
  std::vector<Measurement> rows = {row("V0", "ladder", 1000.0), row("V7", "ladder", 200.0),
                                   row("CUB", "cub", 125.0), row("reducelab", "production", 100.0)};
  rows.push_back(row("V3", "ladder", 0));
  rows.back().status = "wrong result: sum = 1, reference 2";
  const std::string table = render_table(rows);
  EXPECT_NE(table.find("| impl | change | median | noise | GB/s | % of peak | vs V0 | time / CUB |"),
            std::string::npos) << table;
  EXPECT_NE(table.find("| V7 | change of V7 | 200.0 us |"), std::string::npos) << table;
  EXPECT_NE(table.find("| 5.00x | 1.60x |"), std::string::npos) << table;    // V7
  EXPECT_NE(table.find("| 10.00x | 0.80x |"), std::string::npos) << table;   // reducelab
  EXPECT_NE(table.find("wrong result: sum = 1"), std::string::npos) << table;
  EXPECT_NE(table.find("sum f32, N = 2^27 (536.9 MB read)"), std::string::npos) << table;
  // Without V0 and CUB rows the relative columns are left out.
  const std::string alone = render_table({row("reducelab", "production", 100.0)});
  EXPECT_EQ(alone.find("vs V0"), std::string::npos);
  EXPECT_EQ(alone.find("time / CUB"), std::string::npos);
}

TEST(Report, TimeRelativeToTheFirstCubRowWhenThereAreTwo) {
  // The segmented suite with a newer CCCL: the toolkit's CUB, then the fixed-size one.
  const std::vector<Measurement> rows = {row("CUB", "cub", 125.0),
                                         row("CUB 3.6 fixed", "cub", 100.0),
                                         row("reducelab", "production", 50.0)};
  const std::string table = render_table(rows);
  EXPECT_NE(table.find("| CUB | change of CUB | 125.0 us |"), std::string::npos) << table;
  EXPECT_NE(table.find("| CUB 3.6 fixed | change of CUB 3.6 fixed | 100.0 us |"),
            std::string::npos) << table;
  EXPECT_NE(table.find("| 0.80x |"), std::string::npos) << table;  // CUB 3.6 fixed
  EXPECT_NE(table.find("| 0.40x |"), std::string::npos) << table;  // reducelab
  // A first CUB row that was not run leaves the reference to the next one.
  std::vector<Measurement> skipped = rows;
  skipped[0].status = "not run: CUB's segmented argmin gives int indices";
  EXPECT_NE(render_table(skipped).find("| 0.50x |"), std::string::npos);  // reducelab
}

TEST(Report, CsvAndJsonCarryTheContext) {
  Context context;
  context.command = "bench";
  context.commit = "abc123";
  context.date = "2026-11-30T00:00:00Z";
  context.device.name = "NVIDIA H200";
  context.device.driver = "580.159.04";
  context.device.cuda_runtime = "13.0";
  context.device.peak_gbps = 4814.4;
  context.l2_policy = "rotate, with a comma";
  const std::vector<Measurement> rows = {row("V0", "ladder", 1000.0)};
  std::ostringstream csv;
  write_csv(csv, context, rows);
  const std::string text = csv.str();
  EXPECT_EQ(text.rfind("gpu,driver,cuda_runtime,commit,date,l2_policy,impl,", 0), 0u) << text;
  EXPECT_NE(text.find("NVIDIA H200,580.159.04,13.0,abc123,2026-11-30T00:00:00Z,\"rotate, with a comma\",V0,ladder,sum,f32,134217728,"),
            std::string::npos) << text;
  const auto json = to_json(context, rows);
  EXPECT_EQ(json["schema"], "reducelab.results/1");
  EXPECT_EQ(json["context"]["gpu"], "NVIDIA H200");
  EXPECT_EQ(json["context"]["commit"], "abc123");
  EXPECT_EQ(json["results"][0]["impl"], "V0");
  EXPECT_EQ(json["results"][0]["n"], std::size_t{1} << 27);
  EXPECT_NEAR(json["results"][0]["gbps"].get<double>(), rows[0].gbps, 1e-9);
}

}  // namespace
}  // namespace reducelab::bench

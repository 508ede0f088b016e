#include <gtest/gtest.h>

#include "common/device_info.hpp"
#include "reducelab/error.hpp"

namespace reducelab {
namespace {

TEST(DeviceInfo, TheoreticalPeakIsClockTimesBusTimesTwo) {
  // H200 device attributes: 3,201,000 kHz, 6016-bit bus -> 4,814 GB/s (the brief's figure).
  EXPECT_NEAR(theoretical_peak_gbps(3201000, 6016), 4814.3, 0.1);
  // A100 80GB SXM4: 1,593,000 kHz, 5120-bit -> 2,039 GB/s (the article's figure).
  EXPECT_NEAR(theoretical_peak_gbps(1593000, 5120), 2039.0, 0.1);
  EXPECT_EQ(theoretical_peak_gbps(0, 6016), 0.0);
}

TEST(DeviceInfo, CudaVersionFormatting) {
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12080), "12.8");
  EXPECT_EQ(format_cuda_version(11040), "11.4");
}

TEST(DeviceInfo, NoDeviceIsAClearError) {
  std::string reason;
  if (cuda_device_count(&reason) > 0) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(reason.empty());
  try {
    query_device(0);
    FAIL() << "query_device without a GPU must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::no_device);
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace reducelab

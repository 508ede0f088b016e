#pragma once
// Shared by the GPU tests: skip with the reason where there is no CUDA device, a fixed printed
// seed, device buffers filled from host vectors, and the result check.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/random.hpp"
#include "bench/reference.hpp"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"

namespace reducelab::test {

//! Empty when a CUDA device is usable; otherwise why not.
inline const std::string& no_gpu_reason() {
  static const std::string reason = [] {
    std::string why;
    return cuda_device_count(&why) > 0 ? std::string() : why;
  }();
  return reason;
}

//! The seed of every random input, printed by gpu_main.cpp so a failure can be replayed: the
//! commands' default, so a test and a bench row draw the same inputs.
inline constexpr std::uint64_t kSeed = bench::kDefaultSeed;

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!no_gpu_reason().empty()) GTEST_SKIP() << "no GPU: " << no_gpu_reason();
  }
};

template <class P>
class GpuTestWithParam : public ::testing::TestWithParam<P> {
 protected:
  void SetUp() override {
    if (!no_gpu_reason().empty()) GTEST_SKIP() << "no GPU: " << no_gpu_reason();
  }
};

//! Expects `call` to throw reducelab::Error with ErrorCode::invalid_argument and a message that
//! contains `words`; `what` names the case in failures.
template <class Call>
void expect_invalid_argument(Call&& call, const char* what, const char* words) {
  try {
    call();
    ADD_FAILURE() << what << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << what;
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << what << ": " << e.what();
  }
}

template <class T>
DeviceBuffer<T> upload(const std::vector<T>& host, std::size_t offset = 0) {
  DeviceBuffer<T> device(host.size() + offset + 16);
  REDUCELAB_CUDA_CHECK(cudaMemcpy(device.data() + offset, host.data(), host.size() * sizeof(T),
                                  cudaMemcpyHostToDevice));
  return device;
}

}  // namespace reducelab::test

#pragma once
// Shared by the GPU tests: skip with the reason where there is no CUDA device, a fixed printed
// seed, device buffers filled from host vectors, and the result check.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
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

//! 32 x the warps the current GPU's SMs hold at most (at least 32,768): enough ragged segments
//! that every resident warp of the segmented kernels takes a group of 32 on any GPU.
inline std::size_t segments_for_full_groups() {
  int device = 0;
  int sms = 0;
  int threads_per_sm = 0;
  REDUCELAB_CUDA_CHECK(cudaGetDevice(&device));
  REDUCELAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  REDUCELAB_CUDA_CHECK(
      cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  const std::size_t warps_x32 = static_cast<std::size_t>(sms) * static_cast<std::size_t>(threads_per_sm);
  return warps_x32 > 32768 ? warps_x32 : 32768;
}

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

//! The byte every output buffer is filled with before a call, so what it does not write shows.
inline constexpr unsigned char kPoison = 0xA5;

//! Runs `call(d_out)` on a device buffer of `bytes` bytes (and 16 more) filled with kPoison, waits
//! for the device and returns the first `bytes` bytes.
template <class Call>
std::vector<unsigned char> poisoned_output(std::size_t bytes, Call&& call) {
  DeviceBuffer<unsigned char> out(bytes + 16);
  REDUCELAB_CUDA_CHECK(cudaMemset(out.data(), kPoison, bytes + 16));
  // The call may be on a non-blocking stream, which neither waits for the memset above nor is
  // waited for by the copy below (both on the legacy default stream): without these two
  // synchronisations the poison landed on the results of RepeatedCallsAreBitwiseEqual's second
  // call on the H200, before the copy (session 11), and after the kernel (session 17, with the
  // suite run as six processes sharing the GPU).
  REDUCELAB_CUDA_CHECK(cudaDeviceSynchronize());
  call(static_cast<void*>(out.data()));
  REDUCELAB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> host(bytes);
  REDUCELAB_CUDA_CHECK(cudaMemcpy(host.data(), out.data(), bytes, cudaMemcpyDeviceToHost));
  return host;
}

//! The documented result of a reduction of no elements (segmented.hpp, axis.hpp), as the bytes
//! d_out holds: all zero for sum and dot, the identity (index -1) for the others.
template <class T>
std::vector<unsigned char> empty_result(Op op) {
  std::vector<unsigned char> bytes(result_size(op, dtype_of<T>::value), 0);
  if (op == Op::sum || op == Op::dot) return bytes;
  const T value = bench::empty_extremum<T>(op);
  std::memcpy(bytes.data(), &value, sizeof(T));
  if (info(op).result == ResultKind::value_index) {
    const std::int64_t index = -1;
    std::memcpy(bytes.data() + 8, &index, sizeof(index));
  }
  return bytes;
}

}  // namespace reducelab::test

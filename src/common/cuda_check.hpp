#pragma once
// Turning CUDA return codes into reducelab::Error, with the failing call and its text.

#include <cuda_runtime_api.h>

#include <string>

#include "reducelab/error.hpp"

namespace reducelab::detail {

inline bool is_no_device_error(cudaError_t status) {
  return status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver ||
         status == cudaErrorCompatNotSupportedOnDevice;
}

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                          int line) {
  // Clear a non-sticky error so the next call on this thread starts clean.
  (void)cudaGetLastError();
  const std::string message = std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                              cudaGetErrorString(status) + ") at " + file + ":" +
                              std::to_string(line);
  throw Error(is_no_device_error(status) ? ErrorCode::no_device : ErrorCode::cuda_error, message);
}

}  // namespace reducelab::detail

#define REDUCELAB_CUDA_CHECK(call)                                                   \
  do {                                                                               \
    const cudaError_t reducelab_status_ = (call);                                    \
    if (reducelab_status_ != cudaSuccess)                                            \
      ::reducelab::detail::throw_cuda_error(reducelab_status_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: configuration errors surface in cudaGetLastError, not at the launch.
#define REDUCELAB_CHECK_LAUNCH(kernel_name)                                                     \
  do {                                                                                          \
    const cudaError_t reducelab_status_ = cudaGetLastError();                                   \
    if (reducelab_status_ != cudaSuccess)                                                       \
      ::reducelab::detail::throw_cuda_error(reducelab_status_, "launch of " kernel_name, __FILE__, \
                                            __LINE__);                                          \
  } while (0)

namespace reducelab::detail {

//! The current device (a checked cudaGetDevice).
inline int current_device() {
  int device = 0;
  REDUCELAB_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

}  // namespace reducelab::detail

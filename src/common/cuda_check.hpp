#pragma once
// Turning CUDA return codes into reducelab::Error, with the failing call and its text. Messages
// name the CUDA call, never a source file of ours: they are for the user of the library.

#include <cuda_runtime_api.h>

#include <string>

#include "reducelab/error.hpp"

namespace reducelab::detail {

inline bool is_no_device_error(cudaError_t status) {
  return status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver ||
         status == cudaErrorCompatNotSupportedOnDevice;
}

inline std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

//! Why there is no usable GPU, in words: no driver at all, a driver too old for this runtime,
//! or a driver that found no GPU.
inline std::string describe_no_device(cudaError_t status) {
  int driver = 0;
  int runtime = 0;
  (void)cudaDriverGetVersion(&driver);  // 0 when no NVIDIA driver is installed
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaGetLastError();
  std::string why;
  if (status == cudaErrorNoDevice) {
    why = "the NVIDIA driver (CUDA " + cuda_version_text(driver) + ") found no GPU";
  } else if (driver == 0) {
    why = "no NVIDIA driver was found (libcuda is not installed or not loadable)";
  } else if (status == cudaErrorInsufficientDriver) {
    why = "the NVIDIA driver supports CUDA " + cuda_version_text(driver) +
          " but this program was built with CUDA " + cuda_version_text(runtime);
  } else {
    why = "the driver cannot run this CUDA runtime on this GPU";
  }
  return why + " (" + cudaGetErrorName(status) + ")";
}

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call) {
  // Clear a non-sticky error so the next call on this thread starts clean.
  (void)cudaGetLastError();
  if (is_no_device_error(status))
    throw Error(ErrorCode::no_device, "no CUDA device: " + describe_no_device(status));
  throw Error(ErrorCode::cuda_error, std::string(call) + " failed: " + cudaGetErrorName(status) +
                                         " (" + cudaGetErrorString(status) + ")");
}

}  // namespace reducelab::detail

#define REDUCELAB_CUDA_CHECK(call)                                               \
  do {                                                                           \
    const cudaError_t reducelab_status_ = (call);                                \
    if (reducelab_status_ != cudaSuccess)                                        \
      ::reducelab::detail::throw_cuda_error(reducelab_status_, #call);           \
  } while (0)

// After a kernel launch: configuration errors surface in cudaGetLastError, not at the launch.
#define REDUCELAB_CHECK_LAUNCH(kernel_name)                                                  \
  do {                                                                                       \
    const cudaError_t reducelab_status_ = cudaGetLastError();                                \
    if (reducelab_status_ != cudaSuccess)                                                    \
      ::reducelab::detail::throw_cuda_error(reducelab_status_, "launch of " kernel_name);    \
  } while (0)

namespace reducelab::detail {

//! The current device (a checked cudaGetDevice).
inline int current_device() {
  int device = 0;
  REDUCELAB_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

}  // namespace reducelab::detail

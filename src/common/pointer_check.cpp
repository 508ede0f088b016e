#include "common/pointer_check.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <sstream>
#include <string>

#include "common/cuda_check.hpp"

namespace reducelab::detail {

void require_device_pointer(const void* ptr, std::size_t count, std::size_t alignment,
                            const char* name) {
  if (count == 0) return;
  if (ptr == nullptr)
    throw Error(ErrorCode::invalid_argument,
                std::string(name) + " is null but n = " + std::to_string(count));
  if (reinterpret_cast<std::uintptr_t>(ptr) % alignment != 0) {
    std::ostringstream message;
    message << name << " = " << ptr << " is not aligned to its element size (" << alignment
            << " bytes)";
    throw Error(ErrorCode::invalid_argument, message.str());
  }
  cudaPointerAttributes attributes{};
  {
    // A query, not stream work: allowed while this thread (or another) captures a graph.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    const cudaError_t status = cudaPointerGetAttributes(&attributes, ptr);
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    if (status != cudaSuccess)
      detail::throw_cuda_error(status, "cudaPointerGetAttributes", __FILE__, __LINE__);
  }
  switch (attributes.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged:
      break;
    case cudaMemoryTypeHost:
    case cudaMemoryTypeUnregistered:
    default: {
      std::ostringstream message;
      message << name << " = " << ptr
              << " points to host memory; pass device memory (cudaMalloc or cudaMallocManaged)";
      throw Error(ErrorCode::invalid_argument, message.str());
    }
  }
  if (attributes.type == cudaMemoryTypeDevice) {
    int current = 0;
    REDUCELAB_CUDA_CHECK(cudaGetDevice(&current));
    if (attributes.device != current)
      throw Error(ErrorCode::invalid_argument,
                  std::string(name) + " belongs to device " + std::to_string(attributes.device) +
                      " but the current device is " + std::to_string(current));
  }
}

}  // namespace reducelab::detail

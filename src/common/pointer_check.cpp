#include "common/pointer_check.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <sstream>
#include <string>

#include "common/cuda_check.hpp"

namespace reducelab::detail {
namespace {

constexpr std::size_t kMaxArgs = 4;

void require_non_null_aligned(const PointerArg& a) {
  if (a.ptr == nullptr)
    throw Error(ErrorCode::invalid_argument,
                std::string(a.name) + " is null but n = " + std::to_string(a.count));
  if (reinterpret_cast<std::uintptr_t>(a.ptr) % a.alignment != 0) {
    std::ostringstream message;
    message << a.name << " = " << a.ptr << " is not aligned to its element size (" << a.alignment
            << " bytes)";
    throw Error(ErrorCode::invalid_argument, message.str());
  }
}

void require_device_memory(const PointerArg& a, const cudaPointerAttributes& attributes,
                           int device) {
  switch (attributes.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged:
      break;
    case cudaMemoryTypeHost:
    case cudaMemoryTypeUnregistered:
    default: {
      std::ostringstream message;
      message << a.name << " = " << a.ptr
              << " points to host memory; pass device memory (cudaMalloc or cudaMallocManaged)";
      throw Error(ErrorCode::invalid_argument, message.str());
    }
  }
  if (attributes.type == cudaMemoryTypeDevice && attributes.device != device)
    throw Error(ErrorCode::invalid_argument,
                std::string(a.name) + " belongs to device " + std::to_string(attributes.device) +
                    " but the current device is " + std::to_string(device));
}

}  // namespace

void require_device_pointers(std::initializer_list<PointerArg> args, int device) {
  if (args.size() > kMaxArgs)
    throw Error(ErrorCode::invalid_argument, "require_device_pointers: more than 4 pointers");
  for (const PointerArg& a : args)
    if (a.count > 0) require_non_null_aligned(a);

  cudaPointerAttributes attributes[kMaxArgs]{};
  cudaError_t status = cudaSuccess;
  // Queries, not stream work: allowed while this thread (or another) captures a graph, in
  // any capture mode (tested with a global-mode capture in test_production_streams.cpp).
  std::size_t i = 0;
  for (const PointerArg& a : args) {
    if (a.count > 0 && status == cudaSuccess)
      status = cudaPointerGetAttributes(&attributes[i], a.ptr);
    ++i;
  }
  if (status != cudaSuccess)
    detail::throw_cuda_error(status, "cudaPointerGetAttributes");
  i = 0;
  for (const PointerArg& a : args) {
    if (a.count > 0) require_device_memory(a, attributes[i], device);
    ++i;
  }
}

void require_device_pointer(const void* ptr, std::size_t count, std::size_t alignment,
                            const char* name) {
  if (count == 0) return;
  int device = 0;
  REDUCELAB_CUDA_CHECK(cudaGetDevice(&device));
  require_device_pointers({{ptr, count, alignment, name}}, device);
}

}  // namespace reducelab::detail

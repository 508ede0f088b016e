#include "common/pointer_check.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <sstream>
#include <string>

#include "common/cuda_check.hpp"
#include "common/driver_api.hpp"

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

// cuPointerGetAttributes (one call, three attributes) in the runtime's terms; false where the
// entry point is missing or fails, and the caller asks the runtime.
bool query_with_driver(const void* ptr, cudaPointerAttributes& out) {
  const DriverApi& api = driver_api();
  if (api.pointer_get_attributes == nullptr) return false;
  CUpointer_attribute which[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                  CU_POINTER_ATTRIBUTE_IS_MANAGED};
  unsigned memory_type = 0;
  int ordinal = -1;
  unsigned managed = 0;  // a bool in the driver's words: read into a zeroed word
  void* values[3] = {&memory_type, &ordinal, &managed};
  // Unlike the singular query, this one succeeds for unregistered host memory (type 0).
  if (api.pointer_get_attributes(3, which, values, reinterpret_cast<CUdeviceptr>(ptr)) !=
      CUDA_SUCCESS)
    return false;
  out = cudaPointerAttributes{};
  out.device = ordinal;
  if (managed != 0 || memory_type == CU_MEMORYTYPE_UNIFIED) {
    out.type = cudaMemoryTypeManaged;
  } else if (memory_type == CU_MEMORYTYPE_DEVICE) {
    out.type = cudaMemoryTypeDevice;
  } else if (memory_type == CU_MEMORYTYPE_HOST) {
    out.type = cudaMemoryTypeHost;
  } else {
    out.type = cudaMemoryTypeUnregistered;
  }
  return true;
}

// The allocation that holds ptr, [start, start + size), from the driver; false where the driver
// cannot say (then every pointer is asked about on its own).
bool allocation_range(const void* ptr, std::uintptr_t& start, std::size_t& size) {
  const DriverApi& api = driver_api();
  if (api.pointer_get_attributes == nullptr) return false;
  CUpointer_attribute which[2] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                  CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  CUdeviceptr range_start = 0;
  std::size_t range_size = 0;
  void* values[2] = {&range_start, &range_size};
  if (api.pointer_get_attributes(2, which, values, reinterpret_cast<CUdeviceptr>(ptr)) !=
      CUDA_SUCCESS)
    return false;
  start = static_cast<std::uintptr_t>(range_start);
  size = range_size;
  return size > 0;
}

}  // namespace

KnownAllocation require_device_tensor(std::size_t i, const void* ptr, std::size_t size,
                                      std::size_t alignment, int device) {
  const std::string name = "tensors[" + std::to_string(i) + "].data";
  const PointerArg arg{ptr, size, alignment, name.c_str()};
  require_non_null_aligned(arg);
  cudaPointerAttributes attributes{};
  if (!query_with_driver(ptr, attributes)) {
    const cudaError_t status = cudaPointerGetAttributes(&attributes, ptr);
    if (status != cudaSuccess) detail::throw_cuda_error(status, "cudaPointerGetAttributes");
  }
  require_device_memory(arg, attributes, device);
  KnownAllocation known;
  if (!allocation_range(ptr, known.start, known.size)) known.size = 0;
  return known;
}

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
    if (a.count > 0 && status == cudaSuccess && !query_with_driver(a.ptr, attributes[i]))
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

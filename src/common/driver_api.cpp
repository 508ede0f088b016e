#include "common/driver_api.hpp"

#include "common/cuda_check.hpp"

namespace reducelab::detail {
namespace {

template <class Fn>
Fn entry_point(const char* name, unsigned version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<Fn>(fn);
}

}  // namespace

const DriverApi& driver_api() {
  static const DriverApi api = [] {
    DriverApi a;
    a.pointer_get_attributes =
        entry_point<decltype(a.pointer_get_attributes)>("cuPointerGetAttributes", 7000);
    a.stream_get_id = entry_point<decltype(a.stream_get_id)>("cuStreamGetId", 12000);
    a.stream_is_capturing =
        entry_point<decltype(a.stream_is_capturing)>("cuStreamIsCapturing", 10000);
    a.launch_kernel = entry_point<decltype(a.launch_kernel)>("cuLaunchKernel", 4000);
    return a;
  }();
  return api;
}

unsigned long long stream_id(cudaStream_t stream) {
  unsigned long long id = 0;
  const DriverApi& api = driver_api();
  if (api.stream_get_id != nullptr && api.stream_get_id(stream, &id) == CUDA_SUCCESS) return id;
  REDUCELAB_CUDA_CHECK(cudaStreamGetId(stream, &id));
  return id;
}

bool is_capturing(cudaStream_t stream) {
  const DriverApi& api = driver_api();
  CUstreamCaptureStatus driver_status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (api.stream_is_capturing != nullptr &&
      api.stream_is_capturing(stream, &driver_status) == CUDA_SUCCESS)
    return driver_status != CU_STREAM_CAPTURE_STATUS_NONE;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  REDUCELAB_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace reducelab::detail

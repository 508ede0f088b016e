#include "common/device_info.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "common/cuda_check.hpp"

namespace reducelab {

std::string format_cuda_version(int version) { return detail::cuda_version_text(version); }

int cuda_device_count(std::string* reason) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    if (reason) {
      *reason = detail::is_no_device_error(status)
                    ? detail::describe_no_device(status)
                    : std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + " (" +
                          cudaGetErrorString(status) + ")";
    }
    return 0;
  }
  if (count == 0 && reason) *reason = "cudaGetDeviceCount found no CUDA device";
  return count;
}

namespace {

// The kernel-mode driver version ("580.159.04") comes from NVML. It is loaded at run time so the
// program still starts on machines without the NVIDIA driver (CI).
std::string nvml_driver_version() {
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (nvml == nullptr) return {};
  using InitFn = int (*)();
  using VersionFn = int (*)(char*, unsigned);
  auto init = reinterpret_cast<InitFn>(dlsym(nvml, "nvmlInit_v2"));
  auto version = reinterpret_cast<VersionFn>(dlsym(nvml, "nvmlSystemGetDriverVersion"));
  auto shutdown = reinterpret_cast<InitFn>(dlsym(nvml, "nvmlShutdown"));
  std::string out;
  if (init && version && init() == 0) {
    char buffer[96] = {};
    if (version(buffer, sizeof(buffer)) == 0) out = buffer;
    if (shutdown) shutdown();
  }
  dlclose(nvml);
  return out;
}

}  // namespace

DeviceInfo query_device(int ordinal) {
  std::string reason;
  const int count = cuda_device_count(&reason);
  if (count == 0) throw Error(ErrorCode::no_device, "no CUDA device: " + reason);
  if (ordinal < 0 || ordinal >= count)
    throw Error(ErrorCode::no_device, "no CUDA device " + std::to_string(ordinal) + " (found " +
                                          std::to_string(count) + ")");
  DeviceInfo info;
  info.ordinal = ordinal;
  cudaDeviceProp prop{};
  REDUCELAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  info.total_memory = prop.totalGlobalMem;
  REDUCELAB_CUDA_CHECK(
      cudaDeviceGetAttribute(&info.memory_clock_khz, cudaDevAttrMemoryClockRate, ordinal));
  REDUCELAB_CUDA_CHECK(
      cudaDeviceGetAttribute(&info.bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal));
  info.peak_gbps = theoretical_peak_gbps(info.memory_clock_khz, info.bus_width_bits);
  int driver = 0;
  int runtime = 0;
  REDUCELAB_CUDA_CHECK(cudaDriverGetVersion(&driver));
  REDUCELAB_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  info.cuda_driver = format_cuda_version(driver);
  info.cuda_runtime = format_cuda_version(runtime);
  info.driver = nvml_driver_version();
  if (info.driver.empty()) info.driver = "CUDA " + info.cuda_driver;
  return info;
}

}  // namespace reducelab

#pragma once
// Launching a kernel on the per-call path through cuLaunchKernel with its function handle looked
// up once per device: the runtime's <<<>>> looks the handle up for the current context on every
// call (245 ns of host time on the H200 machine, driver_api.hpp). Falls back to <<<>>>, which
// also reports any error, when the driver entry point or the handle is missing or the driver
// refuses the launch (for example from a context other than the device's primary one).

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <tuple>
#include <utility>

#include "common/cuda_check.hpp"
#include "common/driver_api.hpp"

namespace reducelab::detail {

//! Launches kernel<<<grid, block, 0, stream>>>(args...) on `device`, the current device. `Tag`
//! must be unique to the kernel (as for resident_grid). Throws reducelab::Error naming `what`.
template <class Tag, class... Params, class... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, unsigned block, cudaStream_t stream,
                   int device, const char* what, Args&&... args) {
  static std::array<std::atomic<CUfunction>, 64> handles{};
  const DriverApi& api = driver_api();
  if (api.launch_kernel != nullptr && device >= 0 && device < 64) {
    CUfunction function = handles[device].load(std::memory_order_relaxed);
    if (function == nullptr) {
      cudaFunction_t found = nullptr;
      if (cudaGetFuncBySymbol(&found, reinterpret_cast<const void*>(kernel)) == cudaSuccess) {
        function = reinterpret_cast<CUfunction>(found);
        handles[device].store(function, std::memory_order_relaxed);
      } else {
        (void)cudaGetLastError();
      }
    }
    if (function != nullptr) {
      std::tuple<Params...> values(std::forward<Args>(args)...);
      void* params[sizeof...(Params) > 0 ? sizeof...(Params) : 1] = {};
      std::apply([&](auto&... v) {
        int i = 0;
        ((params[i++] = static_cast<void*>(&v)), ...);
      }, values);
      if (api.launch_kernel(function, grid.x, grid.y, grid.z, block, 1, 1, 0, stream, params,
                            nullptr) == CUDA_SUCCESS)
        return;
    }
  }
  kernel<<<grid, block, 0, stream>>>(std::forward<Args>(args)...);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw_cuda_error(status, what);
}

}  // namespace reducelab::detail

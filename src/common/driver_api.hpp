#pragma once
// The few CUDA driver entry points on the per-call path, found once through the runtime
// (cudaGetDriverEntryPointByVersion), so the library needs no libcuda at link time. On the H200
// machine (tune --small, 2026-11-30) each query is 23-30 ns cheaper than its runtime equivalent
// (pointer attributes 72 vs 101 ns, stream id and capture status 40 vs 63-64 ns), and a launch
// through cuLaunchKernel with a cached function handle 245 ns cheaper than <<<>>> (3,118 vs
// 3,363 ns of host time). Callers fall back to the runtime
// call when an entry point is missing or fails (e.g. before this thread has a current context),
// so the runtime stays the authority on errors.

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace reducelab::detail {

struct DriverApi {
  CUresult (*pointer_get_attributes)(unsigned, CUpointer_attribute*, void**, CUdeviceptr) = nullptr;
  CUresult (*stream_get_id)(CUstream, unsigned long long*) = nullptr;
  CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void**, void**) = nullptr;
};

//! Resolved on first use; members are null where the driver lacks them.
const DriverApi& driver_api();

//! The stream's id (cudaStreamGetId); throws reducelab::Error on failure.
unsigned long long stream_id(cudaStream_t stream);

//! True while `stream` is being captured into a graph; throws reducelab::Error on failure.
bool is_capturing(cudaStream_t stream);

}  // namespace reducelab::detail

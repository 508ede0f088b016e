// CUB's gpu_to_gpu sum (make_cub_gpu_to_gpu_sum): DeviceReduce::Sum of f32 or f64 through the
// environment API of a CCCL >= 3.1 with cuda::execution::require(determinism::gpu_to_gpu), its
// Reproducible Floating-point Accumulator, the anchor issue 14 measures the gpu_to_gpu mode
// against. Compiled only with REDUCELAB_CCCL_INCLUDE, against that CCCL alone, in the object
// library of bench/cub_fixed_segmented.cu (whose header says why two CUBs in one binary do not
// collide). The environment API takes its temporary storage from CUB's default memory resource
// on the call's stream: that allocation is part of what CUB's row measures, as for a user of the
// API.

#include "bench/cub_baseline.hpp"

#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>
#include <cuda/std/execution>
#include <cuda/stream_ref>

#include <memory>
#include <string>

#include "common/cuda_check.hpp"
#include "reducelab/error.hpp"

#if CUB_VERSION < 300100
#error "bench/cub_gpu_to_gpu.cu needs CCCL >= 3.1 (REDUCELAB_CCCL_INCLUDE)"
#endif

namespace reducelab::bench {
namespace cub_gpu_to_gpu_detail {

template <class T>
class GpuToGpuSum final : public CubReduce {
 public:
  explicit GpuToGpuSum(std::size_t n) : n_(n) {}
  void run(const void* d_x, const void*, void* d_out, cudaStream_t stream) override {
    const auto env = ::cuda::std::execution::env{
        ::cuda::stream_ref{stream},
        ::cuda::execution::require(::cuda::execution::determinism::gpu_to_gpu)};
    REDUCELAB_CUDA_CHECK(
        cub::DeviceReduce::Sum(static_cast<const T*>(d_x), static_cast<T*>(d_out), n_, env));
  }
  std::string call() const override {
    return "cub::DeviceReduce::Sum, env require(determinism::gpu_to_gpu) (CUB " +
           std::to_string(CUB_MAJOR_VERSION) + "." + std::to_string(CUB_MINOR_VERSION) + "." +
           std::to_string(CUB_SUBMINOR_VERSION) + ")";
  }

 private:
  std::size_t n_;
};

}  // namespace cub_gpu_to_gpu_detail

bool cub_gpu_to_gpu_supports(Op op, DType dtype) {
  return op == Op::sum && (dtype == DType::f32 || dtype == DType::f64);
}

std::unique_ptr<CubReduce> make_cub_gpu_to_gpu_sum(DType dtype, std::size_t n) {
  using namespace cub_gpu_to_gpu_detail;
  if (dtype == DType::f32) return std::make_unique<GpuToGpuSum<float>>(n);
  if (dtype == DType::f64) return std::make_unique<GpuToGpuSum<double>>(n);
  throw Error(ErrorCode::invalid_argument,
              "CUB's gpu_to_gpu determinism is for float and double sums only");
}

std::string cub_gpu_to_gpu_impl() {
  return "CUB " + std::to_string(CUB_MAJOR_VERSION) + "." + std::to_string(CUB_MINOR_VERSION) +
         " gpu_to_gpu";
}

}  // namespace reducelab::bench

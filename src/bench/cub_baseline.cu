#include "bench/cub_baseline.hpp"

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "reducelab/types.hpp"

namespace reducelab::bench {
namespace {

template <class Acc>
struct Widen {
  template <class T>
  __device__ Acc operator()(const T& v) const {
    return static_cast<Acc>(v);
  }
};

template <class T, class Acc>
struct DotTerm {
  const T* x;
  const T* y;
  __device__ Acc operator()(int i) const {
    return static_cast<Acc>(x[i]) * static_cast<Acc>(y[i]);
  }
};

template <class T>
class CubReduceImpl final : public CubReduce {
 public:
  CubReduceImpl(Op op, std::size_t n) : op_(op), n_(n) {
    // int item counts, as most CUB users write them: 32-bit offsets are CUB's fast path.
    if (n_ > static_cast<std::size_t>(INT_MAX))
      throw Error(ErrorCode::invalid_argument,
                  "the CUB baseline is timed with int item counts: n must be < 2^31");
    // Size query: CUB writes the bytes it needs and launches nothing when d_temp is null.
    dispatch(nullptr, nullptr, nullptr, nullptr, nullptr);
    temp_ = DeviceBuffer<unsigned char>(temp_bytes_ > 0 ? temp_bytes_ : 1);
  }

  void run(const void* d_x, const void* d_y, void* d_out, cudaStream_t stream) override {
    dispatch(temp_.data(), d_x, d_y, d_out, stream);
  }

  std::string call() const override {
    switch (op_) {
      case Op::sum:
        return std::is_same_v<sum_t<T>, T> ? "cub::DeviceReduce::Sum"
                                           : "cub::DeviceReduce::TransformReduce (widen, +)";
      case Op::min: return "cub::DeviceReduce::Min";
      case Op::max: return "cub::DeviceReduce::Max";
      case Op::dot: return "cub::DeviceReduce::TransformReduce (x*y, +)";
      case Op::argmin: return "cub::DeviceReduce::ArgMin";
      case Op::argmax: return "cub::DeviceReduce::ArgMax";
    }
    return "cub";
  }

 private:
  void dispatch(void* temp, const void* d_x, const void* d_y, void* d_out, cudaStream_t stream) {
    const int n = static_cast<int>(n_);
    using Acc = sum_t<T>;
    const T* x = static_cast<const T*>(d_x);
    const T* y = static_cast<const T*>(d_y);
    std::size_t& bytes = temp_bytes_;
    cudaError_t status = cudaSuccess;
    switch (op_) {
      case Op::sum:
        if constexpr (std::is_same_v<Acc, T>) {
          status = cub::DeviceReduce::Sum(temp, bytes, x, static_cast<Acc*>(d_out), n, stream);
        } else {
          status = cub::DeviceReduce::TransformReduce(temp, bytes, x, static_cast<Acc*>(d_out), n,
                                                      cuda::std::plus<Acc>{}, Widen<Acc>{}, Acc{0},
                                                      stream);
        }
        break;
      case Op::dot:
        status = cub::DeviceReduce::TransformReduce(
            temp, bytes, thrust::counting_iterator<int>(0), static_cast<Acc*>(d_out), n,
            cuda::std::plus<Acc>{}, DotTerm<T, Acc>{x, y}, Acc{0}, stream);
        break;
      case Op::min:
        status = cub::DeviceReduce::Min(temp, bytes, x, static_cast<T*>(d_out), n, stream);
        break;
      case Op::max:
        status = cub::DeviceReduce::Max(temp, bytes, x, static_cast<T*>(d_out), n, stream);
        break;
      case Op::argmin:
        status = cub::DeviceReduce::ArgMin(
            temp, bytes, x, static_cast<T*>(d_out),
            reinterpret_cast<std::int64_t*>(static_cast<unsigned char*>(d_out) + 8),
            n, stream);
        break;
      case Op::argmax:
        status = cub::DeviceReduce::ArgMax(
            temp, bytes, x, static_cast<T*>(d_out),
            reinterpret_cast<std::int64_t*>(static_cast<unsigned char*>(d_out) + 8),
            n, stream);
        break;
    }
    REDUCELAB_CUDA_CHECK(status);
  }

  Op op_;
  std::size_t n_;
  std::size_t temp_bytes_ = 0;
  DeviceBuffer<unsigned char> temp_;
};

}  // namespace

std::unique_ptr<CubReduce> make_cub_reduce(Op op, DType dtype, std::size_t n) {
  return dispatch_dtype(dtype, [&](auto value) -> std::unique_ptr<CubReduce> {
    using T = decltype(value);
    return std::make_unique<CubReduceImpl<T>>(op, n);
  });
}

}  // namespace reducelab::bench

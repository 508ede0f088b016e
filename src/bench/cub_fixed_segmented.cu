// CUB's fixed-size DeviceSegmentedReduce baseline (make_cub_fixed_segmented_reduce): the
// overloads that take num_segments and one int segment_size instead of offsets, CCCL >= 3.2.
// Compiled only with REDUCELAB_CCCL_INCLUDE, and against that CCCL alone (src/CMakeLists.txt
// puts it before the toolkit's in this file's include path): every <cub/...>, <thrust/...>,
// <cuda/...> and <nv/...> below is the new CCCL's.
//
// Two CUB versions in one binary (this file's and the toolkit's, in cub_reduce.cu,
// cub_segmented.cu and cub_strided.cu):
// - CUB and Thrust cannot collide. Both versions open every block with CUB_NAMESPACE_BEGIN /
//   THRUST_NAMESPACE_BEGIN (cub/util_namespace.cuh, thrust/detail/config/namespace.h), which add
//   an inline namespace named after the version and __CUDA_ARCH_LIST__: for sm_90, CUB 3.0.1
//   (CUDA 13.0) is `cub::CUB_300001_SM_900` and CUB 3.6.0 `cub::_V_300600_SM_900` (Thrust
//   likewise). Every kernel, kernel stub and host function of one version has its own mangled
//   name, and without relocatable device code each file's kernels live in its own fatbinary, so
//   the linker cannot fold one version's copy into the other's. Checked with nm: the global
//   symbols of this object and of the three toolkit-CUB objects share no cub:: or thrust:: one.
//   So no CUB_WRAPPED_NAMESPACE / THRUST_CUB_WRAPPED_NAMESPACE here: the wrapper takes the place
//   of that versioned inline namespace (it turns it off) and would separate nothing more.
// - libcu++ (cuda::, cuda::std::) is versioned by ABI only (`cuda::std::__4`, the same in both)
//   and neither macro wraps it: an inline entity both versions define under one name is one
//   COMDAT symbol in the link. The only ones the two objects both define are empty constexpr
//   tag and customization-point objects (cuda::std::in_place, nullopt, piecewise_construct, the
//   ranges __cpo objects): no function, no kernel.
// - This file's own types live in cub_fixed_detail and it does not include cub_baseline.cuh:
//   those templates name the toolkit's cub:: entities, and instantiating one here would give one
//   mangled name two definitions.

#include "bench/cub_baseline.hpp"

#include <cub/device/device_segmented_reduce.cuh>
#include <cub/version.cuh>
#include <cuda/std/functional>
#include <cuda/std/utility>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <climits>
#include <cstring>
#include <cstdint>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "reducelab/error.hpp"
#include "reducelab/types.hpp"

#if CUB_VERSION < 300200
#error "bench/cub_fixed_segmented.cu needs CCCL >= 3.2 (REDUCELAB_CCCL_INCLUDE)"
#endif

namespace reducelab::bench {
namespace cub_fixed_detail {

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
  __device__ Acc operator()(std::int64_t i) const {
    return static_cast<Acc>(x[i]) * static_cast<Acc>(y[i]);
  }
};

// CUB's two-phase call, as cub_baseline.cuh's CubCall: a size query (CUB writes the bytes it needs
// and launches nothing when d_temp is null) and the allocation, both before any timing, then
// every run with that storage.
inline int int_segment_size(std::size_t segment_size) {
  if (segment_size > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorCode::invalid_argument,
                "CUB's fixed-size DeviceSegmentedReduce takes an int segment size: it must be "
                "< 2^31");
  return static_cast<int>(segment_size);
}

template <class T>
class CubFixedImpl final : public CubSegmentedReduce {
 public:
  CubFixedImpl(Op op, std::size_t num_segments, std::size_t segment_size)
      : op_(op), segments_(static_cast<std::int64_t>(num_segments)),
        size_(int_segment_size(segment_size)) {
    dispatch(nullptr, nullptr, nullptr, nullptr, nullptr);
    temp_ = DeviceBuffer<unsigned char>(temp_bytes_ > 0 ? temp_bytes_ : 1);
  }

  void run(const void* d_x, const void* d_y, void* d_out, cudaStream_t stream) override {
    dispatch(temp_.data(), d_x, d_y, d_out, stream);
  }

  std::string call() const override {
    return entry() + std::string(" (fixed size, CUB ") + std::to_string(CUB_MAJOR_VERSION) + "." +
           std::to_string(CUB_MINOR_VERSION) + "." + std::to_string(CUB_SUBMINOR_VERSION) + ")";
  }

  std::size_t result_bytes() const override {
    switch (op_) {
      case Op::sum:
      case Op::dot: return sizeof(sum_t<T>);
      case Op::min:
      case Op::max: return sizeof(T);
      case Op::argmin:
      case Op::argmax: return sizeof(Pair);
      default:  // the statistics: make_cub_statistic (cub_stats.cu)
        break;
    }
    return 0;
  }

  void to_slot(const unsigned char* results, std::size_t s, unsigned char* slot) const override {
    const unsigned char* at = results + s * result_bytes();
    if (op_ != Op::argmin && op_ != Op::argmax) {
      std::memcpy(slot, at, result_bytes());
      return;
    }
    Pair pair;
    std::memcpy(&pair, at, sizeof(pair));
    const std::int64_t index = pair.first;  // in the segment, as reduce_segments gives it
    std::memcpy(slot, &pair.second, sizeof(T));
    std::memcpy(slot + 8, &index, sizeof(index));
  }

 private:
  // What the fixed-size ArgMin/ArgMax write: the index in the segment and the value.
  using Pair = cuda::std::pair<int, T>;

  const char* entry() const {
    switch (op_) {
      case Op::sum:
        return std::is_same_v<sum_t<T>, T> ? "cub::DeviceSegmentedReduce::Sum"
                                           : "cub::DeviceSegmentedReduce::Reduce (widen, +)";
      case Op::min: return "cub::DeviceSegmentedReduce::Min";
      case Op::max: return "cub::DeviceSegmentedReduce::Max";
      case Op::dot: return "cub::DeviceSegmentedReduce::Reduce (x*y, +)";
      case Op::argmin: return "cub::DeviceSegmentedReduce::ArgMin";
      case Op::argmax: return "cub::DeviceSegmentedReduce::ArgMax";
      default:  // the statistics: make_cub_statistic (cub_stats.cu)
        break;
    }
    return "cub";
  }

  void dispatch(void* temp, const void* d_x, const void* d_y, void* d_out, cudaStream_t stream) {
    using Acc = sum_t<T>;
    const T* x = static_cast<const T*>(d_x);
    const T* y = static_cast<const T*>(d_y);
    const std::int64_t n = segments_;
    const int size = size_;
    std::size_t& bytes = temp_bytes_;
    cudaError_t status = cudaSuccess;
    switch (op_) {
      case Op::sum:
        if constexpr (std::is_same_v<Acc, T>) {
          status = cub::DeviceSegmentedReduce::Sum(temp, bytes, x, static_cast<Acc*>(d_out), n,
                                                   size, stream);
        } else {
          status = cub::DeviceSegmentedReduce::Reduce(
              temp, bytes, thrust::make_transform_iterator(x, Widen<Acc>{}),
              static_cast<Acc*>(d_out), n, size, cuda::std::plus<Acc>{}, Acc{0}, stream);
        }
        break;
      case Op::dot:
        status = cub::DeviceSegmentedReduce::Reduce(
            temp, bytes,
            thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0),
                                            DotTerm<T, Acc>{x, y}),
            static_cast<Acc*>(d_out), n, size, cuda::std::plus<Acc>{}, Acc{0}, stream);
        break;
      case Op::min:
        status = cub::DeviceSegmentedReduce::Min(temp, bytes, x, static_cast<T*>(d_out), n, size,
                                                 stream);
        break;
      case Op::max:
        status = cub::DeviceSegmentedReduce::Max(temp, bytes, x, static_cast<T*>(d_out), n, size,
                                                 stream);
        break;
      case Op::argmin:
        status = cub::DeviceSegmentedReduce::ArgMin(temp, bytes, x, static_cast<Pair*>(d_out), n,
                                                    size, stream);
        break;
      case Op::argmax:
        status = cub::DeviceSegmentedReduce::ArgMax(temp, bytes, x, static_cast<Pair*>(d_out), n,
                                                    size, stream);
        break;
      default:  // the statistics: make_cub_statistic (cub_stats.cu)
        break;
    }
    REDUCELAB_CUDA_CHECK(status);
  }

  Op op_;
  std::int64_t segments_;
  int size_;
  std::size_t temp_bytes_ = 0;
  DeviceBuffer<unsigned char> temp_;
};

}  // namespace cub_fixed_detail

std::unique_ptr<CubSegmentedReduce> make_cub_fixed_segmented_reduce(Op op, DType dtype,
                                                                    std::size_t num_segments,
                                                                    std::size_t segment_size) {
  using namespace cub_fixed_detail;
  return dispatch_dtype(dtype, [&](auto value) -> std::unique_ptr<CubSegmentedReduce> {
    using T = decltype(value);
    return std::make_unique<CubFixedImpl<T>>(op, num_segments, segment_size);
  });
}

std::string cub_fixed_impl() {
  return "CUB " + std::to_string(CUB_MAJOR_VERSION) + "." + std::to_string(CUB_MINOR_VERSION) +
         " fixed";
}

}  // namespace reducelab::bench

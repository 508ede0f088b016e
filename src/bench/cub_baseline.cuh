#pragma once
// The CUB baselines' implementations (cub_baseline.hpp), shared by the three files that
// instantiate them: cub_reduce.cu, cub_segmented.cu and cub_strided.cu, compiled in parallel
// (all in one file took minutes of one core).

#include "bench/cub_baseline.hpp"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <climits>
#include <cstring>
#include <cstdint>
#include <type_traits>

#include "bench/axes.hpp"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "reducelab/types.hpp"

namespace reducelab::bench::cub_detail {

template <class Acc>
struct Widen {
  template <class T>
  __device__ Acc operator()(const T& v) const {
    return static_cast<Acc>(v);
  }
};

// Where element i of the input sequence CUB reads lies in memory: i itself (contiguous), or
// the strided element of an axis view (segment-major order, AxisWalk::offset).
struct Contiguous {
  template <class I>
  __host__ __device__ I operator()(I i) const {
    return i;
  }
  static const char* label() { return ""; }
};

struct Strided {
  AxisWalk walk;
  __host__ __device__ std::int64_t operator()(std::int64_t i) const { return walk.offset(i); }
  static const char* label() { return " (strided iterator)"; }
};

template <class T, class Acc, class Map = Contiguous>
struct DotTerm {
  const T* x;
  const T* y;
  Map map{};
  template <class I>
  __device__ Acc operator()(I i) const {
    const auto at = map(i);
    return static_cast<Acc>(x[at]) * static_cast<Acc>(y[at]);
  }
};

template <class T, class Map>
struct Gather {
  const T* x;
  Map map;
  __device__ T operator()(std::int64_t i) const { return x[map(i)]; }
};

// The values CUB reduces: x itself when contiguous (CUB's vectorized path), else an iterator
// that gathers the strided elements, as CuPy would hand a non-contiguous axis to CUB.
template <class T>
const T* values(const T* x, const Contiguous&) {
  return x;
}
template <class T>
auto values(const T* x, const Strided& map) {
  return thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0),
                                         Gather<T, Strided>{x, map});
}

// CUB's two-phase call, shared by both baselines: a size query (CUB writes the bytes it needs and
// launches nothing when d_temp is null) and the allocation, both before any timing, then every
// run with that storage. Impl has dispatch(temp, d_x, d_y, d_out, stream) and sets temp_bytes_.
template <class Impl, class Interface>
class CubCall : public Interface {
 public:
  void run(const void* d_x, const void* d_y, void* d_out, cudaStream_t stream) override {
    static_cast<Impl*>(this)->dispatch(temp_.data(), d_x, d_y, d_out, stream);
  }

 protected:
  void allocate_temp() {
    static_cast<Impl*>(this)->dispatch(nullptr, nullptr, nullptr, nullptr, nullptr);
    temp_ = DeviceBuffer<unsigned char>(temp_bytes_ > 0 ? temp_bytes_ : 1);
  }
  std::size_t temp_bytes_ = 0;

 private:
  DeviceBuffer<unsigned char> temp_;
};

template <class T>
class CubReduceImpl final : public CubCall<CubReduceImpl<T>, CubReduce> {
  friend class CubCall<CubReduceImpl<T>, CubReduce>;

 public:
  CubReduceImpl(Op op, std::size_t n) : op_(op), n_(n) {
    // int item counts, as most CUB users write them: 32-bit offsets are CUB's fast path.
    if (n_ > static_cast<std::size_t>(INT_MAX))
      throw Error(ErrorCode::invalid_argument,
                  "the CUB baseline is timed with int item counts: n must be < 2^31");
    this->allocate_temp();
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
      default:  // the statistics: make_cub_statistic (cub_stats.cu)
        break;
    }
    return "cub";
  }

 private:
  void dispatch(void* temp, const void* d_x, const void* d_y, void* d_out, cudaStream_t stream) {
    const int n = static_cast<int>(n_);
    using Acc = sum_t<T>;
    const T* x = static_cast<const T*>(d_x);
    const T* y = static_cast<const T*>(d_y);
    std::size_t& bytes = this->temp_bytes_;
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
      default:  // the statistics: make_cub_statistic (cub_stats.cu)
        break;
    }
    REDUCELAB_CUDA_CHECK(status);
  }

  Op op_;
  std::size_t n_;
};

// Segment s starts at offsets[s], or at s x size for fixed segments (offsets null).
struct SegmentStart {
  const std::int64_t* offsets;
  std::int64_t size;
  __host__ __device__ std::int64_t operator()(std::int64_t s) const {
    return offsets != nullptr ? offsets[s] : s * size;
  }
};

template <class T, class Map>
class CubSegmentedImpl final : public CubCall<CubSegmentedImpl<T, Map>, CubSegmentedReduce> {
  friend class CubCall<CubSegmentedImpl<T, Map>, CubSegmentedReduce>;

 public:
  CubSegmentedImpl(Op op, std::size_t num_segments, std::size_t segment_size,
                   const std::int64_t* d_offsets, Map map = {})
      : op_(op), segments_(num_segments),
        start_{d_offsets, static_cast<std::int64_t>(segment_size)}, map_(map) {
    this->allocate_temp();
  }

  std::string call() const override { return entry() + std::string(Map::label()); }

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
    const std::int64_t index = pair.key;
    std::memcpy(slot, &pair.value, sizeof(T));
    std::memcpy(slot + 8, &index, sizeof(index));
  }

 private:
  using Pair = cub::KeyValuePair<int, T>;

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
    const auto x = values(static_cast<const T*>(d_x), map_);
    const T* y = static_cast<const T*>(d_y);
    const auto begin = thrust::make_transform_iterator(
        thrust::counting_iterator<std::int64_t>(0), start_);
    const auto end = begin + 1;
    const auto n = static_cast<std::int64_t>(segments_);
    std::size_t& bytes = this->temp_bytes_;
    cudaError_t status = cudaSuccess;
    switch (op_) {
      case Op::sum:
        if constexpr (std::is_same_v<Acc, T>) {
          status = cub::DeviceSegmentedReduce::Sum(temp, bytes, x, static_cast<Acc*>(d_out), n,
                                                   begin, end, stream);
        } else {
          status = cub::DeviceSegmentedReduce::Reduce(
              temp, bytes, thrust::make_transform_iterator(x, Widen<Acc>{}),
              static_cast<Acc*>(d_out), n, begin, end, cuda::std::plus<Acc>{}, Acc{0}, stream);
        }
        break;
      case Op::dot:
        status = cub::DeviceSegmentedReduce::Reduce(
            temp, bytes,
            thrust::make_transform_iterator(
                thrust::counting_iterator<std::int64_t>(0),
                DotTerm<T, Acc, Map>{static_cast<const T*>(d_x), y, map_}),
            static_cast<Acc*>(d_out), n, begin, end, cuda::std::plus<Acc>{}, Acc{0}, stream);
        break;
      case Op::min:
        status = cub::DeviceSegmentedReduce::Min(temp, bytes, x, static_cast<T*>(d_out), n, begin,
                                                 end, stream);
        break;
      case Op::max:
        status = cub::DeviceSegmentedReduce::Max(temp, bytes, x, static_cast<T*>(d_out), n, begin,
                                                 end, stream);
        break;
      case Op::argmin:
        status = cub::DeviceSegmentedReduce::ArgMin(temp, bytes, x, static_cast<Pair*>(d_out), n,
                                                    begin, end, stream);
        break;
      case Op::argmax:
        status = cub::DeviceSegmentedReduce::ArgMax(temp, bytes, x, static_cast<Pair*>(d_out), n,
                                                    begin, end, stream);
        break;
      default:  // the statistics: make_cub_statistic (cub_stats.cu)
        break;
    }
    REDUCELAB_CUDA_CHECK(status);
  }

  Op op_;
  std::size_t segments_;
  SegmentStart start_;
  Map map_;
};

}  // namespace reducelab::bench::cub_detail

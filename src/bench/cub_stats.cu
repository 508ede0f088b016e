// CUB's DeviceReduce baselines of the statistics (cub_baseline.hpp: make_cub_statistic): the
// obvious composition a CUB user writes for each op, every step on the run's stream (CUB calls,
// then a one-thread kernel that finishes the result in reducelab's layout), no host
// synchronisation, the temporary storage and the device scalars between steps allocated before
// any timing.

#include "bench/cub_baseline.cuh"

#include <cuda/functional>

#include <algorithm>
#include <limits>

namespace reducelab::bench {
namespace {

using cub_detail::CubCall;
using cub_detail::Widen;

// ---- element helpers ---------------------------------------------------------------------------

//! v in the accumulation type A, f16 and bf16 through __half2float / __bfloat162float (host and
//! device, so identities and comparisons can use it on either side).
template <class A, class T>
__host__ __device__ A to_acc(const T& v) {
  if constexpr (std::is_same_v<T, __half>) {
    return static_cast<A>(__half2float(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return static_cast<A>(__bfloat162float(v));
  } else {
    return static_cast<A>(v);
  }
}

// The float and double math the finishing kernels and transforms call, one name for both.
__device__ inline float square_root(float v) { return sqrtf(v); }
__device__ inline double square_root(double v) { return sqrt(v); }
__device__ inline float exponential(float v) { return expf(v); }
__device__ inline double exponential(double v) { return exp(v); }
__device__ inline float logarithm(float v) { return logf(v); }
__device__ inline double logarithm(double v) { return log(v); }
__device__ inline float magnitude(float v) { return fabsf(v); }
__device__ inline double magnitude(double v) { return fabs(v); }

//! The type the 2-norm accumulates its squares in: double for f32, bf16 and f64 (so no square
//! of a float-range element overflows or underflows), float for f16 (whose squares fit).
template <class T>
using norm2_t = std::conditional_t<std::is_same_v<T, __half>, float, double>;

// ---- transforms and reduction operators -------------------------------------------------------

//! |x| in A.
template <class A>
struct Abs {
  template <class T>
  __device__ A operator()(const T& v) const {
    return magnitude(to_acc<A>(v));
  }
};

//! x * x in A.
template <class A>
struct Square {
  template <class T>
  __device__ A operator()(const T& v) const {
    const A a = to_acc<A>(v);
    return a * a;
  }
};

//! 1 for an element != 0, else 0. Floating elements compare after widening, as IEEE does: NaN
//! is != 0, -0.0 == 0.
struct NonZero {
  template <class T>
  __device__ std::int64_t operator()(const T& v) const {
    if constexpr (is_floating_v<T>) {
      return to_acc<float>(v) != 0.0f ? 1 : 0;
    } else {
      return v != T{0} ? 1 : 0;
    }
  }
};

//! exp(x - m) in A, m the maximum an earlier step left on the device.
template <class T, class A>
struct ExpShifted {
  const T* max;
  __device__ A operator()(const T& v) const {
    return exponential(to_acc<A>(v) - to_acc<A>(*max));
  }
};

//! Welford's running moments of some elements: their count, mean and m2 = sum (x - mean)^2.
template <class A>
struct Welford {
  A count;
  A mean;
  A m2;
};

//! One element as a Welford triple.
template <class A>
struct ToWelford {
  template <class T>
  __device__ Welford<A> operator()(const T& v) const {
    return {A{1}, to_acc<A>(v), A{0}};
  }
};

//! Chan et al.'s merge of two triples; a triple of no elements (the identity) merges as nothing.
template <class A>
struct ChanMerge {
  __host__ __device__ Welford<A> operator()(const Welford<A>& a, const Welford<A>& b) const {
    if (a.count == A{0}) return b;
    if (b.count == A{0}) return a;
    const A count = a.count + b.count;
    const A delta = b.mean - a.mean;
    const A share = b.count / count;
    return {count, a.mean + delta * share, a.m2 + b.m2 + delta * delta * a.count * share};
  }
};

//! a < b, f16 and bf16 compared through float.
template <class T>
__host__ __device__ bool is_less(const T& a, const T& b) {
  if constexpr (is_floating_v<T>) {
    return to_acc<stat_t<T>>(a) < to_acc<stat_t<T>>(b);
  } else {
    return a < b;
  }
}

//! One element as the pair {x, x}.
template <class T>
struct ToMinMax {
  __device__ MinMax<T> operator()(const T& v) const { return {v, v}; }
};

//! The smaller of the minima and the larger of the maxima (no NaN propagation: the baseline is
//! timed on uniform random data).
template <class T>
struct MinMaxMerge {
  __host__ __device__ MinMax<T> operator()(const MinMax<T>& a, const MinMax<T>& b) const {
    return {is_less(b.min, a.min) ? b.min : a.min, is_less(a.max, b.max) ? b.max : a.max};
  }
};

//! aminmax's identity: {+inf, -inf} for the floating types, {max(), lowest()} for the integers.
template <class T>
MinMax<T> min_max_identity() {
  constexpr float inf = std::numeric_limits<float>::infinity();
  if constexpr (std::is_same_v<T, __half>) {
    return {__float2half(inf), __float2half(-inf)};
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return {__float2bfloat16(inf), __float2bfloat16(-inf)};
  } else if constexpr (is_floating_v<T>) {
    return {std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity()};
  } else {
    return {std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest()};
  }
}

// ---- finishing kernels (one thread, after the CUB steps on the same stream) -------------------

template <class S>
__global__ void divide_kernel(const S* sum, S n, S* out) {
  *out = *sum / n;
}

//! var = m2 / divisor (divisor = max(0, n - correction); IEEE's NaN or inf where it is 0), std
//! its square root; the pairs also write the mean, as StatPair {var or std, mean}.
template <class A>
__global__ void moments_kernel(const Welford<A>* moments, A divisor, bool root, bool pair,
                               void* out) {
  const Welford<A> w = *moments;
  A value = w.m2 / divisor;
  if (root) value = square_root(value);
  if (pair) {
    *static_cast<StatPair<A>*>(out) = {value, w.mean};
  } else {
    *static_cast<A*>(out) = value;
  }
}

template <class A, class S>
__global__ void sqrt_kernel(const A* sum, S* out) {
  *out = static_cast<S>(square_root(*sum));
}

template <class S>
__global__ void count_to_stat_kernel(const std::int64_t* count, S* out) {
  *out = static_cast<S>(*count);
}

//! any: count > 0; all: count == n.
__global__ void truth_kernel(const std::int64_t* count, bool all, std::int64_t n, bool* out) {
  *out = all ? *count == n : *count > 0;
}

//! m + log(sum exp(x - m)), or m itself where m is +-inf or NaN.
template <class T, class A>
__global__ void logsumexp_kernel(const T* max, const A* sum, A* out) {
  const A m = to_acc<A>(*max);
  *out = isfinite(m) ? m + logarithm(*sum) : m;
}

// ---- the baselines -----------------------------------------------------------------------------

//! What every statistic baseline shares: the int item count (CUB's fast path, as
//! CubReduceImpl), and one temporary allocation for all its CUB steps, which run one after
//! another on the stream. In the size query (temp null) each step raises temp_bytes_ to the
//! largest request and no kernel is launched; in a run each step gets the whole allocation.
template <class Impl>
class CubStatistic : public CubCall<Impl, CubReduce> {
 protected:
  explicit CubStatistic(std::size_t n) : n_(static_cast<int>(n)) {
    if (n > static_cast<std::size_t>(INT_MAX))
      throw Error(ErrorCode::invalid_argument,
                  "the CUB baseline is timed with int item counts: n must be < 2^31");
  }

  //! Runs (or sizes) one CUB call, call(bytes) -> cudaError_t; `name` is for its error.
  template <class Call>
  void step(void* temp, const char* name, Call&& call) {
    std::size_t bytes = this->temp_bytes_;
    const cudaError_t status = call(bytes);
    if (status != cudaSuccess) ::reducelab::detail::throw_cuda_error(status, name);
    if (temp == nullptr) this->temp_bytes_ = std::max(this->temp_bytes_, bytes);
  }

  int n_;
};

//! mean: the widened sum, then a division by n.
template <class T>
class CubMean final : public CubStatistic<CubMean<T>> {
  friend class CubCall<CubMean<T>, CubReduce>;
  using S = stat_t<T>;

 public:
  explicit CubMean(std::size_t n) : CubStatistic<CubMean<T>>(n) { this->allocate_temp(); }
  std::string call() const override { return "cub::DeviceReduce::TransformReduce + divide"; }

 private:
  void dispatch(void* temp, const void* d_x, const void* /*d_y*/, void* d_out,
                cudaStream_t stream) {
    const T* x = static_cast<const T*>(d_x);
    this->step(temp, "cub::DeviceReduce::TransformReduce", [&](std::size_t& bytes) {
      return cub::DeviceReduce::TransformReduce(temp, bytes, x, sum_.data(), this->n_,
                                                cuda::std::plus<S>{}, Widen<S>{}, S{0}, stream);
    });
    if (temp == nullptr) return;
    divide_kernel<<<1, 1, 0, stream>>>(sum_.data(), static_cast<S>(this->n_),
                                       static_cast<S*>(d_out));
    REDUCELAB_CHECK_LAUNCH("divide_kernel");
  }

  DeviceBuffer<S> sum_{1};
};

//! var, std, var_mean, std_mean: Welford triples merged by Chan's formula, then the division
//! (and square root) in a finishing kernel.
template <class T>
class CubMoments final : public CubStatistic<CubMoments<T>> {
  friend class CubCall<CubMoments<T>, CubReduce>;
  using A = stat_t<T>;

 public:
  CubMoments(Op op, double correction, std::size_t n)
      : CubStatistic<CubMoments<T>>(n),
        root_(op == Op::std || op == Op::std_mean),
        pair_(op == Op::var_mean || op == Op::std_mean),
        divisor_(static_cast<A>(std::max(0.0, static_cast<double>(n) - correction))) {
    this->allocate_temp();
  }
  std::string call() const override {
    return "cub::DeviceReduce::TransformReduce (Welford triples, Chan merge) + finish";
  }

 private:
  void dispatch(void* temp, const void* d_x, const void* /*d_y*/, void* d_out,
                cudaStream_t stream) {
    const T* x = static_cast<const T*>(d_x);
    this->step(temp, "cub::DeviceReduce::TransformReduce", [&](std::size_t& bytes) {
      return cub::DeviceReduce::TransformReduce(temp, bytes, x, moments_.data(), this->n_,
                                                ChanMerge<A>{}, ToWelford<A>{},
                                                Welford<A>{A{0}, A{0}, A{0}}, stream);
    });
    if (temp == nullptr) return;
    moments_kernel<<<1, 1, 0, stream>>>(moments_.data(), divisor_, root_, pair_, d_out);
    REDUCELAB_CHECK_LAUNCH("moments_kernel");
  }

  bool root_;
  bool pair_;
  A divisor_;
  DeviceBuffer<Welford<A>> moments_{1};
};

//! The norms CUB is timed on.
enum class NormOrder { zero, one, two, max_abs, min_abs };

//! norm: sum of squares (then a square root), sum of |x|, max or min of |x|, or a count.
template <class T>
class CubNorm final : public CubStatistic<CubNorm<T>> {
  friend class CubCall<CubNorm<T>, CubReduce>;
  using S = stat_t<T>;
  using A2 = norm2_t<T>;

 public:
  CubNorm(NormOrder order, std::size_t n) : CubStatistic<CubNorm<T>>(n), order_(order) {
    this->allocate_temp();
  }
  std::string call() const override {
    switch (order_) {
      case NormOrder::zero: return "cub::DeviceReduce::TransformReduce (x != 0, +) + convert";
      case NormOrder::one: return "cub::DeviceReduce::TransformReduce (|x|, +)";
      case NormOrder::two: return "cub::DeviceReduce::TransformReduce (x*x, +) + sqrt";
      case NormOrder::max_abs: return "cub::DeviceReduce::TransformReduce (|x|, max)";
      case NormOrder::min_abs: return "cub::DeviceReduce::TransformReduce (|x|, min)";
    }
    return "cub";
  }

 private:
  void dispatch(void* temp, const void* d_x, const void* /*d_y*/, void* d_out,
                cudaStream_t stream) {
    const T* x = static_cast<const T*>(d_x);
    S* out = static_cast<S*>(d_out);
    const char* name = "cub::DeviceReduce::TransformReduce";
    const S inf = std::numeric_limits<S>::infinity();
    switch (order_) {
      case NormOrder::zero:
        this->step(temp, name, [&](std::size_t& bytes) {
          return cub::DeviceReduce::TransformReduce(temp, bytes, x, count_.data(), this->n_,
                                                    cuda::std::plus<std::int64_t>{}, NonZero{},
                                                    std::int64_t{0}, stream);
        });
        if (temp == nullptr) return;
        count_to_stat_kernel<<<1, 1, 0, stream>>>(count_.data(), out);
        REDUCELAB_CHECK_LAUNCH("count_to_stat_kernel");
        break;
      case NormOrder::one:
        this->step(temp, name, [&](std::size_t& bytes) {
          return cub::DeviceReduce::TransformReduce(temp, bytes, x, out, this->n_,
                                                    cuda::std::plus<S>{}, Abs<S>{}, S{0}, stream);
        });
        break;
      case NormOrder::two:
        this->step(temp, name, [&](std::size_t& bytes) {
          return cub::DeviceReduce::TransformReduce(temp, bytes, x, squares_.data(), this->n_,
                                                    cuda::std::plus<A2>{}, Square<A2>{}, A2{0},
                                                    stream);
        });
        if (temp == nullptr) return;
        sqrt_kernel<<<1, 1, 0, stream>>>(squares_.data(), out);
        REDUCELAB_CHECK_LAUNCH("sqrt_kernel");
        break;
      case NormOrder::max_abs:
        this->step(temp, name, [&](std::size_t& bytes) {
          return cub::DeviceReduce::TransformReduce(temp, bytes, x, out, this->n_,
                                                    cuda::maximum<S>{}, Abs<S>{}, S{0}, stream);
        });
        break;
      case NormOrder::min_abs:
        this->step(temp, name, [&](std::size_t& bytes) {
          return cub::DeviceReduce::TransformReduce(temp, bytes, x, out, this->n_,
                                                    cuda::minimum<S>{}, Abs<S>{}, inf, stream);
        });
        break;
    }
  }

  NormOrder order_;
  DeviceBuffer<A2> squares_{1};
  DeviceBuffer<std::int64_t> count_{1};
};

//! The orders with a baseline: 0, 1, 2, +inf, -inf; none for any other.
bool norm_order(double ord, NormOrder& order) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (ord == 0) {
    order = NormOrder::zero;
  } else if (ord == 1) {
    order = NormOrder::one;
  } else if (ord == 2) {
    order = NormOrder::two;
  } else if (ord == inf) {
    order = NormOrder::max_abs;
  } else if (ord == -inf) {
    order = NormOrder::min_abs;
  } else {
    return false;
  }
  return true;
}

//! count_nonzero, any, all: the count of x != 0 in int64 (count_nonzero's result as it is), then
//! for any and all a kernel that compares it with 0 or n.
template <class T>
class CubCount final : public CubStatistic<CubCount<T>> {
  friend class CubCall<CubCount<T>, CubReduce>;

 public:
  CubCount(Op op, std::size_t n) : CubStatistic<CubCount<T>>(n), op_(op) {
    this->allocate_temp();
  }
  std::string call() const override {
    return op_ == Op::count_nonzero ? "cub::DeviceReduce::TransformReduce (x != 0, +)"
                                    : "cub::DeviceReduce::TransformReduce (x != 0, +) + compare";
  }

 private:
  void dispatch(void* temp, const void* d_x, const void* /*d_y*/, void* d_out,
                cudaStream_t stream) {
    const T* x = static_cast<const T*>(d_x);
    std::int64_t* count =
        op_ == Op::count_nonzero ? static_cast<std::int64_t*>(d_out) : count_.data();
    this->step(temp, "cub::DeviceReduce::TransformReduce", [&](std::size_t& bytes) {
      return cub::DeviceReduce::TransformReduce(temp, bytes, x, count, this->n_,
                                                cuda::std::plus<std::int64_t>{}, NonZero{},
                                                std::int64_t{0}, stream);
    });
    if (temp == nullptr || op_ == Op::count_nonzero) return;
    truth_kernel<<<1, 1, 0, stream>>>(count_.data(), op_ == Op::all, this->n_,
                                      static_cast<bool*>(d_out));
    REDUCELAB_CHECK_LAUNCH("truth_kernel");
  }

  Op op_;
  DeviceBuffer<std::int64_t> count_{1};
};

//! logsumexp in two passes: the maximum m, then the sum of exp(x - m), then m + log(sum).
template <class T>
class CubLogSumExp final : public CubStatistic<CubLogSumExp<T>> {
  friend class CubCall<CubLogSumExp<T>, CubReduce>;
  using A = stat_t<T>;

 public:
  explicit CubLogSumExp(std::size_t n) : CubStatistic<CubLogSumExp<T>>(n) {
    this->allocate_temp();
  }
  std::string call() const override {
    return "cub::DeviceReduce::Max + TransformReduce(exp) + finish";
  }

 private:
  void dispatch(void* temp, const void* d_x, const void* /*d_y*/, void* d_out,
                cudaStream_t stream) {
    const T* x = static_cast<const T*>(d_x);
    this->step(temp, "cub::DeviceReduce::Max", [&](std::size_t& bytes) {
      return cub::DeviceReduce::Max(temp, bytes, x, max_.data(), this->n_, stream);
    });
    this->step(temp, "cub::DeviceReduce::TransformReduce", [&](std::size_t& bytes) {
      return cub::DeviceReduce::TransformReduce(temp, bytes, x, sum_.data(), this->n_,
                                                cuda::std::plus<A>{},
                                                ExpShifted<T, A>{max_.data()}, A{0}, stream);
    });
    if (temp == nullptr) return;
    logsumexp_kernel<<<1, 1, 0, stream>>>(max_.data(), sum_.data(), static_cast<A*>(d_out));
    REDUCELAB_CHECK_LAUNCH("logsumexp_kernel");
  }

  DeviceBuffer<T> max_{1};
  DeviceBuffer<A> sum_{1};
};

//! aminmax: {x, x} pairs merged by a pair min/max, written as MinMax<T>.
template <class T>
class CubAminmax final : public CubStatistic<CubAminmax<T>> {
  friend class CubCall<CubAminmax<T>, CubReduce>;

 public:
  explicit CubAminmax(std::size_t n) : CubStatistic<CubAminmax<T>>(n) {
    this->allocate_temp();
  }
  std::string call() const override {
    return "cub::DeviceReduce::TransformReduce ({x, x}, min/max)";
  }

 private:
  void dispatch(void* temp, const void* d_x, const void* /*d_y*/, void* d_out,
                cudaStream_t stream) {
    const T* x = static_cast<const T*>(d_x);
    this->step(temp, "cub::DeviceReduce::TransformReduce", [&](std::size_t& bytes) {
      return cub::DeviceReduce::TransformReduce(temp, bytes, x, static_cast<MinMax<T>*>(d_out),
                                                this->n_, MinMaxMerge<T>{}, ToMinMax<T>{},
                                                min_max_identity<T>(), stream);
    });
  }
};

}  // namespace

std::unique_ptr<CubReduce> make_cub_statistic(const Reduction& r, DType dtype, std::size_t n) {
  if (!is_valid(r.op) ||
      std::find(kStatisticOps.begin(), kStatisticOps.end(), r.op) == kStatisticOps.end())
    throw Error(ErrorCode::invalid_argument,
                "make_cub_statistic: " + std::string(to_string(r.op)) +
                    " is not a statistic (make_cub_reduce times it)");
  return dispatch_dtype(dtype, [&](auto value) -> std::unique_ptr<CubReduce> {
    using T = decltype(value);
    switch (r.op) {
      case Op::count_nonzero:
      case Op::any:
      case Op::all: return std::make_unique<CubCount<T>>(r.op, n);
      case Op::aminmax: return std::make_unique<CubAminmax<T>>(n);
      default: break;
    }
    if constexpr (is_floating_v<T>) {
      switch (r.op) {
        case Op::mean: return std::make_unique<CubMean<T>>(n);
        case Op::var:
        case Op::std:
        case Op::var_mean:
        case Op::std_mean: return std::make_unique<CubMoments<T>>(r.op, r.correction, n);
        case Op::norm: {
          NormOrder order{};
          if (!norm_order(r.ord, order)) return nullptr;
          return std::make_unique<CubNorm<T>>(order, n);
        }
        case Op::logsumexp: return std::make_unique<CubLogSumExp<T>>(n);
        default: break;
      }
    }
    return nullptr;  // a floating-only statistic of an integer type
  });
}

}  // namespace reducelab::bench

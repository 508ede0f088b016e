// Many tensors in one call (tensors.hpp, issue 12): every one-array op x type over lists of
// separately allocated, misaligned tensors of every length class (empty, a thread's, a warp's, a
// block's, many blocks'), each result and the total against the CPU references; one tensor,
// 10,000 tiny ones, 100,000 (whose table leaves the workspace for the stream-ordered allocator),
// the empty list, graph capture, repeated calls, errors, and a tensor past 2^31 elements (large).

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "bench/stats_check.hpp"
#include "gpu_test.hpp"
#include "stats_cases.hpp"
#include "reducelab/reducelab.hpp"

namespace reducelab::test {
namespace {

using bench::Distribution;

//! Every op that reads one array: the core ones and every statistic with its parameters.
std::vector<Reduction> list_ops_for(DType dtype) {
  std::vector<Reduction> out;
  for (Op op : kCoreOps)
    if (input_arrays(op) == 1) out.push_back(op);
  for (const Reduction& r : statistics_for(dtype)) out.push_back(r);
  return out;
}

//! "" when `raw` is r over x[0, n) with the segmented reduce's rules for n == 0.
template <class T>
std::string check_one(const Reduction& r, const T* x, std::size_t n, const unsigned char* raw) {
  if (bench::is_statistic(r.op)) return bench::check_statistic(r, x, n, raw, true);
  if (n == 0) {
    const std::vector<unsigned char> empty = empty_result<T>(r.op);
    return std::memcmp(raw, empty.data(), empty.size()) == 0 ? "" : "not the empty result";
  }
  return bench::check_result(bench::reference(r.op, x, static_cast<const T*>(nullptr), n), raw);
}

//! A list of tensors, each in its own allocation, `offset_of(i)` elements past its start.
template <class T>
struct TensorList {
  std::vector<std::vector<T>> host;
  std::vector<DeviceBuffer<T>> device;
  std::vector<TensorSpan> spans;
  std::vector<T> concatenation;

  TensorList(const std::vector<std::size_t>& lengths, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      host.push_back(bench::random_vector<T>(lengths[i], seed + i, Distribution::uniform));
      const std::size_t offset = random() % 4;
      device.push_back(upload(host.back(), offset));
      spans.push_back({lengths[i] == 0 && i % 2 == 0 ? nullptr : device.back().data() + offset,
                       lengths[i]});
      concatenation.insert(concatenation.end(), host.back().begin(), host.back().end());
    }
  }
};

//! Runs r over `list` with a total (`captured`: in a CUDA graph, whose table goes in upload
//! kernels' parameters instead of the staging buffers); "" when every result and the total are
//! right.
template <class T>
std::string check_list(const Reduction& r, const std::vector<TensorSpan>& spans,
                       const std::vector<const T*>& host, const std::vector<T>& concatenation,
                       bool captured = false) {
  const DType dtype = dtype_of<T>::value;
  const std::size_t size = result_size(r.op, dtype);
  DeviceBuffer<unsigned char> d_total(size + 16);
  REDUCELAB_CUDA_CHECK(cudaMemset(d_total.data(), kPoison, size + 16));
  const std::vector<unsigned char> out = poisoned_output(spans.size() * size, [&](void* o) {
    if (!captured) {
      reduce_tensors(r, dtype, spans.data(), spans.size(), o, d_total.data(), nullptr);
      return;
    }
    cudaStream_t stream = nullptr;
    REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    REDUCELAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    reduce_tensors(r, dtype, spans.data(), spans.size(), o, d_total.data(), stream);
    REDUCELAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    REDUCELAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    REDUCELAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    REDUCELAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
    REDUCELAB_CUDA_CHECK(cudaGraphDestroy(graph));
    release_workspace(stream);
    REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
  });
  std::vector<unsigned char> total(size);
  REDUCELAB_CUDA_CHECK(cudaMemcpy(total.data(), d_total.data(), size, cudaMemcpyDeviceToHost));
  std::ostringstream why;
  int wrong = 0;
  for (std::size_t i = 0; i < spans.size() && wrong < 4; ++i) {
    const std::string what = check_one(r, host[i], spans[i].size, out.data() + i * size);
    if (!what.empty()) {
      why << " [" << describe(r) << " tensor " << i << " of " << spans.size() << ", "
          << spans[i].size << " elements: " << what << "]";
      ++wrong;
    }
  }
  const std::string what = check_one(r, concatenation.data(), concatenation.size(), total.data());
  if (!what.empty()) why << " [" << describe(r) << " total: " << what << "]";
  return why.str();
}

template <class T>
std::string check_list(const Reduction& r, const TensorList<T>& list, bool captured = false) {
  std::vector<const T*> host;
  for (const std::vector<T>& h : list.host) host.push_back(h.data());
  return check_list<T>(r, list.spans, host, list.concatenation, captured);
}

template <class T>
class Tensors : public GpuTest {};
using ListTypes = ::testing::Types<float, double, __half, __nv_bfloat16, std::int32_t, std::uint64_t>;
TYPED_TEST_SUITE(Tensors, ListTypes);

// Every length class: empty (null and non-null pointers), a lane's, a warp's, a block's
// (>= 4096), several blocks' (long segments cut into slices), in no particular order.
TYPED_TEST(Tensors, EveryOpOverEveryLengthClass) {
  using T = TypeParam;
  const TensorList<T> list({0, 1, 5, 31, 100, 0, 3000, 4096, 70001, 1, 300001, 33, 0, 1 << 20},
                           kSeed);
  for (const Reduction& r : list_ops_for(dtype_of<T>::value))
    EXPECT_EQ(check_list(r, list), "");
}

// The same lengths captured into a graph: every op with the table from the upload kernels.
TYPED_TEST(Tensors, EveryOpOverEveryLengthClassInAGraph) {
  using T = TypeParam;
  const TensorList<T> list({0, 1, 5, 31, 100, 0, 3000, 4096, 70001, 1, 300001, 33, 0, 1 << 20},
                           kSeed + 1);
  for (const Reduction& r : list_ops_for(dtype_of<T>::value))
    EXPECT_EQ(check_list(r, list, true), "");
}

// A tensor of 2^22 elements among short ones and ones just over the long kernel's limit, and a
// list of long tensors only (no teams kernel): slices that cut tensors anywhere.
TYPED_TEST(Tensors, LongTensorsAmongShortOnes) {
  using T = TypeParam;
  const TensorList<T> mixed({4095, 1 << 22, 4096, 2, 65537, 4097}, kSeed + 2);
  const TensorList<T> long_only({1 << 17, 1 << 17, (1 << 17) + 3, 1 << 16}, kSeed + 3);
  for (const Reduction& r : list_ops_for(dtype_of<T>::value)) {
    EXPECT_EQ(check_list(r, mixed), "");
    EXPECT_EQ(check_list(r, long_only), "");
  }
}

TYPED_TEST(Tensors, OneTensorAndTheTotalAgree) {
  using T = TypeParam;
  for (std::size_t n : {std::size_t{7}, std::size_t{5000}, std::size_t{1000003}}) {
    const TensorList<T> list({n}, kSeed + n);
    for (const Reduction& r : list_ops_for(dtype_of<T>::value))
      EXPECT_EQ(check_list(r, list), "") << n;
  }
}

//! `count` tiny tensors (0..max_length elements) side by side in one allocation, as a caching
//! allocator hands them out: the pointer check asks the device about one allocation only.
template <class T>
void check_tiny_tensors(std::size_t count, std::size_t max_length,
                        const std::vector<Reduction>& ops) {
  std::mt19937_64 random(kSeed + count);
  std::vector<std::size_t> lengths(count);
  std::size_t total = 0;
  for (std::size_t& length : lengths) total += length = random() % (max_length + 1);
  const std::vector<T> host = bench::random_vector<T>(total, kSeed, Distribution::uniform);
  const DeviceBuffer<T> d = upload(host);
  std::vector<TensorSpan> spans;
  std::vector<const T*> pointers;
  std::size_t at = 0;
  for (std::size_t length : lengths) {
    spans.push_back({d.data() + at, length});
    pointers.push_back(host.data() + at);
    at += length;
  }
  for (const Reduction& r : ops) EXPECT_EQ(check_list<T>(r, spans, pointers, host), "") << count;
}

TEST_F(GpuTest, TenThousandTinyTensors) {
  check_tiny_tensors<float>(10000, 40,
                            {Op::sum, Reduction::norm(2), Op::max, Op::argmax, Op::var_mean});
}

// 100,000 tensors: the table (1.6 MB) does not fit in the workspace and comes from
// cudaMallocAsync, freed on the stream.
TEST_F(GpuTest, HundredThousandTensorsTakeAnAllocatedTable) {
  check_tiny_tensors<float>(100000, 8, {Op::sum, Reduction::norm(2), Op::argmin, Op::var_mean});
  check_tiny_tensors<double>(100000, 8, {Op::sum, Op::aminmax});
}

TEST_F(GpuTest, TheEmptyListGivesTheEmptyTotal) {
  for (Op op : {Op::sum, Op::max, Op::argmax, Op::mean, Op::count_nonzero, Op::all}) {
    const std::size_t size = result_size(op, DType::f32);
    const std::vector<unsigned char> total = poisoned_output(size, [&](void* t) {
      reduce_tensors(op, DType::f32, nullptr, 0, nullptr, t, nullptr);
    });
    EXPECT_EQ(check_one<float>(op, nullptr, 0, total.data()), "") << to_string(op);
  }
  // No tensors and no total: nothing to do, nothing checked.
  EXPECT_NO_THROW(reduce_tensors(Op::sum, DType::f32, nullptr, 0, nullptr, nullptr, nullptr));
  // All tensors empty: each result and the total are the empty results.
  const std::vector<TensorSpan> empties = {{nullptr, 0}, {nullptr, 0}};
  std::vector<const float*> none = {nullptr, nullptr};
  for (Op op : {Op::sum, Op::min, Op::argmin, Op::var})
    EXPECT_EQ(check_list<float>(op, empties, none, {}), "") << to_string(op);
}

TEST_F(GpuTest, WithoutATotalOnlyTheResultsAreWritten) {
  const TensorList<float> list({10, 5000, 100000}, kSeed);
  const std::vector<unsigned char> out = poisoned_output(3 * sizeof(float), [&](void* o) {
    norm_tensors<float>(list.spans.data(), 3, static_cast<float*>(o), nullptr, nullptr);
  });
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(check_one<float>(Reduction::norm(2), list.host[i].data(), list.host[i].size(),
                               out.data() + 4 * i),
              "");
}

TEST_F(GpuTest, RepeatedListCallsAreBitwiseEqual) {
  const TensorList<float> list({3, 40000, 0, 1 << 20, 77, 300000}, kSeed);
  DeviceBuffer<float> out(6), total(1);
  std::vector<float> first(7), again(7);
  for (int run = 0; run < 3; ++run) {
    sum_tensors<float>(list.spans.data(), 6, out.data(), total.data(), nullptr);
    std::vector<float>& into = run == 0 ? first : again;
    REDUCELAB_CUDA_CHECK(cudaMemcpy(into.data(), out.data(), 24, cudaMemcpyDeviceToHost));
    REDUCELAB_CUDA_CHECK(cudaMemcpy(into.data() + 6, total.data(), 4, cudaMemcpyDeviceToHost));
    if (run > 0) EXPECT_EQ(std::memcmp(first.data(), again.data(), 28), 0) << run;
  }
}

// More calls in flight than the workspace has staging buffers (4), behind a stream held back by
// a host function, so later calls reuse buffers whose copies have not run yet and must wait for
// them; between the calls, calls that fail at their last tensor after filling most of a buffer.
// Each call's table must survive until its copy ran, so every result is its own list's.
TEST_F(GpuTest, ManyListCallsInFlightKeepTheirTables) {
  const TensorList<float> list({5000, 3, 70001, 0, 100}, kSeed);
  constexpr int kCalls = 19;
  DeviceBuffer<float> out(kCalls * 5), total(kCalls);
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const auto hold = [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); };
  REDUCELAB_CUDA_CHECK(cudaLaunchHostFunc(stream, hold, nullptr));
  std::vector<float> host_tensor(100);
  // Call c reduces the list rotated by c: a different table each time.
  for (int c = 0; c < kCalls; ++c) {
    std::vector<TensorSpan> spans;
    for (int i = 0; i < 5; ++i) spans.push_back(list.spans[(i + c) % 5]);
    max_tensors<float>(spans.data(), 5, out.data() + 5 * c, total.data() + c, stream);
    spans[4] = {host_tensor.data(), host_tensor.size()};
    expect_invalid_argument(
        [&] { max_tensors<float>(spans.data(), 5, out.data(), total.data(), stream); },
        "host tensor last", "host memory");
  }
  REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> got(kCalls * 5);
  REDUCELAB_CUDA_CHECK(cudaMemcpy(got.data(), out.data(), got.size() * 4, cudaMemcpyDeviceToHost));
  for (int c = 0; c < kCalls; ++c)
    for (int i = 0; i < 5; ++i) {
      const std::vector<float>& h = list.host[(i + c) % 5];
      EXPECT_EQ(check_one<float>(Op::max, h.data(), h.size(),
                                 reinterpret_cast<unsigned char*>(&got[5 * c + i])),
                "")
          << "call " << c << " tensor " << i;
    }
  release_workspace(stream);
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

// The table travels in the upload kernels' parameters, so a captured call replays with its own
// table even after the host list changed; the data is read at each replay.
TEST_F(GpuTest, ListCallsCaptureIntoAGraph) {
  TensorList<float> list({1000, 70000, 5}, kSeed);
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DeviceBuffer<float> out(3), total(1);
  cudaGraph_t graph = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  std::vector<TensorSpan> spans = list.spans;
  max_tensors<float>(spans.data(), spans.size(), out.data(), total.data(), stream);
  REDUCELAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  spans.assign(3, TensorSpan{nullptr, 0});  // the graph kept its own copy
  cudaGraphExec_t exec = nullptr;
  REDUCELAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (float planted : {1e6f, 2e6f}) {
    // A new maximum in the second tensor: each replay reads the data as it is then.
    REDUCELAB_CUDA_CHECK(cudaMemcpy(list.spans[1].data == nullptr ? nullptr
                                        : const_cast<void*>(list.spans[1].data),
                                    &planted, sizeof(float), cudaMemcpyHostToDevice));
    REDUCELAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    float got[4];
    REDUCELAB_CUDA_CHECK(cudaMemcpy(got, out.data(), 12, cudaMemcpyDeviceToHost));
    REDUCELAB_CUDA_CHECK(cudaMemcpy(got + 3, total.data(), 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got[1], planted);
    EXPECT_EQ(got[3], planted);
    list.host[1][0] = planted;
    EXPECT_EQ(check_one<float>(Op::max, list.host[0].data(), 1000,
                               reinterpret_cast<unsigned char*>(got)),
              "");
  }
  REDUCELAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  REDUCELAB_CUDA_CHECK(cudaGraphDestroy(graph));
  release_workspace(stream);
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_F(GpuTest, ListErrorsAreClearAndLeaveTheContextUsable) {
  const TensorList<float> list({100, 200}, kSeed);
  DeviceBuffer<float> out(4);
  std::vector<TensorSpan> spans = list.spans;
  auto call = [&](Reduction r, DType dtype, void* o, void* total) {
    return [&, r, dtype, o, total] {
      reduce_tensors(r, dtype, spans.data(), spans.size(), o, total, nullptr);
    };
  };
  expect_invalid_argument(call(Op::dot, DType::f32, out.data(), nullptr), "dot", "two arrays");
  expect_invalid_argument(call(Op::var, DType::i32, out.data(), nullptr), "var on i32",
                          "floating types");
  expect_invalid_argument(call(Op::sum, DType::f32, nullptr, nullptr), "null out", "out is null");
  expect_invalid_argument(call(Op::sum, DType::f32, out.data(), static_cast<char*>(
                                   static_cast<void*>(out.data())) + 1),
                          "unaligned total", "total");
  expect_invalid_argument(
      [&] { reduce_tensors(Op::sum, DType::f32, nullptr, 2, out.data(), nullptr, nullptr); },
      "null list", "list of tensors is null");
  spans[1].data = nullptr;
  expect_invalid_argument(call(Op::sum, DType::f32, out.data(), nullptr), "null tensor",
                          "tensors[1].data is null");
  spans[1] = {static_cast<const char*>(list.spans[1].data) + 2, 10};
  expect_invalid_argument(call(Op::sum, DType::f32, out.data(), nullptr), "unaligned tensor",
                          "tensors[1].data");
  std::vector<float> host(10);
  spans[1] = {host.data(), host.size()};
  expect_invalid_argument(call(Op::max, DType::f32, out.data(), nullptr), "host tensor",
                          "host memory");
  spans[1] = {list.spans[1].data, std::numeric_limits<std::size_t>::max() / 2};
  expect_invalid_argument(call(Op::sum, DType::f32, out.data(), nullptr), "overflow",
                          "add up past");
  // The context still works.
  spans = list.spans;
  EXPECT_EQ(check_list(Reduction(Op::sum), list), "");
}

// A list around one tensor of 2^31 + 5 f16 elements (4 GB): its offsets, its indices and the
// total's index past 32 bits.
TEST_F(GpuTest, TensorsLarge) {
  const std::size_t big = (std::size_t{1} << 31) + 5;
  const TensorList<__half> list({3, 5000, big, 0, 70001}, kSeed);
  for (const Reduction& r : {Reduction(Op::sum), Reduction::norm(2), Reduction(Op::argmax),
                             Reduction(Op::var_mean)})
    EXPECT_EQ(check_list(r, list), "");
}

}  // namespace
}  // namespace reducelab::test

// Concurrency and graphs: 8 streams x 4 host threads at once; capture into a CUDA graph and
// replay with new data; the synchronous form refused inside a capture.

#include <atomic>
#include <cstring>
#include <thread>

#include "gpu_test.hpp"
#include "reducelab/reducelab.hpp"

namespace reducelab::test {
namespace {

using bench::Distribution;

class ProductionStreams : public GpuTest {};

TEST_F(ProductionStreams, EightStreamsFourThreadsAtOnce) {
  constexpr int kStreams = 8;
  constexpr int kThreads = 4;
  constexpr int kCallsPerStream = 40;
  // Each stream reduces its own array, so a shared workspace would show as a wrong sum.
  std::vector<std::vector<float>> host(kStreams);
  std::vector<DeviceBuffer<float>> device;
  std::vector<long double> expected(kStreams);
  std::vector<cudaStream_t> streams(kStreams);
  for (int s = 0; s < kStreams; ++s) {
    const std::size_t n = (std::size_t{1} << 20) + 97 * s;
    host[s] = bench::random_vector<float>(n, kSeed + s, Distribution::small_integers);
    expected[s] = bench::reference(Op::sum, host[s].data(), static_cast<const float*>(nullptr), n).total;
    device.push_back(upload(host[s]));
    REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
  }
  std::atomic<int> wrong{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        DeviceBuffer<float> outs(kStreams * kCallsPerStream);
        REDUCELAB_CUDA_CHECK(cudaMemset(outs.data(), 0, outs.bytes()));  // half stay unwritten
        // The legacy stream's memset before the non-blocking streams' calls.
        REDUCELAB_CUDA_CHECK(cudaDeviceSynchronize());
        for (int call = 0; call < kCallsPerStream; ++call) {
          for (int s = 0; s < kStreams; ++s) {
            const int stream_index = (s + t) % kStreams;  // threads share streams, in other orders
            const auto& d = device[stream_index];
            if ((call + t) % 2 == 0) {
              const float got = reducelab::sum(d.data(), d.size() - 16, streams[stream_index]);
              if (got != static_cast<float>(expected[stream_index])) ++wrong;
            } else {
              reducelab::sum(d.data(), d.size() - 16, outs.data() + call * kStreams + stream_index,
                             streams[stream_index]);
            }
          }
        }
        for (cudaStream_t s : streams) REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(s));
        std::vector<float> got(outs.size());
        REDUCELAB_CUDA_CHECK(cudaMemcpy(got.data(), outs.data(), outs.bytes(), cudaMemcpyDeviceToHost));
        for (int call = 0; call < kCallsPerStream; ++call) {
          if ((call + t) % 2 == 0) continue;
          for (int s = 0; s < kStreams; ++s)
            if (got[call * kStreams + s] != static_cast<float>(expected[s])) ++wrong;
        }
      } catch (const std::exception& e) {
        ++errors;
        ADD_FAILURE() << "thread " << t << ": " << e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0) << "wrong sums under concurrency (integer-valued data: sums are exact)";
  for (cudaStream_t s : streams) REDUCELAB_CUDA_CHECK(cudaStreamDestroy(s));
}

// A thread remembers the workspaces of its last 8 streams without taking a lock; with more
// streams than that it must still never hand one stream's workspace to another.
TEST_F(ProductionStreams, MoreStreamsThanAThreadRemembers) {
  constexpr int kStreams = 20;
  constexpr int kRounds = 3;
  std::vector<std::vector<float>> host(kStreams);
  std::vector<DeviceBuffer<float>> device;
  std::vector<float> expected(kStreams);
  std::vector<cudaStream_t> streams(kStreams);
  for (int s = 0; s < kStreams; ++s) {
    const std::size_t n = (std::size_t{1} << 18) + 31 * s;
    host[s] = bench::random_vector<float>(n, kSeed + 7 * s, Distribution::small_integers);
    const float* none = nullptr;
    expected[s] = static_cast<float>(bench::reference(Op::sum, host[s].data(), none, n).total);
    device.push_back(upload(host[s]));
    REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
  }
  DeviceBuffer<float> outs(kRounds * kStreams);
  REDUCELAB_CUDA_CHECK(cudaMemset(outs.data(), 0, outs.bytes()));
  REDUCELAB_CUDA_CHECK(cudaDeviceSynchronize());  // before the non-blocking streams' calls
  // Queued without waiting: streams that shared a workspace would race on its counter.
  for (int round = 0; round < kRounds; ++round)
    for (int s = 0; s < kStreams; ++s)
      reducelab::sum(device[s].data(), host[s].size(), outs.data() + round * kStreams + s,
                     streams[s]);
  for (cudaStream_t s : streams) REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<float> got(outs.size());
  REDUCELAB_CUDA_CHECK(cudaMemcpy(got.data(), outs.data(), outs.bytes(), cudaMemcpyDeviceToHost));
  for (int round = 0; round < kRounds; ++round)
    for (int s = 0; s < kStreams; ++s)
      EXPECT_EQ(got[round * kStreams + s], expected[s]) << "round " << round << ", stream " << s;
  // New streams (which may reuse a destroyed stream's handle) get their own workspaces.
  for (int s = 0; s < kStreams / 2; ++s) {
    REDUCELAB_CUDA_CHECK(cudaStreamDestroy(streams[s]));
    REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
  }
  for (int s = 0; s < kStreams; ++s)
    EXPECT_EQ(reducelab::sum(device[s].data(), host[s].size(), streams[s]), expected[s]) << s;
  for (cudaStream_t s : streams) REDUCELAB_CUDA_CHECK(cudaStreamDestroy(s));
}

TEST_F(ProductionStreams, GraphCaptureAndReplay) {
  const std::size_t n = (std::size_t{1} << 22) + 11;
  DeviceBuffer<float> x(n);
  DeviceBuffer<float> y(n);
  DeviceBuffer<float> sum_out(1);
  DeviceBuffer<float> dot_out(1);
  DeviceBuffer<ArgResult<float>> argmax_out(1);
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  cudaGraph_t graph = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  reducelab::sum(x.data(), n, sum_out.data(), stream);
  reducelab::dot(x.data(), y.data(), n, dot_out.data(), stream);
  reducelab::argmax(x.data(), n, argmax_out.data(), stream);
  // The synchronous form cannot be captured: a clear error, and the capture goes on.
  EXPECT_THROW(reducelab::sum(x.data(), n, stream), Error);
  REDUCELAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  REDUCELAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  REDUCELAB_CUDA_CHECK(cudaGraphDestroy(graph));  // the exec keeps what it needs

  for (int replay = 0; replay < 10; ++replay) {
    const auto hx = bench::random_vector<float>(n, kSeed + replay, Distribution::small_integers);
    const auto hy = bench::random_vector<float>(n, kSeed + 100 + replay, Distribution::small_integers);
    REDUCELAB_CUDA_CHECK(cudaMemcpy(x.data(), hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    REDUCELAB_CUDA_CHECK(cudaMemcpy(y.data(), hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    REDUCELAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    // Calls outside the graph on the same stream use the stream's own workspace.
    const float direct = reducelab::sum(y.data(), n, stream);
    REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    float sum = 0;
    float dot = 0;
    ArgResult<float> amax{};
    REDUCELAB_CUDA_CHECK(cudaMemcpy(&sum, sum_out.data(), sizeof(sum), cudaMemcpyDeviceToHost));
    REDUCELAB_CUDA_CHECK(cudaMemcpy(&dot, dot_out.data(), sizeof(dot), cudaMemcpyDeviceToHost));
    REDUCELAB_CUDA_CHECK(cudaMemcpy(&amax, argmax_out.data(), sizeof(amax), cudaMemcpyDeviceToHost));
    const float* none = nullptr;
    EXPECT_EQ(sum, static_cast<float>(bench::reference(Op::sum, hx.data(), none, n).total)) << replay;
    EXPECT_EQ(dot, static_cast<float>(bench::reference(Op::dot, hx.data(), hy.data(), n).total)) << replay;
    EXPECT_EQ(amax.index, bench::reference(Op::argmax, hx.data(), none, n).index) << replay;
    EXPECT_EQ(direct, static_cast<float>(bench::reference(Op::sum, hy.data(), none, n).total)) << replay;
  }
  REDUCELAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  // After the graph is gone its workspace is released; the library keeps working.
  std::vector<float> ones(1000, 1.0f);
  const DeviceBuffer<float> d = upload(ones);
  EXPECT_EQ(reducelab::sum(d.data(), ones.size(), stream), 1000.0f);
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace reducelab::test

// reducelab_tune: times configurations of the production kernel (block size, vectors in flight
// per thread, load cache hint) side by side with CUB, to choose TunedConfig in
// src/reduce/launch.cuh. Not installed; run on the GPU you tune for:
//   reducelab_tune [--quick]
// Each figure is the median of event-timed calls, measured like `reducelab bench`.

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/cub_baseline.hpp"
#include "bench/random.hpp"
#include "bench/stats.hpp"
#include "bench/timer.hpp"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"
#include "reduce/launch.cuh"
#include "reducelab/reduce.hpp"

namespace reducelab::tune {
namespace {

using device::LoadHint;

template <int kBlock_, int kUnroll_, LoadHint kHint_, int kMinVectors_ = 1>
struct Config {
  static constexpr int kBlock = kBlock_;
  static constexpr int kUnroll = kUnroll_;
  static constexpr LoadHint kHint = kHint_;
  static constexpr int kMinVectorsPerThread = kMinVectors_;
};

const char* hint_name(LoadHint h) {
  switch (h) {
    case LoadHint::plain: return "plain";
    case LoadHint::no_alloc: return "no_alloc";
    case LoadHint::stream: return "stream";
    case LoadHint::prefetch: return "prefetch";
  }
  return "?";
}

struct Variant {
  std::string name;
  std::function<void(const void* x, const void* y, std::size_t n, void* out, cudaStream_t)> run;
};

template <class Traits, class C>
Variant variant(const char* op) {
  char name[96];
  std::snprintf(name, sizeof(name), "%s B=%d U=%d %s V>=%d", op, C::kBlock, C::kUnroll,
                hint_name(C::kHint), C::kMinVectorsPerThread);
  return {name, [](const void* x, const void* y, std::size_t n, void* out, cudaStream_t s) {
            using T = typename Traits::Elem;
            const auto ws = detail::workspace_for(s, false);
            detail::launch_with<Traits, C>(static_cast<const T*>(x), static_cast<const T*>(y), n, out, ws, s);
          }};
}

template <class T>
void run_family(const char* title, Op op, const std::vector<Variant>& variants,
                const std::vector<int>& log_sizes, const DeviceInfo& dev, int reps) {
  std::printf("\n## %s\n\n| config |", title);
  for (int k : log_sizes) std::printf(" 2^%d us | GB/s |", k);
  std::printf("\n|---|");
  for (std::size_t i = 0; i < log_sizes.size(); ++i) std::printf("---:|---:|");
  std::printf("\n");
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<std::vector<double>> table(variants.size() + 1, std::vector<double>(log_sizes.size()));
  const int arrays = input_arrays(op);
  for (std::size_t s = 0; s < log_sizes.size(); ++s) {
    const std::size_t n = std::size_t{1} << log_sizes[s];
    const std::size_t bytes = n * sizeof(T) * arrays;
    const std::size_t copies = bytes >= 2 * dev.l2_bytes ? 1 : (3 * dev.l2_bytes + bytes - 1) / bytes;
    const auto host = bench::random_vector<T>(n, 7, bench::Distribution::uniform);
    DeviceBuffer<T> x(n * copies);
    DeviceBuffer<T> y(arrays == 2 ? n * copies : 0);
    for (std::size_t c = 0; c < copies; ++c) {
      REDUCELAB_CUDA_CHECK(cudaMemcpy(x.data() + c * n, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
      if (arrays == 2)
        REDUCELAB_CUDA_CHECK(cudaMemcpy(y.data() + c * n, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    }
    DeviceBuffer<unsigned char> out(16);
    auto cub = bench::make_cub_reduce(op, dtype_of<T>::value, n);
    for (std::size_t v = 0; v <= variants.size(); ++v) {
      auto samples = bench::time_calls(
          [&](int rep, cudaStream_t st) {
            const std::size_t c = static_cast<std::size_t>(rep) % copies;
            const T* xp = x.data() + c * n;
            const T* yp = arrays == 2 ? y.data() + c * n : nullptr;
            if (v == variants.size()) {
              cub->run(xp, yp, out.data(), st);
            } else {
              variants[v].run(xp, yp, n, out.data(), st);
            }
          },
          5, reps, stream);
      table[v][s] = bench::summarize(samples).median_us;
    }
  }
  for (std::size_t v = 0; v <= variants.size(); ++v) {
    std::printf("| %s |", v == variants.size() ? "CUB" : variants[v].name.c_str());
    for (std::size_t s = 0; s < log_sizes.size(); ++s) {
      const double bytes = static_cast<double>(std::size_t{1} << log_sizes[s]) * sizeof(T) * arrays;
      std::printf(" %.1f | %.0f |", table[v][s], bytes / (table[v][s] * 1e3));
    }
    std::printf("\n");
  }
  std::fflush(stdout);
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

__global__ void empty_kernel() {}

// Where the time of a small call goes: an empty kernel, a one-element reduction through the
// public API (argument checks included) and straight through the launcher, and CUB.
void overheads(int reps) {
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DeviceBuffer<float> x(1 << 20);
  REDUCELAB_CUDA_CHECK(cudaMemset(x.data(), 0, x.bytes()));
  DeviceBuffer<float> out(4);
  auto median = [&](const std::function<void(int, cudaStream_t)>& call) {
    return bench::summarize(bench::time_calls(call, 5, reps, stream)).median_us;
  };
  const double empty = median([](int, cudaStream_t s) { empty_kernel<<<1, 32, 0, s>>>(); });
  const double api = median([&](int, cudaStream_t s) { reducelab::sum(x.data(), 1, out.data(), s); });
  const double direct = median([&](int, cudaStream_t s) {
    detail::launch_with<detail::SumTraits<float, 1>>(x.data(), nullptr, 1, out.data(),
                                                     detail::workspace_for(s, false), s);
  });
  auto cub = bench::make_cub_reduce(Op::sum, DType::f32, 1);
  const double cub_one = median([&](int, cudaStream_t s) { cub->run(x.data(), nullptr, out.data(), s); });
  // GPU time alone: 20 launches replayed from a graph, no host submission per call.
  const std::size_t big = std::size_t{1} << 27;
  DeviceBuffer<float> y(big);
  {
    const auto host = bench::random_vector<float>(big, 11, bench::Distribution::uniform);
    REDUCELAB_CUDA_CHECK(cudaMemcpy(y.data(), host.data(), y.bytes(), cudaMemcpyHostToDevice));
  }
  const auto ws = detail::workspace_for(stream, false);
  cudaGraph_t graph = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  for (int i = 0; i < 20; ++i)
    detail::launch_with<detail::SumTraits<float, 1>>(y.data(), nullptr, big, out.data(), ws, stream);
  REDUCELAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  REDUCELAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const double graph20 = median([&](int, cudaStream_t s) { REDUCELAB_CUDA_CHECK(cudaGraphLaunch(exec, s)); });
  const double single = median([&](int, cudaStream_t s) {
    detail::launch_with<detail::SumTraits<float, 1>>(y.data(), nullptr, big, out.data(), ws, s);
  });
  std::printf("\n## overheads (median us)\n\n| what | us |\n|---|---:|\n"
              "| empty kernel call | %.2f |\n| reducelab::sum n=1 (API, checks) | %.2f |\n"
              "| launch_with n=1 (no checks) | %.2f |\n| CUB sum n=1 | %.2f |\n"
              "| f32 sum 2^27 one call | %.1f |\n| f32 sum 2^27 per kernel, 20 in a graph | %.1f |\n",
              empty, api, direct, cub_one, single, graph20 / 20);
  REDUCELAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  REDUCELAB_CUDA_CHECK(cudaGraphDestroy(graph));
  REDUCELAB_CUDA_CHECK(cudaStreamDestroy(stream));
}

// The floor of any one-kernel reduction at large sizes: a grid-stride float4 read with U loads
// in flight per thread that only adds into a register, with no block or grid combine. Compared
// with the production kernel and CUB in the same table, it shows how much of a call is left to
// win once the bytes are read as fast as this machine reads them.
template <int kUnroll>
__global__ void __launch_bounds__(512) stream_floor_kernel(const float4* x, std::size_t vectors, float* out) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc = 0.f;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(x + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; i < vectors; i += stride) {
    const float4 v = __ldg(x + i);
    acc += (v.x + v.y) + (v.z + v.w);
  }
  if (acc == -1.2345f) *out = acc;  // never true for our inputs; keeps the loads live
}

template <int kUnroll>
struct StreamFloorTag {};

template <int kUnroll>
Variant stream_floor() {
  char name[96];
  std::snprintf(name, sizeof(name), "stream floor: float4 read + add, U=%d, no combine", kUnroll);
  return {name, [](const void* x, const void*, std::size_t n, void* out, cudaStream_t s) {
            // The same "resident blocks x SMs" grid, cached per device, as the production launcher.
            const unsigned grid = detail::resident_grid<StreamFloorTag<kUnroll>>(stream_floor_kernel<kUnroll>, 512);
            stream_floor_kernel<kUnroll><<<grid, 512, 0, s>>>(static_cast<const float4*>(x), n / 4,
                                                              static_cast<float*>(out));
            REDUCELAB_CHECK_LAUNCH("stream_floor_kernel");
          }};
}

// f64 max with CUB's compare (a > b ? a : b, NaN not propagated): not a reducelab op, only
// a measure of what NaN propagation costs (the production op needs two compares per element).
struct MaxIgnoringNaN {
  template <class T>
  __device__ T operator()(const T& a, const T& b) const { return a > b ? a : b; }
  template <class T>
  __host__ __device__ static constexpr T identity() { return device::Max::identity<T>(); }
};

template <class Traits, int kBlock, int kUnroll>
Variant v(const char* op) {
  return variant<Traits, Config<kBlock, kUnroll, LoadHint::no_alloc>>(op);
}

int run(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const DeviceInfo dev = query_device(0);
  std::printf("# reducelab_tune on %s (%d SMs, peak %.0f GB/s), driver %s\n", dev.name.c_str(),
              dev.sm_count, dev.peak_gbps, dev.driver.c_str());
  const int reps = quick ? 20 : 40;
  using detail::ArgTraits;
  using detail::ExtremumTraits;
  using detail::SumTraits;
  overheads(reps);
  // Large f32 sums against the stream floor: what is left between the kernel and the DRAM.
  run_family<float>("f32 sum, large, against the stream floor", Op::sum,
                    {v<SumTraits<float, 1>, 512, 4>("sum"), v<SumTraits<float, 1>, 1024, 2>("sum"),
                     variant<SumTraits<float, 1>, Config<512, 4, LoadHint::plain>>("sum"),
                     stream_floor<4>(), stream_floor<8>()},
                    {24, 26, 27, 30}, dev, reps);
  // Small f32 sums: does a smaller block make the one- and few-block calls cheaper?
  run_family<float>("f32 sum, small", Op::sum,
                    {v<SumTraits<float, 1>, 512, 4>("sum"), v<SumTraits<float, 1>, 256, 4>("sum"),
                     v<SumTraits<float, 1>, 128, 4>("sum"), v<SumTraits<float, 1>, 256, 8>("sum")},
                    {10, 12, 13, 14, 16, 18, 20}, dev, reps);
  const std::vector<int> mid = {20, 27};
  run_family<__half>("f16 sum", Op::sum,
                     {v<SumTraits<__half, 1>, 512, 4>("sum"), v<SumTraits<__half, 1>, 512, 8>("sum"),
                      v<SumTraits<__half, 1>, 256, 8>("sum"), v<SumTraits<__half, 1>, 1024, 4>("sum")},
                     {20, 26, 27}, dev, reps);
  run_family<double>("f64 sum", Op::sum,
                     {v<SumTraits<double, 1>, 512, 4>("sum"), v<SumTraits<double, 1>, 512, 8>("sum"),
                      v<SumTraits<double, 1>, 256, 8>("sum")},
                     mid, dev, reps);
  run_family<double>("f64 max", Op::max,
                     {v<ExtremumTraits<double, device::Max>, 512, 4>("max"),
                      v<ExtremumTraits<double, device::Max>, 256, 4>("max"),
                      v<ExtremumTraits<double, device::Max>, 512, 2>("max"),
                      v<ExtremumTraits<double, MaxIgnoringNaN>, 512, 4>("max, NaN ignored (CUB's compare)")},
                     mid, dev, reps);
  run_family<double>("f64 min", Op::min,
                     {v<ExtremumTraits<double, device::Min>, 512, 4>("min"),
                      v<ExtremumTraits<double, device::Min>, 256, 4>("min"),
                      v<ExtremumTraits<double, device::Min>, 512, 2>("min")},
                     mid, dev, reps);
  run_family<std::int64_t>("i64 max", Op::max,
                           {v<ExtremumTraits<std::int64_t, device::Max>, 512, 4>("max"),
                            v<ExtremumTraits<std::int64_t, device::Max>, 256, 4>("max")},
                           mid, dev, reps);
  run_family<double>("f64 dot", Op::dot,
                     {v<SumTraits<double, 2>, 512, 2>("dot"), v<SumTraits<double, 2>, 512, 4>("dot"),
                      v<SumTraits<double, 2>, 256, 4>("dot")},
                     mid, dev, reps);
  run_family<std::int64_t>("i64 dot", Op::dot,
                           {v<SumTraits<std::int64_t, 2>, 512, 2>("dot"),
                            v<SumTraits<std::int64_t, 2>, 512, 4>("dot"),
                            v<SumTraits<std::int64_t, 2>, 256, 4>("dot")},
                           mid, dev, reps);
  run_family<float>("f32 argmax", Op::argmax,
                    {v<ArgTraits<float, false>, 256, 8>("argmax"), v<ArgTraits<float, false>, 512, 4>("argmax"),
                     v<ArgTraits<float, false>, 512, 8>("argmax"), v<ArgTraits<float, false>, 256, 4>("argmax")},
                    mid, dev, reps);
  run_family<__half>("f16 argmax", Op::argmax,
                     {v<ArgTraits<__half, false>, 256, 8>("argmax"), v<ArgTraits<__half, false>, 512, 4>("argmax"),
                      v<ArgTraits<__half, false>, 512, 8>("argmax")},
                     {20, 26, 27}, dev, reps);
  run_family<double>("f64 argmax", Op::argmax,
                     {v<ArgTraits<double, false>, 512, 4>("argmax"), v<ArgTraits<double, false>, 512, 8>("argmax"),
                      v<ArgTraits<double, false>, 256, 4>("argmax"), v<ArgTraits<double, false>, 256, 8>("argmax")},
                     mid, dev, reps);
  run_family<std::uint64_t>("u64 argmin", Op::argmin,
                            {v<ArgTraits<std::uint64_t, true>, 512, 4>("argmin"),
                             v<ArgTraits<std::uint64_t, true>, 512, 8>("argmin"),
                             v<ArgTraits<std::uint64_t, true>, 256, 4>("argmin"),
                             v<ArgTraits<std::uint64_t, true>, 256, 8>("argmin")},
                            mid, dev, reps);
  return 0;
}

}  // namespace
}  // namespace reducelab::tune

int main(int argc, char** argv) {
  try {
    return reducelab::tune::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}

// reducelab_tune: times configurations of the production kernel (block size, vectors in flight
// per thread, load cache hint) side by side with CUB, to choose TunedConfig in
// src/reduce/launch.cuh. Not installed; run on the GPU you tune for:
//   reducelab_tune [--quick | --mid | --small]
// Each figure is the median of event-timed calls, measured like `reducelab bench`.

#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda/barrier>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "bench/cub_baseline.hpp"
#include "bench/random.hpp"
#include "bench/stats.hpp"
#include "bench/timer.hpp"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"
#include "common/pointer_check.hpp"
#include "reduce/launch.cuh"
#include "reducelab/reduce.hpp"

namespace reducelab::tune {
namespace {

using detail::Config;  // the launcher's configuration, every parameter open
using device::LoadHint;
// The tuned ops are the core ones, whose store() reads the op only to tell mean from sum.
constexpr detail::Finish kFinish{Op::sum, 0};

// How the blocks' partials become one result, for timing the grid step in parts. Only `fold` is
// the production kernel's step (grid_step.cuh); `none` and `ticket_only` give wrong results.
enum class GridStep { none, ticket_only, fenced_fold, fold };

// The production kernel's shape (kernel.cuh), from the same pieces, with the grid step open.
template <class Traits, class C, GridStep kStep>
__global__ void __launch_bounds__(C::kBlock) step_variant_kernel(detail::KernelArgs<typename Traits::Elem> a) {
  using Acc = typename Traits::Acc;
  __shared__ Acc warp_slots[C::kBlock / device::kWarpSize];
  __shared__ bool is_last_block;
  typename Traits::State state = Traits::start();
  detail::RangeAgent<Traits, C::kBlock, C::kUnroll, C::kHint, true>::consume(state, a.x, a.y, a.n, a.split,
                                                                             blockIdx.x, gridDim.x);
  Acc acc = Traits::finish(state, a.x);
  auto combine = [](Acc p, Acc q) { return Traits::combine(p, q); };
  acc = device::block_reduce<C::kBlock>(acc, combine, Traits::identity(), warp_slots);
  if constexpr (kStep == GridStep::fold) {
    if (gridDim.x == 1 || detail::grid_step<Traits, C::kBlock>(acc, static_cast<Acc*>(a.partials), a.counter, warp_slots))
      if (threadIdx.x == 0) Traits::store(a.out, 0, acc, a.n, a.finish);
    return;
  }
  if (gridDim.x == 1 || kStep == GridStep::none) {
    if (threadIdx.x == 0 && blockIdx.x == 0) Traits::store(a.out, 0, acc, a.n, a.finish);
    return;
  }
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*a.counter);
  if (threadIdx.x == 0) {
    detail::store_partial(static_cast<Acc*>(a.partials) + blockIdx.x, acc);
    is_last_block = counter.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last_block) return;
  if constexpr (kStep == GridStep::ticket_only) {
    if (threadIdx.x == 0) counter.store(0u, cuda::memory_order_relaxed);
    return;
  }
  __threadfence();  // fenced_fold: the kernel before session 3
  acc = detail::fold_partials<Traits, C::kBlock>(static_cast<Acc*>(a.partials), gridDim.x, warp_slots);
  if (threadIdx.x == 0) {
    Traits::store(a.out, 0, acc, a.n, a.finish);
    counter.store(0u, cuda::memory_order_relaxed);
  }
}

template <class Traits, class C, GridStep kStep>
struct StepVariantTag {};

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

template <class Traits, class C, GridStep kStep = GridStep::fold>
Variant variant(const char* op) {
  char name[96];
  std::snprintf(name, sizeof(name), "%s B=%d U=%d %s V>=%d", op, C::kBlock, C::kUnroll,
                hint_name(C::kHint), C::kMinVectorsPerThread);
  return {name, [](const void* x, const void* y, std::size_t n, void* out, cudaStream_t s) {
            using T = typename Traits::Elem;
            const auto ws = detail::workspace_for(s, false, detail::current_device());
            const T* tx = static_cast<const T*>(x);
            const T* ty = static_cast<const T*>(y);
            if constexpr (kStep == GridStep::fold) {  // the production kernel in configuration C
              // (the tune's inputs share one 16-byte offset, so dot reads y as vectors too)
              detail::launch_reduce<detail::KernelTag<Traits, C, true>, C>(
                  detail::reduce_kernel<Traits, C, true>, tx, ty, n, out, ws, s, kFinish);
            } else {
              static_assert(Traits::kArrays == 1, "grid-step variants are single-array");
              detail::launch_reduce<StepVariantTag<Traits, C, kStep>, C>(
                  step_variant_kernel<Traits, C, kStep>, tx, ty, n, out, ws, s, kFinish);
            }
          }};
}

// The public runtime-typed call, every argument check included: what a user's call costs.
Variant api_variant(Op op, DType dtype) {
  return {"reducelab::reduce (API, all checks): " + std::string(to_string(op)),
          [op, dtype](const void* x, const void* y, std::size_t n, void* out, cudaStream_t s) {
            reducelab::reduce(op, dtype, x, input_arrays(op) == 2 ? y : nullptr, n, out, s);
          }};
}

__global__ void read_kernel(const uint4* p, std::size_t vectors, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;  // keeps the loads live
}

// Reads (does not write: no dirty lines to write back later) twice the L2 size of scratch.
void flush(cudaStream_t stream) {
  static DeviceBuffer<uint4>* scratch = [] {
    int l2 = 0;
    REDUCELAB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, detail::current_device()));
    auto* buffer = new DeviceBuffer<uint4>(2 * static_cast<std::size_t>(l2) / sizeof(uint4));
    REDUCELAB_CUDA_CHECK(cudaMemset(buffer->data(), 0, buffer->bytes()));
    return buffer;
  }();
  read_kernel<<<1024, 256, 0, stream>>>(scratch->data(), scratch->size(),
                                         reinterpret_cast<unsigned*>(scratch->data()));
  REDUCELAB_CHECK_LAUNCH("read_kernel (L2 flush)");
}

// Every variant and CUB at each size, taken in turn rep by rep (bench::time_interleaved), each
// call reading the next copy of the input so no call finds its input in L2.
template <class T>
void run_family(const char* title, Op op, const std::vector<Variant>& variants,
                const std::vector<int>& log_sizes, const DeviceInfo& dev, int reps,
                bool interleave = true) {
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
    // Calls take the copies in turn. The count is made coprime with the calls per rep, so every
    // variant reads every copy: with 6 copies of 2^23 floats and 6 calls per rep each variant read
    // one copy only, and CUB's time dropped from 18.0 to 15.2 us (L2 kept part of its copy).
    std::size_t copies = bytes >= 2 * dev.l2_bytes ? 1 : (3 * dev.l2_bytes + bytes - 1) / bytes;
    while (copies > 1 && std::gcd(copies, variants.size() + 1) != 1) ++copies;
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
    std::size_t next_copy = 0;
    std::vector<bench::TimedCall> calls;
    for (std::size_t v = 0; v <= variants.size(); ++v) {
      calls.push_back([&, v](int, cudaStream_t st) {
        const std::size_t c = next_copy++ % copies;
        const T* xp = x.data() + c * n;
        const T* yp = arrays == 2 ? y.data() + c * n : nullptr;
        if (v == variants.size()) {
          cub->run(xp, yp, out.data(), st);
        } else {
          variants[v].run(xp, yp, n, out.data(), st);
        }
      });
    }
    // One copy, read by every variant in turn: what one call leaves in L2 would be found by the
    // next (in a run without this, a variant that followed CUB read 2^27 floats 3-4% faster
    // than one that followed another variant). Reading 2 x L2 of scratch first, untimed, leaves
    // nothing of the input there.
    const bench::Prepare flush_l2 = [&](cudaStream_t st) { flush(st); };
    std::vector<std::vector<double>> samples;
    if (interleave) {
      samples = bench::time_interleaved(calls, 5, reps, stream, copies == 1 ? flush_l2 : bench::Prepare{});
    } else {  // each variant's reps in a row, as `reducelab bench` times them
      for (const auto& call : calls)
        samples.push_back(bench::time_interleaved({call}, 5, reps, stream,
                                                  copies == 1 ? flush_l2 : bench::Prepare{})[0]);
    }
    for (std::size_t v = 0; v <= variants.size(); ++v) table[v][s] = bench::summarize(samples[v]).median_us;
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

// Mean host time of `call` in ns over `iters` calls, timed one by one on the host clock;
// `settle` (untimed) runs after each, e.g. to let the GPU drain what the call queued.
double host_ns(const std::function<void()>& call, int iters,
               const std::function<void()>& settle = [] {}) {
  double total = 0;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const auto t1 = std::chrono::steady_clock::now();
    total += std::chrono::duration<double, std::nano>(t1 - t0).count();
    settle();
  }
  return total / iters;
}

// Median wall time in us of a call that returns on the host (the synchronous form).
double wall_us(const std::function<void()>& call, int reps) {
  for (int i = 0; i < 5; ++i) call();
  std::vector<double> samples;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return bench::summarize(samples).median_us;
}

// Where the time of a small call goes: an empty kernel, a one-element reduction through the
// public API (argument checks included) and straight through the launcher, and CUB; then the
// host cost of each piece of the API's argument checks, and of the synchronous form's read-back.
void overheads(int reps) {
  cudaStream_t stream = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DeviceBuffer<float> x(1 << 20);
  REDUCELAB_CUDA_CHECK(cudaMemset(x.data(), 0, x.bytes()));
  DeviceBuffer<float> out(4);
  const int device = detail::current_device();
  auto median = [&](const bench::TimedCall& call) {
    return bench::summarize(bench::time_calls(call, 5, reps, stream)).median_us;
  };
  const auto ws = detail::workspace_for(stream, false, device);
  auto launch_one = [&](std::size_t n, void* result, cudaStream_t s) {
    detail::launch_with<detail::SumTraits<float, 1>>(x.data(), nullptr, n, result, ws, s, kFinish);
  };
  const double empty = median([](int, cudaStream_t s) { empty_kernel<<<1, 32, 0, s>>>(); });
  const double api = median([&](int, cudaStream_t s) { reducelab::sum(x.data(), 1, out.data(), s); });
  const double direct = median([&](int, cudaStream_t s) { launch_one(1, out.data(), s); });
  auto cub = bench::make_cub_reduce(Op::sum, DType::f32, 1);
  const double cub_one = median([&](int, cudaStream_t s) { cub->run(x.data(), nullptr, out.data(), s); });
  // GPU time alone: 20 launches replayed from a graph, no host submission per call.
  const std::size_t big = std::size_t{1} << 27;
  DeviceBuffer<float> y(big);
  {
    const auto host = bench::random_vector<float>(big, 11, bench::Distribution::uniform);
    REDUCELAB_CUDA_CHECK(cudaMemcpy(y.data(), host.data(), y.bytes(), cudaMemcpyHostToDevice));
  }
  cudaGraph_t graph = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  for (int i = 0; i < 20; ++i)
    detail::launch_with<detail::SumTraits<float, 1>>(y.data(), nullptr, big, out.data(), ws, stream, kFinish);
  REDUCELAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  REDUCELAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const double graph20 = median([&](int, cudaStream_t s) { REDUCELAB_CUDA_CHECK(cudaGraphLaunch(exec, s)); });
  const double single = median([&](int, cudaStream_t s) {
    detail::launch_with<detail::SumTraits<float, 1>>(y.data(), nullptr, big, out.data(), ws, s, kFinish);
  });
  std::printf("\n## overheads (median us)\n\n| what | us |\n|---|---:|\n"
              "| empty kernel call | %.2f |\n| reducelab::sum n=1 (API, checks) | %.2f |\n"
              "| launch_with n=1 (no checks) | %.2f |\n| CUB sum n=1 | %.2f |\n"
              "| f32 sum 2^27 one call | %.1f |\n| f32 sum 2^27 per kernel, 20 in a graph | %.1f |\n",
              empty, api, direct, cub_one, single, graph20 / 20);
  REDUCELAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  REDUCELAB_CUDA_CHECK(cudaGraphDestroy(graph));

  // Host time of the pieces of an API call (mean ns; launches drained after each, untimed).
  const int iters = 20 * reps;
  auto drain = [&] { REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream)); };
  cudaPointerAttributes attributes{};
  unsigned long long stream_id = 0;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  std::printf("\n## host time of the pieces of a call (mean ns, %d calls each)\n\n| piece | ns |\n|---|---:|\n", iters);
  auto row = [](const char* what, double ns) { std::printf("| %s | %.0f |\n", what, ns); };
  row("cudaGetDevice", host_ns([&] { int d = 0; (void)cudaGetDevice(&d); }, iters));
  row("cudaThreadExchangeStreamCaptureMode x 2", host_ns([&] {
        cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
        (void)cudaThreadExchangeStreamCaptureMode(&mode);
        (void)cudaThreadExchangeStreamCaptureMode(&mode);
      }, iters));
  row("cudaPointerGetAttributes (device memory)",
      host_ns([&] { (void)cudaPointerGetAttributes(&attributes, x.data()); }, iters));
  row("cudaStreamIsCapturing", host_ns([&] { (void)cudaStreamIsCapturing(stream, &capture); }, iters));
  row("cudaStreamGetId", host_ns([&] { (void)cudaStreamGetId(stream, &stream_id); }, iters));
  row("workspace_for (found in the thread's cache)",
      host_ns([&] { (void)detail::workspace_for(stream, false, device); }, iters));
  row("require_device_pointers(input, out)", host_ns([&] {
        detail::require_device_pointers({{x.data(), 1, 4, "input"}, {out.data(), 1, 4, "out"}}, device);
      }, iters));
  // The driver API's equivalents, which the runtime calls underneath.
  CUpointer_attribute queried[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                    CU_POINTER_ATTRIBUTE_IS_MANAGED};
  unsigned memory_type = 0;
  int ordinal = 0;
  int managed = 0;  // CU_POINTER_ATTRIBUTE_IS_MANAGED is a bool, read into an int
  void* values[3] = {&memory_type, &ordinal, &managed};
  row("cuPointerGetAttributes (type, ordinal, managed)", host_ns([&] {
        (void)cuPointerGetAttributes(3, queried, values, reinterpret_cast<CUdeviceptr>(x.data()));
      }, iters));
  CUstreamCaptureStatus driver_capture = CU_STREAM_CAPTURE_STATUS_NONE;
  row("cuStreamIsCapturing", host_ns([&] { (void)cuStreamIsCapturing(stream, &driver_capture); }, iters));
  row("cuStreamGetId", host_ns([&] { (void)cuStreamGetId(stream, &stream_id); }, iters));
  CUdevice driver_device = 0;
  row("cuCtxGetDevice", host_ns([&] { (void)cuCtxGetDevice(&driver_device); }, iters));
  row("empty kernel launch", host_ns([&] { empty_kernel<<<1, 32, 0, stream>>>(); }, iters, drain));
  // The same launch through the driver with the function handle looked up once: the runtime's
  // <<<>>> finds the kernel's handle for the current context on every call.
  {
    cudaFunction_t function = nullptr;
    REDUCELAB_CUDA_CHECK(cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(empty_kernel)));
    void* no_args[1] = {nullptr};
    row("empty kernel, cuLaunchKernel with a cached handle", host_ns([&] {
          (void)cuLaunchKernel(reinterpret_cast<CUfunction>(function), 1, 1, 1, 32, 1, 1, 0, stream, no_args, nullptr);
        }, iters, drain));
    row("empty kernel, cudaLaunchKernel", host_ns([&] {
          (void)cudaLaunchKernel(reinterpret_cast<const void*>(empty_kernel), dim3(1), dim3(32), no_args, 0, stream);
        }, iters, drain));
  }
  row("launch_with n=1", host_ns([&] { launch_one(1, out.data(), stream); }, iters, drain));
  row("reducelab::sum n=1, stream-ordered (all checks + launch)",
      host_ns([&] { reducelab::sum(x.data(), 1, out.data(), stream); }, iters, drain));

  // The synchronous form: the API (kernel writes into mapped pinned memory), and the read-backs
  // it could use instead, each without the API's checks; CUB with the copy a CUB user writes.
  DeviceBuffer<float> slot(4);
  float* pinned = nullptr;
  REDUCELAB_CUDA_CHECK(cudaHostAlloc(&pinned, 16, cudaHostAllocMapped));
  float* mapped = nullptr;
  REDUCELAB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped), pinned, 0));
  std::printf("\n## the synchronous form (median wall us)\n\n| how | n=1 | n=2^20 |\n|---|---:|---:|\n");
  auto sync_row = [&](const char* what, const std::function<void(std::size_t)>& call) {
    std::printf("| %s | %.2f | %.2f |\n", what, wall_us([&] { call(1); }, reps),
                wall_us([&] { call(std::size_t{1} << 20); }, reps));
  };
  float result = 0;
  sync_row("reducelab::sum(x, n, stream) (API)", [&](std::size_t n) { result = reducelab::sum(x.data(), n, stream); });
  sync_row("launch_with into mapped pinned memory + sync", [&](std::size_t n) {
    launch_one(n, mapped, stream);
    REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    result = *pinned;
  });
  sync_row("launch_with + copy to pinned + sync", [&](std::size_t n) {
    launch_one(n, slot.data(), stream);
    REDUCELAB_CUDA_CHECK(cudaMemcpyAsync(pinned, slot.data(), 4, cudaMemcpyDeviceToHost, stream));
    REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    result = *pinned;
  });
  sync_row("launch_with + copy to pageable + sync", [&](std::size_t n) {
    launch_one(n, slot.data(), stream);
    REDUCELAB_CUDA_CHECK(cudaMemcpyAsync(&result, slot.data(), 4, cudaMemcpyDeviceToHost, stream));
    REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
  auto cub_big = bench::make_cub_reduce(Op::sum, DType::f32, std::size_t{1} << 20);
  sync_row("CUB + copy to pageable + sync", [&](std::size_t n) {
    (n == 1 ? cub : cub_big)->run(x.data(), nullptr, slot.data(), stream);
    REDUCELAB_CUDA_CHECK(cudaMemcpyAsync(&result, slot.data(), 4, cudaMemcpyDeviceToHost, stream));
    REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
  if (result == -1.f) std::printf("(unexpected result)\n");
  REDUCELAB_CUDA_CHECK(cudaFreeHost(pinned));
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
            const unsigned grid = detail::resident_grid<StreamFloorTag<kUnroll>>(
                stream_floor_kernel<kUnroll>, 512, detail::current_device());
            stream_floor_kernel<kUnroll><<<grid, 512, 0, s>>>(static_cast<const float4*>(x), n / 4,
                                                              static_cast<float*>(out));
            REDUCELAB_CHECK_LAUNCH("stream_floor_kernel");
          }};
}

// The same floor read with Hopper's bulk copy engine (TMA, sm_90): per block, thread 0 keeps
// kStages copies of kChunk bytes in flight into shared memory, each tracked by an mbarrier; the
// block adds a chunk once it lands, then reuses its buffer for the chunk kStages ahead. Tells
// whether the LDG floor above is a limit of the loads or of the memory.
template <int kStages, int kChunk>
__global__ void __launch_bounds__(256) tma_floor_kernel(const float4* x, std::size_t vectors, float* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Barrier = cuda::barrier<cuda::thread_scope_block>;
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ Barrier barriers[kStages];
  extern __shared__ __align__(128) float4 buffers[];  // kStages x kChunk bytes
  constexpr int kVectors = kChunk / 16;
  const std::size_t chunks = vectors / kVectors;  // the floor reads whole chunks only
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) init(&barriers[s], blockDim.x);
  }
  __syncthreads();
  auto issue = [&](int stage, std::size_t chunk) {
    cuda::device::memcpy_async_tx(buffers + stage * kVectors, x + chunk * kVectors,
                                  cuda::aligned_size_t<16>(kChunk), barriers[stage]);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      const std::size_t chunk = blockIdx.x + static_cast<std::size_t>(s) * gridDim.x;
      if (chunk < chunks) issue(s, chunk);
    }
  }
  float acc = 0.f;
  int k = 0;
  for (std::size_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x, ++k) {
    const int stage = k % kStages;
    Barrier::arrival_token token;
    if (threadIdx.x == 0) {
      token = cuda::device::barrier_arrive_tx(barriers[stage], 1, kChunk);
    } else {
      token = barriers[stage].arrive();
    }
    barriers[stage].wait(std::move(token));
    for (int i = threadIdx.x; i < kVectors; i += blockDim.x) {
      const float4 v = buffers[stage * kVectors + i];
      acc += (v.x + v.y) + (v.z + v.w);
    }
    __syncthreads();  // every thread is done with the buffer before it is refilled
    const std::size_t next = chunk + static_cast<std::size_t>(kStages) * gridDim.x;
    if (threadIdx.x == 0 && next < chunks) issue(stage, next);
  }
  if (acc == -1.2345f) *out = acc;
#endif
}

template <int kStages, int kChunk>
struct TmaFloorTag {};

template <int kStages, int kChunk>
Variant tma_floor() {
  char name[96];
  std::snprintf(name, sizeof(name), "TMA floor: %d x %d KB bulk copies per block, no combine",
                kStages, kChunk / 1024);
  return {name, [](const void* x, const void*, std::size_t n, void* out, cudaStream_t s) {
            constexpr int kShared = kStages * kChunk;
            auto kernel = tma_floor_kernel<kStages, kChunk>;
            static const int grid = [&] {  // the tune runs on one device
              REDUCELAB_CUDA_CHECK(cudaFuncSetAttribute(
                  kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kShared));
              int sms = 0;
              int per_sm = 0;
              REDUCELAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                                          detail::current_device()));
              REDUCELAB_CUDA_CHECK(
                  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, kShared));
              return sms * per_sm;
            }();
            kernel<<<grid, 256, kShared, s>>>(static_cast<const float4*>(x), n / 4,
                                                      static_cast<float*>(out));
            REDUCELAB_CHECK_LAUNCH("tma_floor_kernel");
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
  // `--mid`: only the middle sizes. In every session-3 run the variant timed third at 2^24 read
  // 3-4 us faster than the others (1024 x 2 in the large family, 1024 x 4 here, where 1024 x 2,
  // second, matched 512 x 4): an effect of the order in which variants take the input copies,
  // not of the configuration (docs/notebook/h200-tuning.md).
  const bool mid_only = argc > 1 && std::strcmp(argv[1], "--mid") == 0;
  // `--small`: where a small call's time goes, and the API against the launcher and CUB at the
  // sizes a single block reads (2^10..2^13), every variant taken in turn, 10x the reps.
  if (argc > 1 && std::strcmp(argv[1], "--small") == 0) {
    overheads(reps);
    // Does a smaller block read one tile sooner? Each variant below is a single block up to
    // its tile (kBlock x kUnroll vectors: 2^13 floats for 512 x 4, 2^12 for 256 x 4).
    const std::vector<int> one_block = {10, 11, 12, 13};
    run_family<float>("f32 sum, one block", Op::sum,
                      {api_variant(Op::sum, DType::f32), v<SumTraits<float, 1>, 512, 4>("sum"),
                       v<SumTraits<float, 1>, 256, 4>("sum"), v<SumTraits<float, 1>, 256, 8>("sum"),
                       v<SumTraits<float, 1>, 128, 8>("sum")},
                      one_block, dev, 10 * reps);
    run_family<float>("f32 max, one block", Op::max,
                      {api_variant(Op::max, DType::f32), v<ExtremumTraits<float, device::Max>, 512, 4>("max"),
                       v<ExtremumTraits<float, device::Max>, 256, 4>("max"),
                       v<ExtremumTraits<float, device::Max>, 256, 8>("max")},
                      one_block, dev, 10 * reps);
    run_family<double>("f64 sum, one block", Op::sum,
                       {api_variant(Op::sum, DType::f64), v<SumTraits<double, 1>, 512, 8>("sum"),
                        v<SumTraits<double, 1>, 256, 4>("sum")},
                       {9, 10, 11, 12}, dev, 10 * reps);
    run_family<__half>("f16 sum, one block", Op::sum,
                       {api_variant(Op::sum, DType::f16), v<SumTraits<__half, 1>, 512, 4>("sum"),
                        v<SumTraits<__half, 1>, 256, 4>("sum")},
                       {10, 11, 12, 13}, dev, 10 * reps);
    run_family<float>("f32 argmax, one block", Op::argmax,
                      {api_variant(Op::argmax, DType::f32), v<ArgTraits<float, false>, 256, 8>("argmax"),
                       v<ArgTraits<float, false>, 128, 8>("argmax")},
                      one_block, dev, 10 * reps);
    return 0;
  }
  run_family<float>("f32 sum, middle sizes", Op::sum,
                    {v<SumTraits<float, 1>, 512, 4>("sum"), v<SumTraits<float, 1>, 1024, 2>("sum"),
                     v<SumTraits<float, 1>, 1024, 4>("sum")},
                    {14, 16, 18, 20, 21, 22, 23, 24, 25, 26, 27}, dev, 3 * reps);
  run_family<float>("f32 max, middle sizes", Op::max,
                    {v<ExtremumTraits<float, device::Max>, 512, 4>("max"),
                     v<ExtremumTraits<float, device::Max>, 1024, 2>("max")},
                    {20, 22, 24, 26}, dev, 3 * reps);
  run_family<__half>("f16 sum, middle sizes", Op::sum,
                     {v<SumTraits<__half, 1>, 512, 4>("sum"), v<SumTraits<__half, 1>, 1024, 2>("sum")},
                     {20, 22, 24, 26}, dev, 3 * reps);
  if (mid_only) return 0;
  overheads(reps);
  // Large f32 sums against the stream floor: what is left between the kernel and the DRAM.
  run_family<float>("f32 sum, large, against the stream floor", Op::sum,
                    {v<SumTraits<float, 1>, 512, 4>("sum"), v<SumTraits<float, 1>, 256, 8>("sum"),
                     v<SumTraits<float, 1>, 1024, 2>("sum"),
                     variant<SumTraits<float, 1>, Config<512, 4, LoadHint::no_alloc, 1>, GridStep::none>(
                         "sum, no grid step (result wrong)"),
                     variant<SumTraits<float, 1>, Config<512, 4, LoadHint::no_alloc, 1>, GridStep::ticket_only>(
                         "sum, tickets but no fold (result wrong)"),
                     variant<SumTraits<float, 1>, Config<512, 4, LoadHint::no_alloc, 1>, GridStep::fenced_fold>(
                         "sum, fence before the fold (until session 3)"),
                     stream_floor<4>(), stream_floor<8>(), tma_floor<4, 16384>(),
                     tma_floor<2, 32768>(), tma_floor<3, 32768>(), tma_floor<2, 49152>()},
                    {24, 26, 27, 30}, dev, reps);
  run_family<float>("f32 max", Op::max,
                    {v<ExtremumTraits<float, device::Max>, 512, 4>("max"),
                     v<ExtremumTraits<float, device::Max>, 256, 8>("max")},
                    {20, 27}, dev, reps);
  // Small f32 sums: do fewer blocks with full batches make the few-block calls cheaper, and what
  // does the grid step cost? Tiny calls vary by ~1 us between runs: 5x the reps.
  run_family<float>("f32 sum, small", Op::sum,
                    {api_variant(Op::sum, DType::f32), v<SumTraits<float, 1>, 512, 4>("sum"),
                     variant<SumTraits<float, 1>, Config<512, 4, LoadHint::no_alloc, 4>>("sum"),
                     variant<SumTraits<float, 1>, Config<512, 4, LoadHint::no_alloc, 1>, GridStep::none>(
                         "sum, no grid step (result wrong)"),
                     variant<SumTraits<float, 1>, Config<512, 4, LoadHint::no_alloc, 1>, GridStep::fenced_fold>(
                         "sum, fence before the fold (until session 3)")},
                    {10, 12, 13, 14, 16, 18, 19, 20, 21, 22, 23}, dev, 5 * reps);
  // Does taking the variants in turn change what CUB measures between 2^21 and 2^24?
  for (const bool interleave : {true, false})
    run_family<float>(interleave ? "f32 sum, 2^21..2^24, variants in turn" : "f32 sum, 2^21..2^24, each variant's reps in a row",
                      Op::sum, {v<SumTraits<float, 1>, 512, 4>("sum")}, {21, 22, 23, 24}, dev, 5 * reps, interleave);
  const std::vector<int> mid = {20, 27};
  run_family<__half>("f16 sum", Op::sum,
                     {v<SumTraits<__half, 1>, 512, 4>("sum"),
                      v<SumTraits<__half, 1>, 512, 8>("sum"),
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

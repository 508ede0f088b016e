// Session 27 diagnostic (not part of the build; compiled by hand against libreducelab.a, as
// h200-launch-host-session27.cu): where the middle axis's event time goes beyond its kernel.
// For the middle axis of 512 x 256 x 1,024 (reduce_axes) and the whole 2^27 array (reduce), f32
// sum, on an idle stream: the event time around one call, the host time of that call (from
// before it to its return), and the host time per call in batches without a sync.
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include "reducelab/reducelab.hpp"

using clk = std::chrono::steady_clock;
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

template <class F> static void single(const char* what, F f, cudaStream_t s) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<double> host, event, rec;
  for (int i = 0; i < 60; ++i) {
    cudaStreamSynchronize(s);
    auto t0 = clk::now();
    cudaEventRecord(a, s);
    auto t1 = clk::now();
    f();
    auto t2 = clk::now();
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= 10) {
      rec.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      host.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
      event.push_back(ms * 1000.0);
    }
  }
  std::printf("%-44s event %7.2f us   the call's host time %6.2f us   event record %5.2f us\n",
              what, med(event), med(host), med(rec));
}

template <class F> static void batched(const char* what, F f, cudaStream_t s) {
  std::vector<double> v;
  for (int b = 0; b < 12; ++b) {
    cudaStreamSynchronize(s);
    auto t0 = clk::now();
    for (int i = 0; i < 20; ++i) f();
    auto t1 = clk::now();
    if (b >= 2) v.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 20);
  }
  cudaStreamSynchronize(s);
  std::printf("%-44s host per call, batches of 20 without a sync: %6.2f us\n", what, med(v));
}

int main() {
  using namespace reducelab;
  const std::size_t n = std::size_t{1} << 27;
  float *x, *out;
  cudaMalloc(&x, n * 4);
  cudaMalloc(&out, 4 << 20);
  cudaMemset(x, 0, n * 4);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  const Layout mid = Layout::contiguous({512, 256, 1024});
  const Layout small = Layout::contiguous({4, 4, 64});
  auto axes = [&] { reduce_axes(Reduction(Op::sum), DType::f32, x, nullptr, mid, axis_mask({1}), out, nullptr, s); };
  auto axes_small = [&] { reduce_axes(Reduction(Op::sum), DType::f32, x, nullptr, small, axis_mask({1}), out, nullptr, s); };
  auto whole = [&] { reduce(Reduction(Op::sum), DType::f32, x, nullptr, n, out, s); };
  auto whole_small = [&] { reduce(Reduction(Op::sum), DType::f32, x, nullptr, 1024, out, s); };
  for (int round = 0; round < 2; ++round) {
    std::printf("round %d\n", round);
    single("reduce_axes, middle axis of 512x256x1024", axes, s);
    single("reduce, 2^27", whole, s);
    single("reduce_axes, middle axis of 4x4x64", axes_small, s);
    single("reduce, 2^10", whole_small, s);
    batched("reduce_axes, middle axis of 4x4x64", axes_small, s);
    batched("reduce, 2^10", whole_small, s);
  }
  std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}

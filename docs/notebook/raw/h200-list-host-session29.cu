// Session 29 diagnostic (not part of the build; compiled by hand against libreducelab.a, once
// against main's library and once against the one-pass table's): the host time of
// reduce_tensors. Each call on an idle stream (synchronised before it), std::chrono around it and
// CUDA events around it, median of 200 after 20 warm-up calls; then 100 calls back to back
// between two events (the stream never idle: what a loop of calls sees when the host keeps
// ahead), the median of 5 such runs.
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
#include "reducelab/reducelab.hpp"

using clk = std::chrono::steady_clock;
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

template <class F> static void timed(const char* what, F f, cudaStream_t s) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<double> host, ev;
  for (int i = 0; i < 220; ++i) {
    cudaStreamSynchronize(s);
    cudaEventRecord(a, s);
    auto t0 = clk::now();
    f();
    auto t1 = clk::now();
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= 20) {
      host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      ev.push_back(ms * 1000.0);
    }
  }
  std::vector<double> rate;
  for (int run = 0; run < 5; ++run) {
    cudaStreamSynchronize(s);
    cudaEventRecord(a, s);
    for (int i = 0; i < 100; ++i) f();
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    rate.push_back(ms * 1000.0 / 100);
  }
  std::printf("%-44s host %7.2f us   event %8.2f us   back-to-back %8.2f us/call\n", what,
              med(host), med(ev), med(rate));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

int main() {
  using namespace reducelab;
  const std::size_t count = 1000, len = std::size_t{1} << 17, n = count * len;
  float *x, *out, *total;
  cudaMalloc(&x, n * 4);
  cudaMemset(x, 0, n * 4);
  cudaMalloc(&out, 16384 * 16);
  cudaMalloc(&total, 64);
  std::vector<TensorSpan> list(count);
  for (std::size_t i = 0; i < count; ++i) list[i] = {x + i * len, len};
  // 16,384 tensors of heavy-tailed lengths (Pareto, mean ~8,192) over the same 2^27 floats.
  std::vector<TensorSpan> heavy;
  std::mt19937_64 rng(29);
  std::size_t at = 0;
  while (heavy.size() < 16384 && at < n) {
    const double u = std::uniform_real_distribution<double>(1e-9, 1.0)(rng);
    std::size_t l = static_cast<std::size_t>(8192.0 * 0.35 / std::pow(u, 1 / 1.5));
    l = std::min(l, n - at);
    heavy.push_back({x + at, l});
    at += l;
  }
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  const Reduction norm{Op::norm}, sum{Op::sum};
  timed("1,000 x 2^17 f32 norm + total", [&] {
    reduce_tensors(norm, DType::f32, list.data(), count, out, total, s); }, s);
  timed("1,000 x 2^17 f32 norm, no total", [&] {
    reduce_tensors(norm, DType::f32, list.data(), count, out, nullptr, s); }, s);
  timed("1,000 x 2^17 f32 sum + total", [&] {
    reduce_tensors(sum, DType::f32, list.data(), count, out, total, s); }, s);
  timed("1,000 x 2^17 f32 norm + total, again", [&] {
    reduce_tensors(norm, DType::f32, list.data(), count, out, total, s); }, s);
  timed("1,000 x 2^17 f32 max + total", [&] {
    reduce_tensors(Reduction{Op::max}, DType::f32, list.data(), count, out, total, s); }, s);
  timed("one tensor of 2^17, norm + total", [&] {
    reduce_tensors(norm, DType::f32, list.data(), 1, out, total, s); }, s);
  char label[96];
  std::snprintf(label, sizeof label, "%zu heavy-tailed tensors, sum + total", heavy.size());
  timed(label, [&] {
    reduce_tensors(sum, DType::f32, heavy.data(), heavy.size(), out, total, s); }, s);
  std::vector<std::int64_t> offsets(count + 1);
  for (std::size_t i = 0; i <= count; ++i) offsets[i] = static_cast<std::int64_t>(i * len);
  std::int64_t* d_offsets;
  cudaMalloc(&d_offsets, offsets.size() * 8);
  cudaMemcpy(d_offsets, offsets.data(), offsets.size() * 8, cudaMemcpyHostToDevice);
  timed("the same as ragged offsets, norm", [&] {
    reduce_segments(norm, DType::f32, x, nullptr, count, d_offsets, out, s); }, s);
  timed("the same as fixed rows, norm", [&] {
    reduce_segments(norm, DType::f32, x, nullptr, count, len, out, s); }, s);
  std::printf("cuda: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}

// Session 27 diagnostic (not part of the build; compiled by hand against libreducelab.a: nvcc -O2
// -std=c++17 -arch=sm_90 -I include -I BUILD/include -I src launch_host.cu BUILD/src/libreducelab.a
// -L/usr/local/cuda/lib64/stubs -lcuda): the host time of a kernel launch on this
// machine, against reducelab's C++ call on 2^10 f32 (issue 13's host-time target). Method as the
// Python bench's: perf counter around batches of 200 calls without a sync, median of 25 batches.
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include "reducelab/reducelab.hpp"

__global__ void empty_kernel() {}
__global__ void params_kernel(const float* x, std::size_t n, float* out, unsigned flags) {
  if (threadIdx.x == 0 && flags == 12345u) out[0] = x[n - 1];
}

using clk = std::chrono::steady_clock;
template <class F> static double per_call(F f, cudaStream_t s) {
  std::vector<double> v;
  for (int b = 0; b < 30; ++b) {
    cudaStreamSynchronize(s);
    auto t0 = clk::now();
    for (int i = 0; i < 200; ++i) f();
    auto t1 = clk::now();
    if (b >= 5) v.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 200);
  }
  cudaStreamSynchronize(s);
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  float *x, *out;
  cudaMalloc(&x, 1 << 20);
  cudaMalloc(&out, 64);
  cudaMemset(x, 0, 1 << 20);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  CUfunction f;
  cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&f), reinterpret_cast<const void*>(empty_kernel));
  for (int rep = 0; rep < 3; ++rep) {
    std::printf("round %d\n", rep);
    std::printf("  empty kernel <<<1, 32>>> (runtime)          %6.2f us\n",
                per_call([&] { empty_kernel<<<1, 32, 0, s>>>(); }, s));
    std::printf("  kernel with 4 parameters <<<1, 256>>>        %6.2f us\n",
                per_call([&] { params_kernel<<<1, 256, 0, s>>>(x, 1024, out, 0u); }, s));
    std::printf("  empty kernel, cuLaunchKernel (driver)        %6.2f us\n",
                per_call([&] { cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr); }, s));
    std::printf("  cudaPointerGetAttributes                     %6.2f us\n",
                per_call([&] { cudaPointerAttributes a; cudaPointerGetAttributes(&a, x); }, s));
    std::printf("  cudaGetDevice                                %6.2f us\n",
                per_call([&] { int d; cudaGetDevice(&d); }, s));
    std::printf("  reducelab::reduce sum f32 2^10 (C++)         %6.2f us\n",
                per_call([&] { reducelab::reduce(reducelab::Op::sum, reducelab::DType::f32, x, nullptr, 1024, out, s); }, s));
    std::printf("  reducelab::reduce sum f32 2^18 (C++)         %6.2f us\n",
                per_call([&] { reducelab::reduce(reducelab::Op::sum, reducelab::DType::f32, x, nullptr, 1 << 18, out, s); }, s));
  }
  std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}

// Session 29 diagnostic (not part of the build): what the table's copy costs a list call on the
// GPU, and what a side-stream copy into one of two table areas would save. A stand-in for the
// list's kernel reads 2^27 floats (512 MB) and one table entry per block; the table is 16 KB
// (1,000 entries of 16 bytes) in pinned memory.
//   none:   the kernel alone
//   inline: cudaMemcpyAsync of the table, then the kernel, on one stream (the library today)
//   side:   the copy on a second stream into area i % 2, after the kernel that last read that area
//           (event), and the kernel waits for the copy (event)
// For each: 100 calls back to back between two events (per call), and one call on an idle
// stream (median of 100: host time and event time).
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

using clk = std::chrono::steady_clock;
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

__global__ void __launch_bounds__(512) read_kernel(const float4* x, std::size_t n4,
                                                   const long long* table, float* out) {
  float acc = static_cast<float>(table[blockIdx.x % 1000]);
  for (std::size_t i = blockIdx.x * 512ull + threadIdx.x; i < n4; i += gridDim.x * 512ull) {
    const float4 v = x[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 12345.f) out[0] = acc;  // never (x is zero): keeps the loads
}

int main() {
  const std::size_t n = std::size_t{1} << 27, n4 = n / 4, table_bytes = 16000;
  float* x;
  float* out;
  long long* areas[2];
  void* pinned;
  cudaMalloc(&x, n * 4);
  cudaMemset(x, 0, n * 4);
  cudaMalloc(&out, 64);
  cudaMalloc(&areas[0], table_bytes);
  cudaMalloc(&areas[1], table_bytes);
  cudaHostAlloc(&pinned, 1 << 16, cudaHostAllocDefault);
  std::memset(pinned, 0, 1 << 16);
  cudaStream_t s, side;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  cudaEvent_t copied[2], read[2], a, b;
  for (int i = 0; i < 2; ++i) {
    cudaEventCreateWithFlags(&copied[i], cudaEventDisableTiming);
    cudaEventCreateWithFlags(&read[i], cudaEventDisableTiming);
    cudaEventRecord(read[i], s);
  }
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  const unsigned grid = 264;
  int call = 0;
  auto none = [&] { read_kernel<<<grid, 512, 0, s>>>((const float4*)x, n4, areas[0], out); };
  auto inline_copy = [&] {
    cudaMemcpyAsync(areas[0], pinned, table_bytes, cudaMemcpyHostToDevice, s);
    read_kernel<<<grid, 512, 0, s>>>((const float4*)x, n4, areas[0], out);
  };
  auto side_copy = [&] {
    const int k = call++ % 2;
    cudaStreamWaitEvent(side, read[k], 0);
    cudaMemcpyAsync(areas[k], pinned, table_bytes, cudaMemcpyHostToDevice, side);
    cudaEventRecord(copied[k], side);
    cudaStreamWaitEvent(s, copied[k], 0);
    read_kernel<<<grid, 512, 0, s>>>((const float4*)x, n4, areas[k], out);
    cudaEventRecord(read[k], s);
  };
  auto measure = [&](const char* what, auto f) {
    for (int i = 0; i < 10; ++i) f();
    std::vector<double> loop, host, ev;
    for (int run = 0; run < 5; ++run) {
      cudaStreamSynchronize(s);
      cudaEventRecord(a, s);
      for (int i = 0; i < 100; ++i) f();
      cudaEventRecord(b, s);
      cudaEventSynchronize(b);
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      loop.push_back(ms * 10.0);
    }
    for (int i = 0; i < 100; ++i) {
      cudaStreamSynchronize(s);
      cudaStreamSynchronize(side);
      cudaEventRecord(a, s);
      const auto t0 = clk::now();
      f();
      const auto t1 = clk::now();
      cudaEventRecord(b, s);
      cudaEventSynchronize(b);
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      ev.push_back(ms * 1000.0);
    }
    std::printf("%-8s back-to-back %8.2f us/call   idle: host %6.2f us  event %8.2f us\n", what,
                med(loop), med(host), med(ev));
  };
  for (int r = 0; r < 3; ++r) {
    measure("none", none);
    measure("inline", inline_copy);
    measure("side", side_copy);
  }
  std::printf("cuda: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}

// Session 28 diagnostic (not part of the build; compiled by hand against libreducelab.a like
// h200-launch-host-session27.cu, plus -I src for the internal headers): where the host time of
// reduce_tensors over 1,000 f32 tensors of 2^17 goes. Each step on an idle stream (synchronised
// before each call), std::chrono around it, median of 200 after 20 warm-up calls. As run in
// session 28: the cudaMemcpyAsync step copies 24,008 bytes into a 16,016-byte buffer and fails
// (the "invalid argument" printed last), so its line is not a measurement.
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include "reducelab/reducelab.hpp"
#include "common/cuda_check.hpp"
#include "common/driver_api.hpp"
#include "common/pointer_check.hpp"
#include "reduce/launch.hpp"
#include "reduce/segment_plan.hpp"
#include "reduce/tensor_table.hpp"
#include "reduce/workspace.hpp"

using clk = std::chrono::steady_clock;
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

struct Big { char bytes[160]; };
__global__ void params_kernel(Big b) { if (threadIdx.x == 1000) b.bytes[0] = 1; }

template <class F>
static void host_time(const char* what, F f, cudaStream_t s, bool event = false) {
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
  if (event)
    std::printf("%-52s host %7.2f us   event %8.2f us\n", what, med(host), med(ev));
  else
    std::printf("%-52s host %7.2f us\n", what, med(host));
}

int main() {
  using namespace reducelab;
  using namespace reducelab::detail;
  const std::size_t count = 1000, len = std::size_t{1} << 17;
  float *x, *out, *total;
  cudaMalloc(&x, count * len * 4);
  cudaMemset(x, 0, count * len * 4);
  cudaMalloc(&out, count * 4);
  cudaMalloc(&total, 64);
  std::vector<TensorSpan> list(count);
  for (std::size_t i = 0; i < count; ++i) list[i] = {x + i * len, len};
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  const Reduction r{Op::norm};

  host_time("reduce_tensors norm + total (the whole call)",
            [&] { reduce_tensors(r, DType::f32, list.data(), count, out, total, s); }, s, true);
  host_time("reduce_tensors norm, no total",
            [&] { reduce_tensors(r, DType::f32, list.data(), count, out, nullptr, s); }, s, true);
  host_time("reduce_tensors norm + total, 1 tensor",
            [&] { reduce_tensors(r, DType::f32, list.data(), 1, out, total, s); }, s, true);

  std::vector<TableEntry> entries(count);
  host_time("the entries loop (as tensors.cpp)", [&] {
    std::uint64_t t = 0;
    ListShape shape;
    for (std::size_t i = 0; i < count; ++i) {
      (list[i].size < kBlockSegmentMin ? shape.any_short : shape.any_long) = true;
      if (list[i].size > (std::uint64_t{1} << 60) - t) std::abort();
      entries[i] = {list[i].data, static_cast<std::int64_t>(t)};
      t += list[i].size;
    }
    if (!shape.any_long) std::abort();
  }, s);
  host_time("current_device()", [&] { (void)current_device(); }, s);
  const int device = current_device();
  host_time("is_capturing(stream)", [&] { (void)is_capturing(s); }, s);
  host_time("require_device_pointers(out, total)", [&] {
    require_device_pointers({{out, count, 4, "out"}, {total, 1, 4, "total"}}, device);
  }, s);
  host_time("require_device_tensors(1,000)",
            [&] { require_device_tensors(list.data(), count, 4, device); }, s);
  host_time("workspace_for", [&] { (void)workspace_for(s, false, device); }, s);
  const WorkspaceView ws = workspace_for(s, false, device);
  void* table_mem;
  cudaMalloc(&table_mem, table_bytes(count));
  const DeviceTable table = table_at(table_mem, count);
  host_time("send_table (1,000, pinned staging)",
            [&] { send_table(entries.data(), count, count * len, table, ws, s); }, s);
  ListShape shape;
  shape.any_long = true;
  host_time("launch_tensors<float> (table + kernel)", [&] {
    launch_tensors<float>(r, entries.data(), count, count * len, shape, out, total, ws, s);
  }, s, true);

  void* pinned;
  cudaHostAlloc(&pinned, 1 << 16, cudaHostAllocDefault);
  host_time("cudaMemcpyAsync 16 KB pinned H2D",
            [&] { cudaMemcpyAsync(table_mem, pinned, 24008, cudaMemcpyHostToDevice, s); }, s);
  cudaEvent_t e;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  host_time("cudaEventRecord", [&] { cudaEventRecord(e, s); }, s);
  host_time("cudaEventSynchronize (done)", [&] { cudaEventSynchronize(e); }, s);
  host_time("cudaEventQuery (done)", [&] { (void)cudaEventQuery(e); }, s);
  host_time("fill 16 KB of pinned from entries", [&] {
    auto* o = static_cast<std::int64_t*>(pinned);
    auto** p = reinterpret_cast<const void**>(o + count + 1);
    for (std::size_t i = 0; i < count; ++i) { o[i] = entries[i].offset; p[i] = entries[i].data; }
  }, s);
  Big big{};
  host_time("<<<>>> launch, 160 bytes of parameters",
            [&] { params_kernel<<<264, 512, 0, s>>>(big); }, s);
  std::printf("cuda: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}

// One process driving every GPU of the machine (ncclCommInitAll), one host thread per GPU: each
// GPU holds a shard of one array of uneven length, and every GPU gets the global sum, argmax
// (its index in the whole array) and variance.
//
//   NCCL_NVLS_ENABLE=0 build/release/examples/reducelab_example_multigpu_one_process
//
// A thread per communicator is the simple way for one process to drive several GPUs: group
// calls (ncclGroupStart/End around every rank's call) would defer the all-gather to the end of
// the group, after the fold kernel that reads its result.

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <thread>
#include <vector>

#include <reducelab/multigpu.hpp>

int main() {
  int ranks = 0;
  if (cudaGetDeviceCount(&ranks) != cudaSuccess || ranks == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 2;
  }
  std::vector<int> devices(ranks);
  for (int q = 0; q < ranks; ++q) devices[q] = q;
  std::vector<ncclComm_t> comms(ranks);
  if (ncclCommInitAll(comms.data(), ranks, devices.data()) != ncclSuccess) {
    std::fprintf(stderr, "ncclCommInitAll failed\n");
    return 1;
  }
  std::vector<std::thread> threads;
  for (int q = 0; q < ranks; ++q) {
    threads.emplace_back([&, q] {
      cudaSetDevice(q);
      // Rank q holds 1000 + 7 q elements: x = global index mod 101 (the max, 100, first occurs
      // at global index 100, on rank 0).
      const std::size_t n = 1000 + 7 * static_cast<std::size_t>(q);
      std::size_t first = 0;
      for (int p = 0; p < q; ++p) first += 1000 + 7 * static_cast<std::size_t>(p);
      std::vector<float> host(n);
      for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<float>((first + i) % 101);
      float* d_x = nullptr;
      cudaMalloc(&d_x, n * sizeof(float));
      cudaMemcpy(d_x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
      try {
        float sum = 0, var = 0;
        reducelab::ArgResult<float> arg{};
        using reducelab::DType;
        reducelab::reduce_sharded_to_host(reducelab::Op::sum, DType::f32, d_x, nullptr, n, &sum,
                                          comms[q]);
        reducelab::reduce_sharded_to_host(reducelab::Op::argmax, DType::f32, d_x, nullptr, n,
                                          &arg, comms[q]);
        reducelab::reduce_sharded_to_host(reducelab::Reduction::var(), DType::f32, d_x, nullptr,
                                          n, &var, comms[q]);
        std::printf("rank %d of %d (%zu elements): sum %.1f, argmax %.1f at %lld, var %.4f\n", q,
                    ranks, n, sum, arg.value, static_cast<long long>(arg.index), var);
      } catch (const reducelab::Error& e) {
        std::fprintf(stderr, "rank %d: %s\n", q, e.what());
      }
      cudaFree(d_x);
    });
  }
  for (auto& t : threads) t.join();
  for (ncclComm_t comm : comms) ncclCommDestroy(comm);
  return 0;
}

// One process per GPU: rank 0 makes an ncclUniqueId and writes it to a file (or the id comes
// from the environment, hex-encoded), every rank joins with ncclCommInitRank and reduces its own
// shard; every rank prints the same global results.
//
//   # two GPUs, two processes on this machine (the id travels through /tmp/nccl-id):
//   export NCCL_NVLS_ENABLE=0
//   EX=build/release/examples/reducelab_example_multigpu_process_per_gpu
//   RANK=0 WORLD_SIZE=2 NCCL_ID_FILE=/tmp/nccl-id $EX & RANK=1 WORLD_SIZE=2 NCCL_ID_FILE=/tmp/nccl-id $EX; wait
//
// Rank 0 writes the file before it joins; the others wait for it to appear (a launcher such as
// mpirun or torchrun would broadcast the id instead). Or pass NCCL_ID_HEX (the 128 bytes as 256
// hex digits, what rank 0 prints) to every rank.

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <reducelab/multigpu.hpp>

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

bool read_id(const std::string& path, ncclUniqueId& id) {
  std::ifstream in(path, std::ios::binary);
  return static_cast<bool>(in.read(reinterpret_cast<char*>(&id), sizeof(id)));
}

}  // namespace

int main() {
  const int rank = env_int("RANK", 0);
  const int ranks = env_int("WORLD_SIZE", 1);
  const char* file = std::getenv("NCCL_ID_FILE");
  const char* hex = std::getenv("NCCL_ID_HEX");
  ncclUniqueId id{};
  if (hex != nullptr && std::string(hex).size() == 2 * sizeof(id)) {
    for (std::size_t i = 0; i < sizeof(id); ++i)
      id.internal[i] = static_cast<char>(std::stoi(std::string(hex + 2 * i, 2), nullptr, 16));
  } else if (file != nullptr) {
    if (rank == 0) {
      ncclGetUniqueId(&id);
      const std::string tmp = std::string(file) + ".tmp";
      std::ofstream(tmp, std::ios::binary).write(reinterpret_cast<const char*>(&id), sizeof(id));
      std::rename(tmp.c_str(), file);  // the others never read a half-written id
    } else {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!read_id(file, id)) {
        if (std::chrono::steady_clock::now() > deadline) {
          std::fprintf(stderr, "rank %d: no id in %s after 60 s\n", rank, file);
          return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  } else if (ranks == 1) {
    ncclGetUniqueId(&id);
  } else {
    std::fprintf(stderr, "set NCCL_ID_FILE (or NCCL_ID_HEX) for %d ranks\n", ranks);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 2;
  }
  cudaSetDevice(rank % devices);
  ncclComm_t comm = nullptr;
  if (ncclCommInitRank(&comm, ranks, id, rank) != ncclSuccess) {
    std::fprintf(stderr, "rank %d: ncclCommInitRank failed\n", rank);
    return 1;
  }
  // Rank q holds 1 << (10 + q) elements, x = 1 / (1 + global index): the max, 1, is at 0.
  const std::size_t n = std::size_t{1} << (10 + rank);
  std::size_t first = 0;
  for (int p = 0; p < rank; ++p) first += std::size_t{1} << (10 + p);
  std::vector<double> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = 1.0 / static_cast<double>(1 + first + i);
  double* d_x = nullptr;
  cudaMalloc(&d_x, n * sizeof(double));
  cudaMemcpy(d_x, host.data(), n * sizeof(double), cudaMemcpyHostToDevice);
  int status = 0;
  try {
    double sum = 0, norm = 0;
    reducelab::ArgResult<double> arg{};
    using reducelab::DType;
    reducelab::reduce_sharded_to_host(reducelab::Op::sum, DType::f64, d_x, nullptr, n, &sum, comm);
    reducelab::reduce_sharded_to_host(reducelab::Reduction::norm(2), DType::f64, d_x, nullptr, n,
                                      &norm, comm);
    reducelab::reduce_sharded_to_host(reducelab::Op::argmin, DType::f64, d_x, nullptr, n, &arg,
                                      comm);
    std::printf("rank %d of %d: sum %.12f (harmonic number), 2-norm %.12f, argmin %.3g at %lld\n",
                rank, ranks, sum, norm, arg.value, static_cast<long long>(arg.index));
  } catch (const reducelab::Error& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    status = 1;
  }
  cudaFree(d_x);
  ncclCommDestroy(comm);
  return status;
}

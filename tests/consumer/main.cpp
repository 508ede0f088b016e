// reducelab from a user's side: the umbrella header, the version, one sum on the GPU.
// Exit 0: the sum is right. Exit 77 (CTest's SKIP_RETURN_CODE): no CUDA device. Else: a failure.

#include <reducelab/reducelab.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <vector>

static_assert(REDUCELAB_VERSION ==
                  REDUCELAB_VERSION_MAJOR * 10000 + REDUCELAB_VERSION_MINOR * 100 +
                      REDUCELAB_VERSION_PATCH,
              "REDUCELAB_VERSION packs MAJOR.MINOR.PATCH");

namespace {
constexpr int kSkip = 77;

bool is_no_device(cudaError_t status) {
  return status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver;
}
}  // namespace

int main() {
  std::printf("reducelab %s (REDUCELAB_VERSION %d)\n", REDUCELAB_VERSION_STRING, REDUCELAB_VERSION);
#ifdef REDUCELAB_EXPECTED_VERSION
  if (std::strcmp(REDUCELAB_VERSION_STRING, REDUCELAB_EXPECTED_VERSION) != 0) {
    std::printf("the package says %s, version.hpp says %s\n", REDUCELAB_EXPECTED_VERSION,
                REDUCELAB_VERSION_STRING);
    return 1;
  }
#endif
  const std::size_t n = 1000;
  std::vector<float> host(n, 0.5f);
  float* d_x = nullptr;
  try {
    const cudaError_t status = cudaMalloc(reinterpret_cast<void**>(&d_x), n * sizeof(float));
    if (status != cudaSuccess) {
      std::printf("cudaMalloc: %s\n", cudaGetErrorString(status));
      return is_no_device(status) ? kSkip : 1;
    }
    if (cudaMemcpy(d_x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess)
      return 1;
    const float total = reducelab::sum(d_x, n);
    cudaFree(d_x);
    std::printf("reducelab::sum of %zu x 0.5 = %g\n", n, total);
    return total == 500.0f ? 0 : 1;
  } catch (const reducelab::Error& e) {
    std::printf("%s\n", e.what());
    if (d_x != nullptr) cudaFree(d_x);
    return e.code() == reducelab::ErrorCode::no_device ? kSkip : 1;
  }
}

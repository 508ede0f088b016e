// Session 30 stand-in: can a one-pass logsumexp with the portable exp (a running max with
// rescaling per accumulator) run at the memory's speed? Three kernels with the same loads
// (16-byte vectors, 4 in flight per thread, grid-stride): a plain sum (the memory baseline),
// the two-pass design's second pass (sum of exp(x - M), M known), and the one-pass form.
// Not the fixed order: each thread keeps kC accumulators over its vectors; this times the
// per-element work only. Build from the repository root:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I src docs/notebook/raw/h200-onepass-session30.cu
#include <cuda_fp16.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include "reduce/portable_math.hpp"
namespace P = reducelab::detail::portable;

struct Plain { __device__ void add(float& s, float&, float x) const { s = __fadd_rn(s, x); } };
struct Term {
  float M;
  __device__ void add(float& s, float&, float x) const { s = __fadd_rn(s, P::exp_rn(__fsub_rn(x, M))); }
};
struct Online {  // (s, m): s = sum exp(x - m) so far
  __device__ void add(float& s, float& m, float x) const {
    const float d = __fsub_rn(x, m);                 // > 0: a new max
    const float e = P::exp_rn(-fabsf(d));            // exp(-|d|)
    const bool up = d > 0.f;
    s = up ? __fadd_rn(__fmul_rn(s, e), 1.f) : __fadd_rn(s, e);
    m = up ? x : m;                                   // NaN / -inf handling left out here
  }
};

template <class T> struct V;
template <> struct V<float> { static constexpr int k = 4; __device__ static float at(const uint4& v, int j) { return __uint_as_float((&v.x)[j]); } };
template <> struct V<__half> { static constexpr int k = 8; __device__ static float at(const uint4& v, int j) {
  const unsigned w = (&v.x)[j / 2]; return __half2float(__ushort_as_half(static_cast<unsigned short>(j & 1 ? w >> 16 : w & 0xffff))); } };

template <class T, class F>
__global__ void __launch_bounds__(512, 3) kern(const uint4* x, size_t nv, F f, float* out) {
  constexpr int kC = V<T>::k;
  float s[kC], m[kC];
  for (int j = 0; j < kC; ++j) { s[j] = 0.f; m[j] = -INFINITY; }
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < nv; i += 4 * stride) {
    uint4 r[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) r[u] = __ldcs(x + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int j = 0; j < kC; ++j) f.add(s[j], m[j], V<T>::at(r[u], j));
  }
  for (; i < nv; i += stride) { uint4 r = __ldcs(x + i);
#pragma unroll
    for (int j = 0; j < kC; ++j) f.add(s[j], m[j], V<T>::at(r, j)); }
  float t = 0.f;
  for (int j = 0; j < kC; ++j) t += s[j] + m[j];
  if (t == 12345.f) out[0] = t;  // keep the work
}

template <class T, class F>
float time_it(const uint4* x, size_t nv, F f, float* out, int blocks) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ts;
  for (int r = 0; r < 25; ++r) {
    cudaEventRecord(a); kern<T><<<blocks, 512>>>(x, nv, f, out); cudaEventRecord(b);
    cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 5) ts.push_back(ms * 1000);
  }
  std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
}

int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const size_t bytes = size_t(1) << 29;  // 2^27 f32, 2^28 f16
  uint4* x; float* out; cudaMalloc(&x, bytes); cudaMalloc(&out, 4);
  std::vector<float> h(bytes / 4);
  for (size_t i = 0; i < h.size(); ++i) h[i] = float((i * 2654435761u) % 1000) / 100.f - 5.f;
  cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice);
  std::vector<__half> hh(bytes / 2);
  const size_t nv = bytes / 16;
  const int blocks = sms * 3;
  for (int rep = 0; rep < 2; ++rep) {
    cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice);
    const float p = time_it<float>(x, nv, Plain{}, out, blocks);
    const float t = time_it<float>(x, nv, Term{5.f}, out, blocks);
    const float o = time_it<float>(x, nv, Online{}, out, blocks);
    std::printf("f32 2^27 (%zu MB): plain sum %.1f us (%.0f GB/s), exp term %.1f us (%.2fx), one-pass online %.1f us (%.2fx)\n",
                bytes >> 20, p, bytes / p / 1e3, t, t / p, o, o / p);
    for (size_t i = 0; i < hh.size(); ++i) hh[i] = __float2half(float((i * 2654435761u) % 1000) / 100.f - 5.f);
    cudaMemcpy(x, hh.data(), bytes, cudaMemcpyHostToDevice);
    const float ph = time_it<__half>(x, nv, Plain{}, out, blocks);
    const float th = time_it<__half>(x, nv, Term{5.f}, out, blocks);
    const float oh = time_it<__half>(x, nv, Online{}, out, blocks);
    std::printf("f16 2^28 (%zu MB): plain sum %.1f us (%.0f GB/s), exp term %.1f us (%.2fx), one-pass online %.1f us (%.2fx)\n",
                bytes >> 20, ph, bytes / ph / 1e3, th, th / ph, oh, oh / ph);
  }
  std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}

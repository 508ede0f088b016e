// Session 39's experiment (not part of the library): which part of the gpu_to_gpu whole-array
// kernel's proportional cost (+5-7% over the default at 2^27 f32) is the way it reads the bytes,
// and which the work it does per tile. Every kernel reads the same n floats with 16-byte
// no-allocate loads and adds them in whatever order is convenient (the bits are not the point);
// only the assignment of vectors to threads and the per-tile work differ:
//
//   grid_stride      the default kernel's reading: thread g reads vectors g, g + G, ... (G the
//                    grid's threads), 4 loads in flight; one warp tree at the end.
//   warp_runs_tree   the gpu_to_gpu kernel's reading and per-tile work: tiles of 32 x K vectors
//                    (K from reproducible_plan.hpp's steps_for), a contiguous run of tiles per
//                    warp, lane l reads vectors l, l + 32, ... of a tile, 4 loads in flight, and
//                    at the end of each tile a warp tree and a store of the tile's partial.
//   warp_runs        the same reading, no per-tile tree (one tree at the end).
//   block_interleave tiles as above, a contiguous run of tiles per block, the block's warps
//                    taking its tiles in turn (session 38's INTERLEAVE hook), no per-tile tree.
//   warp_runs_tree2  warp_runs_tree taking two tiles of its run at a time (8 loads in flight).
//   block_tiles      tiles of kWarps x 32 x K vectors, read by a whole block (thread i reads
//                    vectors i, i + kBlock, ... of the tile: a 8 KB front per block and step),
//                    a contiguous run of such tiles per block, no per-tile tree.
//   6-10 (built in session 39, first run in session 40 on an H100) rows_deal_warp_runs,
//                    rows_deal_block, rows_deal_grid: tile t = rows t, t + V, t + 2V, ... (V
//                    tiles, a row 32 vectors), dealt as warp runs, a block's range with its warps
//                    in turn, or tile t to global warp t mod W; tiles_deal_grid: today's tiles
//                    dealt t mod W; block_tiles_tree: block_tiles with a block tree per tile.
//                    All with the tree.
//   14-15 (session 40) tiles_deal_grid_tickets, tiles_deal_grid_warp_tickets: pattern 9 with
//                    the tickets per round that its deal would need, blocking or taken by the
//                    block's last warp of the round (grid_deal_tickets).
//   11-13 (session 40) grid_stride_342: grid_stride on as many blocks as warp_runs keeps busy;
//                    warp_runs_balanced, block_interleave_balanced: today's tiles dealt over
//                    every warp of the grid (contiguous runs of 5 or 6, or balanced block ranges
//                    with the warps in turn), with the tree.
//
// Each kernel spells out its own loop on purpose (duplicates reports them): patterns 0-5 are the
// code that ran in call 1, whose schedules were checked with scripts/sass_loads.py; folding them
// into one helper would change what was measured.
// Each pattern at 3 and 4 blocks of 512 per SM (the gpu_to_gpu kernel runs 3, the default 4).
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -o access_patterns h200-access-patterns-session39.cu
// Run:   ./access_patterns [rounds]  (AP_LOG2N=27 one size only; AP_REPS=0 no timed calls;
//        AP_PATTERNS=0,1,6 only those patterns). CSV on stdout:
//        round,pattern,blocks_per_sm,grid,n,k,median_us,gbps,checked
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

constexpr int kBlock = 512;
constexpr int kWarps = kBlock / 32;
constexpr int kUnroll = 4;

__device__ __forceinline__ float4 load_na(const float4* p) {
  float4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

__device__ __forceinline__ void add4(float4& a, const float4& v) {
  a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;
}

__device__ __forceinline__ float total(const float4& a) { return (a.x + a.y) + (a.z + a.w); }

template <int kMinBlocks>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    grid_stride(const float4* x, std::uint64_t nvec, float* out) {
  const std::uint64_t g = blockIdx.x * std::uint64_t{kBlock} + threadIdx.x;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kBlock;
  float4 acc = {0, 0, 0, 0};
  std::uint64_t i = g;
  for (; i + (kUnroll - 1) * stride < nvec; i += kUnroll * stride) {
    float4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) r[u] = load_na(x + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) add4(acc, r[u]);
  }
  for (; i < nvec; i += stride) add4(acc, load_na(x + i));
  const float s = warp_sum(total(acc));
  if ((threadIdx.x & 31) == 0) out[g / 32] = s;
}

// Tiles of 32 x k vectors, a contiguous run of `run` tiles per warp.
template <int kMinBlocks, bool kTree>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    warp_runs(const float4* x, std::uint64_t tiles, std::uint64_t k, std::uint64_t run,
              float* out) {
  const unsigned lane = threadIdx.x & 31;
  const std::uint64_t w = (blockIdx.x * std::uint64_t{kBlock} + threadIdx.x) / 32;
  const std::uint64_t first = w * run;
  const std::uint64_t end = (first + run < tiles ? first + run : tiles);
  float4 acc = {0, 0, 0, 0};
  for (std::uint64_t t = first; t < end; ++t) {
    const float4* xs = x + t * 32 * k + lane;
    for (std::uint64_t s = 0; s < k; s += kUnroll) {
      float4 r[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) r[u] = load_na(xs + 32 * (s + u));
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) add4(acc, r[u]);
    }
    if constexpr (kTree) {
      const float p = warp_sum(total(acc));
      if (lane == 0) out[t] = p;
      acc = {0, 0, 0, 0};
    }
  }
  if constexpr (!kTree) {
    const float s = warp_sum(total(acc));
    if (lane == 0) out[w] = s;
  }
}

// warp_runs_tree with two tiles of the run at a time: a batch loads 4 vectors of each (8 in
// flight), then adds them to two sets of accumulators (the same order within each tile).
template <int kMinBlocks>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    warp_runs_tree2(const float4* x, std::uint64_t tiles, std::uint64_t k, std::uint64_t run,
                    float* out) {
  const unsigned lane = threadIdx.x & 31;
  const std::uint64_t w = (blockIdx.x * std::uint64_t{kBlock} + threadIdx.x) / 32;
  const std::uint64_t first = w * run;
  const std::uint64_t end = first + run < tiles ? first + run : tiles;
  std::uint64_t t = first;
  for (; t + 1 < end; t += 2) {
    float4 a0 = {0, 0, 0, 0}, a1 = {0, 0, 0, 0};
    const float4* x0 = x + t * 32 * k + lane;
    const float4* x1 = x0 + 32 * k;
    for (std::uint64_t s = 0; s < k; s += kUnroll) {
      float4 r0[kUnroll], r1[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        r0[u] = load_na(x0 + 32 * (s + u));
        r1[u] = load_na(x1 + 32 * (s + u));
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        add4(a0, r0[u]);
        add4(a1, r1[u]);
      }
    }
    const float p0 = warp_sum(total(a0));
    const float p1 = warp_sum(total(a1));
    if (lane == 0) {
      out[t] = p0;
      out[t + 1] = p1;
    }
  }
  if (t < end) {
    float4 acc = {0, 0, 0, 0};
    const float4* xs = x + t * 32 * k + lane;
    for (std::uint64_t s = 0; s < k; s += kUnroll) {
      float4 r[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) r[u] = load_na(xs + 32 * (s + u));
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) add4(acc, r[u]);
    }
    const float p = warp_sum(total(acc));
    if (lane == 0) out[t] = p;
  }
}

// Tiles of 32 x k vectors, a contiguous run of kWarps x run tiles per block, its warps in turn.
template <int kMinBlocks>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    block_interleave(const float4* x, std::uint64_t tiles, std::uint64_t k, std::uint64_t run,
                     float* out) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned warp = threadIdx.x / 32;
  const std::uint64_t first = blockIdx.x * kWarps * run;
  const std::uint64_t end = (first + kWarps * run < tiles ? first + kWarps * run : tiles);
  float4 acc = {0, 0, 0, 0};
  for (std::uint64_t t = first + warp; t < end; t += kWarps) {
    const float4* xs = x + t * 32 * k + lane;
    for (std::uint64_t s = 0; s < k; s += kUnroll) {
      float4 r[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) r[u] = load_na(xs + 32 * (s + u));
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) add4(acc, r[u]);
    }
  }
  const float s = warp_sum(total(acc));
  if (lane == 0) out[blockIdx.x * std::uint64_t{kWarps} + warp] = s;
}

// Tiles of kBlock x k vectors read by one block, a contiguous run of `run` such tiles per block.
template <int kMinBlocks>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    block_tiles(const float4* x, std::uint64_t btiles, std::uint64_t k, std::uint64_t run,
                float* out) {
  const std::uint64_t first = blockIdx.x * run;
  const std::uint64_t end = (first + run < btiles ? first + run : btiles);
  float4 acc = {0, 0, 0, 0};
  for (std::uint64_t t = first; t < end; ++t) {
    const float4* xs = x + t * kBlock * k + threadIdx.x;
    for (std::uint64_t s = 0; s < k; s += kUnroll) {
      float4 r[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) r[u] = load_na(xs + kBlock * (s + u));
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) add4(acc, r[u]);
    }
  }
  const float s = warp_sum(total(acc));
  if ((threadIdx.x & 31) == 0) out[blockIdx.x * std::uint64_t{kWarps} + threadIdx.x / 32] = s;
}


// --- Patterns 6-10 (call 3, not run): orders with a denser front, each with the tile tree. ---
// The loop over one tile's K vectors, row (lane's vector) r(m) = row0 + m * row_step, 4 at a time.
__device__ __forceinline__ float tile_sum(const float4* x, std::uint64_t row0,
                                          std::uint64_t row_step, std::uint64_t k, unsigned lane) {
  float4 acc = {0, 0, 0, 0};
  for (std::uint64_t s = 0; s < k; s += kUnroll) {
    float4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) r[u] = load_na(x + (row0 + (s + u) * row_step) * 32 + lane);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) add4(acc, r[u]);
  }
  return warp_sum(total(acc));
}

// kOrder 0: tile t is rows tK .. tK + K - 1 (today's order); 1: rows t, t + V, t + 2V, ... (V the
// number of tiles: consecutive tiles read adjacent rows at each step).
// kDeal 0: contiguous runs per warp; 1: a contiguous range per block, its warps in turn; 2: tile
// t to global warp t mod W (a dense front over the grid). Added in session 40, balanced deals of
// today's tiles over every warp of the grid (the others leave blocks without tiles: 32,768 tiles
// in runs of 6 over 396 x 16 warps keep 342 blocks busy, 2 on 54 SMs and 3 on 78):
// 3: warp g of W takes the contiguous tiles [g T / W, (g + 1) T / W) (5 or 6 of them);
// 4: block b of G the contiguous range [b T / G, (b + 1) T / G), its warps in turn.
template <int kMinBlocks, int kOrder, int kDeal>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    dealt_tiles(const float4* x, std::uint64_t tiles, std::uint64_t k, std::uint64_t run,
                float* out) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned warp = threadIdx.x / 32;
  const std::uint64_t g = (blockIdx.x * std::uint64_t{kBlock} + threadIdx.x) / 32;
  std::uint64_t first, end, step;
  if constexpr (kDeal == 0) {
    first = g * run;
    end = first + run < tiles ? first + run : tiles;
    step = 1;
  } else if constexpr (kDeal == 1) {
    const std::uint64_t block_first = blockIdx.x * kWarps * run;
    first = block_first + warp;
    end = block_first + kWarps * run < tiles ? block_first + kWarps * run : tiles;
    step = kWarps;
  } else if constexpr (kDeal == 2) {
    first = g;
    end = tiles;
    step = std::uint64_t{gridDim.x} * kWarps;
  } else if constexpr (kDeal == 3) {
    const std::uint64_t w = std::uint64_t{gridDim.x} * kWarps;
    first = g * tiles / w;
    end = (g + 1) * tiles / w;
    step = 1;
  } else {
    first = blockIdx.x * tiles / gridDim.x + warp;
    end = (blockIdx.x + std::uint64_t{1}) * tiles / gridDim.x;
    step = kWarps;
  }
  for (std::uint64_t t = first; t < end; t += step) {
    const float p = kOrder == 0 ? tile_sum(x, t * k, 1, k, lane) : tile_sum(x, t, tiles, k, lane);
    if (lane == 0) out[t] = p;
  }
}

// Session 40: pattern 9's deal (tile t to warp t mod W) with the tickets that deal would need,
// counting tiles per group of 1,024 as the library does (the counts are not checked here; only
// their cost is measured). In round r block b holds tiles rW + 16b .. rW + 16b + 15.
// kBlocking: a barrier, thread 0's fence and one atomic per group the round touches, a barrier
// (pattern 14); otherwise each warp's lane 0 fences and counts its tile in shared memory, and
// the block's last warp of the round takes the atomics, the others go on (pattern 15).
template <int kMinBlocks, bool kBlocking>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    grid_deal_tickets(const float4* x, std::uint64_t tiles, std::uint64_t k, float* out,
                      unsigned* counters) {
  __shared__ unsigned round_count[8];
  if (threadIdx.x < 8) round_count[threadIdx.x] = 0;
  __syncthreads();
  const unsigned lane = threadIdx.x & 31;
  const unsigned warp = threadIdx.x / 32;
  const std::uint64_t w_all = std::uint64_t{gridDim.x} * kWarps;
  for (std::uint64_t r = 0; r * w_all + blockIdx.x * std::uint64_t{kWarps} < tiles; ++r) {
    const std::uint64_t lo = r * w_all + blockIdx.x * std::uint64_t{kWarps};
    const std::uint64_t hi = lo + kWarps < tiles ? lo + kWarps : tiles;
    const std::uint64_t t = lo + warp;
    if (t < tiles) {
      const float p = tile_sum(x, t * k, 1, k, lane);
      if (lane == 0) out[t] = p;
    }
    auto take = [&]() {
      for (std::uint64_t grp = lo / 1024; grp <= (hi - 1) / 1024; ++grp) {
        const std::uint64_t a = grp * 1024 > lo ? grp * 1024 : lo;
        const std::uint64_t b = (grp + 1) * 1024 < hi ? (grp + 1) * 1024 : hi;
        atomicAdd(&counters[grp & 63], static_cast<unsigned>(b - a));
      }
    };
    if constexpr (kBlocking) {
      __syncthreads();
      if (threadIdx.x == 0) {
        __threadfence();
        take();
      }
      __syncthreads();
    } else {
      if (lane == 0 && t < tiles) {
        __threadfence();
        if (atomicAdd(&round_count[r & 7], 1u) == static_cast<unsigned>(hi - lo) - 1) {
          round_count[r & 7] = 0;
          take();
        }
      }
      __syncwarp();
    }
  }
}

// Tiles of kBlock x k vectors read by a whole block (thread i: vectors i, i + kBlock, ...), a
// contiguous run of them per block, each tile's partial a block tree (warp trees, then warp 0).
template <int kMinBlocks>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    block_tiles_tree(const float4* x, std::uint64_t btiles, std::uint64_t k, std::uint64_t run,
                     float* out) {
  __shared__ float slots[kWarps];
  const unsigned lane = threadIdx.x & 31;
  const unsigned warp = threadIdx.x / 32;
  const std::uint64_t first = blockIdx.x * run;
  const std::uint64_t end = first + run < btiles ? first + run : btiles;
  for (std::uint64_t t = first; t < end; ++t) {
    float4 acc = {0, 0, 0, 0};
    const float4* xs = x + t * kBlock * k + threadIdx.x;
    for (std::uint64_t s = 0; s < k; s += kUnroll) {
      float4 r[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) r[u] = load_na(xs + kBlock * (s + u));
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) add4(acc, r[u]);
    }
    const float w = warp_sum(total(acc));
    if (lane == 0) slots[warp] = w;
    __syncthreads();
    if (warp == 0) {
      const float b = warp_sum(lane < kWarps ? slots[lane] : 0.0f);
      if (lane == 0) out[t] = b;
    }
    __syncthreads();
  }
}

// reproducible_plan.hpp's steps_for for 4-byte elements: K >= 4, at most 32,768 tiles of 128 K.
std::uint64_t steps_for(std::uint64_t n) {
  std::uint64_t k = 4;
  while ((n + 128 * k - 1) / (128 * k) > 32768) k *= 2;
  return k;
}

template <class Kernel>
int resident(Kernel kernel) {
  int sms = 0, per_sm = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, 0));
  return sms * per_sm;
}

struct Case {
  std::string name;
  int blocks_per_sm;
};

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2;
  // AP_REPS=0 AP_LOG2N=27: one call per case at one size, for Nsight Compute.
  const int reps = std::getenv("AP_REPS") ? std::atoi(std::getenv("AP_REPS")) : 50;
  const int warmup = reps > 0 ? 5 : 0;
  const int only = std::getenv("AP_LOG2N") ? std::atoi(std::getenv("AP_LOG2N")) : 0;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::fprintf(stderr, "%s, %d SMs, L2 %d bytes\n", prop.name, prop.multiProcessorCount,
               prop.l2CacheSize);
  const std::uint64_t sizes[] = {std::uint64_t{1} << 24, std::uint64_t{1} << 27,
                                 std::uint64_t{1} << 30};
  float* out = nullptr;
  CHECK(cudaMalloc(&out, 1 << 22));
  unsigned* counters = nullptr;  // patterns 14 and 15 (counts not checked)
  CHECK(cudaMalloc(&counters, 64 * sizeof(unsigned)));
  CHECK(cudaMemset(counters, 0, 64 * sizeof(unsigned)));
  std::vector<float> host_out(1 << 20);
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::printf("round,pattern,blocks_per_sm,grid,n,k,median_us,gbps,checked\n");
  for (const std::uint64_t n : sizes) {
    if (only != 0 && n != (std::uint64_t{1} << only)) continue;
    const std::uint64_t bytes = n * 4;
    // Inputs under 2x L2 rotate among copies spanning >= 3x L2 (as the project's bench does).
    const int copies =
        bytes < 2ull * prop.l2CacheSize ? int((3ull * prop.l2CacheSize + bytes - 1) / bytes) : 1;
    std::vector<float*> xs(copies);
    for (auto& p : xs) {
      CHECK(cudaMalloc(&p, bytes));
      // 1.0f everywhere: every pattern's partials add up to n exactly (checked below).
      std::vector<float> ones(1 << 20, 1.0f);
      for (std::uint64_t off = 0; off < n; off += ones.size())
        CHECK(cudaMemcpy(p + off, ones.data(), std::min<std::uint64_t>(ones.size(), n - off) * 4,
                         cudaMemcpyHostToDevice));
    }
    const std::uint64_t nvec = n / 4;
    const std::uint64_t k = steps_for(n);
    const std::uint64_t tiles = nvec / (32 * k);
    const std::uint64_t btiles = nvec / (kBlock * k);
    const char* names[] = {"grid_stride", "warp_runs_tree", "warp_runs", "block_interleave",
                           "block_tiles", "warp_runs_tree2", "rows_deal_warp_runs",
                           "rows_deal_block", "rows_deal_grid", "tiles_deal_grid",
                           "block_tiles_tree", "grid_stride_342", "warp_runs_balanced",
                           "block_interleave_balanced", "tiles_deal_grid_tickets",
                           "tiles_deal_grid_warp_tickets"};
    // AP_PATTERNS=a,b: only these patterns (by number).
    std::vector<int> patterns;
    if (const char* only_p = std::getenv("AP_PATTERNS")) {
      for (const char* c = only_p; *c;) {
        patterns.push_back(std::atoi(c));
        while (*c && *c != ',') ++c;
        if (*c == ',') ++c;
      }
    } else {
      for (int i = 0; i < 16; ++i) patterns.push_back(i);
    }
    for (int round = 1; round <= rounds; ++round) {
      for (int minb : {3, 4}) {
        for (int p : patterns) {
          int grid = 0;
          std::uint64_t outs = 0;
          auto launch = [&](const float4* x) {
            switch (p * 10 + minb) {  // p <= 15: cases 153, 154
#define CASE(P, B, KERNEL, ...)                                        \
  case P * 10 + B:                                                     \
    if (grid == 0) grid = resident(KERNEL);                            \
    KERNEL<<<grid, kBlock>>>(__VA_ARGS__);                             \
    break;
              CASE(0, 3, grid_stride<3>, x, nvec, out)
              CASE(0, 4, grid_stride<4>, x, nvec, out)
              CASE(1, 3, (warp_runs<3, true>), x, tiles, k,
                   (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(1, 4, (warp_runs<4, true>), x, tiles, k,
                   (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(2, 3, (warp_runs<3, false>), x, tiles, k,
                   (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(2, 4, (warp_runs<4, false>), x, tiles, k,
                   (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(3, 3, block_interleave<3>, x, tiles, k,
                   (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(3, 4, block_interleave<4>, x, tiles, k,
                   (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(4, 3, block_tiles<3>, x, btiles, k, (btiles + grid - 1) / grid, out)
              CASE(4, 4, block_tiles<4>, x, btiles, k, (btiles + grid - 1) / grid, out)
              CASE(5, 3, warp_runs_tree2<3>, x, tiles, k,
                   (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(5, 4, warp_runs_tree2<4>, x, tiles, k,
                   (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(6, 3, (dealt_tiles<3, 1, 0>), x, tiles, k, (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(6, 4, (dealt_tiles<4, 1, 0>), x, tiles, k, (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(7, 3, (dealt_tiles<3, 1, 1>), x, tiles, k, (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(7, 4, (dealt_tiles<4, 1, 1>), x, tiles, k, (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(8, 3, (dealt_tiles<3, 1, 2>), x, tiles, k, (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(8, 4, (dealt_tiles<4, 1, 2>), x, tiles, k, (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(9, 3, (dealt_tiles<3, 0, 2>), x, tiles, k, (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(9, 4, (dealt_tiles<4, 0, 2>), x, tiles, k, (tiles + grid * kWarps - 1) / (grid * kWarps), out)
              CASE(10, 3, block_tiles_tree<3>, x, btiles, k, (btiles + grid - 1) / grid, out)
              CASE(10, 4, block_tiles_tree<4>, x, btiles, k, (btiles + grid - 1) / grid, out)
              CASE(12, 3, (dealt_tiles<3, 0, 3>), x, tiles, k, 0, out)
              CASE(12, 4, (dealt_tiles<4, 0, 3>), x, tiles, k, 0, out)
              CASE(13, 3, (dealt_tiles<3, 0, 4>), x, tiles, k, 0, out)
              CASE(13, 4, (dealt_tiles<4, 0, 4>), x, tiles, k, 0, out)
              CASE(14, 3, (grid_deal_tickets<3, true>), x, tiles, k, out, counters)
              CASE(14, 4, (grid_deal_tickets<4, true>), x, tiles, k, out, counters)
              CASE(15, 3, (grid_deal_tickets<3, false>), x, tiles, k, out, counters)
              CASE(15, 4, (grid_deal_tickets<4, false>), x, tiles, k, out, counters)
              // 11 (session 40): grid_stride on as many blocks as warp_runs keeps busy.
              case 113:
              case 114:
                if (grid == 0) {
                  const int r = minb == 3 ? resident(grid_stride<3>) : resident(grid_stride<4>);
                  const std::uint64_t run = (tiles + std::uint64_t(r) * kWarps - 1) / (std::uint64_t(r) * kWarps);
                  grid = int((tiles + kWarps * run - 1) / (kWarps * run));
                }
                if (minb == 3) grid_stride<3><<<grid, kBlock>>>(x, nvec, out);
                else grid_stride<4><<<grid, kBlock>>>(x, nvec, out);
                break;
#undef CASE
            }
          };
          // The first call sets grid (the occupancy query) and is a warm-up.
          CHECK(cudaMemset(out, 0, 1 << 22));
          launch(reinterpret_cast<const float4*>(xs[0]));
          CHECK(cudaGetLastError());
          CHECK(cudaDeviceSynchronize());
          outs = p == 1 || (p >= 5 && p <= 9) || p >= 12 ? tiles
                 : p == 10                               ? btiles
                                                         : std::uint64_t(grid) * kWarps;
          CHECK(cudaMemcpy(host_out.data(), out, outs * 4, cudaMemcpyDeviceToHost));
          double sum = 0;
          for (std::uint64_t i = 0; i < outs; ++i) sum += host_out[i];
          const bool ok = sum == double(n);
          std::vector<float> times;
          for (int r = 0; r < warmup + reps; ++r) {
            const float4* x = reinterpret_cast<const float4*>(xs[r % copies]);
            CHECK(cudaEventRecord(e0));
            launch(x);
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= warmup) times.push_back(ms * 1000.0f);
          }
          std::sort(times.begin(), times.end());
          const double med = times.empty() ? 0.0 : times[times.size() / 2];
          std::printf("%d,%s,%d,%d,%llu,%llu,%.2f,%.0f,%s\n", round, names[p], minb, grid,
                      (unsigned long long)n, (unsigned long long)k, med, bytes / med / 1e3,
                      ok ? "ok" : "WRONG");
          std::fflush(stdout);
        }
      }
    }
    for (auto& p : xs) CHECK(cudaFree(p));
  }
  return 0;
}

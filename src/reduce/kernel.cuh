#pragma once
// The production reduce: one kernel per call.
//
// Each block of a persistent grid (at most SM count x resident blocks) walks the input in tiles
// of kBlock x kUnroll 16-byte vectors, so every thread has kUnroll independent loads in flight
// before it uses the first. A scalar head (elements before the first 16-byte boundary) and tail
// (the last n % vector elements) make any element-aligned pointer and any n work. Each block
// reduces its threads with warp shuffles, writes one partial, and takes a ticket from a counter;
// the block that takes the last ticket reduces all partials in a fixed order and writes the
// result, then resets the counter for the next call. No second kernel, no memset, and the order
// of every addition depends only on n and the grid: bitwise reproducible on one GPU model.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cuda/atomic>

#include "device/block_reduce.cuh"
#include "device/vector_load.cuh"
#include "reduce/traits.cuh"

namespace reducelab::detail {

template <class T>
struct KernelArgs {
  const T* x;
  const T* y;            // dot only
  std::size_t n;
  std::size_t head;      // elements before x + head is 16-byte aligned (same for y when vector)
  std::size_t vectors;   // 16-byte vectors after the head
  void* out;             // Traits::Out
  void* partials;        // gridDim.x x Traits::Acc
  unsigned int* counter; // zero on entry; zero again on exit
};

// Partials are written by other blocks: read them from L2, never from a stale L1 line.
template <class Acc>
__device__ __forceinline__ Acc load_partial(const Acc* address) {
  static_assert(sizeof(Acc) % 4 == 0, "partials are read as 4-byte words");
  unsigned words[sizeof(Acc) / 4];
  const unsigned* source = reinterpret_cast<const unsigned*>(address);
#pragma unroll
  for (int w = 0; w < static_cast<int>(sizeof(Acc) / 4); ++w) words[w] = __ldcg(source + w);
  Acc out;
  memcpy(&out, words, sizeof(Acc));
  return out;
}

// Written word by word, padding included, so the last block never reads bytes nobody wrote.
template <class Acc>
__device__ __forceinline__ void store_partial(Acc* address, const Acc& value) {
  unsigned words[sizeof(Acc) / 4];
  memcpy(words, &value, sizeof(Acc));
  unsigned* target = reinterpret_cast<unsigned*>(address);
#pragma unroll
  for (int w = 0; w < static_cast<int>(sizeof(Acc) / 4); ++w) target[w] = words[w];
}

// The grid step: each block's thread 0 publishes its partial and takes a ticket; the block with
// the last ticket folds all partials. `fold` is the production kernel; `fenced_fold` adds a
// __threadfence before the fold (the kernel before session 3). `none` and `ticket_only` give
// wrong results: reducelab_tune uses them to time the parts of the step.
enum class GridStep { none, ticket_only, fenced_fold, fold };

template <class Traits, int kBlock, int kUnroll, device::LoadHint kHint, bool kYVector,
          GridStep kGridStep = GridStep::fold>
__global__ void __launch_bounds__(kBlock) reduce_kernel(KernelArgs<typename Traits::Elem> a) {
  using T = typename Traits::Elem;
  using Acc = typename Traits::Acc;
  using Vec = device::Vec16<T>;
  constexpr int kCount = Vec::kCount;
  constexpr bool kDot = Traits::kArrays == 2;
  __shared__ Acc warp_slots[kBlock / device::kWarpSize];
  __shared__ bool is_last_block;

  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * kBlock;
  typename Traits::State state = Traits::start();

  // 1. Head: indices [0, head), one per thread.
  if (thread < a.head) Traits::update(state, a.x[thread], kDot ? a.y[thread] : T{}, thread);

  // 2. Body: vectors [0, a.vectors) after the head. Each batch issues kUnroll 16-byte loads per
  // thread (two per vector for dot) before it uses the first.
  const T* xv = a.x + a.head;
  const T* yv = kDot ? a.y + a.head : nullptr;
  auto consume = [&](std::size_t v, const uint4& raw_x, const uint4& raw_y) {
    const Vec x = Vec::from(raw_x);
    Vec y{};
    if constexpr (kDot && kYVector) {
      y = Vec::from(raw_y);
    } else if constexpr (kDot) {  // y is not 16-byte aligned where x is: scalar loads
#pragma unroll
      for (int j = 0; j < kCount; ++j) y.element[j] = yv[v * kCount + j];
    }
    Traits::update_vector(state, x.element, y.element, a.head + v * kCount);
  };
  constexpr bool kLoadY = kDot && kYVector;
  // Whole tiles of kBlock x kUnroll vectors, in rounds where every block gets one tile, so no
  // block runs a round alone at the end.
  constexpr std::size_t kTile = static_cast<std::size_t>(kBlock) * kUnroll;
  const std::size_t full_tiles = a.vectors / kTile / gridDim.x * gridDim.x;
  for (std::size_t tile = blockIdx.x; tile < full_tiles; tile += gridDim.x) {
    const std::size_t first = tile * kTile + threadIdx.x;
    uint4 rx[kUnroll];
    uint4 ry[kLoadY ? kUnroll : 1];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      rx[u] = device::load16<kHint>(xv + (first + u * kBlock) * kCount);
      if constexpr (kLoadY) ry[u] = device::load16<kHint>(yv + (first + u * kBlock) * kCount);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) consume(first + u * kBlock, rx[u], ry[kLoadY ? u : 0]);
  }
  // The rest, fewer than one round (< threads x kUnroll vectors): one batch of up to kUnroll
  // loads per thread across the whole grid, in increasing index order per thread.
  {
    const std::size_t first = full_tiles * kTile + thread;
    uint4 rx[kUnroll];
    uint4 ry[kLoadY ? kUnroll : 1];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t v = first + u * threads;
      if (v < a.vectors) {
        rx[u] = device::load16<kHint>(xv + v * kCount);
        if constexpr (kLoadY) ry[u] = device::load16<kHint>(yv + v * kCount);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t v = first + u * threads;
      if (v < a.vectors) consume(v, rx[u], ry[kLoadY ? u : 0]);
    }
  }

  // 3. Tail: indices [head + vectors * kCount, n), one per thread.
  const std::size_t tail = a.head + a.vectors * kCount;
  if (thread < a.n - tail) {
    const std::size_t i = tail + thread;
    Traits::update(state, a.x[i], kDot ? a.y[i] : T{}, i);
  }
  Acc acc = Traits::finish(state, a.x);

  // 4. Block, then grid: the last block to finish folds every block's partial.
  auto combine = [](Acc p, Acc q) { return Traits::combine(p, q); };
  acc = device::block_reduce<kBlock>(acc, combine, Traits::identity(), warp_slots);
  if (gridDim.x == 1 || kGridStep == GridStep::none) {
    if (threadIdx.x == 0 && blockIdx.x == 0) Traits::store(a.out, acc);
    return;
  }
  Acc* partials = static_cast<Acc*>(a.partials);
  cuda::atomic_ref<unsigned int, cuda::thread_scope_device> counter(*a.counter);
  if (threadIdx.x == 0) {
    store_partial(partials + blockIdx.x, acc);
    // Release publishes this block's partial with its ticket; acquire (in the last block) sees
    // every partial published before the tickets it follows.
    is_last_block = counter.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last_block) return;
  if constexpr (kGridStep == GridStep::ticket_only) {
    if (threadIdx.x == 0) counter.store(0u, cuda::memory_order_relaxed);
    return;
  }
  // Thread 0's acquire, then the barrier: every thread's loads below follow the releases (as in
  // CUDA's threadFenceReduction sample). A fence here cost 0.2-0.5 us at 2^14..2^20 on the H200.
  if constexpr (kGridStep == GridStep::fenced_fold) __threadfence();
  acc = Traits::identity();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock)
    acc = Traits::combine(acc, load_partial(partials + b));
  acc = device::block_reduce<kBlock>(acc, combine, Traits::identity(), warp_slots);
  if (threadIdx.x == 0) {
    Traits::store(a.out, acc);
    counter.store(0u, cuda::memory_order_relaxed);  // ready for the next call on this workspace
  }
}

}  // namespace reducelab::detail

#pragma once
// The gpu_to_gpu statistics on the GPU (reproducible_stats.hpp says what each computes): the
// terms f(x) that tile_partial (reproducible.cuh) sums in the fixed order, and a kernel that is
// reproducible_kernel with two hooks, the term and the finish.
//
// Merging with reproducible_kernel: term_kernel below is reproducible_kernel (as of 2712f80) with
//   - `tile_partial<T, A, kInputs, kYVector>(a, t, lane)` -> `tile_partial<T, A, 1, true>(a, t,
//     lane, f)`, where f = term.bind() is taken once per thread at the start (it reads the first
//     pass's scalar: the mean, the max);
//   - `store_result(a, total)` -> `finish(total)`.
// Once reproducible_kernel takes `class Term, class Finish` (sum/dot/mean: PlainTerm<kInputs>
// and a Finish that is store_result), this kernel is that one and can go. Nothing here depends
// on who computes a tile or which warp folds, so any grid structure of reproducible_kernel
// computes the same bits with these terms.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "reduce/reproducible.cuh"
#include "reduce/reproducible_stats.hpp"

namespace reducelab::detail::repro {

__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }

//! Reads the first pass's scalar, written by an earlier kernel on the stream.
template <class S>
__device__ __forceinline__ S load_scalar(const void* p) {
  return *static_cast<const S*>(p);
}

// ---- Terms: apply<A>(x, y) is f(x) in A, exactly as reproducible_cpu.cpp computes it --------

struct AbsTerm {  // norm ord 1
  __device__ AbsTerm bind() const { return *this; }
  template <class A, class T>
  __device__ __forceinline__ A apply(T x, T) const {
    return fabs(widen<A>(x));  // exact
  }
};

struct SquareTerm {  // norm ord 2, f32, f16, bf16
  __device__ SquareTerm bind() const { return *this; }
  template <class A, class T>
  __device__ __forceinline__ A apply(T x, T) const {
    const A v = widen<A>(x);
    return mul(v, v);
  }
};

struct ScaledSquareTerm {  // norm ord 2, f64: (s x)^2, s = norm2_scale(max |x|)
  const void* max_abs;     // double, from the first pass
  double scale;
  __device__ ScaledSquareTerm bind() const {
    return {max_abs, norm2_scale(load_scalar<double>(max_abs))};
  }
  template <class A, class T>
  __device__ __forceinline__ A apply(T x, T) const {
    const A v = mul(widen<A>(x), scale);
    return mul(v, v);
  }
};

template <class A>
struct DeviationTerm {  // var, std, var_mean, std_mean: (x - mean)^2
  const void* mean_at;  // A, from the first pass (the gpu_to_gpu mean)
  A mean;
  __device__ DeviationTerm bind() const { return {mean_at, load_scalar<A>(mean_at)}; }
  template <class R, class T>
  __device__ __forceinline__ R apply(T x, T) const {
    const A d = sub(widen<A>(x), mean);
    return mul(d, d);
  }
};

template <class A, class T>
struct ExpTerm {  // logsumexp: exp(x - max)
  const void* max_at;  // T, from the first pass (the default kernel's max)
  A max;
  __device__ ExpTerm bind() const { return {max_at, widen<A>(load_scalar<T>(max_at))}; }
  template <class R, class U>
  __device__ __forceinline__ R apply(U x, U) const {
    return portable::exp_rn(sub(widen<A>(x), max));
  }
};

// ---- Finishes: what the warp that folds the last partial writes ------------------------------

template <class A>
struct NormFinish {  // ord 1: the sum; ord 2: its square root, unscaled, as Out
  void* out;
  bool root;
  bool to_float;        // f32 and bf16's ord 2: the double root rounded to float
  const void* max_abs;  // f64's ord 2: the first pass's max |x|, else null
  __device__ void operator()(A total) const {
    A value = total;
    if (root) {
      value = portable::sqrt_rn(total);
      if (max_abs != nullptr)
        value = mul(value, static_cast<A>(norm2_unscale(norm2_scale(load_scalar<double>(max_abs)))));
    }
    if (to_float) {
      put<float>(out, 0, canonical(static_cast<float>(value)));
    } else {
      put<A>(out, 0, canonical(value));
    }
  }
};

template <class A>
struct VarFinish {
  void* out;
  const void* mean_at;
  A divisor;  // var_divisor(n, correction)
  Op op;
  __device__ void operator()(A total) const {
    A value = finish_var(total, divisor);
    if (op == Op::std || op == Op::std_mean) value = portable::sqrt_rn(value);
    value = canonical(value);
    if (op == Op::var_mean || op == Op::std_mean) {
      put(out, 0, StatPair<A>{value, load_scalar<A>(mean_at)});  // the mean: canonical already
    } else {
      put<A>(out, 0, value);
    }
  }
};

template <class A, class T>
struct LogSumExpFinish {
  void* out;
  const void* max_at;  // T
  __device__ void operator()(A total) const {
    put<A>(out, 0, canonical(finish_logsumexp(widen<A>(load_scalar<T>(max_at)), total)));
  }
};

// ---- The kernel: reproducible_kernel with a term and a finish (see the top of the file) ------
// A copy of reproducible_kernel as of the lead's 2712f80 (contiguous runs of tiles per warp, one
// ticket per block and group), with the two hooks; a.run set as launch_block sets it.

template <class T, class A, int kBlock, class Term, class Finish>
__global__ void __launch_bounds__(kBlock, 1536 / kBlock)
    term_kernel(ReproArgs<T> a, Term term, Finish finish) {
  const Term f = term.bind();
  constexpr unsigned kWarps = kBlock / 32;
  const unsigned lane = threadIdx.x & 31;
  const unsigned warp = threadIdx.x / 32;
  A* tile_slots = static_cast<A*>(a.partials);
  A* group_slots = tile_slots + kMaxTiles;
  __shared__ A slots[kWarps];
  __shared__ unsigned completed;  // bit g - first_group: this block completed group g
  auto group_size = [&](std::uint64_t g) {
    const std::uint64_t left = a.tiles - g * kGroupTiles;
    return static_cast<unsigned>(left < kGroupTiles ? left : kGroupTiles);
  };

  if (gridDim.x == 1) {
    // One block: barriers instead of tickets.
    for (std::uint64_t t = warp; t < a.tiles; t += kWarps) {
      const A partial = tile_partial<T, A, 1, true>(a, t, lane, f);
      if (lane == 0) tile_slots[t] = partial;
    }
    __syncthreads();
    for (unsigned g = warp; g < a.groups; g += kWarps) {
      const A partial = fold<kGroupTiles / 32>(tile_slots + g * kGroupTiles, group_size(g), lane);
      if (lane == 0) {
        if (a.groups == 1) {
          finish(partial);
        } else {
          group_slots[g] = partial;
        }
      }
    }
    if (a.groups == 1) return;
    __syncthreads();
    if (warp == 0) {
      const A total = fold<1>(group_slots, a.groups, lane);
      if (lane == 0) finish(total);
    }
    return;
  }

  const std::uint64_t block_first = static_cast<std::uint64_t>(blockIdx.x) * kWarps * a.run;
  if (block_first >= a.tiles) return;  // no tiles, no ticket
  const std::uint64_t block_end =
      block_first + kWarps * a.run < a.tiles ? block_first + kWarps * a.run : a.tiles;
  const std::uint64_t run_first = block_first + warp * a.run;
  const std::uint64_t run_end = run_first + a.run < block_end ? run_first + a.run : block_end;
  for (std::uint64_t t = run_first; t < run_end; ++t) {
    const A partial = tile_partial<T, A, 1, true>(a, t, lane, f);
    if (lane == 0) tile_slots[t] = partial;
  }

  // The tickets. Lane 0 of each warp stored its partials; the barrier orders them before thread
  // 0's release (cumulative), and in a completing block thread 0's acquire then the barrier
  // order the other members' partials before every thread's loads (as grid_step.cuh).
  const unsigned first_group = static_cast<unsigned>(block_first / kGroupTiles);
  const unsigned last_group = static_cast<unsigned>((block_end - 1) / kGroupTiles);
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned mask = 0;
    for (unsigned g = first_group; g <= last_group; ++g) {
      const std::uint64_t lo = g * kGroupTiles > block_first ? g * kGroupTiles : block_first;
      const std::uint64_t hi = (g + 1) * kGroupTiles < block_end ? (g + 1) * kGroupTiles : block_end;
      const unsigned mine = static_cast<unsigned>(hi - lo);
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(a.group_counters[g]);
      if (counter.fetch_add(mine, cuda::memory_order_acq_rel) + mine == group_size(g)) {
        mask |= 1u << (g - first_group);
        counter.store(0u, cuda::memory_order_relaxed);  // every member has added: ready again
      }
    }
    completed = mask;
  }
  __syncthreads();
  const unsigned mask = completed;
  if (mask == 0) return;
  unsigned done = 0;
  for (unsigned g = first_group; g <= last_group; ++g) {
    if (!(mask & (1u << (g - first_group)))) continue;
    const A group = fold_group<kBlock>(tile_slots + g * kGroupTiles, group_size(g), slots, warp, lane);
    if (threadIdx.x == 0) {
      if (a.groups == 1) {
        finish(group);
      } else {
        group_slots[g] = group;
      }
    }
    ++done;
  }
  if (a.groups == 1) return;
  // The second level: the same ticket over groups, counted by the groups this block completed.
  __shared__ bool folds_groups;
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*a.counter);
    folds_groups = counter.fetch_add(done, cuda::memory_order_acq_rel) + done == a.groups;
    if (folds_groups) counter.store(0u, cuda::memory_order_relaxed);
  }
  __syncthreads();
  if (!folds_groups || warp != 0) return;
  const A total = fold<1>(group_slots, a.groups, lane);
  if (lane == 0) finish(total);
}

}  // namespace reducelab::detail::repro

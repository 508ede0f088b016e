#pragma once
// The grid step: how the partial results of many blocks become one result without a second
// kernel. Each block's thread 0 publishes its partial and takes a ticket from a counter; the
// block that takes the last ticket folds every partial in a fixed order, writes the result and
// resets the counter for the next call. The fold is also a kernel of its own
// (combine_partials_kernel) for callers whose partials come from elsewhere: a segmented pass
// that splits long segments across blocks, or the per-rank partials of several GPUs.
//
// Cost on the H200 (docs/notebook/h200-tuning.md, runs 6-9): 1.0..1.4 us per call at
// 2^14..2^20 elements, 1.3..1.8 us at 2^27, of which the ticket is 0.4..0.8 us.

#include <cstddef>
#include <cstring>
#include <cuda/atomic>
#include <type_traits>

#include "device/block_reduce.cuh"
#include "reduce/traits.cuh"

namespace reducelab::detail {

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

// The bytes of an accumulator with its padding (ArgAcc<float>: 4 bytes between value and index)
// set to zero. A copy of the struct leaves padding indeterminate, and the compiler may then skip
// storing those words, so the folding block would read bytes nobody wrote (initcheck).
template <class Acc, class = void>
struct is_padded_pair : std::false_type {};
template <class Acc>
struct is_padded_pair<Acc, std::void_t<decltype(Acc::value), decltype(Acc::index)>>
    : std::bool_constant<sizeof(Acc) != sizeof(Acc::value) + sizeof(Acc::index)> {};

template <class Acc>
__device__ __forceinline__ void partial_words(unsigned (&words)[sizeof(Acc) / 4],
                                              const Acc& value) {
  if constexpr (!is_padded_pair<Acc>::value) {
    memcpy(words, &value, sizeof(Acc));
  } else {
#pragma unroll
    for (int w = 0; w < static_cast<int>(sizeof(Acc) / 4); ++w) words[w] = 0;
    char* bytes = reinterpret_cast<char*>(words);
    memcpy(bytes + offsetof(Acc, value), &value.value, sizeof(value.value));
    memcpy(bytes + offsetof(Acc, index), &value.index, sizeof(value.index));
  }
}

// Written word by word, padding included (as zeros), so the folding block never reads bytes
// nobody wrote.
template <class Acc>
__device__ __forceinline__ void store_partial(Acc* address, const Acc& value) {
  unsigned words[sizeof(Acc) / 4];
  partial_words(words, value);
  unsigned* target = reinterpret_cast<unsigned*>(address);
#pragma unroll
  for (int w = 0; w < static_cast<int>(sizeof(Acc) / 4); ++w) target[w] = words[w];
}

//! The fold of partials[0, count) in a fixed order: thread t combines t, t + kBlock, ...; then
//! the block's warp tree. Valid in thread 0. `warp_slots`: kBlock / 32 values of shared memory.
template <class Traits, int kBlock>
__device__ __forceinline__ typename Traits::Acc fold_partials(const typename Traits::Acc* partials,
                                                              unsigned count,
                                                              typename Traits::Acc* warp_slots) {
  using Acc = typename Traits::Acc;
  Acc acc = Traits::identity();
  for (unsigned b = threadIdx.x; b < count; b += kBlock)
    acc = Traits::combine(acc, load_partial(partials + b));
  auto combine = [](Acc p, Acc q) { return Traits::combine(p, q); };
  return device::block_reduce<kBlock>(acc, combine, Traits::identity(), warp_slots);
}

//! The ticket of a group of `members` blocks whose partials lie in partials[0, count): called by
//! every thread of each member after its thread 0 has stored what it contributes there
//! (store_partial). Returns true in the member that took the last ticket, where `acc` (thread 0)
//! is then the fold of partials[0, count) and the counter is zero again; the others are done.
//! The whole grid is one group for the production reduce (grid_step); the segmented reduce makes
//! a group of the blocks that share one segment, each group with a counter of its own.
template <class Traits, int kBlock>
__device__ __forceinline__ bool last_member_folds(typename Traits::Acc& acc,
                                                  const typename Traits::Acc* partials,
                                                  unsigned count, unsigned* counter_word,
                                                  unsigned members,
                                                  typename Traits::Acc* warp_slots) {
  __shared__ bool is_last_member;
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(*counter_word);
  if (threadIdx.x == 0) {
    // Release publishes this block's partials (stored by this thread) with its ticket; acquire
    // (in the last member) sees every partial published before the tickets it follows.
    is_last_member = counter.fetch_add(1u, cuda::memory_order_acq_rel) == members - 1;
  }
  __syncthreads();  // also ends every use of warp_slots by the block_reduce before
  if (!is_last_member) return false;
  // Thread 0's acquire, then the barrier: every thread's loads below follow the releases (as in
  // CUDA's threadFenceReduction sample). A __threadfence here cost 0.2-0.5 us at 2^14..2^20.
  acc = fold_partials<Traits, kBlock>(partials, count, warp_slots);
  if (threadIdx.x == 0) counter.store(0u, cuda::memory_order_relaxed);  // ready for the next call
  return true;
}

//! Called by every thread of every block with the block's partial `acc` (valid in thread 0)
//! after a block_reduce on `warp_slots`. Returns true in the block that took the last ticket,
//! where `acc` (thread 0) is then the fold of every block's partial and the counter is zero
//! again; the other blocks are done.
template <class Traits, int kBlock>
__device__ __forceinline__ bool grid_step(typename Traits::Acc& acc, typename Traits::Acc* partials,
                                          unsigned* counter_word, typename Traits::Acc* warp_slots) {
  if (threadIdx.x == 0) store_partial(partials + blockIdx.x, acc);
  return last_member_folds<Traits, kBlock>(acc, partials, gridDim.x, counter_word, gridDim.x,
                                           warp_slots);
}

//! One block folds `count` partials and writes the result of `elements` elements.
template <class Traits, int kBlock>
__global__ void __launch_bounds__(kBlock)
    combine_partials_kernel(const typename Traits::Acc* partials, unsigned count, void* out,
                            std::uint64_t elements, Finish finish) {
  __shared__ typename Traits::Acc warp_slots[kBlock / device::kWarpSize];
  const typename Traits::Acc acc = fold_partials<Traits, kBlock>(partials, count, warp_slots);
  if (threadIdx.x == 0) Traits::store(out, 0, acc, elements, finish);
}

}  // namespace reducelab::detail

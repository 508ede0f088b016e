#pragma once
// One rank's partial state of a sharded reduction, and the fold of the ranks' states in rank
// order. Plain C++ as far as the CPU is concerned (the CPU tests compile it with the host
// compiler and fold states of test traits); under nvcc the fold is __host__ __device__ and the
// fold kernel (state_kernels.cuh) runs it with the production traits.
//
// A state is a slot: a 16-byte header (the shard's element count, the call's signature) and the
// traits' accumulator (traits.cuh, stats_traits.cuh: the same Acc the kernel's blocks combine).
// A whole-array state is padded to kShardStateBytes whatever the op, so the all-gather moves the
// same bytes on every rank even when the ranks disagree on the call (the fold then sees the
// signatures differ); a row's state is only as long as its accumulator needs.

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define REDUCELAB_HOST_DEVICE __host__ __device__
#else
#define REDUCELAB_HOST_DEVICE
#endif

namespace reducelab::detail {

inline constexpr std::size_t kSlotHeaderBytes = 16;
//! reducelab::kShardStateBytes (multigpu.hpp): header + the largest accumulator (Moments<double>,
//! 40 bytes), rounded up to 64.
inline constexpr std::size_t kWholeSlotBytes = 64;
inline constexpr std::size_t kMaxAccBytes = kWholeSlotBytes - kSlotHeaderBytes;

//! The signature of a state a rank rejected its arguments for: no real call has it (a real
//! signature's low byte is an Op, below 64).
inline constexpr std::uint64_t kRejectedSignature = ~std::uint64_t(0);

//! What a call computes, in 64 bits: the op, the element type, which traits (norm's ord picks
//! them) and the correction's bits. Equal on every rank of one collective call.
REDUCELAB_HOST_DEVICE inline std::uint64_t state_signature(int op, int dtype, int traits_id,
                                                           double correction) {
  std::uint64_t bits = 0;
  memcpy(&bits, &correction, sizeof(bits));
  const std::uint64_t folded = (bits ^ (bits >> 32)) & 0xffffffffu;
  return static_cast<std::uint64_t>(op & 0xff) | (static_cast<std::uint64_t>(dtype & 0xff) << 8) |
         (static_cast<std::uint64_t>(traits_id & 0xff) << 16) | (folded << 32);
}

//! Bytes of one slot holding an Acc: the header and the accumulator rounded up to 8.
template <class Acc>
constexpr std::size_t compact_slot_bytes() {
  return kSlotHeaderBytes + (sizeof(Acc) + 7) / 8 * 8;
}

//! What the fold found: the combined accumulator, the global element count, and whether every
//! rank made the same call.
template <class Acc>
struct FoldResult {
  Acc acc;
  std::uint64_t total;  //!< elements of all shards
  bool agreed;          //!< every signature equal and none rejected
};

// The fold may instantiate device-only traits (the production ones) from a host-device function:
// only the device side of those instantiations is ever called.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
//! Folds `ranks` >= 1 slots at slots, slots + stride, ... in rank order: the first rank with
//! elements gives the starting accumulator (so one rank gives its kernel's accumulator
//! untouched, the bits of the single-GPU reduce), every later non-empty rank is combined after
//! it, its accumulator first made global by Traits::shifted(acc, elements before it) (argmin /
//! argmax add the offset to their index; the others ignore it). Empty shards are skipped: their
//! accumulator is the identity, which combine would only round through. With no elements at
//! all, the accumulator is rank 0's, the state its kernel computed from nothing (what the
//! single-GPU kernel stores for n == 0).
template <class Traits>
REDUCELAB_HOST_DEVICE FoldResult<typename Traits::Acc> fold_slots(const unsigned char* slots,
                                                                  std::size_t stride, int ranks) {
  using Acc = typename Traits::Acc;
  static_assert(sizeof(Acc) <= kMaxAccBytes, "a state slot holds at most 48 bytes of accumulator");
  FoldResult<Acc> out;
  std::uint64_t first_signature = 0;
  memcpy(&first_signature, slots + 8, sizeof(first_signature));
  memcpy(&out.acc, slots + kSlotHeaderBytes, sizeof(Acc));
  out.total = 0;
  out.agreed = first_signature != kRejectedSignature;
  bool started = false;
  for (int r = 0; r < ranks; ++r) {
    const unsigned char* slot = slots + static_cast<std::size_t>(r) * stride;
    std::uint64_t count = 0;
    std::uint64_t signature = 0;
    memcpy(&count, slot, sizeof(count));
    memcpy(&signature, slot + 8, sizeof(signature));
    if (signature != first_signature) out.agreed = false;
    if (!out.agreed) continue;  // garbage from a rejected or different call: never combined
    if (count != 0) {
      Acc acc;
      memcpy(&acc, slot + kSlotHeaderBytes, sizeof(Acc));
      acc = Traits::shifted(acc, static_cast<std::int64_t>(out.total));
      out.acc = started ? Traits::combine(out.acc, acc) : acc;
      started = true;
    }
    out.total += count;
  }
  return out;
}

}  // namespace reducelab::detail

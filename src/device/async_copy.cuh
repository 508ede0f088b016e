#pragma once
// Asynchronous copies from global to shared memory (cp.async, sm_80+): the bytes go to shared
// memory without passing through registers, in groups a thread commits and later waits for.

namespace reducelab::device {

//! Copies `bytes` (1..16) from global memory to the shared address `shared` (16-byte aligned)
//! without registers, the rest of the 16 zero-filled (cached in L2 only).
__device__ __forceinline__ void copy16_async(unsigned shared, const void* global, unsigned bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared), "l"(global),
               "r"(bytes)
               : "memory");
}

//! Copies 16 bytes from global memory to the shared address `shared` (16-byte aligned), cached in
//! L1 as well. Where a warp's threads copy neighbouring 16-byte halves of 32-byte sectors, this
//! form asks L2 for each sector once; copy16_async's L1-bypassing form asked for each half
//! (axis_kernel's ring, session 27: L2 hit rate 51% against 3%, the kernel 16% slower).
__device__ __forceinline__ void copy16_async_cached(unsigned shared, const void* global) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(shared), "l"(global) : "memory");
}

//! Copies kBytes (4 or 8) from global memory to the shared address `shared` (kBytes-aligned),
//! cached in L1 as well (the .ca form: neighbouring threads' copies share lines).
template <int kBytes>
__device__ __forceinline__ void copy_async(unsigned shared, const void* global) {
  static_assert(kBytes == 4 || kBytes == 8, "4 or 8 bytes here; 16 through copy16_async");
  if constexpr (kBytes == 8) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(shared), "l"(global) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(shared), "l"(global) : "memory");
  }
}

//! Closes the group of this thread's copies issued since the last commit.
__device__ __forceinline__ void copies_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

//! Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void copies_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

}  // namespace reducelab::device

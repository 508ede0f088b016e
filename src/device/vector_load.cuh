#pragma once
// 16-byte global loads with a choice of cache hint, and unpacking into elements.

#include <cstring>

namespace reducelab::device {

enum class LoadHint {
  plain,     //!< ld.global: cached in L1 and L2
  no_alloc,  //!< ld.global.nc.L1::no_allocate: read-only path, bypasses L1 allocation
  stream,    //!< ld.global.cs: evict-first streaming hint
  prefetch,  //!< ld.global.nc.L1::no_allocate.L2::256B: also asks L2 to fetch 256-byte sectors
};

template <LoadHint kHint>
__device__ __forceinline__ uint4 load16(const void* address) {
  uint4 v;
  if constexpr (kHint == LoadHint::plain) {
    v = *static_cast<const uint4*>(address);
  } else if constexpr (kHint == LoadHint::no_alloc) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(address));
  } else if constexpr (kHint == LoadHint::stream) {
    v = __ldcs(static_cast<const uint4*>(address));
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(address));
  }
  return v;
}

//! The 16 / sizeof(T) elements held in a 16-byte vector.
template <class T>
struct Vec16 {
  static constexpr int kCount = 16 / sizeof(T);
  T element[kCount];
  __device__ __forceinline__ static Vec16 from(const uint4& raw) {
    Vec16 out;
    memcpy(&out, &raw, 16);
    return out;
  }
};

}  // namespace reducelab::device

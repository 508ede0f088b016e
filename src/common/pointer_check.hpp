#pragma once
// Validation of user pointers before anything is launched, so a bad argument is a clear
// reducelab::Error and never a kernel fault that would poison the CUDA context.

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "reducelab/tensors.hpp"

namespace reducelab::detail {

//! One pointer argument: `count` elements of `alignment` bytes, called `name` in messages.
struct PointerArg {
  const void* ptr;
  std::size_t count;
  std::size_t alignment;
  const char* name;
};

//! Throws reducelab::Error unless every argument is usable as device input/output on `device`
//! (the current device): non-null when count > 0, aligned, and device or managed memory of that
//! device (not host memory, pinned or pageable). Null and alignment are checked for every
//! argument before any CUDA query. At most 4 arguments.
void require_device_pointers(std::initializer_list<PointerArg> args, int device);

//! The allocation a list's pointer was found in, [start, start + size): a pointer inside it,
//! and aligned, need not be asked about again.
struct KnownAllocation {
  std::uintptr_t start = 0;
  std::size_t size = 0;  // 0: none yet
};

//! Whether tensors[i] = {ptr, size} of a list (tensors.hpp) needs no check beyond two compares:
//! empty, or inside `known` and aligned to `alignment` (a power of two, an element's size). The
//! caller keeps `known` in a local whose address is never taken, so it stays in registers across
//! the table stores of its loop over the list: kept in a checker object instead, a list of 15,472
//! tensors took 84-147 us of host time against 45-76 (H200 machine, session 29).
inline bool tensor_known_good(const void* ptr, std::size_t size, std::size_t alignment,
                              const KnownAllocation& known) {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  return size == 0 || (address - known.start < known.size && (address & (alignment - 1)) == 0);
}

//! Throws reducelab::Error unless tensors[i] = {ptr, size} is usable as device input on
//! `device` (the current device), as require_device_pointers, named "tensors[i].data" in
//! messages; returns the allocation that holds it (size 0 where the driver cannot say).
KnownAllocation require_device_tensor(std::size_t i, const void* ptr, std::size_t size,
                                      std::size_t alignment, int device);

//! The same for one pointer, on the current device.
void require_device_pointer(const void* ptr, std::size_t count, std::size_t alignment,
                            const char* name);

}  // namespace reducelab::detail

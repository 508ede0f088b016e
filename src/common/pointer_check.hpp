#pragma once
// Validation of user pointers before anything is launched, so a bad argument is a clear
// reducelab::Error and never a kernel fault that would poison the CUDA context.

#include <cstddef>
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

//! Every data pointer of a list of `count` tensors (tensors.hpp) of nonzero size, as
//! require_device_pointers, named "tensors[i].data" in messages. The device is asked once per
//! allocation: a pointer inside the allocation of the last one asked about is not asked again.
//! `alignment` is a power of two (an element's size).
void require_device_tensors(const TensorSpan* tensors, std::size_t count, std::size_t alignment,
                            int device);

//! The same for one pointer, on the current device.
void require_device_pointer(const void* ptr, std::size_t count, std::size_t alignment,
                            const char* name);

}  // namespace reducelab::detail

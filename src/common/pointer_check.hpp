#pragma once
// Validation of user pointers before anything is launched, so a bad argument is a clear
// reducelab::Error and never a kernel fault that would poison the CUDA context.

#include <cstddef>

namespace reducelab::detail {

//! Throws reducelab::Error unless `ptr` is usable as device input/output of `count` elements of
//! `alignment` bytes on the current device: non-null when count > 0, aligned, and device or
//! managed memory of the current device (not host memory, pinned or pageable).
void require_device_pointer(const void* ptr, std::size_t count, std::size_t alignment,
                            const char* name);

}  // namespace reducelab::detail

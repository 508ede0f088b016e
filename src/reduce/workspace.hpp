#pragma once
// The device workspace the production reduce needs (a block counter, the per-block partials,
// the synchronous form's result slot; for the segmented reduce also the counters of groups of
// blocks and a flags word), owned by the library so the user never passes one.
//
// One workspace per (device, stream), created on first use and kept for the life of the process:
// calls on one stream are ordered by the stream, so they can share it; calls on different streams
// never do. A call made while its stream is being captured into a CUDA graph gets a fresh
// workspace whose lifetime is tied to the graph (a CUDA user object), so replays of that graph
// never share memory with calls outside it.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace reducelab::detail {

//! Largest grid the production kernel launches; the partials hold one 16-byte value per block.
inline constexpr unsigned kMaxGrid = 8192;
inline constexpr std::size_t kPartialBytes = 16;
//! The partials region holds this many 16-byte slots: kMaxGrid for the production reduce and the
//! segmented reduce, all of them for the strided axis kernel, whose blocks that split a reduction
//! keep one partial per result they compute (axis_plan.hpp), up to kAxisPartialBytes.
inline constexpr std::size_t kPartialSlots = 32768;
static_assert(kPartialSlots >= kMaxGrid);
//! The strided axis kernel's split partials (one per result per split) may fill this much of the
//! partials region, 2 MB; every other user plans with kPartialSlots x kPartialBytes. With 512 KB,
//! var's 20-byte partials limited 32,768 x 4,096 columns to 6 splits (192 blocks where the GPU
//! holds 528): 210 us against sum's 128 (session 15, H200).
inline constexpr std::size_t kAxisPartialBytes = 2 << 20;
static_assert(kAxisPartialBytes >= kPartialSlots * kPartialBytes);
//! The block counter, alone in its 128-byte line, then the segmented reduce's flags word in the
//! next line.
inline constexpr std::size_t kHeaderBytes = 256;
inline constexpr std::size_t kSegmentFlagsOffset = 128;
//! The segmented reduce's group counters (one per group of blocks that share a segment), after
//! the header and before the partials.
inline constexpr std::size_t kGroupCounterBytes = kMaxGrid * sizeof(unsigned int);

//! Pinned host buffers that carry a list's table to the device (tensors.hpp) outside graph
//! capture, used in turn: a buffer is refilled only after the copy that last read it has run, so
//! the host may run kSlots list calls ahead of the stream before it waits. The copies are queued
//! on the workspace's one stream, so when one has run, every earlier one has too: `done` is the
//! newest copy known to have run, and a buffer whose last copy is not newer than it is reused
//! without asking the driver (an event query costs ~1.4 us of host time on the H200 machine,
//! session 28; on an idle stream one is asked about once every kSlots calls). 8 buffers were no
//! faster than 4 in session 29's host-time diagnostic.
struct TableStaging {
  static constexpr int kSlots = 4;
  struct Slot {
    void* host = nullptr;
    std::size_t capacity = 0;
    cudaEvent_t copied = nullptr;  // recorded after the copy that last read `host`
    std::uint64_t copy = 0;        // that copy's number (1, 2, ...; 0: none yet)
  };
  Slot slots[kSlots];
  std::uint64_t copies = 0;  // copies queued so far
  std::uint64_t done = 0;    // every copy up to this number has run
  std::mutex mutex;
};

//! The next staging buffer of a TableStaging, held (with the staging's lock) from
//! acquire_staging until copy_from_staging queues its copy, or until it is dropped (a failed
//! call: nothing queued, the buffer is used by the next call).
struct StagingLease {
  std::unique_lock<std::mutex> lock;
  TableStaging::Slot* slot = nullptr;
  void* host() const { return slot->host; }
};

//! Layout: header (kHeaderBytes) | group counters (kGroupCounterBytes) | partials. The header
//! and the counters are zero between calls (each kernel that uses a word resets it) and are
//! zeroed when a workspace is created, and at the start of every replay of a graph's own.
struct WorkspaceView {
  int device = 0;                     //!< the device the workspace lives on (current at the call)
  unsigned int* d_counter = nullptr;  //!< zero between calls: the last block resets it
  //! Segmented reduce, ragged segments: what the first kernel saw (segmented.cuh), reset by the
  //! last block of the second.
  unsigned int* d_segment_flags = nullptr;
  unsigned int* d_group_counters = nullptr;  //!< kMaxGrid counters, each reset by its last member
  void* d_partials = nullptr;         //!< kPartialSlots x kPartialBytes
  //! 16 bytes of pinned host memory mapped into the device: the synchronous form's kernel writes
  //! its result here, so no copy follows the kernel. Null in a graph's workspace.
  void* h_result = nullptr;
  void* d_result = nullptr;           //!< the device address of h_result
  std::mutex* sync_mutex = nullptr;   //!< held by a synchronous call from launch to read-back
  TableStaging* staging = nullptr;    //!< null in a graph's workspace
};

//! The workspace for calls on `stream` on `device`, the current device. Thread-safe; after the
//! first call on a (device, stream) a thread finds it without taking a lock.
WorkspaceView workspace_for(cudaStream_t stream, bool capturing, int device);

//! The next staging buffer of `staging`, at least `bytes` long and free to write: its previous
//! copy has run (known from `done`, else from the newest copy's event, else waited for).
//! Allocates pinned memory only when the buffer is smaller than `bytes`.
StagingLease acquire_staging(TableStaging& staging, std::size_t bytes);

//! Queues the copy of the lease's first `bytes` bytes to device memory d_dst on `stream` (the
//! staging's workspace's stream), records its event and releases the lease.
void copy_from_staging(TableStaging& staging, StagingLease& lease, void* d_dst, std::size_t bytes,
                       cudaStream_t stream);


}  // namespace reducelab::detail

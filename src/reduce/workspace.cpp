#include "reduce/workspace.hpp"

#include "reduce/scratch.hpp"

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/driver_api.hpp"

#include "reducelab/reduce.hpp"

namespace reducelab {
namespace detail {
namespace {

// The part that must be zero before a call: the header and the group counters.
constexpr std::size_t kZeroedBytes = kHeaderBytes + kGroupCounterBytes;
constexpr std::size_t kWorkspaceBytes = kZeroedBytes + kAxisPartialBytes;
constexpr std::size_t kResultBytes = 16;

struct Workspace {
  void* memory = nullptr;
  void* h_result = nullptr;
  void* d_result = nullptr;
  std::mutex sync_mutex;
  TableStaging staging;
};

WorkspaceView view_of(int device, void* memory, Workspace* owner) {
  auto* base = static_cast<unsigned char*>(memory);
  WorkspaceView view;
  view.device = device;
  view.d_counter = reinterpret_cast<unsigned int*>(base);
  view.d_segment_flags = reinterpret_cast<unsigned int*>(base + kSegmentFlagsOffset);
  view.d_group_counters = reinterpret_cast<unsigned int*>(base + kHeaderBytes);
  view.d_partials = base + kZeroedBytes;
  if (owner != nullptr) {
    view.h_result = owner->h_result;
    view.d_result = owner->d_result;
    view.sync_mutex = &owner->sync_mutex;
    view.staging = &owner->staging;
  }
  return view;
}

// Lets this thread allocate or free while some stream, on any thread, is being captured in
// global mode (where cudaMalloc/cudaFree would otherwise be refused); restores the mode after.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { (void)cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { (void)cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

struct Registry {
  std::mutex mutex;
  std::map<std::pair<int, unsigned long long>, std::unique_ptr<Workspace>> by_stream;
  std::vector<void*> released_by_graphs;  // freed at the next call: user-object destructors
                                          // must not call CUDA themselves
  std::atomic<unsigned> pending{0};       // released_by_graphs.size(), read without the lock
  std::atomic<unsigned> generation{0};    // bumped when workspaces are freed: thread caches
                                          // filled before then are stale
};

Registry& registry() {
  // Never destroyed: workspaces live as long as the process, and freeing device memory during
  // static destruction (after the CUDA runtime may have shut down) would fail.
  static Registry* instance = new Registry();
  return *instance;
}

void release_graph_workspace(void* memory) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.released_by_graphs.push_back(memory);
  r.pending.store(static_cast<unsigned>(r.released_by_graphs.size()), std::memory_order_release);
}

void free_released(Registry& r) {
  if (r.released_by_graphs.empty()) return;
  RelaxedCaptureMode relaxed;
  for (void* memory : r.released_by_graphs) (void)cudaFree(memory);
  r.released_by_graphs.clear();
  r.pending.store(0, std::memory_order_release);
}

// A thread remembers where it found a workspace until release_workspace(s) bumps the registry's
// generation (which only happens while no call on the released streams is in flight).
struct CachedWorkspace {
  int device = -1;
  unsigned long long stream_id = 0;
  unsigned generation = 0;
  Workspace* workspace = nullptr;
};
constexpr std::size_t kThreadCache = 8;
thread_local std::array<CachedWorkspace, kThreadCache> t_cache{};
thread_local std::size_t t_next = 0;

Workspace* find_cached(int device, unsigned long long stream_id, unsigned generation) {
  for (const CachedWorkspace& c : t_cache)
    if (c.workspace != nullptr && c.device == device && c.stream_id == stream_id &&
        c.generation == generation)
      return c.workspace;
  return nullptr;
}

void free_workspace(Workspace& workspace) {
  RelaxedCaptureMode relaxed;
  for (TableStaging::Slot& slot : workspace.staging.slots) {
    if (slot.host != nullptr) (void)cudaFreeHost(slot.host);
    if (slot.copied != nullptr) (void)cudaEventDestroy(slot.copied);
  }
  (void)cudaFreeHost(workspace.h_result);
  (void)cudaFree(workspace.memory);
}

WorkspaceView graph_workspace(cudaStream_t stream, int device) {
  void* memory = nullptr;
  {
    RelaxedCaptureMode relaxed;
    REDUCELAB_CUDA_CHECK(cudaMalloc(&memory, kWorkspaceBytes));
  }
  // Captured as a memset node: every replay of the graph starts from zero counters and flags.
  REDUCELAB_CUDA_CHECK(cudaMemsetAsync(memory, 0, kZeroedBytes, stream));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  REDUCELAB_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph));
  cudaUserObject_t owner = nullptr;
  REDUCELAB_CUDA_CHECK(cudaUserObjectCreate(&owner, memory, release_graph_workspace, 1,
                                            cudaUserObjectNoDestructorSync));
  REDUCELAB_CUDA_CHECK(cudaGraphRetainUserObject(graph, owner, 1, cudaGraphUserObjectMove));
  return view_of(device, memory, nullptr);
}

std::unique_ptr<Workspace> new_workspace(cudaStream_t stream) {
  auto workspace = std::make_unique<Workspace>();
  {
    RelaxedCaptureMode relaxed;
    REDUCELAB_CUDA_CHECK(cudaMalloc(&workspace->memory, kWorkspaceBytes));
    const cudaError_t status =
        cudaHostAlloc(&workspace->h_result, kResultBytes, cudaHostAllocMapped);
    if (status != cudaSuccess) {
      (void)cudaFree(workspace->memory);
      throw_cuda_error(status, "cudaHostAlloc(result slot)");
    }
  }
  cudaError_t status = cudaHostGetDevicePointer(&workspace->d_result, workspace->h_result, 0);
  const char* call = "cudaHostGetDevicePointer(result slot)";
  if (status == cudaSuccess) {
    // Ordered before the first kernel on this stream, the only stream that uses it.
    status = cudaMemsetAsync(workspace->memory, 0, kZeroedBytes, stream);
    call = "cudaMemsetAsync(workspace header)";
  }
  if (status != cudaSuccess) {
    RelaxedCaptureMode relaxed;
    (void)cudaFreeHost(workspace->h_result);
    (void)cudaFree(workspace->memory);
    throw_cuda_error(status, call);
  }
  return workspace;
}

// ---- the scratch pools (scratch.hpp)

struct ScratchPools {
  std::mutex mutex;
  std::map<int, cudaMemPool_t> by_device;
};

ScratchPools& scratch_pools() {
  static ScratchPools* instance = new ScratchPools();  // never destroyed, as the registry
  return *instance;
}

}  // namespace

cudaMemPool_t scratch_pool(int device) {
  ScratchPools& pools = scratch_pools();
  std::lock_guard<std::mutex> lock(pools.mutex);
  const auto found = pools.by_device.find(device);
  if (found != pools.by_device.end()) return found->second;
  RelaxedCaptureMode relaxed;  // the first use may come while some stream is captured
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  REDUCELAB_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  std::uint64_t keep = kScratchKeepBytes;
  const cudaError_t status = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  if (status != cudaSuccess) {
    (void)cudaMemPoolDestroy(pool);
    throw_cuda_error(status, "cudaMemPoolSetAttribute");
  }
  pools.by_device.emplace(device, pool);
  return pool;
}

void trim_scratch_pools() {
  ScratchPools& pools = scratch_pools();
  std::lock_guard<std::mutex> lock(pools.mutex);
  for (const auto& entry : pools.by_device)
    REDUCELAB_CUDA_CHECK(cudaMemPoolTrimTo(entry.second, 0));
}

Scratch::Scratch(std::uint64_t bytes, int device, cudaStream_t stream) : stream_(stream) {
  if (bytes == 0) return;
  REDUCELAB_CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&memory_), bytes,
                                               scratch_pool(device), stream));
}

Scratch::~Scratch() {
  if (memory_ != nullptr) (void)cudaFreeAsync(memory_, stream_);
}

WorkspaceView workspace_for(cudaStream_t stream, bool capturing, int device) {
  if (capturing) return graph_workspace(stream, device);

  Registry& r = registry();
  const unsigned long long id = stream_id(stream);
  const unsigned generation = r.generation.load(std::memory_order_acquire);
  if (r.pending.load(std::memory_order_acquire) == 0) {
    if (Workspace* cached = find_cached(device, id, generation))
      return view_of(device, cached->memory, cached);
  }
  std::lock_guard<std::mutex> lock(r.mutex);
  free_released(r);
  auto& slot = r.by_stream[{device, id}];
  if (!slot) slot = new_workspace(stream);
  const unsigned current = r.generation.load(std::memory_order_relaxed);
  if (find_cached(device, id, current) == nullptr)
    t_cache[t_next++ % kThreadCache] = {device, id, current, slot.get()};
  return view_of(device, slot->memory, slot.get());
}

StagingLease acquire_staging(TableStaging& staging, std::size_t bytes) {
  StagingLease lease{std::unique_lock<std::mutex>(staging.mutex), nullptr};
  TableStaging::Slot& slot = staging.slots[staging.copies % TableStaging::kSlots];
  if (slot.copied == nullptr) {
    REDUCELAB_CUDA_CHECK(cudaEventCreateWithFlags(&slot.copied, cudaEventDisableTiming));
  } else if (slot.copy > staging.done) {
    // The newest copy first: when it has run, so has every copy before it, and the next kSlots
    // calls reuse their buffers without asking. Else wait for this buffer's own copy.
    const TableStaging::Slot& newest =
        staging.slots[(staging.copies + TableStaging::kSlots - 1) % TableStaging::kSlots];
    const cudaError_t status = cudaEventQuery(newest.copied);
    if (status == cudaSuccess) {
      staging.done = newest.copy;
    } else if (status == cudaErrorNotReady) {
      REDUCELAB_CUDA_CHECK(cudaEventSynchronize(slot.copied));
      staging.done = slot.copy;
    } else {
      throw_cuda_error(status, "cudaEventQuery(table staging)");
    }
  }
  if (slot.capacity < bytes) {
    RelaxedCaptureMode relaxed;
    if (slot.host != nullptr) REDUCELAB_CUDA_CHECK(cudaFreeHost(slot.host));
    slot.host = nullptr;
    slot.capacity = 0;
    std::size_t capacity = std::size_t{1} << 16;
    while (capacity < bytes) capacity *= 2;
    REDUCELAB_CUDA_CHECK(cudaHostAlloc(&slot.host, capacity, cudaHostAllocDefault));
    slot.capacity = capacity;
  }
  lease.slot = &slot;
  return lease;
}

void copy_from_staging(TableStaging& staging, StagingLease& lease, void* d_dst, std::size_t bytes,
                       cudaStream_t stream) {
  TableStaging::Slot& slot = *lease.slot;
  REDUCELAB_CUDA_CHECK(cudaMemcpyAsync(d_dst, slot.host, bytes, cudaMemcpyHostToDevice, stream));
  // The buffer is taken from here on: should the record fail, the next call waits for the whole
  // stream instead (a copy number no event vouches for is never counted as done).
  slot.copy = ++staging.copies;
  const cudaError_t status = cudaEventRecord(slot.copied, stream);
  if (status != cudaSuccess) {
    (void)cudaStreamSynchronize(stream);
    staging.done = slot.copy;
    lease.lock.unlock();
    throw_cuda_error(status, "cudaEventRecord(table staging)");
  }
  lease.lock.unlock();
}

}  // namespace detail

void release_workspace(cudaStream_t stream) {
  using namespace detail;
  const int device = current_device();
  const unsigned long long id = stream_id(stream);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  free_released(r);
  const auto found = r.by_stream.find({device, id});
  if (found == r.by_stream.end()) return;
  // Work queued on the stream may still use the workspace.
  REDUCELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  free_workspace(*found->second);
  r.by_stream.erase(found);
  r.generation.fetch_add(1, std::memory_order_acq_rel);
}

void release_workspaces() {
  using namespace detail;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  free_released(r);
  if (r.by_stream.empty()) return;
  // The streams themselves may be gone: wait for each device that has workspaces instead.
  const int current = current_device();
  int synced = -1;
  for (const auto& entry : r.by_stream) {
    const int device = entry.first.first;
    if (device == synced) continue;
    REDUCELAB_CUDA_CHECK(cudaSetDevice(device));
    const cudaError_t status = cudaDeviceSynchronize();
    (void)cudaSetDevice(current);
    if (status != cudaSuccess) throw_cuda_error(status, "cudaDeviceSynchronize");
    synced = device;
  }
  trim_scratch_pools();
  for (auto& entry : r.by_stream) free_workspace(*entry.second);
  r.by_stream.clear();
  r.generation.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace reducelab

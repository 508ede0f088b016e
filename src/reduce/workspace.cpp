#include "reduce/workspace.hpp"

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "common/cuda_check.hpp"

namespace reducelab::detail {
namespace {

constexpr std::size_t kHeaderBytes = 256;  // counter at 0, result slot at 128
constexpr std::size_t kWorkspaceBytes = kHeaderBytes + kMaxGrid * kPartialBytes;

struct Workspace {
  void* memory = nullptr;
  std::mutex sync_mutex;
};

WorkspaceView view_of(void* memory, std::mutex* mutex) {
  auto* base = static_cast<unsigned char*>(memory);
  return {reinterpret_cast<unsigned int*>(base), base + kHeaderBytes, base + 128, mutex};
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
}

void free_released(Registry& r) {
  if (r.released_by_graphs.empty()) return;
  RelaxedCaptureMode relaxed;
  for (void* memory : r.released_by_graphs) (void)cudaFree(memory);
  r.released_by_graphs.clear();
}

}  // namespace

bool is_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  REDUCELAB_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

WorkspaceView workspace_for(cudaStream_t stream, bool capturing) {
  Registry& r = registry();
  if (capturing) {
    void* memory = nullptr;
    {
      RelaxedCaptureMode relaxed;
      REDUCELAB_CUDA_CHECK(cudaMalloc(&memory, kWorkspaceBytes));
    }
    // Captured as a memset node: every replay of the graph starts from a zero counter.
    REDUCELAB_CUDA_CHECK(cudaMemsetAsync(memory, 0, sizeof(unsigned int), stream));
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    cudaGraph_t graph = nullptr;
    REDUCELAB_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph));
    cudaUserObject_t owner = nullptr;
    REDUCELAB_CUDA_CHECK(cudaUserObjectCreate(&owner, memory, release_graph_workspace, 1,
                                              cudaUserObjectNoDestructorSync));
    REDUCELAB_CUDA_CHECK(cudaGraphRetainUserObject(graph, owner, 1, cudaGraphUserObjectMove));
    return view_of(memory, nullptr);
  }

  int device = 0;
  REDUCELAB_CUDA_CHECK(cudaGetDevice(&device));
  unsigned long long stream_id = 0;
  REDUCELAB_CUDA_CHECK(cudaStreamGetId(stream, &stream_id));
  std::lock_guard<std::mutex> lock(r.mutex);
  free_released(r);
  auto& slot = r.by_stream[{device, stream_id}];
  if (!slot) {
    auto workspace = std::make_unique<Workspace>();
    {
      RelaxedCaptureMode relaxed;
      REDUCELAB_CUDA_CHECK(cudaMalloc(&workspace->memory, kWorkspaceBytes));
    }
    // Ordered before the first kernel on this stream, the only stream that uses it.
    REDUCELAB_CUDA_CHECK(cudaMemsetAsync(workspace->memory, 0, kHeaderBytes, stream));
    slot = std::move(workspace);
  }
  return view_of(slot->memory, &slot->sync_mutex);
}

}  // namespace reducelab::detail

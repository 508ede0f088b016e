// The many-tensor reduce's runtime-typed entry point (include/reducelab/tensors.hpp): validate
// the list before anything is launched, build its table on the host, and launch the typed
// kernels (segmented.cuh).

#include "reducelab/tensors.hpp"

#include <limits>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/driver_api.hpp"
#include "common/pointer_check.hpp"
#include "reduce/launch.hpp"
#include "reduce/reproducible.hpp"
#include "reduce/segment_plan.hpp"
#include "reduce/tensor_table.hpp"
#include "reduce/validate.hpp"
#include "reduce/workspace.hpp"

namespace reducelab {

void reduce_tensors(Reduction r, DType dtype, const TensorSpan* tensors, std::size_t count,
                    void* d_out, void* d_total, cudaStream_t stream) {
  using namespace detail;
  require_valid_op(r, dtype, nullptr);
  require_determinism(r, dtype, "reduce_tensors");
  if (info(r.op).inputs != 1)
    reject(std::string(info(r.op).name) +
           " reads two arrays; a list of tensors takes the ops that read one");
  if (count > std::numeric_limits<unsigned>::max())
    reject("a list of " + std::to_string(count) + " tensors: at most 2^32 - 1 in one call");
  if (count > 0 && tensors == nullptr) reject("the list of tensors is null but count > 0");
  if (count == 0 && d_total == nullptr) return;  // nothing to write
  const std::size_t element = size_of(dtype);
  // The table: each tensor's place in the concatenation. Kept per thread, so a call allocates
  // host memory only when its list is longer than any before on this thread.
  static thread_local std::vector<TableEntry> entries;
  entries.resize(count);
  const std::uint64_t max_elements = (std::uint64_t{1} << 62) / element;
  std::uint64_t total = 0;
  ListShape shape;
  for (std::size_t i = 0; i < count; ++i) {
    (tensors[i].size < kBlockSegmentMin ? shape.any_short : shape.any_long) = true;
    if (tensors[i].size > max_elements - total)
      reject("the tensors' lengths add up past 2^62 bytes (at tensors[" + std::to_string(i) + "])");
    entries[i] = {tensors[i].data, static_cast<std::int64_t>(total)};
    total += tensors[i].size;
  }
  const int device = current_device();
  const std::size_t alignment = result_alignment(r.op, dtype);
  require_device_pointers({{d_out, count, alignment, "out"},
                           {d_total, std::size_t{d_total == nullptr ? 0u : 1u}, alignment, "total"}},
                          device);
  require_device_tensors(tensors, count, element, device);
  const WorkspaceView workspace = workspace_for(stream, is_capturing(stream), device);
  dispatch_dtype(dtype, [&](auto value) {
    using T = decltype(value);
    if (count == 0) {  // the empty list's total: one empty segment
      launch_fixed_segments<T>(r, nullptr, nullptr, 1, 0, 0, d_total, 1, workspace, stream);
    } else {
      launch_tensors<T>(r, entries.data(), count, total, shape, d_out, d_total, workspace, stream);
    }
  });
}

}  // namespace reducelab

#pragma once
// The gpu_to_gpu mode's launcher (reproducible.cu) and its test hook. The order it computes is
// in reproducible_plan.hpp; the kernel in reproducible.cuh.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "reduce/workspace.hpp"
#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"

namespace reducelab::detail {

//! Whether `r` on `dtype` gives the same bits whatever the order of its elements: every op on
//! the integer types (exact, wrapping sums), and min, max, argmin, argmax, aminmax,
//! count_nonzero, any, all and norm of ord 0, inf and -inf on every type. Such calls take the
//! default kernels in the gpu_to_gpu mode too.
bool order_free(const Reduction& r, DType dtype);

//! Whether the whole-array reduce has a fixed-order kernel for `r` on `dtype`: sum, dot, mean,
//! var, std, var_mean, std_mean, logsumexp and norm of ord 1 and 2 of f32, f64, f16 and bf16.
bool has_fixed_order(const Reduction& r, DType dtype);

//! Whether `r` is one of the statistics that launch_reproducible_stats computes (var, std,
//! var_mean, std_mean, logsumexp, norm of ord 1 and 2), rather than sum, dot or mean.
bool is_reproducible_statistic(const Reduction& r);

//! Throws reducelab::Error when `r` asks for gpu_to_gpu and `form` ("reduce", "reduce_axes",
//! "reduce_segments", "reduce_tensors") cannot give it for `r` on `dtype`.
void require_determinism(const Reduction& r, DType dtype, const char* form);

//! Launches the fixed-order sum, dot or mean (r.op) of x[0, n) (and y) of floating T, n >= 1.
template <class T>
void launch_reproducible(const Reduction& r, const T* x, const T* y, std::size_t n, void* d_out,
                         const WorkspaceView& workspace, cudaStream_t stream);

//! Launches the fixed-order statistic r (is_reproducible_statistic) of x[0, n) of floating T,
//! n >= 1: one pass, the fixed-order sum of its term (f64's 2-norm: of its three candidate
//! terms), or var's and logsumexp's one pass (reproducible_stats.hpp). Honours the test hook
//! below.
template <class T>
void launch_reproducible_stats(const Reduction& r, const T* x, std::size_t n, void* d_out,
                               const WorkspaceView& workspace, cudaStream_t stream);

//! Whether a call of the axis or segmented form (or the whole-array one) takes the fixed order:
//! gpu_to_gpu, and `r` on `dtype` has one and is not order-free.
bool takes_fixed_order(const Reduction& r, DType dtype);

//! Launches the fixed-order r (has_fixed_order) over num_segments >= 1 segments of floating T
//! (reproducible_segments.cuh): fixed-size rows (offsets null: row s is x[s pitch, s pitch +
//! segment_size), its result at d_out + s out_stride results) or ragged ones (offsets: int64
//! when wide_offsets, else int32; out_stride 1). Each result is the whole-array gpu_to_gpu result
//! of its segment. The test hook below forces the kernels' grid (not their block size).
template <class T>
void launch_reproducible_segments(const Reduction& r, const T* x, const T* y,
                                  std::size_t num_segments, std::size_t segment_size,
                                  std::size_t pitch, const void* offsets, bool wide_offsets,
                                  void* d_out, std::size_t out_stride,
                                  const WorkspaceView& workspace, cudaStream_t stream);

struct AxisView;

//! Launches the fixed-order r (has_fixed_order) over a canonical strided view of floating T with
//! at least one result (reproducible_strided.hpp): each result the whole-array gpu_to_gpu result
//! of its reduced elements in row-major order of the reduced axes, written where the view's
//! output puts it.
template <class T>
void launch_reproducible_strided(const Reduction& r, const T* x, const T* y, const AxisView& view,
                                 void* d_out, const WorkspaceView& workspace, cudaStream_t stream);

//! For tests only: a grid and a block size the fixed-order kernel uses instead of its own
//! (0: the library's choice; block: 128, 256 or 512; the column kernel of a strided call takes
//! the grid as the blocks it aims at), and the bytes a strided call gathers per chunk (0:
//! kStridedGatherBytes; set, every strided call gathers). Not thread-safe; the results must not
//! change with it (that is what the tests check).
struct ReproducibleLaunch {
  unsigned grid = 0;
  int block = 0;
  std::uint64_t gather_bytes = 0;
  //! The whole-array sum, mean and dot's deal of the tiles (reproducible_kernel): 0 the
  //! library's choice, 1 contiguous runs per warp, 2 tile t to warp t mod W.
  int deal = 0;
  //! The runs' settle of the whole-array sum, mean and dot (reproducible_kernel): 0 the
  //! library's choice, 1 two levels of tickets, 2 one level wherever there are two groups.
  int settle = 0;
};
void set_reproducible_launch(ReproducibleLaunch launch);
ReproducibleLaunch reproducible_launch();

}  // namespace reducelab::detail

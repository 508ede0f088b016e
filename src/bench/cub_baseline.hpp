#pragma once
// NVIDIA CUB, the baseline every table is measured against: the same op on the same data, timed
// the same way, with its temporary storage allocated before timing.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "bench/axes.hpp"
#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"

namespace reducelab::bench {

class CubReduce {
 public:
  virtual ~CubReduce() = default;
  //! Reduces n elements of x (and y, for dot) into the harness's 16-byte result slot d_out
  //! (sum_t<T>, T, or T at 0 and the int64 index at 8).
  virtual void run(const void* d_x, const void* d_y, void* d_out, cudaStream_t stream) = 0;
  //! The CUB entry point, for the table.
  virtual std::string call() const = 0;
};

//! CUB's DeviceReduce for (op, dtype, n): Sum/Min/Max/ArgMin/ArgMax, TransformReduce where the
//! result type widens (f16/bf16 -> f32, 32-bit integers -> 64-bit, as reducelab does), and
//! TransformReduce over x[i]*y[i] for dot.
std::unique_ptr<CubReduce> make_cub_reduce(Op op, DType dtype, std::size_t n);

//! CUB's DeviceReduce for a statistic (op in kStatisticOps), writing reducelab's result layout
//! (result_size(r.op, dtype) bytes at d_out: stat_t<T>, StatPair, int64, bool or MinMax<T>), or
//! nullptr where the op does not take the dtype. Temporary storage is allocated here, before
//! timing.
std::unique_ptr<CubReduce> make_cub_statistic(const Reduction& r, DType dtype, std::size_t n);

class CubSegmentedReduce {
 public:
  virtual ~CubSegmentedReduce() = default;
  //! Reduces every segment of x (and y, for dot) into d_out, result_bytes() per segment.
  virtual void run(const void* d_x, const void* d_y, void* d_out, cudaStream_t stream) = 0;
  //! The CUB entry point, for the table.
  virtual std::string call() const = 0;
  //! Bytes of one segment's result in CUB's layout (KeyValuePair<int, T> for argmin/argmax).
  virtual std::size_t result_bytes() const = 0;
  //! Copies segment s's result from `results` (host copy of d_out) into a 16-byte slot in the
  //! layout check_result() reads (sum_t<T>, T, or T at 0 and the int64 index at 8).
  virtual void to_slot(const unsigned char* results, std::size_t s, unsigned char* slot) const = 0;
};

//! CUB's DeviceSegmentedReduce for (op, dtype): Sum/Min/Max/ArgMin/ArgMax, Reduce over a widening
//! transform where the result type widens, and Reduce over x[i]*y[i] for dot. Segments are
//! num_segments rows of segment_size elements when d_offsets is null, else the num_segments + 1
//! int64 device offsets. Offsets reach CUB through one iterator type for both (a counting
//! iterator mapped to s x segment_size or to d_offsets[s]), so each (op, dtype) is one
//! instantiation. Temporary storage is allocated here, before any timing.
std::unique_ptr<CubSegmentedReduce> make_cub_segmented_reduce(Op op, DType dtype,
                                                              std::size_t num_segments,
                                                              std::size_t segment_size,
                                                              const std::int64_t* d_offsets);

//! The same reductions over an axis view that is not rows (columns, a middle axis, several axes):
//! `results` segments of walk.reduced_count elements, CUB reading x (and y) through a transform
//! of a counting iterator that maps the segment-major index to the strided element
//! (AxisWalk::offset), the offsets a counting iterator times walk.reduced_count. The way CuPy
//! hands a non-contiguous axis to CUB; call() says "(strided iterator)".
std::unique_ptr<CubSegmentedReduce> make_cub_strided_reduce(Op op, DType dtype,
                                                            const AxisWalk& walk,
                                                            std::size_t results);

#if REDUCELAB_HAVE_CCCL_FIXED
//! The same reductions over num_segments rows of segment_size elements through the fixed-size
//! overloads of a newer CCCL's DeviceSegmentedReduce (CCCL >= 3.2: num_segments and an int
//! segment_size instead of offsets; ArgMin/ArgMax write cuda::std::pair<int, T>), compiled
//! against the headers of REDUCELAB_CCCL_INCLUDE, not the toolkit's. Throws reducelab::Error
//! (invalid_argument) when segment_size exceeds INT_MAX. call() says "(fixed size, CUB 3.6.0)".
std::unique_ptr<CubSegmentedReduce> make_cub_fixed_segmented_reduce(Op op, DType dtype,
                                                                    std::size_t num_segments,
                                                                    std::size_t segment_size);

//! The name of its rows, "CUB 3.6 fixed": major.minor of that CCCL's CUB_VERSION.
std::string cub_fixed_impl();

//! Whether that CCCL's DeviceReduce gives gpu_to_gpu determinism for `op` on `dtype` (the float
//! and double sum; CUB rejects the rest at compile time or falls back to run_to_run).
bool cub_gpu_to_gpu_supports(Op op, DType dtype);
//! Its DeviceReduce::Sum with cuda::execution::require(determinism::gpu_to_gpu) (CCCL >= 3.1,
//! the environment API), f32 or f64.
std::unique_ptr<CubReduce> make_cub_gpu_to_gpu_sum(DType dtype, std::size_t n);
//! The name of its rows, "CUB 3.6 gpu_to_gpu".
std::string cub_gpu_to_gpu_impl();
#endif

}  // namespace reducelab::bench

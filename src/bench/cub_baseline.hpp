#pragma once
// NVIDIA CUB, the baseline every table is measured against: the same op on the same data, timed
// the same way, with its temporary storage allocated before timing.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

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

}  // namespace reducelab::bench

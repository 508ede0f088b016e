#pragma once
//! \file reproducible.hpp
//! The gpu_to_gpu determinism mode (Determinism in op.hpp, issue 14), and the CPU functions that
//! compute its results bit for bit on any machine.
//!
//!     float s = 0;
//!     reducelab::reduce_to_host(reducelab::Reduction(reducelab::Op::sum).reproducible(),
//!                               reducelab::DType::f32, d_x, nullptr, n, &s);
//!     assert(s == reducelab::reproducible_sum_cpu(h_x, n));  // same bits
//!
//! What is guaranteed. For the same input values (the same n and the same elements, bit for bit)
//! and the same reducelab version, the whole-array sum, dot and mean of f32, f64, f16 and bf16 in
//! the gpu_to_gpu mode give the same bits on any GPU (any SM count, occupancy or architecture),
//! with any grid or block size, at any offset of the pointers in memory (d_x and d_y need only be
//! element-aligned, and need not share an offset), on any stream, and they equal what
//! reproducible_reduce_cpu computes. The order of the additions is fixed in index space
//! (src/reduce/reproducible_plan.hpp describes it): lanes of P = 32 x (16 / sizeof(T)) elements
//! summed sequentially inside tiles of P x K elements (K a power of two >= 4 that depends on n
//! only), then complete binary trees of adjacent pairs over the lanes of a tile and over the
//! tiles. Every operation is one IEEE round-to-nearest addition or multiplication in sum_t<T>
//! (f32 for f16 and bf16), never a fused multiply-add, and subnormals are kept.
//! - A NaN result is the canonical NaN (0x7fffffff, 0x7fffffffffffffff), whatever the NaNs in the
//!   input: the payload of a NaN is not part of the promise. -0 and +0 follow IEEE addition (a sum
//!   of only -0.0 is -0.0, as in the default mode).
//! - Integer results and min, max, argmin, argmax, aminmax, count_nonzero, any and all, and the
//!   norm of ord 0, inf and -inf, do not depend on the order at all: they are the same bits in
//!   both modes, on every GPU, in every form (whole arrays, axes, segments, lists), and the
//!   gpu_to_gpu mode runs the default kernels for them.
//!
//! What is not guaranteed.
//! - Across reducelab versions: a later version may choose another order (the tile size, say) and
//!   round differently. The version is in reducelab/version.hpp.
//! - Against other orders: the gpu_to_gpu result is in general not the run_to_run one, nor a
//!   sequential sum's, nor another library's.
//! - The values you pass: code of yours that computes the input with contracted multiply-adds, or
//!   another compiler or flags, may give other input bits; the promise starts at the input.
//! - Not yet (issue 14, left): var, std, var_mean, std_mean, norm of ord 1 and 2, logsumexp, and the
//!   axis, segmented and list forms of every floating op that is not order-free. They throw
//!   reducelab::Error in the gpu_to_gpu mode rather than give bits that would not repeat.
//!
//! Accuracy: with depth d = K - 1 + log2(P) + ceil(log2(tiles)) (+1 for dot's rounded products),
//! |result - exact| <= d u / (1 - d u) x sum |x_i| (dot: sum |x_i y_i|), u = 2^-24 for f32, f16
//! and bf16, 2^-53 for f64 (each element goes through at most d roundings), plus, for dot, n x
//! 2^-150 (f32, f16, bf16) or n x 2^-1075 (f64) where products underflow into the subnormals
//! (additions of subnormals are exact, products are not). For f32: d = 3 + 7 +
//! 1 = 11 at n = 1000, 3 + 7 + 15 = 25 at 2^22, 255 + 7 + 15 = 277 at 2^30 (1.7e-5 x sum |x_i|).
//! reproducible_error_bound(dtype, n) returns the bound's factor.
//!
//! Cost: the same bytes as the default mode (each input read once); the target is at most
//! 5% over the default at 2^24..2^30 and 1 us at 2^10..2^20 (docs/notebook/reproducible.md).

#include <cstddef>

#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"
#include "reducelab/types.hpp"

namespace reducelab {

//! The gpu_to_gpu result of r.op (sum, dot or mean) over host memory h_x[0, n) (and h_y for dot,
//! else null) of floating `dtype`, written to h_out (result_size(r.op, dtype) bytes): the same
//! bits the GPU gives. Throws reducelab::Error for another op or type.
void reproducible_reduce_cpu(Reduction r, DType dtype, const void* h_x, const void* h_y,
                             std::size_t n, void* h_out);

//! The factor of the accuracy bound above: |result - exact| <= factor x sum |x_i| for the sum of
//! n elements of floating `dtype` (dot: op = Op::dot, x sum |x_i y_i|).
double reproducible_error_bound(DType dtype, std::size_t n, Op op = Op::sum);

//! The gpu_to_gpu sum of host memory h_x[0, n).
template <class T>
sum_t<T> reproducible_sum_cpu(const T* h_x, std::size_t n) {
  sum_t<T> out{};
  reproducible_reduce_cpu(Op::sum, dtype_of<T>::value, h_x, nullptr, n, &out);
  return out;
}
//! The gpu_to_gpu dot of host memory h_x[0, n) and h_y[0, n).
template <class T>
sum_t<T> reproducible_dot_cpu(const T* h_x, const T* h_y, std::size_t n) {
  sum_t<T> out{};
  reproducible_reduce_cpu(Op::dot, dtype_of<T>::value, h_x, h_y, n, &out);
  return out;
}
//! The gpu_to_gpu mean of host memory h_x[0, n) (NaN for n == 0).
template <class T>
stat_t<T> reproducible_mean_cpu(const T* h_x, std::size_t n) {
  stat_t<T> out{};
  reproducible_reduce_cpu(Op::mean, dtype_of<T>::value, h_x, nullptr, n, &out);
  return out;
}

}  // namespace reducelab

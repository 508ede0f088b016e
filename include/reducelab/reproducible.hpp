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
//! and the same reducelab version, the whole-array sum, dot, mean, var, std, var_mean, std_mean,
//! logsumexp and norm of ord 1 and 2 (with the same correction) of f32, f64, f16 and bf16 in
//! the gpu_to_gpu mode give the same bits on any GPU (any SM count, occupancy or architecture),
//! with any grid or block size, at any offset of the pointers in memory (d_x and d_y need only be
//! element-aligned, and need not share an offset), on any stream, and they equal what
//! reproducible_reduce_cpu computes. The order of the additions is fixed in index space
//! (src/reduce/reproducible_plan.hpp describes it): lanes of P = 32 x (16 / sizeof(T)) elements
//! summed sequentially inside tiles of P x K elements (K a power of two >= 4 that depends on n
//! only), then complete binary trees of adjacent pairs over the lanes of a tile and over the
//! tiles. Every operation is one IEEE round-to-nearest addition or multiplication in sum_t<T>
//! (f32 for f16 and bf16), never a fused multiply-add, and subnormals are kept.
//! - The norms are each the fixed-order sum above of a term f(x_i), with scalar work before and
//!   after it, every step an IEEE round-to-nearest operation (src/reduce/reproducible_stats.hpp):
//!   norm ord 1: f = |x|; norm ord 2: f = x x (in double for f32 and bf16, whose squares are exact
//!   there and never overflow; for f64 f = (s x)^2 with s a power of two chosen from max |x|, so
//!   no square overflows or underflows: s is one of 2^-600, 1 and 2^600, and the GPU sums all
//!   three candidates in one pass beside the max, then keeps the one the max selects), then the
//!   correctly rounded square root. var, std,
//!   var_mean, std_mean are one pass in the same lanes and tiles: each lane takes its elements in
//!   batches of 4 steps, centred on its tile's first element (their mean and squared deviations
//!   from it), merged into the lane's group (count, mean, m2) and the lanes' groups in the tile's
//!   tree by Chan's formula; the tiles' groups merge in the tiles' tree, each merge moving the
//!   right group's mean to the left one's centre; var = m2 / max(0, n - correction) rounded to the
//!   accumulator, std its correctly rounded square root; the mean of var_mean and std_mean is the
//!   fixed-order sum over n (the same bits as Op::mean). (Until session 32, two passes: the mean,
//!   then the sum of (x - mean)^2.) logsumexp is one pass in the same lanes and
//!   tiles: each tile keeps a running max over batches of 4 steps (4 P elements), multiplies its
//!   lane sums by exp(old - new) where a batch raises it, and adds exp(x - max) of each element
//!   to its lane; a tile's pair (max, tree of its lane sums) merges with the others in the tiles'
//!   tree (the larger max keeps its sum, the other is scaled by exp(-|difference|)); the result
//!   is max + log(sum). The exp and the log are built from IEEE +, -, x, / and the fused
//!   multiply-add (one rounding; the GPU's expf/logf and the C library's differ between
//!   machines): exp within 1.1 ulp, log within 1 ulp (src/reduce/portable_math.hpp).
//! - Special values as the default mode: var and std of n <= correction elements are NaN (m2 = 0)
//!   or inf; a NaN element gives NaN; var of data with an infinity is NaN (x - inf); logsumexp is
//!   NaN with a NaN, +inf with a +inf, -inf for all -inf; norm is inf with an infinity. An empty
//!   input (n = 0) gives what the default mode gives (it reads nothing): NaN for var and std
//!   ({NaN, NaN} for the pairs), 0 for norm, -inf for logsumexp.
//! - A NaN result is the canonical NaN (0x7fffffff, 0x7fffffffffffffff), whatever the NaNs in the
//!   input: the payload of a NaN is not part of the promise. -0 and +0 follow IEEE addition (a sum
//!   of only -0.0 is -0.0, as in the default mode).
//! - Integer results and min, max, argmin, argmax, aminmax, count_nonzero, any and all, and the
//!   norm of ord 0, inf and -inf, do not depend on the order at all: they are the same bits in
//!   both modes, on every GPU, in every form (whole arrays, axes, segments, lists), and the
//!   gpu_to_gpu mode runs the default kernels for them.
//!
//! Segments and axes. reduce_segments (fixed-size rows and ragged int32/int64 offsets) and
//! reduce_axes where each result's reduced elements are one contiguous run in memory (rows,
//! sliced rows, the last axes of a contiguous tensor, the whole array) give, in the gpu_to_gpu
//! mode, for each result the bits of the whole-array gpu_to_gpu result of its segment alone:
//! reproducible_reduce_cpu(r, dtype, h_x + begin, h_y + begin, length, h_out + s) computes it.
//! So a row's result does not depend on the other rows, their number, where the row starts in
//! memory, or the kernel the shape picks (src/reduce/reproducible_segments.cuh). Strided axis
//! reductions (columns, a middle axis, a transposed view: each result's reduced elements not one
//! contiguous run) give each result the same: the whole-array gpu_to_gpu result of its reduced
//! elements taken in row-major order of the reduced axes, which is what the CPU function computes
//! over those elements copied out in that order (src/reduce/reproducible_strided.hpp). Every op
//! over one reduced axis whose results lie closer together than their elements (columns, a
//! middle axis) reads the input where it lies (src/reduce/reproducible_columns.cuh). Measured
//! on an H100 in session 36, against the default mode, over 32,768 x 4,096, 131,072 x 1,024,
//! 1,024 x 131,072 and 4,194,304 x 32 columns: sum, mean, dot and the 1- and 2-norms 0.99-1.11x
//! (f32, f64; f16 0.88-1.29x), f64's 2-norm ~2x (a first pass), var 1.16-2.23x (f64, f32; f16
//! 2.2-4.1x), logsumexp 1.6-2.3x (f64, f32; f16 2.9-4.3x); a middle axis of 256 f16 elements is
//! slower (sum 2.8x, var and logsumexp 11-13x). Reduced axes that are not one progression,
//! results further apart than their elements and outputs that are not one stride apart gather
//! the elements into rows of scratch (at most 256 MB at a time, or one row, from the library's
//! own memory pool), then read the rows: three times the bytes (var over 32,768 x 4,096 columns
//! gathered cost 4.2-6.2x).
//! Empty segments
//! give the default mode's results (segmented.hpp). A ragged call whose offsets decrease
//! somewhere reads that pair as an empty segment, as the default mode does, and the other
//! segments keep their bits.
//!
//! What is not guaranteed.
//! - Across reducelab versions: a later version may choose another order (the tile size, say) and
//!   round differently. The version is in reducelab/version.hpp.
//! - Against other orders: the gpu_to_gpu result is in general not the run_to_run one, nor a
//!   sequential sum's, nor another library's.
//! - The values you pass: code of yours that computes the input with contracted multiply-adds, or
//!   another compiler or flags, may give other input bits; the promise starts at the input.
//! - Not yet (issue 14, left): the list form (reduce_tensors) of every floating op that is not
//!   order-free. It throws reducelab::Error in the gpu_to_gpu mode rather than give bits that
//!   would not repeat. (norm takes ord 0, 1, 2, inf and -inf only, in both modes.)
//! - The bits of a statistic against the default mode's: the default var is Welford/Chan in one
//!   pass, logsumexp a running max with the hardware's exp; both are within their bounds of the
//!   exact value, not equal to each other.
//!
//! Accuracy: with depth d = K - 1 + log2(P) + ceil(log2(tiles)) (+1 for dot's rounded products),
//! |result - exact| <= d u / (1 - d u) x sum |x_i| (dot: sum |x_i y_i|), u = 2^-24 for f32, f16
//! and bf16, 2^-53 for f64 (each element goes through at most d roundings), plus, for dot, n x
//! 2^-150 (f32, f16, bf16) or n x 2^-1075 (f64) where products underflow into the subnormals
//! (additions of subnormals are exact, products are not). For f32: d = 3 + 7 +
//! 1 = 11 at n = 1000, 3 + 7 + 15 = 25 at 2^22, 255 + 7 + 15 = 277 at 2^30 (1.7e-5 x sum |x_i|).
//! reproducible_error_bound(dtype, n) returns the bound's factor, g = d u / (1 - d u).
//!
//! Accuracy of the statistics (u and d as above, u of the accumulator: 2^-24 for f32, f16, bf16,
//! 2^-53 for f64; g_k = k u / (1 - k u); tests/test_reproducible.cpp checks each against long
//! double):
//! - norm ord 1: |r - exact| <= g_d x sum |x_i| (|x| is exact), plus the final rounding u |r|
//!   for f16 and bf16 (none: the accumulator is the result type).
//! - norm ord 2: |r - exact| <= (g'/2 + u) x exact, g' = g_d in double (2^-53) for f32 and bf16
//!   (squares exact), g_d for f16 (squares exact in float), g_{d+1} for f64 (rounded squares;
//!   the scaled squares that underflow are those of elements under 2^-122 of max |x|, which move
//!   the result by less than n 2^-244 of it).
//! - var (one pass, Chan/Golub/LeVeque's pairwise merges of centred groups in the fixed order):
//!   with M2 the exact sum of (x_i - mean)^2 and C = sum over tiles t of sum_{i in t} (x_i -
//!   x_{first of t})^2 (the squares about the centres), |m2 - M2| <= g_{2d+10} (M2 + C) (first
//!   order), and var = m2 / divisor adds one rounding (u) and the divisor's (u, for n -
//!   correction > 2^24 in float). Every rounding is relative to the elements' distance from their
//!   tile's first element, not to the mean: C is about 2 M2 for any mean, however large against
//!   the spread (1e6 + N(0, 1) in f32), and grows only when a tile's first element lies far out.
//!   Measured on the CPU tests' inputs: |m2 - M2| <= 1.6 u (M2 + C). The mean of the pairs is the
//!   sum's (g_d sum |x_i| / n + u |mean|). std: half var's relative error plus u.
//! - logsumexp: |r - exact| <= g_{5d} + u ln n + 2 u ln(sum) + u |r| (absolute, first order;
//!   sum = the exact sum of exp(x_i - max)): each element's term has one exp (2.2 u relative: 1.1
//!   ulp) and goes through at most d additions (u) and at most K/4 + log2(tiles) rescalings (an
//!   exp and a product, 3.2 u), under 5 d u in all; the roundings of x_i - m and of the
//!   differences of the maxima add up to u (max - x_i) relative, whose weighted mean is at most
//!   ln n; log adds 2 u |ln(sum)|, the final addition u |r|. The max is exact.
//!
//! Cost: every op of the mode reads each input of a whole array once, as the default mode. (f64's
//! 2-norm since session 42: until then a first pass for max |x| doubled its bytes, 2.0-2.1x the
//! default's time at 2^23..2^30. Now, on an H100: f64's 2-norm 1.03x at 2^30, 1.08x at 2^27
//! (session 43: the scaled terms only where they can count), 1.22x at 2^24; f32's 1.03x, 1.07x,
//! 1.07x; bf16's 1.07x at 2^27 and 1.10-1.11x at 2^24.)
//! Measured on the H200 (docs/results/h200-reproducible.md, every figure with its session): sum
//! f32 +4% at 2^30, +6% at 2^27, +11% at 2^24, at most +1 us up to 2^20; var in one pass
//! (session 33) f32 1.27-1.32x at 2^24, 1.22-1.23x at 2^27, 1.04-1.05x at 2^30, f64 1.21x /
//! 1.08x / 0.96x, f16 1.4-1.6x, f16 var_mean about 2x (two passes were 1.8-2.1x); the f32
//! 2-norm (summed in double) 1.08-1.33x; logsumexp (an exp per element, compute-bound)
//! 1.20-1.41x for f32, 1.28-1.38x for f64, 1.95-2.15x for f16 at 2^24..2^30 (session 31).
//! Along rows and over segments, against the default on the same shape (2^27 elements, 90a96fa):
//! f32 sum -8..+10%, f32 dot -1..+8%, f64 dot -28..-1%, f64 sum +7..9% (rows of 256 and up) and
//! +46..53% (rows of 8 and 32); ragged lists +0..+88%. The same kernels at 7736f00: on an H100
//! (session 44) f64 sum along rows of 8 and 32 +14% and +20%, ragged lists +8..+59%; on the H200
//! (session 45) +37% and +44%, ragged lists +13..+90% (Nsight Compute: the short segments' kernel
//! bound by instruction issue, the long segments' kernel at 18% occupancy, the fold 40 us; vector
//! edge tiles for the ragged segments, measured there, doubled the cost). Session 31: sum along
//! 1,024-wide rows +3% (f32), +0% (f64), +28% (f16); logsumexp along them 1.51x (f32), 1.93x
//! (f16), 1.45x (f64), and over heavy-tailed ragged f32 segments 3.5x. Session 33, var:
//! 1,024-wide rows 1.45x (f32), 2.16x (f16), 1.80x (f64); rows of 32 f32 2.83x; heavy-tailed
//! ragged f32 2.99x.

#include <cstddef>

#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"
#include "reducelab/types.hpp"

namespace reducelab {

//! The gpu_to_gpu result of r (sum, dot, mean, var, std, var_mean, std_mean, logsumexp, or norm of
//! ord 1 or 2, with r.correction and r.ord) over host memory h_x[0, n) (and h_y for dot, else
//! null) of floating `dtype`, written to h_out (result_size(r.op, dtype) bytes): the same bits
//! the GPU gives. Throws reducelab::Error for another op, ord or type, or a bad correction.
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

//! The gpu_to_gpu var (correction as torch's) of host memory h_x[0, n).
template <class T>
stat_t<T> reproducible_var_cpu(const T* h_x, std::size_t n, double correction = 1) {
  stat_t<T> out{};
  reproducible_reduce_cpu(Reduction::var(correction), dtype_of<T>::value, h_x, nullptr, n, &out);
  return out;
}
//! The gpu_to_gpu norm of ord 1 or 2 of host memory h_x[0, n).
template <class T>
stat_t<T> reproducible_norm_cpu(const T* h_x, std::size_t n, double ord = 2) {
  stat_t<T> out{};
  reproducible_reduce_cpu(Reduction::norm(ord), dtype_of<T>::value, h_x, nullptr, n, &out);
  return out;
}
//! The gpu_to_gpu logsumexp of host memory h_x[0, n) (-inf for n == 0).
template <class T>
stat_t<T> reproducible_logsumexp_cpu(const T* h_x, std::size_t n) {
  stat_t<T> out{};
  reproducible_reduce_cpu(Op::logsumexp, dtype_of<T>::value, h_x, nullptr, n, &out);
  return out;
}

}  // namespace reducelab

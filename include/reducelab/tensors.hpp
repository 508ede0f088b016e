#pragma once
//! \file tensors.hpp
//! Many tensors in one call: one result per tensor of a list of (device pointer, length) pairs,
//! and optionally one total over all of them, e.g. the per-parameter 2-norms and the global norm
//! of gradient clipping:
//!
//!     std::vector<reducelab::TensorSpan> grads = {{d_w1, n1}, {d_b1, m1}, ...};
//!     reducelab::reduce_tensors(reducelab::Op::norm, reducelab::DType::f32, grads.data(),
//!                               grads.size(), d_norms, d_total_norm, stream);
//!
//! Every op that reads one array takes a list (sum, min, max, argmin, argmax and the statistics:
//! mean, var, std, var_mean, std_mean, norm, logsumexp, count_nonzero, any, all, aminmax); dot,
//! which reads two, does not. All tensors have the element type `dtype`. Results, types, NaN and
//! empty-tensor rules are those of segmented.hpp, a tensor being a segment: result i is
//! result_size(op, dtype) bytes at d_out + i x result_size, an empty tensor gets the empty
//! segment's result (sum 0, min +inf, argmax {-inf, -1}, mean NaN, ...), argmin/argmax give the
//! index within the tensor.
//!
//! The total (d_total not null) is the op over the concatenation of the tensors in list order:
//! the sum of all elements, their 2-norm (never the overflowing sum of the squared norms), their
//! mean and var over every element, the max of the maxes; argmin/argmax give the index in the
//! concatenation (tensor i's element j is at sizes[0] + ... + sizes[i - 1] + j). A list whose
//! tensors are all empty gets the empty-segment result as its total.
//!
//! How it runs: one pass over the list checks it and writes its table of (pointer, start in the
//! concatenation) into a pinned staging buffer the stream's workspace keeps (four, used in turn,
//! so the host waits only if it gets four list calls ahead of the stream), copied to the device
//! in one cudaMemcpyAsync; then the ragged segmented reduce reads it, at most two kernels however
//! many tensors there are: tensors shorter than 4,096 elements a thread or a warp each, longer
//! ones in equal slices of the concatenation spread over the whole GPU, so a few huge tensors
//! among many tiny ones still read at full bandwidth. The total is folded from the per-tensor
//! partial results by the last block, in a fixed order. A call captured into a CUDA graph sends
//! its table in the parameters of small upload kernels instead (1,024 entries each), so every
//! replay carries its own copy.
//!
//! Memory: the table (16 bytes per tensor, plus one partial result per tensor with a total) lies
//! in the stream's workspace (reduce.hpp) when it fits there, which it does up to roughly 10,000
//! tensors; a longer list takes it from CUDA's stream-ordered allocator (cudaMallocAsync, on the
//! device's default memory pool) and frees it on the stream at the end of the call. Either way
//! the call is stream-ordered, does not wait for the device (but for the staging rule above) and
//! may be captured into a CUDA graph; the host array `tensors` may be reused or freed as soon as
//! the call returns. The first call of a longer list than before on a stream allocates pinned
//! host memory for its staging buffer.
//!
//! Determinism: the order of operations depends only on the tensors' lengths and their offsets
//! inside a 16-byte line, the list's length and the GPU model, so the same call on the same GPU
//! model gives bitwise identical results. The gpu_to_gpu mode (reproducible.hpp) takes a list only
//! for the order-free ops (min, max, argmin, argmax, aminmax, the counts, and every integer op);
//! for the others it throws reducelab::Error.
//!
//! Errors: reducelab::Error, thrown before anything is launched: an invalid op or dtype, dot, a
//! tensor with a null pointer and a nonzero length, one not aligned to its element, in host
//! memory or on another device (checked once per allocation: tensors inside the allocation of
//! the one before them are not queried again), a list whose total length overflows, a null list
//! with count > 0, a null d_out with count > 0, an unaligned d_out or d_total. count == 0 writes
//! no per-tensor result and, with d_total, the empty total.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"
#include "reducelab/types.hpp"

namespace reducelab {

//! One tensor of a list: `size` elements at device address `data` (null allowed when size is 0).
struct TensorSpan {
  const void* data;
  std::size_t size;
};

//! Reduces each of tensors[0, count) into d_out[i] (result_size(r.op, dtype) bytes each) and,
//! when d_total is not null, all of them together into *d_total. Stream-ordered.
void reduce_tensors(Reduction r, DType dtype, const TensorSpan* tensors, std::size_t count,
                    void* d_out, void* d_total, cudaStream_t stream);

// Typed forms (T is named: `reducelab::norm_tensors<float>(list, count, d_norms, d_total, s)`).

//! Sum of each tensor (sum_t<T>) and, if d_total is not null, of all of them.
template <class T>
void sum_tensors(const TensorSpan* tensors, std::size_t count, sum_t<T>* d_out, sum_t<T>* d_total,
                 cudaStream_t stream) {
  reduce_tensors(Op::sum, dtype_of<T>::value, tensors, count, d_out, d_total, stream);
}

//! Norm of each tensor (ord 2 by default; 1, inf, -inf, 0) and, if d_total is not null, of all
//! of them: the global norm of gradient clipping.
template <class T>
void norm_tensors(const TensorSpan* tensors, std::size_t count, stat_t<T>* d_out,
                  stat_t<T>* d_total, cudaStream_t stream, double ord = 2) {
  reduce_tensors(Reduction::norm(ord), dtype_of<T>::value, tensors, count, d_out, d_total, stream);
}

//! Largest element of each tensor and, if d_total is not null, of all of them.
template <class T>
void max_tensors(const TensorSpan* tensors, std::size_t count, T* d_out, T* d_total,
                 cudaStream_t stream) {
  reduce_tensors(Op::max, dtype_of<T>::value, tensors, count, d_out, d_total, stream);
}

//! Smallest element of each tensor and, if d_total is not null, of all of them.
template <class T>
void min_tensors(const TensorSpan* tensors, std::size_t count, T* d_out, T* d_total,
                 cudaStream_t stream) {
  reduce_tensors(Op::min, dtype_of<T>::value, tensors, count, d_out, d_total, stream);
}

}  // namespace reducelab

#pragma once
// The strided axis kernel: reductions along any axes of a strided view that neither the scalar
// nor the segmented reduce can read (axis_plan.hpp says which): column reductions, a middle axis,
// several axes, views whose rows are not a fixed stride apart. One kernel for all of them,
// shaped by the plan:
//   - a block computes `columns` results with `lanes` threads each; a thread folds every
//     lanes-th reduced index of its result, in increasing order (so argmin/argmax keep the first
//     index with a strict comparison, as in the range agent), four loads in flight;
//   - the block's threads of a result combine through shared memory in a fixed tree;
//   - with `splits` > 1, gridDim.y blocks share the block's results along the reduced axes:
//     each stores a partial per result (store_partial, grid_step.cuh), takes a ticket, and the
//     last one folds every result's partials in split order and writes the results.
// Element offsets come from the canonical view: one multiply when the reduced axes merged into
// one (kOneReduced), else a divide per axis.
//
// Order of operations: fixed by the view and the plan (which depends on the shape and the GPU
// model), so a call repeats bitwise on the same GPU model.

#include <cstddef>
#include <cstdint>
#include <cuda/atomic>

#include "common/kernel_launch.cuh"
#include "common/resident_grid.cuh"
#include "reduce/axis_plan.hpp"
#include "reduce/grid_step.cuh"
#include "reduce/launch.cuh"
#include "reduce/traits.cuh"
#include "reduce/workspace.hpp"

namespace reducelab::detail {

template <class T>
struct AxisArgs {
  const T* x;
  const T* y;  // dot only
  AxisView view;
  AxisKernelShape shape;
  void* out;
  void* partials;          // splits > 1: grid x columns x splits Traits::Acc
  unsigned int* counters;  // splits > 1: one per result block, zero on entry and exit
};

//! Offset in x of reduced index r (flat, row-major over the canonical reduced axes).
template <bool kOneReduced>
__device__ __forceinline__ std::int64_t reduced_offset(const AxisView& v, std::uint64_t r) {
  if constexpr (kOneReduced) {
    return static_cast<std::int64_t>(r) * v.reduced_in[0];
  } else {
    std::int64_t offset = 0;
    for (int i = v.reduced_rank - 1; i >= 0; --i) {
      const auto size = static_cast<std::uint64_t>(v.reduced_sizes[i]);
      offset += static_cast<std::int64_t>(r % size) * v.reduced_in[i];
      r /= size;
    }
    return offset;
  }
}

//! Offsets in x and in the output of result o.
__device__ __forceinline__ void result_offsets(const AxisView& v, std::uint64_t o,
                                               std::int64_t& in, std::int64_t& out) {
  in = 0;
  out = 0;
  if (v.kept_rank == 1) {
    in = static_cast<std::int64_t>(o) * v.kept_in[0];
    out = static_cast<std::int64_t>(o) * v.kept_out[0];
    return;
  }
  for (int i = v.kept_rank - 1; i >= 0; --i) {
    const auto size = static_cast<std::uint64_t>(v.kept_sizes[i]);
    const auto index = static_cast<std::int64_t>(o % size);
    in += index * v.kept_in[i];
    out += index * v.kept_out[i];
    o /= size;
  }
}

template <class Traits, bool kOneReduced>
__global__ void __launch_bounds__(kAxisBlock) axis_kernel(AxisArgs<typename Traits::Elem> a) {
  using T = typename Traits::Elem;
  using Acc = typename Traits::Acc;
  constexpr bool kDot = Traits::kArrays == 2;
  constexpr int kInFlight = 4;
  __shared__ Acc slots[kAxisBlock];
  __shared__ bool is_last;
  const AxisView& v = a.view;
  const unsigned columns = a.shape.columns;
  const unsigned lanes = a.shape.lanes;
  const unsigned column = a.shape.reduced_major ? threadIdx.x / lanes : threadIdx.x % columns;
  const unsigned lane = a.shape.reduced_major ? threadIdx.x % lanes : threadIdx.x / columns;
  const unsigned slot = a.shape.reduced_major ? column * lanes + lane : lane * columns + column;
  const unsigned lane_step = a.shape.reduced_major ? 1 : columns;  // slot distance of lane + 1
  const std::uint64_t r_begin = static_cast<std::uint64_t>(blockIdx.y) * a.shape.chunk;
  const std::uint64_t r_end =
      r_begin + a.shape.chunk < v.reduced ? r_begin + a.shape.chunk : v.reduced;
  const T* __restrict__ x = a.x;
  const T* __restrict__ y = a.y;

  for (std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * columns; first < v.outputs;
       first += static_cast<std::uint64_t>(gridDim.x) * columns) {
    const std::uint64_t o = first + column;
    const bool valid = o < v.outputs;
    std::int64_t in = 0;
    std::int64_t out = 0;
    typename Traits::State state = Traits::start();
    if (valid) {
      result_offsets(v, o, in, out);
      std::uint64_t r = r_begin + lane;
      for (; r + (kInFlight - 1) * lanes < r_end; r += kInFlight * lanes) {
        T xs[kInFlight];
        T ys[kInFlight];
#pragma unroll
        for (int k = 0; k < kInFlight; ++k) {
          const std::int64_t at = in + reduced_offset<kOneReduced>(v, r + k * lanes);
          xs[k] = x[at];
          ys[k] = kDot ? y[at] : T{};
        }
#pragma unroll
        for (int k = 0; k < kInFlight; ++k) Traits::update(state, xs[k], ys[k], r + k * lanes);
      }
      for (; r < r_end; r += lanes) {
        const std::int64_t at = in + reduced_offset<kOneReduced>(v, r);
        Traits::update(state, x[at], kDot ? y[at] : T{}, r);
      }
    }
    // The state never holds a vector here, so finish() reads nothing.
    slots[slot] = Traits::finish(state, x);
    __syncthreads();
    for (unsigned half = lanes / 2; half > 0; half /= 2) {
      if (lane < half)
        slots[slot] = Traits::combine(slots[slot], slots[slot + half * lane_step]);
      __syncthreads();
    }
    Acc acc = slots[slot];
    if (v.reduced == 0) acc = Traits::empty();
    const bool writer = valid && lane == 0;
    if (gridDim.y == 1) {
      if (writer) Traits::store(static_cast<typename Traits::Out*>(a.out) + out, acc);
    } else {
      // One pass only (the plan launches one block per result block when it splits).
      Acc* mine = static_cast<Acc*>(a.partials) + o * gridDim.y;
      if (writer) {
        store_partial(mine + blockIdx.y, acc);
        __threadfence();
      }
      __syncthreads();
      if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(a.counters[blockIdx.x]);
        const bool last = counter.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.y - 1;
        if (last) counter.store(0u, cuda::memory_order_relaxed);
        is_last = last;
      }
      __syncthreads();
      if (is_last && writer) {
        __threadfence();
        acc = load_partial(mine);
        for (unsigned s = 1; s < gridDim.y; ++s) acc = Traits::combine(acc, load_partial(mine + s));
        Traits::store(static_cast<typename Traits::Out*>(a.out) + out, acc);
      }
    }
    __syncthreads();  // slots serve the next results
  }
}

template <class Traits, bool kOneReduced>
struct AxisKernelTag {};

template <class T>
void launch_axes(Op op, const T* x, const T* y, const AxisView& view, void* d_out,
                 const WorkspaceView& ws, cudaStream_t stream) {
  dispatch_op(op, [&](auto op_constant) {
    using Traits = TraitsFor<decltype(op_constant)::value, T>;
    auto launch = [&](auto kernel, auto tag) {
      using Tag = decltype(tag);
      const unsigned resident = resident_grid<Tag>(kernel, kAxisBlock, ws.device);
      const std::uint64_t capacity = kPartialSlots * kPartialBytes / sizeof(typename Traits::Acc);
      const AxisKernelShape shape = plan_strided(view, resident, capacity, kMaxGrid);
      const AxisArgs<T> args{x, y, view, shape, d_out, ws.d_partials, ws.d_group_counters};
      launch_kernel<Tag>(kernel, dim3(shape.grid, shape.splits), kAxisBlock, stream, ws.device,
                         "launch of reducelab axis_kernel", args);
    };
    if (view.reduced_rank <= 1) {
      launch(axis_kernel<Traits, true>, AxisKernelTag<Traits, true>{});
    } else {
      launch(axis_kernel<Traits, false>, AxisKernelTag<Traits, false>{});
    }
  });
}

}  // namespace reducelab::detail

//! The explicit instantiation of the axis launcher for T (instantiate_axis_*.cu, inside
//! namespace reducelab::detail).
#define REDUCELAB_INSTANTIATE_AXES(T)                                                     \
  template void launch_axes<T>(Op, const T*, const T*, const AxisView&, void*, \
                               const WorkspaceView&, cudaStream_t);

#pragma once
// The strided axis kernel: reductions along any axes of a strided view that neither the scalar
// nor the segmented reduce can read (axis_plan.hpp says which): column reductions, a middle axis,
// several axes, views whose rows are not a fixed stride apart. One kernel for all of them,
// shaped by the plan:
//   - a block computes `columns` results with `lanes` threads each (or `columns` groups of
//     neighbouring results, one 16-byte vector wide, when the columns are aligned: vector
//     columns); a thread folds every lanes-th reduced index of its results, in increasing order
//     (so argmin/argmax keep the first index with a strict comparison, as in the range agent),
//     four loads in flight; read reduced-major with aligned runs (vector runs), a thread's
//     position is a 16-byte vector of neighbouring reduced indices instead of one;
//   - the block's threads of a result combine through shared memory in a fixed tree;
//   - with `splits` > 1, gridDim.y blocks share the block's results along the reduced axes:
//     each stores a partial per result (store_partial, grid_step.cuh), takes a ticket, and the
//     last one folds every result's partials in split order and writes the results.
// Element offsets come from the canonical view: one multiply when the reduced axes merged into
// one (kCursorRank 1), else a cursor over the reduced axes' digits (ReducedCursor): two of them
// (the common case: an outer axis and a contiguous inner run) or up to kMaxRank.
//
// Order of operations: fixed by the view and the plan (which depends on the shape and the GPU
// model), so a call repeats bitwise on the same GPU model.

#include <cstddef>
#include <cstdint>
#include <cuda/atomic>
#include <type_traits>

#include "common/kernel_launch.cuh"
#include "common/resident_grid.cuh"
#include "device/async_copy.cuh"
#include "device/vector_load.cuh"
#include "reduce/axis_plan.hpp"
#include "reduce/grid_step.cuh"
#include "reduce/launch.cuh"
#include "reduce/stats_traits.cuh"
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
  Finish finish;
};

//! The offsets of reduced indices r, r + step, r + 2 step, ... when the reduced axes do not merge
//! into one: r's digits over the canonical reduced axes (innermost last), advanced by step's
//! digits with a carry, so an index costs a few adds per axis instead of a 64-bit divide per axis
//! (512 x 256 x 1,024 over axes 0 and 2 read at 780 GB/s with the divides, session 6).
//! kRank: the most reduced axes the view may have (2, or kMaxRank): a cursor of 8 digits holds
//! 32 registers whether or not they are used, and took the vector runs kernel of f32 sum to 80
//! registers (3 blocks per SM) where two digits need 8.
template <int kRank>
struct ReducedCursor {
  std::uint64_t digit[kRank];
  std::uint64_t step[kRank];
  std::int64_t offset;

  __device__ __forceinline__ void start(const AxisView& v, std::uint64_t r, std::uint64_t by) {
    offset = 0;
#pragma unroll
    for (int i = kRank - 1; i >= 0; --i) {
      digit[i] = 0;
      step[i] = 0;
      if (i < v.reduced_rank) {
        const auto size = static_cast<std::uint64_t>(v.reduced_sizes[i]);
        digit[i] = r % size;
        r /= size;
        step[i] = by % size;
        by /= size;
        offset += static_cast<std::int64_t>(digit[i]) * v.reduced_in[i];
      }
    }
  }
  //! To r + step (past the last index the digits wrap: never read).
  __device__ __forceinline__ void advance(const AxisView& v) {
    std::uint64_t carry = 0;
#pragma unroll
    for (int i = kRank - 1; i >= 0; --i) {
      if (i < v.reduced_rank) {
        const auto size = static_cast<std::uint64_t>(v.reduced_sizes[i]);
        std::uint64_t d = digit[i] + step[i] + carry;  // < 2 size: digit, step < size
        carry = d >= size ? 1 : 0;
        if (carry != 0) d -= size;
        offset += (static_cast<std::int64_t>(d) - static_cast<std::int64_t>(digit[i])) *
                  v.reduced_in[i];
        digit[i] = d;
      }
    }
  }
};

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

//! Vector columns of one array along one reduced axis, unsplit (gridDim.y == 1), of 1- to 4-byte
//! elements, for the ops that fold a position at a time (not var's and logsumexp's tiles, not
//! dot's two arrays, not argmin/argmax), read through a ring of kAxisRing shared-memory slots per
//! thread that cp.async fills kAxisRing - 1 positions ahead of the fold. With registers, ptxas
//! puts the first load's folds between a batch's four loads (SASS, session 27), so the batch
//! waits on its first load before it issues the rest; with one lane per result (the middle axis
//! of 512 x 256 x 1,024: 512 blocks, 1,024 threads per SM) f32 sum still kept the DRAM 90% busy,
//! but the norm took 154-156 us against sum's 130-134. Measured on the H200 (session 27, call 7,
//! two runs each, us): middle axis f32 norm 156.3 / 156.3 -> 133.6 / 133.2, sum 132.8 / 134.7 ->
//! 133.6 / 132.0, f16 sum 77.0 / 76.4 -> 74.0 / 75.0; 2^20 and 2^22 kept columns 141.0 / 139.2
//! -> 135.3 / 134.7 and 143.3 / 142.7 -> 137.8 / 137.7; 128 columns (split, so registers, but
//! this instantiation's registers and shared memory) 157.6 / 158.9 -> 160.4 / 161.3. Slower
//! through the ring (call 6), so left to the registers: f32 argmax (+8%), f64 sum (+7%: twice
//! the positions per byte) and the split fold (128 columns +7%). 48 registers (44), 33.8 KB of
//! shared memory, 5 blocks of 256 per SM as before.
inline constexpr int kAxisRing = 8;
template <class Traits, int kCursorRank, int kWidth, int kRunWidth>
inline constexpr bool kAxisReadsRing =
    kCursorRank == 1 && kWidth > 1 && kRunWidth == 1 && Traits::kArrays == 1 &&
    sizeof(typename Traits::Elem) <= 4 && !folds_tiles<Traits>::value &&
    !is_arg_traits<Traits>::value;

//! kWidth == 1: one result per thread, element loads. kWidth == 16 / sizeof(T) (vector columns,
//! axis_plan.hpp: vector_columns_width): `kWidth` neighbouring results per thread, one 16-byte
//! load per reduced index covering all of them. kRunWidth == 16 / sizeof(T) (vector runs,
//! reduced_vector_width; the args' view from vector_runs_view): one result per thread, one
//! 16-byte load per position covering kRunWidth neighbouring reduced indices.
template <class Traits, int kCursorRank, int kWidth, int kRunWidth = 1>
__global__ void __launch_bounds__(kAxisBlock) axis_kernel(AxisArgs<typename Traits::Elem> a) {
  using T = typename Traits::Elem;
  using Acc = typename Traits::Acc;
  using Vec = device::Vec16<T>;
  constexpr bool kDot = Traits::kArrays == 2;
  constexpr int kInFlight = 4;
  static_assert(kWidth == 1 || kWidth == Vec::kCount, "a thread reads one element or one vector");
  static_assert(kRunWidth == 1 || (kRunWidth == Vec::kCount && kWidth == 1),
                "vector runs read one result's vector, never several results'");
  constexpr int kLoad = kWidth * kRunWidth;  // elements per load
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
      r_begin + a.shape.chunk < a.shape.steps ? r_begin + a.shape.chunk : a.shape.steps;
  const T* __restrict__ x = a.x;
  const T* __restrict__ y = a.y;
  // Results per block pass: columns x kWidth; this thread's first is (first + column) x kWidth.
  const std::uint64_t groups = (v.outputs + kWidth - 1) / kWidth;
  // Output distance between neighbouring results of a thread (the innermost kept axis's).
  const std::int64_t out_step = v.kept_rank > 0 ? v.kept_out[v.kept_rank - 1] : 0;

  for (std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * columns; first < groups;
       first += static_cast<std::uint64_t>(gridDim.x) * columns) {
    const std::uint64_t g = first + column;
    const bool valid = g < groups;
    std::int64_t in = 0;
    std::int64_t out = 0;
    typename Traits::State state[kWidth];
#pragma unroll
    for (int j = 0; j < kWidth; ++j) state[j] = Traits::start();
    if (valid) {
      result_offsets(v, g * kWidth, in, out);
      // The thread's reduced indices come in increasing order, lanes apart: with several
      // reduced axes a cursor follows them.
      ReducedCursor<kCursorRank> cursor;
      if constexpr (kCursorRank > 1) cursor.start(v, r_begin + lane, lanes);
      // Reads position r (the cursor's, with several axes): kLoad elements of x (and y).
      auto load = [&](std::uint64_t r, T (&xs)[kLoad], T (&ys)[kLoad]) {
        std::int64_t at = in;
        if constexpr (kCursorRank == 1) {
          at += static_cast<std::int64_t>(r) * v.reduced_in[0];
        } else {
          at += cursor.offset;
          cursor.advance(v);
        }
        if constexpr (kLoad == 1) {
          xs[0] = x[at];
          ys[0] = kDot ? y[at] : T{};
        } else {
          const Vec vx = Vec::from(device::load16<device::LoadHint::plain>(x + at));
#pragma unroll
          for (int j = 0; j < kLoad; ++j) xs[j] = vx.element[j];
          if constexpr (kDot) {
            const Vec vy = Vec::from(device::load16<device::LoadHint::plain>(y + at));
#pragma unroll
            for (int j = 0; j < kLoad; ++j) ys[j] = vy.element[j];
          }
        }
      };
      // Folds position r's elements: kWidth results' elements of reduced index r, or (vector
      // runs) one result's reduced indices r x kRunWidth ...
      auto fold = [&](std::uint64_t r, const T (&xs)[kLoad], const T (&ys)[kLoad]) {
        if constexpr (kRunWidth > 1) {
          const std::uint64_t first = r * kRunWidth;
          // ArgTraits::finish would read the vector again at x + index, which is not the
          // element's offset along several axes: the winner is found in the registers.
          if constexpr (is_arg_traits<Traits>::value) {
            Traits::update_vector_found(state[0], xs, first);
          } else {
            Traits::update_vector(state[0], xs, ys, first);
          }
        } else {
#pragma unroll
          for (int j = 0; j < kWidth; ++j) Traits::update(state[j], xs[j], ys[j], r);
        }
      };
      std::uint64_t r = r_begin + lane;
      if constexpr (kAxisReadsRing<Traits, kCursorRank, kWidth, kRunWidth>) {
        if (gridDim.y == 1) {  // the split fold reads its chunks with registers, below
          // Position p (reduced index r + p lanes) goes to slot p mod kAxisRing, in a commit group
          // of its own (empty past the end, so the count of groups stays one per position). The
          // fold reads the slots in order: the same folds in the same order as the loads below.
          __shared__ uint4 ring[kAxisRing][kAxisBlock];
          constexpr int kAhead = kAxisRing - 1;
          const std::uint64_t count = r < r_end ? (r_end - r + lanes - 1) / lanes : 0;
          const std::int64_t step = static_cast<std::int64_t>(lanes) * v.reduced_in[0];
          const T* ahead = x + in + static_cast<std::int64_t>(r) * v.reduced_in[0];
          std::uint64_t issued = 0;
          auto issue = [&]() {
            if (issued < count) {
              const auto to = static_cast<unsigned>(
                  __cvta_generic_to_shared(&ring[issued % kAxisRing][threadIdx.x]));
              device::copy16_async_cached(to, ahead);
              ahead += step;
            }
            ++issued;
            device::copies_commit();
          };
#pragma unroll
          for (int k = 0; k < kAhead; ++k) issue();
          for (std::uint64_t p = 0; p < count; ++p, r += lanes) {
            issue();
            device::copies_wait<kAhead>();  // position p's group has landed
            const Vec vx = Vec::from(ring[p % kAxisRing][threadIdx.x]);
            T xs[kLoad];
            T ys[kLoad] = {};
#pragma unroll
            for (int j = 0; j < kLoad; ++j) xs[j] = vx.element[j];
            fold(r, xs, ys);
          }
          r = r_end;  // every position folded
        }
      }
      for (; r + (kInFlight - 1) * lanes < r_end; r += kInFlight * lanes) {
        T xs[kInFlight][kLoad];
        T ys[kInFlight][kLoad];
#pragma unroll
        for (int k = 0; k < kInFlight; ++k) load(r + k * lanes, xs[k], ys[k]);
        if constexpr (kRunWidth > 1 && folds_tiles<Traits>::value) {
          // var's and logsumexp's vector runs: the loads' vectors in update_vectors calls of up
          // to 16 elements, one merge each, as the segmented reduce's lanes do (agent.cuh). A
          // thread's tiles come before its single vectors, as MomentsTraits needs.
          constexpr int kFold = 16 / kRunWidth < kInFlight ? 16 / kRunWidth : kInFlight;
#pragma unroll
          for (int g = 0; g < kInFlight; g += kFold) {
            T tile[kFold][kRunWidth];
#pragma unroll
            for (int k = 0; k < kFold; ++k)
#pragma unroll
              for (int j = 0; j < kRunWidth; ++j) tile[k][j] = xs[g + k][j];
            Traits::update_vectors(state[0], tile);
          }
        } else if constexpr (folds_tiles<Traits>::value) {
          // The same for elements: each result's kInFlight elements of this step (one per load)
          // in one update_vectors call, one merge per four elements instead of a Welford step
          // (a reciprocal) per element.
#pragma unroll
          for (int j = 0; j < kWidth; ++j) {
            T tile[1][kInFlight];
#pragma unroll
            for (int k = 0; k < kInFlight; ++k) tile[0][k] = xs[k][j];
            Traits::update_vectors(state[j], tile);
          }
        } else {
#pragma unroll
          for (int k = 0; k < kInFlight; ++k) fold(r + k * lanes, xs[k], ys[k]);
        }
      }
      for (; r < r_end; r += lanes) {
        T xs[kLoad];
        T ys[kLoad];
        load(r, xs, ys);
        fold(r, xs, ys);
      }
    }
    // Each of the thread's results in turn: its lanes meet in shared memory in a fixed tree,
    // then one block writes it, or every split stores a partial and the last one folds them.
    if (gridDim.y > 1) {
      // The partials of result o: partials[o x gridDim.y, (o + 1) x gridDim.y).
      Acc* partials = static_cast<Acc*>(a.partials);
#pragma unroll
      for (int j = 0; j < kWidth; ++j) {
        // The state never holds a vector here, so finish() reads nothing.
        slots[slot] = Traits::finish(state[j], x);
        __syncthreads();
        for (unsigned half = lanes / 2; half > 0; half /= 2) {
          if (lane < half) slots[slot] = Traits::combine(slots[slot], slots[slot + half * lane_step]);
          __syncthreads();
        }
        if (valid && lane == 0) {
          Acc acc = slots[slot];
          if (v.reduced == 0) acc = Traits::empty();
          store_partial(partials + (g * kWidth + j) * gridDim.y + blockIdx.y, acc);
        }
        __syncthreads();
      }
      if (valid && lane == 0) __threadfence();
      __syncthreads();
      if (threadIdx.x == 0) {  // one pass only: the plan launches one block per result block
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> counter(a.counters[blockIdx.x]);
        const bool last = counter.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.y - 1;
        if (last) counter.store(0u, cuda::memory_order_relaxed);
        is_last = last;
      }
      __syncthreads();
      if (is_last) {
        // The whole block folds: `team` threads per result of the pass, each every team-th
        // split in order, then a tree in shared memory (fixed order). One thread per result
        // reading every split in turn cost tens of microseconds at 1,056 splits (4,194,304 x 32
        // columns, session 6). The loads of kFoldBatch splits are issued before any is
        // combined (the same order of combines): with one load at a time the fold cost one L2
        // round trip (~0.17 us) per split a thread folds, 45..80 us at 64..256 columns, where a
        // team of 2..4 threads folds 1,024..1,056 splits per result (session 11).
        constexpr unsigned kFoldBatch = 8;
        const unsigned results = columns * kWidth;  // a power of two, at most kAxisBlock
        const unsigned team = kAxisBlock / results;
        const unsigned result = threadIdx.x / team;
        const unsigned member = threadIdx.x % team;
        const std::uint64_t o = first * kWidth + result;
        Acc acc = Traits::identity();
        if (o < v.outputs) {
          const Acc* mine = partials + o * gridDim.y;
          unsigned s = member;
          for (; s + (kFoldBatch - 1) * team < gridDim.y; s += kFoldBatch * team) {
            Acc batch[kFoldBatch];
#pragma unroll
            for (unsigned k = 0; k < kFoldBatch; ++k) batch[k] = load_partial(mine + s + k * team);
#pragma unroll
            for (unsigned k = 0; k < kFoldBatch; ++k) acc = Traits::combine(acc, batch[k]);
          }
          for (; s < gridDim.y; s += team) acc = Traits::combine(acc, load_partial(mine + s));
        }
        slots[threadIdx.x] = acc;
        __syncthreads();
        for (unsigned half = team / 2; half > 0; half /= 2) {
          if (member < half) slots[threadIdx.x] = Traits::combine(slots[threadIdx.x], slots[threadIdx.x + half]);
          __syncthreads();
        }
        if (member == 0 && o < v.outputs) {
          std::int64_t result_in = 0;
          std::int64_t result_out = 0;
          result_offsets(v, o - o % kWidth, result_in, result_out);
          Traits::store(a.out, result_out + static_cast<std::int64_t>(o % kWidth) * out_step,
                        slots[threadIdx.x], v.reduced, a.finish);
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < kWidth; ++j) {
        slots[slot] = Traits::finish(state[j], x);
        __syncthreads();
        for (unsigned half = lanes / 2; half > 0; half /= 2) {
          if (lane < half) slots[slot] = Traits::combine(slots[slot], slots[slot + half * lane_step]);
          __syncthreads();
        }
        if (valid && lane == 0) {
          Acc acc = slots[slot];
          if (v.reduced == 0) acc = Traits::empty();
          Traits::store(a.out, out + j * out_step, acc, v.reduced, a.finish);
        }
        __syncthreads();  // slots serve the next result
      }
    }
    __syncthreads();  // slots serve the next results
  }
}

template <class Traits, int kCursorRank, int kWidth, int kRunWidth = 1>
struct AxisKernelTag {};

template <class T>
void launch_axes(const Reduction& r, const T* x, const T* y, const AxisView& view, void* d_out,
                 const WorkspaceView& ws, cudaStream_t stream) {
  dispatch_traits<T>(r, [&](auto traits) {
    using Traits = typename decltype(traits)::type;
    constexpr int kVector = device::Vec16<T>::kCount;
    const bool x_aligned = operands_aligned<Traits>(x, y);
    const unsigned width = vector_columns_width(view, sizeof(T), x_aligned);
    const unsigned runs =
        reads_reduced_major(view) ? reduced_vector_width(view, sizeof(T), x_aligned) : 1;
    auto launch = [&](auto kernel, auto tag, unsigned vector_width, unsigned run_width) {
      using Tag = decltype(tag);
      const unsigned resident = resident_grid<Tag>(kernel, kAxisBlock, ws.device);
      const std::uint64_t capacity = kAxisPartialBytes / sizeof(typename Traits::Acc);
      const AxisKernelShape shape =
          plan_strided(view, resident, capacity, kMaxGrid, vector_width, run_width,
                       sizeof(typename Traits::Acc));
      const AxisArgs<T> args{x,     y,       vector_runs_view(view, shape.reduced_width),
                             shape, d_out,   ws.d_partials,
                             ws.d_group_counters, finish_of(r)};
      launch_kernel<Tag>(kernel, dim3(shape.grid, shape.splits), kAxisBlock, stream, ws.device,
                         "launch of reducelab axis_kernel", args);
    };
    // Kernels by the reduced axes' count (1: a multiply; 2: a two-digit cursor; more: eight
    // digits) and the loads (elements, vector columns, vector runs).
    if (view.reduced_rank <= 1) {
      if (width > 1) {
        launch(axis_kernel<Traits, 1, kVector>, AxisKernelTag<Traits, 1, kVector>{}, width, 1);
      } else if (runs > 1) {
        launch(axis_kernel<Traits, 1, 1, kVector>, AxisKernelTag<Traits, 1, 1, kVector>{}, 1,
               runs);
      } else {
        launch(axis_kernel<Traits, 1, 1>, AxisKernelTag<Traits, 1, 1>{}, 1, 1);
      }
    } else if (runs > 1 && view.reduced_rank == 2) {
      launch(axis_kernel<Traits, 2, 1, kVector>, AxisKernelTag<Traits, 2, 1, kVector>{}, 1, runs);
    } else if (runs > 1) {
      launch(axis_kernel<Traits, kMaxRank, 1, kVector>,
             AxisKernelTag<Traits, kMaxRank, 1, kVector>{}, 1, runs);
    } else {
      launch(axis_kernel<Traits, kMaxRank, 1>, AxisKernelTag<Traits, kMaxRank, 1>{}, 1, 1);
    }
  });
}

}  // namespace reducelab::detail

//! The explicit instantiation of the axis launcher for T (instantiate_axis_*.cu, inside
//! namespace reducelab::detail).
#define REDUCELAB_INSTANTIATE_AXES(T)                                                     \
  template void launch_axes<T>(const Reduction&, const T*, const T*, const AxisView&, void*, \
                               const WorkspaceView&, cudaStream_t);

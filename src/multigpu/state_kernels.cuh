#pragma once
// The device half of the sharded reduce: a rank's shard reduced to its partial state by the
// production kernels themselves, and the fold of the ranks' states.
//
// ShardStateTraits<Base> is Base (any traits of traits.cuh / stats_traits.cuh) with one change:
// store() writes the slot (count, signature, Base's accumulator) instead of the finished result.
// Every other member is Base's, and so are the configuration (ConfigFor below) and the grid
// (launch_state_kernel), so the state kernel is the single-GPU kernel up to the last store: the local
// reduce keeps its full bandwidth, and with one rank the fold hands store() the very accumulator
// the single-GPU kernel would have stored (the same bits).

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "multigpu/shard_launch.hpp"
#include "multigpu/shard_state.hpp"
#include "reduce/config.cuh"
#include "reduce/launch.cuh"
#include "reduce/segmented.cuh"
#include "reduce/stats_traits.cuh"

namespace reducelab::detail {

//! Which traits of one op: norm's ord picks one of five; every other op has one. Part of the
//! signature, so ranks that disagree on ord are caught.
template <class Base> struct traits_id : std::integral_constant<int, 0> {};
template <class T> struct traits_id<AbsSumTraits<T>> : std::integral_constant<int, 1> {};
template <class T> struct traits_id<SquareSumTraits<T>> : std::integral_constant<int, 2> {};
template <class T>
struct traits_id<AbsExtremumTraits<T, device::Max>> : std::integral_constant<int, 3> {};
template <class T>
struct traits_id<AbsExtremumTraits<T, device::Min>> : std::integral_constant<int, 4> {};
template <class T> struct traits_id<CountTraits<T>> : std::integral_constant<int, 5> {};

//! Base, storing slots of kStride bytes (kWholeSlotBytes for the whole array, the compact size
//! for rows) instead of results.
template <class Base, std::size_t kStride>
struct ShardStateTraits : Base {
  using Acc = typename Base::Acc;
  static_assert(sizeof(Acc) % 4 == 0, "slots are written as 4-byte words");
  static_assert(kStride >= compact_slot_bytes<Acc>() && kStride % 8 == 0);

  __device__ static void store(void* out, std::int64_t index, Acc acc, std::uint64_t count,
                               const Finish& finish) {
    unsigned char* slot = static_cast<unsigned char*>(out) + static_cast<std::size_t>(index) * kStride;
    const std::uint64_t signature =
        state_signature(static_cast<int>(finish.op),
                        static_cast<int>(dtype_of<typename Base::Elem>::value),
                        traits_id<Base>::value, finish.correction);
    // Every byte of the slot written, the accumulator's padding as zeros (grid_step.cuh's
    // partial_words), so what the all-gather copies is fully defined (initcheck).
    unsigned words[(kStride - kSlotHeaderBytes) / 4] = {};
    unsigned acc_words[sizeof(Acc) / 4];
    partial_words(acc_words, acc);
#pragma unroll
    for (int w = 0; w < static_cast<int>(sizeof(Acc) / 4); ++w) words[w] = acc_words[w];
    std::uint64_t* header = reinterpret_cast<std::uint64_t*>(slot);  // 8-byte aligned
    header[0] = count;
    header[1] = signature;
    unsigned* body = reinterpret_cast<unsigned*>(slot + kSlotHeaderBytes);
#pragma unroll
    for (int w = 0; w < static_cast<int>(sizeof(words) / 4); ++w) body[w] = words[w];
  }
};

// The state kernel runs with its Base's tuned configuration (config.cuh), not the default one
// a new traits type would get: same grid, same order of additions, same bandwidth.
template <class Base, std::size_t kStride>
struct ConfigFor<ShardStateTraits<Base, kStride>> : ConfigFor<Base> {};
template <class Base, std::size_t kStride>
struct OneBlockConfigFor<ShardStateTraits<Base, kStride>> : OneBlockConfigFor<Base> {};


//! Folds `ranks` slots of `stride` bytes for each of `rows` results (slot of rank q and row i at
//! slots + (q * rows + i) * stride: the all-gather puts each rank's rows together), writing
//! result i to out. One thread per row.
template <class Traits>
__global__ void fold_states_kernel(const unsigned char* slots, std::size_t stride, int ranks,
                                   std::size_t rows, void* out, unsigned result_bytes,
                                   Finish finish, FoldEmpty empty, FoldInfo* info) {
  const std::size_t row = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  // The ranks' slots of this row are rows * stride apart: fold_slots walks them with that step.
  const FoldResult<typename Traits::Acc> folded =
      fold_slots<Traits>(slots + row * stride, rows * stride, ranks);
  unsigned char* target = static_cast<unsigned char*>(out) + row * result_bytes;
  if (!folded.agreed) {
    for (unsigned b = 0; b < result_bytes; ++b) target[b] = 0xff;
  } else if (folded.total == 0 && empty == FoldEmpty::zero) {
    for (unsigned b = 0; b < result_bytes; ++b) target[b] = 0;
  } else if (folded.total == 0 && empty == FoldEmpty::undefined) {
    Traits::store(out, static_cast<std::int64_t>(row), Traits::empty(), 0, finish);
  } else {
    Traits::store(out, static_cast<std::int64_t>(row), folded.acc, folded.total, finish);
  }
  if (info != nullptr && row == 0) *info = {folded.total, folded.agreed ? 1u : 0u};
}

//! The state kernel of Base on x[0, n) with Config: the single-GPU launch (launch.cuh's
//! launch_reduce) of the state traits, on the grid of Base's own kernel. The grid is worked out
//! from Base's kernel's occupancy, not the state kernel's: should the state kernel's last store
//! cost it a register and a resident block, the same grid still gives the same order of
//! additions, so one rank keeps the single-GPU bits. (A grid above the resident one is still
//! correct: the range is split by grid, and the last block to finish folds.)
template <class Base, class Config, bool kYVector>
void launch_state_kernel(const typename Base::Elem* x, const typename Base::Elem* y,
                         std::size_t n, void* d_state, const WorkspaceView& ws,
                         cudaStream_t stream, Finish finish) {
  using T = typename Base::Elem;
  using State = ShardStateTraits<Base, kWholeSlotBytes>;
  const RangeSplit split = split_range(x, n);
  const KernelArgs<T> args{x, y, n, split, d_state, ws.d_partials, ws.d_counter, finish};
  const unsigned resident = resident_grid<KernelTag<Base, Config, kYVector>>(
      reduce_kernel<Base, Config, kYVector>, Config::kBlock, ws.device);
  launch_kernel<KernelTag<State, Config, kYVector>>(
      reduce_kernel<State, Config, kYVector>, grid_size<Config>(split.vectors, resident),
      Config::kBlock, stream, ws.device, "launch of reducelab reduce_kernel (shard state)", args);
}

//! The state of x[0, n) (any n, 0 included) into the kWholeSlotBytes slot at d_state: the
//! kernel and configuration the single-GPU launcher (launch.cuh's launch_with) picks for Base.
template <class T>
void launch_shard_state(const Reduction& r, const T* x, const T* y, std::size_t n, void* d_state,
                        const WorkspaceView& ws, cudaStream_t stream) {
  dispatch_traits<T>(r, [&](auto traits) {
    using Base = typename decltype(traits)::type;
    using Config = typename ConfigFor<Base>::type;
    using Small = typename OneBlockConfigFor<Base>::type;
    const Finish finish = finish_of(r);
    if constexpr (!std::is_same_v<Small, Config> && Base::kArrays == 1) {
      if (split_range(x, n).vectors <= Small::kTile) {
        launch_state_kernel<Base, Small, true>(x, y, n, d_state, ws, stream, finish);
        return;
      }
    }
    if (Base::kArrays == 1 || same_offset_in_line(x, y)) {
      launch_state_kernel<Base, Config, true>(x, y, n, d_state, ws, stream, finish);
    } else if constexpr (Base::kArrays == 2) {
      launch_state_kernel<Base, Config, false>(x, y, n, d_state, ws, stream, finish);
    }
  });
}

//! Bytes of one row's slot for `r` on T (compact: the header and the accumulator).
template <class T>
std::size_t row_slot_bytes(const Reduction& r) {
  std::size_t bytes = 0;
  dispatch_traits<T>(r, [&](auto traits) {
    using Base = typename decltype(traits)::type;
    bytes = compact_slot_bytes<typename Base::Acc>();
  });
  return bytes;
}

//! Every row's state, rows >= 1 rows of cols >= 1 elements at pitch cols, into compact slots
//! at d_states (row i at d_states + i * row_slot_bytes), with the segmented reduce's kernels.
template <class T>
void launch_row_states(const Reduction& r, const T* x, const T* y, std::size_t rows,
                       std::size_t cols, void* d_states, const WorkspaceView& ws,
                       cudaStream_t stream) {
  dispatch_traits<T>(r, [&](auto traits) {
    using Base = typename decltype(traits)::type;
    using State = ShardStateTraits<Base, compact_slot_bytes<typename Base::Acc>()>;
    if (Base::kArrays == 1 || same_offset_in_line(x, y)) {
      SegmentKernels<State, true>::fixed(x, y, rows, cols, cols, d_states, 1, ws, stream,
                                         finish_of(r));
    } else if constexpr (Base::kArrays == 2) {
      SegmentKernels<State, false>::fixed(x, y, rows, cols, cols, d_states, 1, ws, stream,
                                          finish_of(r));
    }
  });
}

//! Empty pieces of rows (cols == 0): each row's slot says 0 elements (the fold skips it).
template <class State>
__global__ void empty_row_states_kernel(void* d_states, std::size_t rows, Finish finish) {
  const std::size_t row = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row < rows) State::store(d_states, static_cast<std::int64_t>(row), State::empty(), 0, finish);
}

template <class T>
void launch_empty_row_states(const Reduction& r, std::size_t rows, void* d_states,
                             cudaStream_t stream) {
  dispatch_traits<T>(r, [&](auto traits) {
    using Base = typename decltype(traits)::type;
    using State = ShardStateTraits<Base, compact_slot_bytes<typename Base::Acc>()>;
    constexpr unsigned kBlock = 256;
    const unsigned grid = static_cast<unsigned>((rows + kBlock - 1) / kBlock);
    empty_row_states_kernel<State><<<grid, kBlock, 0, stream>>>(d_states, rows, finish_of(r));
    REDUCELAB_CHECK_LAUNCH("reducelab empty_row_states_kernel");
  });
}

//! The fold of `ranks` states per row (stride: kWholeSlotBytes for the whole array,
//! row_slot_bytes<T>(r) for rows) into `rows` results at d_out.
template <class T>
void launch_fold(const Reduction& r, const void* d_slots, std::size_t stride, int ranks,
                 std::size_t rows, void* d_out, FoldInfo* d_info, cudaStream_t stream) {
  dispatch_traits<T>(r, [&](auto traits) {
    using Base = typename decltype(traits)::type;
    constexpr unsigned kBlock = 128;
    const unsigned grid = static_cast<unsigned>((rows + kBlock - 1) / kBlock);
    fold_states_kernel<Base><<<grid, rows < kBlock ? static_cast<unsigned>(rows) : kBlock, 0,
                               stream>>>(static_cast<const unsigned char*>(d_slots), stride,
                                         ranks, rows, d_out,
                                         static_cast<unsigned>(result_size(r.op, dtype_of<T>::value)),
                                         finish_of(r), fold_empty_of(r), d_info);
    REDUCELAB_CHECK_LAUNCH("reducelab fold_states_kernel");
  });
}

}  // namespace reducelab::detail

//! The explicit instantiations of the sharded launchers for T (multigpu/instantiate_*.cu, inside
//! namespace reducelab::detail).
#define REDUCELAB_INSTANTIATE_SHARDS(T)                                                            \
  template void launch_shard_state<T>(const Reduction&, const T*, const T*, std::size_t, void*,    \
                                      const WorkspaceView&, cudaStream_t);                        \
  template std::size_t row_slot_bytes<T>(const Reduction&);                                        \
  template void launch_row_states<T>(const Reduction&, const T*, const T*, std::size_t,            \
                                     std::size_t, void*, const WorkspaceView&, cudaStream_t);      \
  template void launch_empty_row_states<T>(const Reduction&, std::size_t, void*, cudaStream_t);   \
  template void launch_fold<T>(const Reduction&, const void*, std::size_t, int, std::size_t,       \
                               void*, FoldInfo*, cudaStream_t);

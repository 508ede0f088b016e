// The launch of the gpu_to_gpu statistics (reproducible_stats.hpp): the first pass (an
// order-free max through the default kernels, or the fixed-order mean through
// launch_reproducible) leaves its scalar in the workspace, then term_kernel
// (reproducible_stats.cuh) sums the term in the fixed order and writes the result. Every kernel
// runs on `stream`, one after the other, so the second reads what the first wrote.

#include <cmath>
#include <limits>

#include "common/kernel_launch.cuh"
#include "common/resident_grid.cuh"
#include "reduce/launch.hpp"
#include "reduce/reproducible.hpp"
#include "reduce/reproducible_stats.cuh"
#include "reducelab/error.hpp"

namespace reducelab::detail {

namespace {

template <class T, class A, int kBlock, class Term, class Finish>
struct StatsTag {};

// The grid as launch_block (reproducible.cu) chooses it, the test hook included.
template <class T, class A, int kBlock, class Term, class Finish>
void launch_term_block(repro::ReproArgs<T> args, const Term& term, const Finish& finish,
                       const WorkspaceView& ws, cudaStream_t stream) {
  auto kernel = repro::term_kernel<T, A, kBlock, Term, Finish>;
  using Tag = StatsTag<T, A, kBlock, Term, Finish>;
  constexpr unsigned kWarps = kBlock / 32;
  unsigned grid = reproducible_launch().grid;
  // As launch_block: a contiguous run of tiles per warp, as many as the resident grid (or the
  // forced one) needs to take them all in one pass.
  const unsigned resident = resident_grid<Tag>(kernel, kBlock, ws.device);
  const std::uint64_t warps = static_cast<std::uint64_t>(grid != 0 ? grid : resident) * kWarps;
  args.run = (args.tiles + warps - 1) / warps;
  if (grid == 0) {
    const std::uint64_t wanted = (args.tiles + kWarps * args.run - 1) / (kWarps * args.run);
    grid = static_cast<unsigned>(wanted);
  }
  launch_kernel<Tag>(kernel, grid, kBlock, stream, ws.device,
                     "launch of reducelab reproducible term_kernel", args, term, finish);
}

template <class T, class A, class Term, class Finish>
void launch_term(const repro::ReproArgs<T>& args, const Term& term, const Finish& finish,
                 const WorkspaceView& ws, cudaStream_t stream) {
  switch (reproducible_launch().block) {
    case 128: launch_term_block<T, A, 128>(args, term, finish, ws, stream); return;
    case 256: launch_term_block<T, A, 256>(args, term, finish, ws, stream); return;
    default: launch_term_block<T, A, 512>(args, term, finish, ws, stream); return;
  }
}

}  // namespace

template <class T>
void launch_reproducible_stats(const Reduction& r, const T* x, std::size_t n, void* d_out,
                               const WorkspaceView& ws, cudaStream_t stream) {
  using S = sum_t<T>;  // == stat_t<T>
  static_assert(std::is_same_v<S, stat_t<T>>);
  static_assert(repro::kScalarOffset + 16 <= kPartialSlots * kPartialBytes &&
                    repro::kScalarOffset >= kMaxGrid * kPartialBytes,
                "the first pass's scalar lies past every kernel's partials");
  void* scalar = static_cast<unsigned char*>(ws.d_partials) + repro::kScalarOffset;
  const repro::Plan plan = repro::plan_for(sizeof(T), n);
  const auto address = reinterpret_cast<std::uintptr_t>(x);
  // Field by field: ReproArgs grows with the kernel's structure (reproducible.cuh); term_kernel
  // reads only these.
  repro::ReproArgs<T> args{};
  args.x = x;
  args.y = nullptr;
  args.n = n;
  args.steps = plan.steps;
  args.tiles = plan.tiles;
  args.groups = static_cast<unsigned>(plan.groups);
  args.offset = static_cast<unsigned>((address & 15) / sizeof(T));
  args.out = d_out;
  args.partials = ws.d_partials;
  args.counter = ws.d_counter;
  args.group_counters = ws.d_group_counters;
  args.finish = Finish{r.op, r.correction};
  switch (r.op) {
    case Op::norm: {
      if (r.ord == 1) {
        launch_term<T, S>(args, repro::AbsTerm{}, repro::NormFinish<S>{d_out, false, false, nullptr},
                          ws, stream);
      } else if constexpr (std::is_same_v<T, double>) {
        // max |x| first (order-free: the default kernel of ord inf), for the scale.
        launch_typed<T>(Reduction::norm(std::numeric_limits<double>::infinity()), x, nullptr, n,
                        scalar, ws, stream);
        launch_term<T, double>(args, repro::ScaledSquareTerm{scalar, 1.0},
                               repro::NormFinish<double>{d_out, true, false, scalar}, ws, stream);
      } else {
        using A = repro::norm2_acc_t<T>;
        launch_term<T, A>(args, repro::SquareTerm{},
                          repro::NormFinish<A>{d_out, true, !std::is_same_v<A, S>, nullptr}, ws,
                          stream);
      }
      return;
    }
    case Op::var: case Op::std: case Op::var_mean: case Op::std_mean: {
      // The gpu_to_gpu mean first, into the scalar slot.
      launch_reproducible<T>(Reduction(Op::mean).reproducible(), x, nullptr, n, scalar, ws,
                             stream);
      launch_term<T, S>(args, repro::DeviationTerm<S>{scalar, S(0)},
                        repro::VarFinish<S>{d_out, scalar, repro::var_divisor<S>(n, r.correction),
                                            r.op},
                        ws, stream);
      return;
    }
    case Op::logsumexp: {
      // The max first (order-free: the default kernel of Op::max), into the scalar slot.
      launch_typed<T>(Reduction(Op::max), x, nullptr, n, scalar, ws, stream);
      launch_term<T, S>(args, repro::ExpTerm<S, T>{scalar, S(0)},
                        repro::LogSumExpFinish<S, T>{d_out, scalar}, ws, stream);
      return;
    }
    default:
      throw Error(ErrorCode::invalid_argument, "launch_reproducible_stats: not a statistics op");
  }
}

template void launch_reproducible_stats<float>(const Reduction&, const float*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_reproducible_stats<double>(const Reduction&, const double*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_reproducible_stats<__half>(const Reduction&, const __half*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_reproducible_stats<__nv_bfloat16>(const Reduction&, const __nv_bfloat16*, std::size_t, void*, const WorkspaceView&, cudaStream_t);

}  // namespace reducelab::detail

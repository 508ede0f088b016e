// The launch of the gpu_to_gpu statistics of whole arrays (reproducible_stats.hpp): one pass of
// reproducible_kernel (reproducible.cuh, with a term and an epilogue of reproducible_stats.cuh)
// sums the term in the fixed order and writes the result, on `stream`.

#include <type_traits>

#include "reduce/reproducible.hpp"
#include "reduce/reproducible_launch.cuh"
#include "reduce/reproducible_stats.cuh"
#include "reducelab/error.hpp"

namespace reducelab::detail {

namespace {

template <class T, class A, class Term, class Epilogue>
void launch_term(const repro::ReproArgs<T>& args, const Term& term, const Epilogue& epilogue,
                 const WorkspaceView& ws, cudaStream_t stream) {
  repro::launch_fixed_order<T, A, 1, true>(args, term, epilogue, ws, stream);
}

}  // namespace

template <class T>
void launch_reproducible_stats(const Reduction& r, const T* x, std::size_t n, void* d_out,
                               const WorkspaceView& ws, cudaStream_t stream) {
  using S = sum_t<T>;  // == stat_t<T>
  static_assert(std::is_same_v<S, stat_t<T>>);
  const repro::ReproArgs<T> args = repro::make_args<T>(x, nullptr, n, ws);
  switch (r.op) {
    case Op::norm: {
      if (r.ord == 1) {
        launch_term<T, S>(args, repro::AbsTerm{}, repro::NormEpilogue<S>{d_out, false, false},
                          ws, stream);
      } else if constexpr (std::is_same_v<T, double>) {
        // One pass: the three candidate sums and max |x| (Norm2State, reproducible_stats.hpp).
        launch_term<T, repro::Norm2State<double>>(args, repro::Norm2Term{},
                                                  repro::Norm2Epilogue{d_out}, ws, stream);
      } else {
        using A = repro::norm2_acc_t<T>;
        launch_term<T, A>(args, repro::SquareTerm{},
                          repro::NormEpilogue<A>{d_out, true, !std::is_same_v<A, S>}, ws,
                          stream);
      }
      return;
    }
    case Op::var: case Op::std: case Op::var_mean: case Op::std_mean: {
      // One pass: the groups (count, centre, mean, m2) merged in the fixed order, and for the
      // pairs the plain sum beside them (reproducible_stats.hpp).
      const repro::VarEpilogue<S> epilogue{d_out, n, repro::var_divisor<S>(n, r.correction), r.op};
      if (r.op == Op::var_mean || r.op == Op::std_mean) {
        launch_term<T, repro::VarState<S>>(args, repro::VarTerm<true>{}, epilogue, ws, stream);
      } else {
        launch_term<T, repro::VarState<S>>(args, repro::VarTerm<false>{}, epilogue, ws, stream);
      }
      return;
    }
    case Op::logsumexp: {
      // One pass: the pairs (m, s) merged in the fixed order (reproducible_stats.hpp).
      launch_term<T, repro::LseState<S>>(args, repro::LseTerm{}, repro::LogSumExpEpilogue<S>{d_out},
                                         ws, stream);
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

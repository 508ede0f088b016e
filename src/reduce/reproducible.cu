// The launch of the gpu_to_gpu mode's fixed-order kernel (reproducible.cuh) for the floating
// types; which calls take it is in reproducible_policy.cpp.

#include "reduce/reproducible.hpp"

#include "reduce/reproducible_launch.cuh"

namespace reducelab::detail {

template <class T>
void launch_reproducible(const Reduction& r, const T* x, const T* y, std::size_t n, void* d_out,
                         const WorkspaceView& ws, cudaStream_t stream) {
  const auto address = reinterpret_cast<std::uintptr_t>(x);
  const repro::ReproArgs<T> args = repro::make_args(x, r.op == Op::dot ? y : nullptr, n, ws);
  using A = sum_t<T>;
  const repro::ResultEpilogue<A> epilogue{d_out, n, r.op};
  if (r.op != Op::dot) {
    repro::launch_fixed_order<T, A, 1, true>(args, repro::PlainTerm<1>{}, epilogue, ws, stream);
  } else if ((address & 15) == (reinterpret_cast<std::uintptr_t>(y) & 15)) {
    repro::launch_fixed_order<T, A, 2, true>(args, repro::PlainTerm<2>{}, epilogue, ws, stream);
  } else {
    repro::launch_fixed_order<T, A, 2, false>(args, repro::PlainTerm<2>{}, epilogue, ws, stream);
  }
}

template void launch_reproducible<float>(const Reduction&, const float*, const float*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_reproducible<double>(const Reduction&, const double*, const double*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_reproducible<__half>(const Reduction&, const __half*, const __half*, std::size_t, void*, const WorkspaceView&, cudaStream_t);
template void launch_reproducible<__nv_bfloat16>(const Reduction&, const __nv_bfloat16*, const __nv_bfloat16*, std::size_t, void*, const WorkspaceView&, cudaStream_t);

}  // namespace reducelab::detail

// Which calls the gpu_to_gpu mode changes (reproducible.hpp): the order-free ones keep the
// default kernels, the whole-array sum, dot, mean and statistics (var, std, var_mean, std_mean,
// logsumexp, norm of ord 1 and 2) of the floating types take the fixed order, and the rest throw
// until they have one.

#include <cmath>
#include <string>

#include "reduce/reproducible.hpp"
#include "reduce/validate.hpp"

namespace reducelab::detail {

bool order_free(const Reduction& r, DType dtype) {
  if (info(dtype).kind != DTypeKind::floating) return true;
  switch (r.op) {
    case Op::min: case Op::max: case Op::argmin: case Op::argmax: case Op::aminmax:
    case Op::count_nonzero: case Op::any: case Op::all:
      return true;
    case Op::norm: return r.ord == 0 || std::isinf(r.ord);
    default: return false;
  }
}

bool is_reproducible_statistic(const Reduction& r) {
  switch (r.op) {
    case Op::var: case Op::std: case Op::var_mean: case Op::std_mean: case Op::logsumexp:
      return true;
    case Op::norm: return r.ord == 1 || r.ord == 2;
    default: return false;
  }
}

bool has_fixed_order(const Reduction& r, DType dtype) {
  return info(dtype).kind == DTypeKind::floating &&
         (r.op == Op::sum || r.op == Op::dot || r.op == Op::mean || is_reproducible_statistic(r));
}

bool takes_fixed_order(const Reduction& r, DType dtype) {
  return r.determinism == Determinism::gpu_to_gpu && !order_free(r, dtype) &&
         has_fixed_order(r, dtype);
}

void require_determinism(const Reduction& r, DType dtype, const char* form) {
  if (r.determinism != Determinism::run_to_run && r.determinism != Determinism::gpu_to_gpu)
    reject("invalid Determinism value " + std::to_string(static_cast<int>(r.determinism)));
  if (r.determinism == Determinism::run_to_run || order_free(r, dtype)) return;
  // The whole-array, segmented and axis forms have the fixed order (reduce_axes checks its
  // strided path itself, axis.cpp); the list form and the sharded reduce's not yet.
  const std::string name(form);
  if ((name == "reduce" || name == "reduce_segments" || name == "reduce_axes") &&
      has_fixed_order(r, dtype))
    return;
  reject(std::string(form) + ": " + std::string(info(r.op).name) + " of " +
         std::string(info(dtype).name) +
         " has no gpu_to_gpu order yet (issue 14: the whole-array, axis and segmented forms "
         "of the floating types have it for sum, dot, mean, var, std, var_mean, std_mean, "
         "logsumexp and norm of ord 1 and 2, the list form and the sharded reduce not yet; "
         "integer ops, min, max, argmin, argmax, aminmax, count_nonzero, any, all and norm "
         "of ord 0, inf and -inf are order-free in every form)");
}

namespace {
ReproducibleLaunch g_launch{};
}  // namespace

void set_reproducible_launch(ReproducibleLaunch launch) { g_launch = launch; }
ReproducibleLaunch reproducible_launch() { return g_launch; }

}  // namespace reducelab::detail

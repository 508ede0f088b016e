#pragma once
//! \file op.hpp
//! The reductions reducelab knows, described once. Name parsing, result layout, the CLI's help,
//! the benchmark, the test lists and the bindings all read kOps; adding an op means a row here,
//! its traits (src/reduce/traits.cuh, or src/reduce/stats_traits.cuh for the statistics) and the
//! row of dispatch_traits that picks them, its CPU reference (src/bench/reference.hpp or
//! stats_reference.hpp) and its CUB baseline (src/bench/cub_baseline.cu), plus a typed
//! convenience call in reduce.hpp.
//!
//! Two ops take a parameter, carried with the op in a Reduction: var, std, var_mean and std_mean
//! a `correction` (torch's), norm an `ord` (torch.linalg.vector_norm's).

#include <array>
#include <cstddef>
#include <string_view>

namespace reducelab {

//! The order of the enumerators is the order of kOps.
enum class Op : int {
  sum, min, max, dot, argmin, argmax,
  mean, var, std, var_mean, std_mean, norm, logsumexp, count_nonzero, any, all, aminmax
};

//! What a reduction returns for element type T (types.hpp names the types).
enum class ResultKind : int {
  accumulator,  //!< sum_t<T>, the type it accumulates in (sum, dot)
  element,      //!< T itself (min, max)
  value_index,  //!< ArgResult<T>: the extreme value and the index of its first occurrence
  statistic,    //!< stat_t<T>: float for f32, f16 and bf16, double for f64 (types.hpp)
  statistic_pair,  //!< StatPair<stat_t<T>>: {var or std, mean}, torch.var_mean's order
  count,        //!< std::int64_t
  boolean,      //!< bool (one byte, 0 or 1)
  min_max,      //!< MinMax<T>: {min, max}
};

//! What a reduction of zero elements does.
enum class EmptyRule : int {
  zero,   //!< gives 0 (all-zero bits in every result type): sum, dot
  error,  //!< throws reducelab::Error: an empty input has no extremum
  value,  //!< the op's documented result of no elements (NaN mean, -inf logsumexp, true all, ...)
};

struct OpInfo {
  Op op;
  std::string_view name;     //!< how the CLI, the results files and the bindings spell it
  int inputs;                //!< arrays read: 2 for dot (x and y), else 1
  ResultKind result;
  EmptyRule empty;
  bool in_ladder;            //!< the teaching ladder (src/ladder) implements it on float
  bool integers;             //!< accepts the integer types (else only f32, f64, f16, bf16)
  std::string_view summary;  //!< one line for help texts
};

inline constexpr OpInfo kOps[] = {
    {Op::sum, "sum", 1, ResultKind::accumulator, EmptyRule::zero, true, true,
     "sum of the elements"},
    {Op::min, "min", 1, ResultKind::element, EmptyRule::error, true, true,
     "smallest element (NaN if any is NaN)"},
    {Op::max, "max", 1, ResultKind::element, EmptyRule::error, true, true,
     "largest element (NaN if any is NaN)"},
    {Op::dot, "dot", 2, ResultKind::accumulator, EmptyRule::zero, true, true,
     "sum of x[i] * y[i] over two arrays"},
    {Op::argmin, "argmin", 1, ResultKind::value_index, EmptyRule::error, false, true,
     "smallest element and its first index (of the first NaN, if any)"},
    {Op::argmax, "argmax", 1, ResultKind::value_index, EmptyRule::error, false, true,
     "largest element and its first index (of the first NaN, if any)"},
    {Op::mean, "mean", 1, ResultKind::statistic, EmptyRule::value, false, false,
     "sum / n (NaN for no elements)"},
    {Op::var, "var", 1, ResultKind::statistic, EmptyRule::value, false, false,
     "variance: sum (x - mean)^2 / max(0, n - correction), one pass (Welford/Chan)"},
    {Op::std, "std", 1, ResultKind::statistic, EmptyRule::value, false, false,
     "standard deviation: sqrt(var)"},
    {Op::var_mean, "var_mean", 1, ResultKind::statistic_pair, EmptyRule::value, false, false,
     "{var, mean} in one pass"},
    {Op::std_mean, "std_mean", 1, ResultKind::statistic_pair, EmptyRule::value, false, false,
     "{std, mean} in one pass"},
    {Op::norm, "norm", 1, ResultKind::statistic, EmptyRule::value, false, false,
     "vector norm of order ord: 0 (nonzeros), 1, 2 (no overflow or underflow), inf, -inf"},
    {Op::logsumexp, "logsumexp", 1, ResultKind::statistic, EmptyRule::value, false, false,
     "log(sum exp(x)) in one pass (running max; -inf for no elements)"},
    {Op::count_nonzero, "count_nonzero", 1, ResultKind::count, EmptyRule::value, false, true,
     "elements != 0 (NaN counts, -0.0 does not)"},
    {Op::any, "any", 1, ResultKind::boolean, EmptyRule::value, false, true,
     "some element != 0 (false for no elements)"},
    {Op::all, "all", 1, ResultKind::boolean, EmptyRule::value, false, true,
     "every element != 0 (true for no elements)"},
    {Op::aminmax, "aminmax", 1, ResultKind::min_max, EmptyRule::error, false, true,
     "smallest and largest element in one pass (both NaN if any is NaN)"},
};
inline constexpr std::size_t kOpCount = sizeof(kOps) / sizeof(kOps[0]);

namespace detail {
constexpr bool ops_in_enum_order() {
  for (std::size_t i = 0; i < kOpCount; ++i)
    if (static_cast<std::size_t>(kOps[i].op) != i) return false;
  return true;
}
static_assert(ops_in_enum_order(), "kOps must list the ops in the order of enum class Op");

enum class OpSet : int { all, ladder, core, statistics };

//! The core ops (sum, min, max, dot, argmin, argmax) return a sum, an element or an element
//! with its index; the statistics (issue 12) return the other kinds.
constexpr bool in_set(const OpInfo& op, OpSet set) {
  const bool core = op.result == ResultKind::accumulator || op.result == ResultKind::element ||
                    op.result == ResultKind::value_index;
  switch (set) {
    case OpSet::all: return true;
    case OpSet::ladder: return op.in_ladder;
    case OpSet::core: return core;
    case OpSet::statistics: return !core;
  }
  return false;
}

template <OpSet kSet>
constexpr std::size_t count_ops() {
  std::size_t count = 0;
  for (const OpInfo& info : kOps) count += in_set(info, kSet) ? 1 : 0;
  return count;
}

template <OpSet kSet>
constexpr std::array<Op, count_ops<kSet>()> list_ops() {
  std::array<Op, count_ops<kSet>()> out{};
  std::size_t next = 0;
  for (const OpInfo& info : kOps)
    if (in_set(info, kSet)) out[next++] = info.op;
  return out;
}
}  // namespace detail

//! True for the enumerators of Op (an Op cast from an out-of-range integer is not).
constexpr bool is_valid(Op op) {
  return static_cast<int>(op) >= 0 && static_cast<std::size_t>(op) < kOpCount;
}
//! The row of kOps for `op`; `op` must be valid.
constexpr const OpInfo& info(Op op) { return kOps[static_cast<std::size_t>(op)]; }

//! Every op, in table order.
inline constexpr auto kAllOps = detail::list_ops<detail::OpSet::all>();
//! The ops the ladder implements on float.
inline constexpr auto kLadderOps = detail::list_ops<detail::OpSet::ladder>();
//! sum, min, max, dot, argmin, argmax: the ops of the first stage, whose results are a sum, an
//! element or an element with its index (bench/reference.hpp checks them).
inline constexpr auto kCoreOps = detail::list_ops<detail::OpSet::core>();
//! mean, var, std, var_mean, std_mean, norm, logsumexp, count_nonzero, any, all, aminmax
//! (bench/stats_reference.hpp checks them).
inline constexpr auto kStatisticOps = detail::list_ops<detail::OpSet::statistics>();

//! The op's name ("?" for an invalid value).
constexpr std::string_view to_string(Op op) { return is_valid(op) ? info(op).name : "?"; }
//! Parses an op name (case-insensitive); throws reducelab::Error naming the valid names.
Op parse_op(std::string_view text);
//! Number of input arrays the op reads (2 for dot).
constexpr int input_arrays(Op op) { return info(op).inputs; }

//! How far the bits of a floating-point result are promised to repeat. Integer results and
//! min, max, argmin, argmax, aminmax, count_nonzero, any and all do not depend on the order of
//! the elements at all, so they are the same bits in both modes, on every GPU.
enum class Determinism : int {
  //! The default: the same input at the same offset in a 16-byte line on the same GPU model gives
  //! the same bits on every call (reduce.hpp's determinism paragraph); another GPU, grid or offset
  //! may round differently.
  run_to_run,
  //! The same bits for the same input values and reducelab version on any GPU, grid, SM count,
  //! pointer offset and stream, and from the CPU (reproducible.hpp says exactly what is promised,
  //! which ops and forms take it, and the accuracy).
  gpu_to_gpu,
};

//! "run_to_run" or "gpu_to_gpu" ("?" for an invalid value).
constexpr std::string_view to_string(Determinism d) {
  switch (d) {
    case Determinism::run_to_run: return "run_to_run";
    case Determinism::gpu_to_gpu: return "gpu_to_gpu";
  }
  return "?";
}

//! An op with its parameters: what every runtime-typed entry point (reduce, reduce_axes,
//! reduce_segments) takes. An Op converts to it implicitly, with the default parameters; the
//! parameters of the ops that have none are ignored.
//!
//!     reducelab::reduce(reducelab::Op::var, ...);               // correction 1, as torch.var
//!     reducelab::reduce(reducelab::Reduction::var(0), ...);     // the population variance
//!     reducelab::reduce(reducelab::Reduction::norm(1), ...);    // sum |x|
//!     reducelab::reduce(reducelab::Reduction(Op::sum).reproducible(), ...);  // gpu_to_gpu
struct Reduction {
  Op op = Op::sum;
  //! var, std, var_mean, std_mean: the divisor is max(0, n - correction); any value >= 0
  //! (torch's `correction`; 1 is Bessel's correction, 0 the population variance).
  double correction = 1;
  //! norm: 0 (the count of nonzeros), 1, 2, +inf (max |x|) or -inf (min |x|).
  double ord = 2;
  //! Every op: run_to_run (default) or gpu_to_gpu (reproducible.hpp).
  Determinism determinism = Determinism::run_to_run;

  constexpr Reduction(Op op_ = Op::sum) : op(op_) {}  // NOLINT: implicit on purpose
  constexpr Reduction(Op op_, double correction_, double ord_)
      : op(op_), correction(correction_), ord(ord_) {}

  static constexpr Reduction var(double correction_ = 1) { return {Op::var, correction_, 2}; }
  static constexpr Reduction stddev(double correction_ = 1) { return {Op::std, correction_, 2}; }
  static constexpr Reduction var_mean(double correction_ = 1) {
    return {Op::var_mean, correction_, 2};
  }
  static constexpr Reduction std_mean(double correction_ = 1) {
    return {Op::std_mean, correction_, 2};
  }
  static constexpr Reduction norm(double ord_ = 2) { return {Op::norm, 1, ord_}; }

  //! This reduction with determinism `d`, its other parameters kept.
  constexpr Reduction with(Determinism d) const {
    Reduction r = *this;
    r.determinism = d;
    return r;
  }
  //! This reduction in the gpu_to_gpu mode: `Reduction(Op::dot).reproducible()`.
  constexpr Reduction reproducible() const { return with(Determinism::gpu_to_gpu); }
};

//! Whether `op` reads `correction` (var, std, var_mean, std_mean).
constexpr bool takes_correction(Op op) {
  return op == Op::var || op == Op::std || op == Op::var_mean || op == Op::std_mean;
}

}  // namespace reducelab

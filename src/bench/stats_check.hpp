#pragma once
// Checks a GPU result of a statistic (kStatisticOps) against the long-double reference and its
// tolerance (stats_reference.hpp): the one comparison the tests and the benchmark make, for a
// whole array, each segment and each result of an axis reduction.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>

#include "bench/reference.hpp"
#include "bench/stats_reference.hpp"
#include "reducelab/op.hpp"
#include "reducelab/types.hpp"

namespace reducelab::bench {

//! Whether `op` is one of the statistics (kStatisticOps), which StatisticCheck checks; the core
//! ops are reference.hpp's.
constexpr bool is_statistic(Op op) {
  return reducelab::detail::in_set(info(op), reducelab::detail::OpSet::statistics);
}

namespace detail {

template <class S>
S read_as(const void* raw, std::size_t at = 0) {
  S value;
  std::memcpy(&value, static_cast<const unsigned char*>(raw) + at * sizeof(S), sizeof(S));
  return value;
}

inline std::string differs(const char* what, long double got, long double want,
                           long double bound) {
  if (within(got, want, bound)) return {};
  std::ostringstream out;
  out.precision(17);
  out << what << " " << static_cast<double>(got) << ", expected " << static_cast<double>(want)
      << " within " << static_cast<double>(bound) << " (off by "
      << static_cast<double>(std::fabs(got - want)) << ")";
  return out.str();
}

}  // namespace detail

//! The check of one statistic r of x[0, n): the reference is worked out once, at construction,
//! and each call compares a result with it. `segment_rules`: n == 0 gives the segmented and axis
//! reductions' documented result (segmented.hpp) where the whole-array call throws (aminmax: the
//! identities; norm ord inf: 0, ord -inf: +inf).
template <class T>
class StatisticCheck {
 public:
  StatisticCheck(const Reduction& r, const T* x, std::size_t n, bool segment_rules = false)
      : r_(r), n_(n), segment_rules_(segment_rules) {
    switch (r.op) {
      case Op::mean:
      case Op::var:
      case Op::std:
      case Op::var_mean:
      case Op::std_mean:
        moments_ = moments_reference(x, n, r.op == Op::mean ? 0 : r.correction);
        break;
      case Op::norm:
        if (!(n == 0 && std::isinf(r.ord))) norm_ = norm_reference(x, n, r.ord);
        break;
      case Op::logsumexp: logsumexp_ = logsumexp_reference(x, n); break;
      case Op::count_nonzero:
      case Op::any:
      case Op::all: nonzero_ = count_nonzero_reference(x, n); break;
      case Op::aminmax: aminmax_ = aminmax_reference(x, n); break;
      default: break;
    }
  }

  //! "" when `raw` (result_size(r.op, dtype) bytes, as the GPU wrote them) is the statistic
  //! within its tolerance, else what differs.
  std::string operator()(const void* raw) const {
    using S = stat_t<T>;
    const S got = detail::read_as<S>(raw);
    const MomentsReference& m = moments_;
    switch (r_.op) {
      case Op::mean: return detail::differs("mean", got, m.mean, mean_tolerance<T>(m));
      case Op::var:
      case Op::std:
      case Op::var_mean:
      case Op::std_mean: {
        const bool is_std = r_.op == Op::std || r_.op == Op::std_mean;
        std::string why = is_std ? detail::differs("std", got, m.stddev, std_tolerance<T>(m))
                                 : detail::differs("var", got, m.var, var_tolerance<T>(m));
        if (why.empty() && (r_.op == Op::var_mean || r_.op == Op::std_mean))
          why = detail::differs("mean", detail::read_as<S>(raw, 1), m.mean, mean_tolerance<T>(m));
        return why;
      }
      case Op::norm: {
        if (n_ == 0 && std::isinf(r_.ord)) {
          if (!segment_rules_) return "norm with ord inf of no elements has no result";
          const long double want =
              r_.ord > 0 ? 0.0L : std::numeric_limits<long double>::infinity();
          return detail::differs("norm", got, want, 0);
        }
        return detail::differs("norm", got, norm_.value, norm_tolerance<T>(norm_));
      }
      case Op::logsumexp:
        return detail::differs("logsumexp", got, logsumexp_.value,
                               logsumexp_tolerance<T>(logsumexp_));
      case Op::count_nonzero: {
        const auto count = detail::read_as<std::int64_t>(raw);
        if (count == static_cast<std::int64_t>(nonzero_)) return {};
        return "count_nonzero " + std::to_string(count) + ", expected " + std::to_string(nonzero_);
      }
      case Op::any:
      case Op::all: {
        const auto byte = detail::read_as<unsigned char>(raw);
        const bool want = r_.op == Op::any ? nonzero_ > 0 : nonzero_ == n_;
        if (byte == (want ? 1 : 0)) return {};
        return std::string(to_string(r_.op)) + " byte " + std::to_string(byte) + ", expected " +
               (want ? "1" : "0");
      }
      case Op::aminmax: {
        if (n_ == 0 && !segment_rules_) return "aminmax of no elements has no result";
        const auto pair = detail::read_as<MinMax<T>>(raw);
        if (same_value(pair.min, aminmax_.min) && same_value(pair.max, aminmax_.max)) return {};
        return "aminmax {" + std::to_string(to_double(pair.min)) + ", " +
               std::to_string(to_double(pair.max)) + "}, expected {" +
               std::to_string(to_double(aminmax_.min)) + ", " +
               std::to_string(to_double(aminmax_.max)) + "}";
      }
      default: return "not a statistic: " + std::string(to_string(r_.op));
    }
  }

 private:
  Reduction r_;
  std::size_t n_;
  bool segment_rules_;
  MomentsReference moments_;
  NormReference norm_;
  LogsumexpReference logsumexp_;
  std::uint64_t nonzero_ = 0;
  AminmaxReference<T> aminmax_;
};

//! StatisticCheck's answer for one result.
template <class T>
std::string check_statistic(const Reduction& r, const T* x, std::size_t n, const void* raw,
                            bool segment_rules = false) {
  return StatisticCheck<T>(r, x, n, segment_rules)(raw);
}

}  // namespace reducelab::bench

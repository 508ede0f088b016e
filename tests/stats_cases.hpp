#pragma once
// The statistics' test cases shared by the GPU tests (test_stats.cpp, test_tensors.cpp): every
// statistic a type takes with the parameters worth covering, and how a failure names it.

#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "reducelab/op.hpp"
#include "reducelab/types.hpp"

namespace reducelab::test {

//! Every statistic with the parameters worth covering: both corrections, every ord.
inline std::vector<Reduction> statistics_for(DType dtype) {
  std::vector<Reduction> out;
  for (Op op : kStatisticOps) {
    if (!info(op).integers && info(dtype).kind != DTypeKind::floating) continue;
    if (takes_correction(op)) {
      out.push_back({op, 1, 2});
      out.push_back({op, 0, 2});
    } else if (op == Op::norm) {
      const double inf = std::numeric_limits<double>::infinity();
      for (double ord : {2.0, 1.0, 0.0, inf, -inf}) out.push_back(Reduction::norm(ord));
    } else {
      out.push_back(op);
    }
  }
  return out;
}

inline std::string describe(const Reduction& r) {
  std::ostringstream out;
  out << to_string(r.op);
  if (takes_correction(r.op)) out << "(correction " << r.correction << ")";
  if (r.op == Op::norm) out << "(ord " << r.ord << ")";
  return out.str();
}

}  // namespace reducelab::test

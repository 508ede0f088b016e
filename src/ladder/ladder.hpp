#pragma once
// The teaching ladder: eight rungs V0..V7 of a float reduce kernel, after the article
// "Reduce 算子优化" ("optimising the reduce operator", a Chinese write-up of this ladder; each rung
// retold in docs/ladder.md). This header is the one registry of rungs: the CLI help, the
// benchmark loop and the tests all iterate over `rungs()`, so they cannot disagree.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "reducelab/op.hpp"

namespace reducelab::ladder {

// Every rung implements sum, min, max and dot (kLadderOps) on float.
using reducelab::Op;

//! One whole reduction: n floats (two arrays for dot, folded as x*y at the load) to one float.
struct Problem {
  const float* d_x = nullptr;
  const float* d_y = nullptr;  //!< dot only
  std::size_t n = 0;           //!< >= 1
  Op op = Op::sum;
  float* d_out = nullptr;        //!< one float, device memory
  float* d_workspace = nullptr;  //!< Rung::workspace_elems(n) floats for the partials
};

struct Rung {
  const char* id;             //!< "V0".."V7"
  const char* name;           //!< short name, e.g. "sequential addressing"
  const char* change;         //!< what changed from the previous rung
  const char* bottleneck;     //!< the bottleneck the change removes (the article's table)
  const char* preconditions;  //!< what the kernel assumes
  int block_size;             //!< threads per block
  int elements_per_thread;    //!< elements a thread loads in the first pass, before looping
  //! Floats of workspace for the per-block partials of all passes.
  std::size_t (*workspace_elems)(std::size_t n);
  //! Enqueues every pass on `stream`: partials are reduced again by the same rung until one
  //! value remains in problem.d_out. Throws reducelab::Error on a launch failure.
  void (*launch)(const Problem& problem, cudaStream_t stream);
};

//! V0..V7, in order.
const std::vector<Rung>& rungs();
//! The rung with this id (case-insensitive), or nullptr.
const Rung* find_rung(std::string_view id);
//! Parses "all" or a comma-separated list of ids; throws reducelab::Error on an unknown id.
std::vector<const Rung*> parse_rung_list(std::string_view text);

//! True for sum, min, max and dot.
constexpr bool supports(Op op) { return op == Op::sum || op == Op::min || op == Op::max || op == Op::dot; }

//! Validates the problem (op, non-null device pointers, n >= 1, float alignment, workspace) and
//! launches the rung. The entry point the benchmark and the tests use.
void run(const Rung& rung, const Problem& problem, cudaStream_t stream = nullptr);

}  // namespace reducelab::ladder

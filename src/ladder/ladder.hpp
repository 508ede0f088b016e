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

//! The reduction one block runs after its global load, as the rung's kernel writes it. The CPU
//! model (src/model) replays one block of each shape thread by thread.
enum class TreeShape {
  //! V0: step = 1, 2, 4, ..: threads with tid % (2*step) == 0 fold smem[tid + step].
  modulo,
  //! V1: s = 1, 2, 4, ..: index = 2*s*tid; threads with index < B fold smem[index + s].
  interleaved,
  //! V2, V3: s = B/2 .. 1: threads with tid < s fold smem[tid + s].
  sequential,
  //! V4, V5: the same while s > 32, then warp 0's unrolled tail (warp_tail.cuh), no barriers.
  sequential_then_warp_tail,
  //! V6, V7: the value stays in a register; shuffles in every warp, one smem slot per warp, then
  //! shuffles in warp 0 (device/block_reduce.cuh).
  warp_shuffle,
};

//! How the first pass sizes its grid (each rung's grid_for()).
enum class GridRule {
  //! ceil(n / (block_size x elements_per_thread)): every thread folds its elements once.
  cover,
  //! The same, capped at the blocks the GPU holds at once (SMs x resident blocks per SM); a
  //! grid-stride loop covers the rest.
  resident,
};

struct Rung {
  const char* id;             //!< "V0".."V7"
  const char* name;           //!< short name, e.g. "sequential addressing"
  const char* change;         //!< what changed from the previous rung
  const char* bottleneck;     //!< the bottleneck the change removes (the article's table)
  const char* preconditions;  //!< what the kernel assumes
  int block_size;             //!< threads per block
  //! Elements per thread the first pass's grid is sized for (see GridRule): 1 for V0..V2, 2 for
  //! V3..V6, 8 (two float4) for V7, whose grid cap gives each thread more at large n.
  int elements_per_thread;
  int load_width;  //!< floats per global load instruction: 1, or 4 for V7's float4
  TreeShape tree;  //!< the block's reduction after the load
  GridRule grid;   //!< how the first pass sizes its grid
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
//! The rung with this id (case-insensitive); throws reducelab::Error naming the valid ids (and
//! the nearest one, for a close typo) on an unknown id.
const Rung& get_rung(std::string_view id);
//! Parses "all" or a comma-separated list of ids; throws reducelab::Error on an unknown id, with
//! the same suggestion as get_rung().
std::vector<const Rung*> parse_rung_list(std::string_view text);

//! True for the ops kOps marks as in the ladder (kLadderOps).
constexpr bool supports(Op op) { return is_valid(op) && info(op).in_ladder; }
//! "sum, min, max and dot": the names of kLadderOps, for messages and help texts.
std::string supported_ops_text();

//! Validates the problem (op, non-null device pointers, n >= 1, float alignment, workspace) and
//! launches the rung. The entry point the benchmark and the tests use.
void run(const Rung& rung, const Problem& problem, cudaStream_t stream = nullptr);

}  // namespace reducelab::ladder

// The one registry of rungs. Descriptions follow the article's "bottleneck -> countermeasure"
// table; each rung's file opens with the longer version of the same text.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "common/text.hpp"
#include "ladder/ladder.hpp"
#include "reducelab/error.hpp"

namespace reducelab::ladder {

// Defined in v0_naive_tree.cu .. v7_vector_grid_stride.cu.
void launch_v0(const Problem&, cudaStream_t);
void launch_v1(const Problem&, cudaStream_t);
void launch_v2(const Problem&, cudaStream_t);
void launch_v3(const Problem&, cudaStream_t);
void launch_v4(const Problem&, cudaStream_t);
void launch_v5(const Problem&, cudaStream_t);
void launch_v6(const Problem&, cudaStream_t);
void launch_v7(const Problem&, cudaStream_t);
std::size_t workspace_v0(std::size_t);
std::size_t workspace_v1(std::size_t);
std::size_t workspace_v2(std::size_t);
std::size_t workspace_v3(std::size_t);
std::size_t workspace_v4(std::size_t);
std::size_t workspace_v5(std::size_t);
std::size_t workspace_v6(std::size_t);
std::size_t workspace_v7(std::size_t);

const std::vector<Rung>& rungs() {
  using G = GridRule;
  using T = TreeShape;
  static const std::vector<Rung> registry = {
      {"V0", "naive tree", "tid % (2*step) == 0 picks the working threads",
       "none (the baseline: warp divergence at every step)", "power-of-two block (256); any n >= 1",
       256, 1, 1, T::modulo, G::cover, workspace_v0, launch_v0},
      {"V1", "interleaved addressing", "index = 2*s*tid: whole warps enter or skip",
       "warp divergence (creates bank conflicts)", "power-of-two block (256); any n >= 1", 256, 1,
       1, T::interleaved, G::cover, workspace_v1, launch_v1},
      {"V2", "sequential addressing", "stride starts at blockDim/2 and halves",
       "bank conflicts and divergence", "power-of-two block (256); any n >= 1", 256, 1, 1,
       T::sequential, G::cover, workspace_v2, launch_v2},
      {"V3", "two loads per thread", "first add during the global load; half the blocks",
       "idle threads", "power-of-two block (256); any n >= 1", 256, 2, 1, T::sequential, G::cover,
       workspace_v3, launch_v3},
      {"V4", "unroll the last warp", "last 6 steps in warp 0, no __syncthreads()",
       "redundant barriers", "power-of-two block >= 64 (256); any n >= 1", 256, 2, 1,
       T::sequential_then_warp_tail, G::cover, workspace_v4, launch_v4},
      {"V5", "complete unroll", "block size a template parameter; no loops",
       "loop overhead and barriers",
       "power-of-two block 64..1024 at compile time (256); any n >= 1", 256, 2, 1,
       T::sequential_then_warp_tail, G::cover, workspace_v5, launch_v5},
      {"V6", "warp shuffle", "__shfl_down_sync in warps, smem only between warps",
       "shared-memory round trips", "block a multiple of 32 (256); any n >= 1", 256, 2, 1,
       T::warp_shuffle, G::cover, workspace_v6, launch_v6},
      {"V7", "float4 + grid-stride", "16-byte loads; a grid that just fills the GPU",
       "per-element loads and idle blocks",
       "any n >= 1 and any float-aligned pointer (scalar head and tail)", 256, 8, 4,
       T::warp_shuffle, G::resident, workspace_v7, launch_v7},
  };
  return registry;
}

namespace {
using ::reducelab::detail::to_lower;

// The ids, and "all" where a list of rungs is parsed, for the message of an unknown id.
[[noreturn]] void throw_unknown_rung(std::string_view id, bool all_allowed) {
  std::vector<std::string_view> names;
  for (const Rung& rung : rungs()) names.emplace_back(rung.id);
  if (all_allowed) names.emplace_back("all");
  throw Error(ErrorCode::invalid_argument,
              ::reducelab::detail::unknown_name_message("rung", id, names));
}
}  // namespace

const Rung* find_rung(std::string_view id) {
  const std::string wanted = to_lower(id);
  for (const Rung& rung : rungs())
    if (to_lower(rung.id) == wanted) return &rung;
  return nullptr;
}

const Rung& get_rung(std::string_view id) {
  const Rung* rung = find_rung(id);
  if (rung == nullptr) throw_unknown_rung(id, false);
  return *rung;
}

std::vector<const Rung*> parse_rung_list(std::string_view text) {
  std::vector<const Rung*> out;
  if (to_lower(text) == "all") {
    for (const Rung& rung : rungs()) out.push_back(&rung);
    return out;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view id = text.substr(start, comma - start);
    if (!id.empty()) {
      const Rung* rung = find_rung(id);
      if (rung == nullptr) throw_unknown_rung(id, true);
      if (std::find(out.begin(), out.end(), rung) == out.end()) out.push_back(rung);
    }
    start = comma + 1;
  }
  if (out.empty()) throw Error(ErrorCode::invalid_argument, "no rung given");
  return out;
}

std::string supported_ops_text() {
  std::string text;
  for (std::size_t i = 0; i < kLadderOps.size(); ++i) {
    if (i > 0) text += i + 1 == kLadderOps.size() ? " and " : ", ";
    text += to_string(kLadderOps[i]);
  }
  return text;
}

}  // namespace reducelab::ladder

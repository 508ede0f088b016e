#pragma once
// The CPU model behind `reducelab explain`: replays, thread by thread, what one block of each
// ladder rung (src/ladder/v0_*.cu .. v7_*.cu) does after its global load, and counts the
// article's bottlenecks per step: idle lanes, divergent warps, shared-memory bank conflicts and
// barriers. The article states these figures for B = 256 (V0: 16/32 lanes at step 1; V1: 2-, 4-,
// 8-way conflicts at s = 1, 2, 4); the model derives them from the kernels' index arithmetic, so
// they can be checked for any block size on a machine without a GPU.
//
// What the model assumes, and why:
// - Full blocks (no `gid < n` guard active): the guards only touch the last block, and they decide
//   values, not which threads take part in the tree.
// - A "step" is one iteration of a tree loop (or one unrolled `if`, one line of the warp tail, one
//   shuffle round) including the barrier that follows it in the kernel.
// - Every rung's steps[0] is the load: the global loads and, for V0..V5, the store to smem[tid]
//   and the __syncthreads() after it. Barrier totals include it (they are what a block really
//   executes); the other summary figures (steps, lane utilisation, divergence) cover the
//   reduction steps after it, which is what the article's tables talk about.
// - Active lanes are the lanes that execute the step's body. In the warp tail all 32 lanes of
//   warp 0 execute every line (the kernel has no branch there), although from +16 on the upper
//   lanes compute values nobody reads; the model reports execution, as the hardware counts it.
// - The ladder kernels are compiled for B = 256; other block sizes show what the same code would
//   do (V4 and V5 need B >= 64, so the model accepts powers of two in [64, 1024]).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/ladder.hpp"

namespace reducelab::model {

constexpr int kWarpSize = 32;
constexpr int kBanks = 32;  //!< 4-byte shared-memory banks on every GPU since Fermi
constexpr std::uint64_t kMaxGridBlocks = 2147483647;  //!< gridDim.x limit (2^31 - 1)

//! Where a step sits in the rung's kernel.
enum class StepKind {
  load,        //!< global loads (+ store to smem and barrier for V0..V5); always steps[0]
  smem_tree,   //!< one iteration of the shared-memory tree, followed by __syncthreads()
  warp_tail,   //!< one line of the volatile-smem warp tail of V4/V5 (warp_tail.cuh)
  shuffle,     //!< one __shfl_down_sync round in every warp that executes it
  cross_warp,  //!< V6/V7: lane 0 of each warp writes its partial, or warp 0 reads them back
};

//! What one step costs in one block.
struct StepStats {
  std::string label;  //!< "s=128", "warp tail +16", "shfl 16", "warp partials to smem", ...
  StepKind kind = StepKind::smem_tree;
  int active_threads = 0;   //!< threads of the block that execute the step's body
  int warps_executing = 0;  //!< warps with at least one active lane
  //! Mean over the executing warps of active lanes / 32 (0 when no warp executes).
  double lane_utilisation = 0.0;
  int min_active_lanes = 0;  //!< fewest active lanes in an executing warp
  int max_active_lanes = 0;  //!< most active lanes in an executing warp
  int divergent_warps = 0;   //!< warps with 0 < active lanes < 32: lanes disagree on the branch
  int smem_loads = 0;        //!< shared-memory load instructions per executing warp
  int smem_stores = 0;       //!< shared-memory store instructions per executing warp
  //! Worst bank-conflict degree over the step's shared-memory instructions and warps: the most
  //! distinct 4-byte words one bank must serve for one instruction. 1: conflict-free; 0: the
  //! step does not touch shared memory.
  int bank_conflict_degree = 0;
  int block_barriers = 0;  //!< __syncthreads() executed by the block in this step
  int warp_syncs = 0;      //!< __syncwarp() executed by each executing warp in this step
};

//! One rung at one block size: the replayed steps and their summary.
struct RungModel {
  std::string id;                //!< "V0".."V7"
  int block = 0;                 //!< threads per block
  std::vector<StepStats> steps;  //!< steps[0] is the load (StepKind::load)

  // Summary. Barrier totals include the load step; the rest covers steps[1..].
  int reduction_steps = 0;             //!< steps after the load
  int block_barriers = 0;              //!< __syncthreads() per block, load step included
  int warp_syncs = 0;                  //!< __syncwarp() per executing warp, summed over steps
  double mean_lane_utilisation = 0.0;  //!< unweighted mean of the reduction steps' utilisation
  int max_bank_conflict_degree = 0;    //!< over all steps
  int divergent_steps = 0;             //!< reduction steps with at least one divergent warp
  //! Elements a thread folds before the tree (Rung::elements_per_thread): 1 (V0..V2), 2 (V3..V6),
  //! 8 for V7 by design (its grid is sized for two float4 per thread, then capped at the full
  //! GPU, so large n gives each thread more: launch_stats() has the average for a given n).
  int elements_per_thread = 0;
  //! Global load instructions per input element, 1 / Rung::load_width: 1 for scalar loads, 0.25
  //! for V7's float4.
  double global_loads_per_element = 0.0;
};

//! The GPU that V7's grid formula needs. The model runs without a device, so it assumes an
//! H200 (132 SMs, 2048 resident threads per SM on sm_90); V7 queries the real figures at run time.
struct Machine {
  int sms = 132;
  //! Resident blocks per SM; 0 means min(32, 2048 / block), which is 8 at B = 256.
  int blocks_per_sm = 0;
};

//! The first pass of a rung over n elements, and how many passes the ladder driver launches.
struct LaunchStats {
  std::size_t n = 0;
  std::uint64_t blocks = 0;     //!< blocks of the first pass
  bool grid_capped = false;     //!< V7: the full-GPU bound (SMs x blocks/SM) decided the grid
  std::uint64_t full_grid = 0;  //!< V7: SMs x blocks/SM; 0 for the other rungs
  //! n / (blocks x B): the average elements per thread of the first pass.
  double elements_per_thread = 0.0;
  //! blocks <= 2^31-1: the ladder's blocks_for() throws beyond that, as a grid's x dimension ends.
  bool fits_grid = true;
  int passes = 0;  //!< kernel launches until one value remains (ladder/passes.cuh)
};

//! Replays `rung` (an entry of ladder::rungs(): its tree shape, load and grid rule) for a block
//! of `block` threads. Throws reducelab::Error (invalid_argument) on a block that is not a power
//! of two in [64, 1024].
RungModel model_rung(const ladder::Rung& rung, int block);
//! The same for the rung with this id (case-insensitive); throws reducelab::Error
//! (invalid_argument) on an unknown id, naming the valid ones.
RungModel model_rung(std::string_view id, int block);
//! model_rung() for every rung of ladder::rungs(), in order.
std::vector<RungModel> model_all(int block);

//! The grid and pass count of `rung` over n >= 1 elements (throws reducelab::Error on n = 0 or a
//! bad Machine). Mirrors each rung's grid_for() after its Rung::grid: ceil(n/B) for V0..V2,
//! ceil(n/2B) for V3..V6, min(ceil(n/8B), SMs x blocks/SM) for V7.
LaunchStats launch_stats(const RungModel& rung, std::size_t n, const Machine& machine = {});

//! Bank-conflict degree of one shared-memory instruction of one warp, given the 4-byte word
//! index each active lane accesses: the most distinct words that fall in one bank (word % 32).
//! Lanes on the same word are served by one broadcast and count once. 0 for no lanes.
int bank_conflict_degree(const std::vector<std::int64_t>& word_addresses_of_active_lanes);

//! Markdown for one rung: the per-step table, then the summary for n elements.
std::string render_markdown(const RungModel& rung, std::size_t n, const Machine& machine = {});
//! Markdown: one summary row per rung, to compare the ladder at a glance.
std::string render_overview_markdown(const std::vector<RungModel>& rungs, std::size_t n,
                                     const Machine& machine = {});

//! "134217728 (2^27)" for powers of two, plain digits otherwise.
std::string format_count(std::size_t n);

}  // namespace reducelab::model

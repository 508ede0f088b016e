// The CPU model of the ladder rungs (see model.hpp for what it assumes). Each rung is written as
// the list of steps its kernel executes, each step as "which threads take the branch" plus "which
// shared-memory word each active thread touches, per instruction"; replay() evaluates those for
// every thread of the block. The figures are therefore derived from the kernels' index arithmetic,
// never typed in, and the tests compare them with the article's tables.

#include "model/model.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "reducelab/error.hpp"

namespace reducelab::model {
namespace {

// One shared-memory instruction: the word (4-byte index into the smem array) a thread accesses.
struct Access {
  bool store = false;
  std::function<std::int64_t(int tid)> word;
};

// One step as the kernel writes it.
struct StepSpec {
  std::string label;
  StepKind kind = StepKind::smem_tree;
  std::function<bool(int tid)> active;
  std::vector<Access> accesses;  // in program order
  int block_barriers = 0;
  int warp_syncs = 0;
};

Access load_at(std::function<std::int64_t(int)> word) { return {false, std::move(word)}; }
Access store_at(std::function<std::int64_t(int)> word) { return {true, std::move(word)}; }

StepStats replay(const StepSpec& spec, int block) {
  StepStats out;
  out.label = spec.label;
  out.kind = spec.kind;
  out.block_barriers = spec.block_barriers;
  out.warp_syncs = spec.warp_syncs;
  out.min_active_lanes = kWarpSize;
  double utilisation_sum = 0.0;
  std::vector<std::int64_t> words;
  for (int warp = 0; warp < block / kWarpSize; ++warp) {
    std::vector<int> lanes;  // thread ids of the warp's active lanes
    for (int lane = 0; lane < kWarpSize; ++lane) {
      const int tid = warp * kWarpSize + lane;
      if (spec.active(tid)) lanes.push_back(tid);
    }
    const int active = static_cast<int>(lanes.size());
    if (active == 0) continue;  // the whole warp skips the branch: no divergence, no cost
    ++out.warps_executing;
    out.active_threads += active;
    utilisation_sum += static_cast<double>(active) / kWarpSize;
    out.min_active_lanes = std::min(out.min_active_lanes, active);
    out.max_active_lanes = std::max(out.max_active_lanes, active);
    if (active < kWarpSize) ++out.divergent_warps;
    // Each instruction is a separate shared-memory request, so conflicts are per instruction,
    // per warp; the step pays for its worst one.
    for (const Access& access : spec.accesses) {
      words.clear();
      for (int tid : lanes) words.push_back(access.word(tid));
      out.bank_conflict_degree = std::max(out.bank_conflict_degree, bank_conflict_degree(words));
    }
  }
  if (out.warps_executing == 0) {
    out.min_active_lanes = 0;
  } else {
    out.lane_utilisation = utilisation_sum / out.warps_executing;
    for (const Access& access : spec.accesses) ++(access.store ? out.smem_stores : out.smem_loads);
  }
  return out;
}

// ---- The rungs, line by line after src/ladder/v*_*.cu ----------------------------------------

// V0..V5: smem[tid] = loaded value; __syncthreads();
StepSpec load_to_smem(std::string label) {
  return {std::move(label),
          StepKind::load,
          [](int) { return true; },
          {store_at([](int tid) { return tid; })},
          1,
          0};
}

// V6/V7: the loaded value stays in a register; block_reduce starts with shuffles at once.
StepSpec load_to_registers(std::string label) {
  return {std::move(label), StepKind::load, [](int) { return true; }, {}, 0, 0};
}

// V2..V5: if (tid < s) smem[tid] = combine(smem[tid], smem[tid + s]); __syncthreads();
StepSpec sequential_step(int s) {
  return {"s=" + std::to_string(s),
          StepKind::smem_tree,
          [s](int tid) { return tid < s; },
          {load_at([](int tid) { return tid; }), load_at([s](int tid) { return tid + s; }),
           store_at([](int tid) { return tid; })},
          1,
          0};
}

// warp_tail.cuh, called under `if (tid < 32)`: each line reads smem[tid + offset] into a register,
// __syncwarp(), stores smem[tid], __syncwarp() (the last line has no trailing __syncwarp). The
// first line also reads smem[tid] itself. No __syncthreads(): only warp 0 works.
void append_warp_tail(std::vector<StepSpec>& steps) {
  for (int offset = 32; offset >= 1; offset /= 2) {
    StepSpec step{"warp tail +" + std::to_string(offset),
                  StepKind::warp_tail,
                  [](int tid) { return tid < kWarpSize; },
                  {},
                  0,
                  offset > 1 ? 2 : 1};
    if (offset == 32) step.accesses.push_back(load_at([](int tid) { return tid; }));
    step.accesses.push_back(load_at([offset](int tid) { return tid + offset; }));
    step.accesses.push_back(store_at([](int tid) { return tid; }));
    steps.push_back(std::move(step));
  }
}

// device/block_reduce.cuh after the load: warp_reduce in every warp; lane 0 writes
// warp_slots[warp]; __syncthreads(); warp 0 reads `lane < kWarps ? warp_slots[lane] : identity`
// and runs warp_reduce again. Shuffles move registers, so they touch no shared memory.
void append_block_reduce(std::vector<StepSpec>& steps, int block) {
  const int warps = block / kWarpSize;
  for (int offset = kWarpSize / 2; offset >= 1; offset /= 2)
    steps.push_back(
        {"shfl " + std::to_string(offset), StepKind::shuffle, [](int) { return true; }, {}, 0, 0});
  steps.push_back({"warp partials to smem",
                   StepKind::cross_warp,
                   [](int tid) { return tid % kWarpSize == 0; },
                   {store_at([](int tid) { return tid / kWarpSize; })},
                   1,
                   0});
  steps.push_back({"warp 0 reads partials",
                   StepKind::cross_warp,
                   [warps](int tid) { return tid < kWarpSize && tid < warps; },
                   {load_at([](int tid) { return tid; })},
                   0,
                   0});
  for (int offset = kWarpSize / 2; offset >= 1; offset /= 2)
    steps.push_back({"warp 0 shfl " + std::to_string(offset),
                     StepKind::shuffle,
                     [](int tid) { return tid < kWarpSize; },
                     {},
                     0,
                     0});
}

// How the rung loads: "load", "2 loads", "float4 grid-stride loop", from its load width,
// elements per thread and grid rule.
std::string load_label(const ladder::Rung& rung) {
  std::string label;
  if (rung.grid == ladder::GridRule::resident) {
    if (rung.load_width > 1) label = "float" + std::to_string(rung.load_width) + " ";
    label += "grid-stride loop";
  } else {
    label = rung.elements_per_thread == 1 ? "load"
                                          : std::to_string(rung.elements_per_thread) + " loads";
  }
  return label;
}

std::vector<StepSpec> rung_steps(const ladder::Rung& rung, int block) {
  // Only the shuffle tree keeps the loaded value in a register.
  const std::string load = load_label(rung);
  std::vector<StepSpec> steps = {rung.tree == ladder::TreeShape::warp_shuffle
                                     ? load_to_registers(load + " -> registers")
                                     : load_to_smem(load + " -> smem")};
  switch (rung.tree) {
    // for (step = 1; step < blockDim.x; step *= 2) if (tid % (2*step) == 0) ...
    case ladder::TreeShape::modulo:
      for (int step = 1; step < block; step *= 2)
        steps.push_back(
            {"s=" + std::to_string(step),
             StepKind::smem_tree,
             [step](int tid) { return tid % (2 * step) == 0; },
             {load_at([](int tid) { return tid; }), load_at([step](int tid) { return tid + step; }),
              store_at([](int tid) { return tid; })},
             1,
             0});
      break;
    // for (s = 1; s < blockDim.x; s *= 2) { index = 2*s*tid; if (index < blockDim.x) ...
    case ladder::TreeShape::interleaved:
      for (int s = 1; s < block; s *= 2) {
        auto index = [s](int tid) { return std::int64_t{2} * s * tid; };
        steps.push_back({"s=" + std::to_string(s),
                         StepKind::smem_tree,
                         [index, block](int tid) { return index(tid) < block; },
                         {load_at(index), load_at([index, s](int tid) { return index(tid) + s; }),
                          store_at(index)},
                         1,
                         0});
      }
      break;
    // for (s = blockDim.x / 2; s > 0; s >>= 1) if (tid < s) ...
    case ladder::TreeShape::sequential:
      for (int s = block / 2; s > 0; s /= 2) steps.push_back(sequential_step(s));
      break;
    // V4: the same loop while s > 32, then warp_tail. V5: `if constexpr (kBlockSize >= 2s)` per
    // step: the same steps, decided at compile time.
    case ladder::TreeShape::sequential_then_warp_tail:
      for (int s = block / 2; s > 32; s /= 2) steps.push_back(sequential_step(s));
      append_warp_tail(steps);
      break;
    case ladder::TreeShape::warp_shuffle:
      append_block_reduce(steps, block);
      break;
  }
  return steps;
}

void check_block(int block) {
  if (block < 64 || block > 1024 || (block & (block - 1)) != 0)
    throw Error(ErrorCode::invalid_argument,
                "block size " + std::to_string(block) +
                    " is not a power of two in [64, 1024] (V0..V3 need a power of two, V4 and V5 "
                    "at least 64 threads, and a block holds at most 1024)");
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Elements one block covers before the grid formula (ladder/*.cu, grid_for()).
std::uint64_t items_per_block(const ladder::Rung& rung, int block) {
  return static_cast<std::uint64_t>(rung.elements_per_thread) * static_cast<std::uint64_t>(block);
}

bool resident_grid(const ladder::Rung& rung) { return rung.grid == ladder::GridRule::resident; }

// "two" for 2: how the summary counts V7's vector loads in words.
std::string count_in_words(int count) {
  static const char* const kWords[] = {"zero", "one", "two",   "three", "four",
                                       "five", "six", "seven", "eight"};
  return count >= 0 && count <= 8 ? kWords[count] : std::to_string(count);
}

// sm_90 keeps at most 2048 threads and 32 blocks resident per SM; V7's registers and its
// 32-float smem array do not lower that at B = 256 (cudaOccupancy... reports 8 on the H200).
int resolved_blocks_per_sm(int block, const Machine& machine) {
  return machine.blocks_per_sm > 0 ? machine.blocks_per_sm : std::min(32, 2048 / block);
}

std::uint64_t full_grid(int block, const Machine& machine) {
  return static_cast<std::uint64_t>(machine.sms) *
         static_cast<std::uint64_t>(resolved_blocks_per_sm(block, machine));
}

std::string format_percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", fraction * 100.0);
  std::string out = text;
  if (out.size() > 2 && out.compare(out.size() - 2, 2, ".0") == 0) out.resize(out.size() - 2);
  return out + "%";
}

std::string format_degree(int degree) {
  if (degree == 0) return "-";
  if (degree == 1) return "1 (none)";
  return std::to_string(degree) + "-way";
}

std::string format_lanes(const StepStats& step) {
  if (step.warps_executing == 0) return "-";
  if (step.min_active_lanes == step.max_active_lanes)
    return std::to_string(step.max_active_lanes) + "/32";
  return std::to_string(step.min_active_lanes) + "-" + std::to_string(step.max_active_lanes) +
         "/32";
}

std::string format_smem_ops(const StepStats& step) {
  if (step.smem_loads + step.smem_stores == 0) return "-";
  return std::to_string(step.smem_loads) + "/" + std::to_string(step.smem_stores);
}

std::string format_loads_per_element(double loads) {
  return loads == 1.0 ? "1" : (loads == 0.25 ? "0.25 (float4)" : std::to_string(loads));
}

// Overview column: the fixed figure, or, where the grid is capped, the average for this n.
std::string format_average_elements(const RungModel& rung, const LaunchStats& launch) {
  if (!resident_grid(ladder::get_rung(rung.id))) return std::to_string(rung.elements_per_thread);
  char average[32];
  std::snprintf(average, sizeof average, "%.1f", launch.elements_per_thread);
  return average;
}

std::string format_elements_per_thread(const RungModel& rung, const LaunchStats& launch) {
  const ladder::Rung& source = ladder::get_rung(rung.id);
  if (!resident_grid(source)) return std::to_string(rung.elements_per_thread);
  std::string sized_for = std::to_string(source.elements_per_thread);
  if (source.load_width > 1)
    sized_for += ", " + count_in_words(source.elements_per_thread / source.load_width) + " float" +
                 std::to_string(source.load_width);
  return format_average_elements(rung, launch) + " on average at this n (the grid is sized for " +
         sized_for + ", " +
         (launch.grid_capped ? "and capped at the full GPU" : "not capped at this n") + ")";
}

std::string format_blocks(const RungModel& rung, const LaunchStats& launch,
                          const Machine& machine) {
  const ladder::Rung& source = ladder::get_rung(rung.id);
  const std::string b = std::to_string(rung.block);
  const std::string per_block =
      source.elements_per_thread == 1
          ? "n / " + b
          : "n / (" + std::to_string(source.elements_per_thread) + " x " + b + ")";
  std::string out = std::to_string(launch.blocks);
  if (!resident_grid(source)) {
    out += " = ceil(" + per_block + ")";
  } else {
    const std::uint64_t wanted = ceil_div(launch.n, items_per_block(source, rung.block));
    out += " = min(ceil(" + per_block + ") = " + std::to_string(wanted) + ", " +
           std::to_string(machine.sms) + " SMs x " +
           std::to_string(resolved_blocks_per_sm(rung.block, machine)) +
           " blocks/SM = " + std::to_string(launch.full_grid) +
           "), with assumed SM and blocks/SM figures: the kernel asks the GPU at run time";
  }
  if (!launch.fits_grid) out += " (over 2^31-1 blocks: the ladder refuses this n)";
  return out;
}

}  // namespace

int bank_conflict_degree(const std::vector<std::int64_t>& word_addresses_of_active_lanes) {
  std::map<std::int64_t, std::set<std::int64_t>> words_per_bank;
  for (std::int64_t word : word_addresses_of_active_lanes) {
    const std::int64_t bank = ((word % kBanks) + kBanks) % kBanks;  // also for negative words
    words_per_bank[bank].insert(word);
  }
  std::size_t degree = 0;
  for (const auto& [bank, words] : words_per_bank) degree = std::max(degree, words.size());
  return static_cast<int>(degree);
}

RungModel model_rung(const ladder::Rung& rung, int block) {
  check_block(block);
  RungModel out;
  out.id = rung.id;
  out.block = block;
  for (const StepSpec& spec : rung_steps(rung, block)) out.steps.push_back(replay(spec, block));

  double utilisation_sum = 0.0;
  for (const StepStats& step : out.steps) {
    out.block_barriers += step.block_barriers;
    out.warp_syncs += step.warp_syncs;
    out.max_bank_conflict_degree =
        std::max(out.max_bank_conflict_degree, step.bank_conflict_degree);
    if (step.kind == StepKind::load) continue;
    ++out.reduction_steps;
    utilisation_sum += step.lane_utilisation;
    if (step.divergent_warps > 0) ++out.divergent_steps;
  }
  if (out.reduction_steps > 0) out.mean_lane_utilisation = utilisation_sum / out.reduction_steps;
  out.elements_per_thread = rung.elements_per_thread;
  out.global_loads_per_element = 1.0 / rung.load_width;
  return out;
}

RungModel model_rung(std::string_view id, int block) {
  return model_rung(ladder::get_rung(id), block);
}

std::vector<RungModel> model_all(int block) {
  std::vector<RungModel> out;
  for (const ladder::Rung& rung : ladder::rungs()) out.push_back(model_rung(rung, block));
  return out;
}

LaunchStats launch_stats(const RungModel& rung, std::size_t n, const Machine& machine) {
  if (n == 0) throw Error(ErrorCode::invalid_argument, "n must be at least 1");
  if (machine.sms < 1 || machine.blocks_per_sm < 0)
    throw Error(ErrorCode::invalid_argument,
                "the machine needs at least 1 SM and a non-negative blocks per SM (0: derive it)");
  const ladder::Rung& source = ladder::get_rung(rung.id);
  const bool capped_grid = resident_grid(source);
  check_block(rung.block);
  LaunchStats out;
  out.n = n;
  if (capped_grid) out.full_grid = full_grid(rung.block, machine);
  // The same arithmetic as each rung's grid_for(), applied pass after pass as run_passes() does.
  const auto grid_for = [&](std::uint64_t count) {
    const std::uint64_t wanted = ceil_div(count, items_per_block(source, rung.block));
    return capped_grid ? std::min(wanted, out.full_grid) : wanted;
  };
  out.blocks = grid_for(n);
  out.grid_capped = capped_grid && out.blocks < ceil_div(n, items_per_block(source, rung.block));
  out.fits_grid = out.blocks <= kMaxGridBlocks;
  out.elements_per_thread = static_cast<double>(n) / (static_cast<double>(out.blocks) * rung.block);
  out.passes = 1;
  for (std::uint64_t remaining = out.blocks; remaining > 1; ++out.passes)
    remaining = grid_for(remaining);
  return out;
}

std::string format_count(std::size_t n) {
  std::string out = std::to_string(n);
  if (n != 0 && (n & (n - 1)) == 0) {
    int power = 0;
    while ((std::size_t{1} << power) != n) ++power;
    out += " (2^" + std::to_string(power) + ")";
  }
  return out;
}

std::string render_markdown(const RungModel& rung, std::size_t n, const Machine& machine) {
  const LaunchStats launch = launch_stats(rung, n, machine);
  std::ostringstream out;
  out << "| step | active threads | warps | active lanes per warp | lane use | divergent warps "
         "| smem ld/st per warp | bank conflict | __syncthreads | __syncwarp |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const StepStats& step : rung.steps) {
    out << "| " << step.label << " | " << step.active_threads << " | " << step.warps_executing
        << " | " << format_lanes(step) << " | " << format_percent(step.lane_utilisation) << " | "
        << step.divergent_warps << " | " << format_smem_ops(step) << " | "
        << format_degree(step.bank_conflict_degree) << " | " << step.block_barriers << " | "
        << step.warp_syncs << " |\n";
  }
  const bool has_tail = std::any_of(rung.steps.begin(), rung.steps.end(), [](const StepStats& s) {
    return s.kind == StepKind::warp_tail || s.kind == StepKind::shuffle;
  });
  if (has_tail)
    out << "\nLanes count as active when they execute the step. The warp tail and the shuffle "
           "rounds have no branch, so all 32 lanes execute them, although after the first round "
           "(+16, shfl 16) only the lower lanes compute values that are used.\n";
  const int load_barriers = rung.steps.empty() ? 0 : rung.steps.front().block_barriers;
  out << "\n| summary (B = " << rung.block << ", n = " << format_count(n) << ") | |\n"
      << "|---|---|\n"
      << "| reduction steps after the load | " << rung.reduction_steps << " |\n"
      << "| __syncthreads per block | " << rung.block_barriers << " (" << load_barriers
      << " after the load, " << rung.block_barriers - load_barriers << " in the reduction) |\n"
      << "| __syncwarp per warp | " << rung.warp_syncs << " |\n"
      << "| mean lane use over the reduction steps | " << format_percent(rung.mean_lane_utilisation)
      << " |\n"
      << "| worst bank conflict | " << format_degree(rung.max_bank_conflict_degree) << " |\n"
      << "| reduction steps with divergent warps | " << rung.divergent_steps << " of "
      << rung.reduction_steps << " |\n"
      << "| elements per thread before the tree | " << format_elements_per_thread(rung, launch)
      << " |\n"
      << "| global load instructions per element | "
      << format_loads_per_element(rung.global_loads_per_element) << " |\n"
      << "| blocks in the first pass | " << format_blocks(rung, launch, machine) << " |\n"
      << "| kernel launches (passes) | " << launch.passes << " |\n";
  return out.str();
}

std::string render_overview_markdown(const std::vector<RungModel>& rungs, std::size_t n,
                                     const Machine& machine) {
  std::ostringstream out;
  out << "| rung | reduction steps | __syncthreads | __syncwarp | mean lane use "
         "| steps with divergence | worst bank conflict | elements/thread | loads/element "
         "| blocks (pass 1) | passes |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const RungModel& rung : rungs) {
    const LaunchStats launch = launch_stats(rung, n, machine);
    out << "| " << rung.id << " | " << rung.reduction_steps << " | " << rung.block_barriers << " | "
        << rung.warp_syncs << " | " << format_percent(rung.mean_lane_utilisation) << " | "
        << rung.divergent_steps << " | " << format_degree(rung.max_bank_conflict_degree) << " | "
        << format_average_elements(rung, launch) << " | "
        << (rung.global_loads_per_element == 1.0 ? "1" : "0.25") << " | " << launch.blocks
        << (launch.grid_capped ? " (full GPU)" : "") << " | " << launch.passes << " |\n";
  }
  return out.str();
}

}  // namespace reducelab::model

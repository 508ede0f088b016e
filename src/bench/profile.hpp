#pragma once
// Hardware counters per implementation, from Nsight Compute's raw CSV: which metrics to collect,
// how kernels map to rungs, how a rung's kernels aggregate, and the article's "this rung removes
// that bottleneck" claims checked against the numbers. CPU-only logic, tested in CI; the command
// that runs ncu is src/cli/profile_command.cpp.

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace reducelab::bench {

//! One ncu metric we collect and how a rung with several kernels (passes) aggregates it.
struct MetricSpec {
  const char* name;  //!< ncu metric, e.g. "dram__bytes_read.sum"
  bool additive;     //!< true: sum over kernels; false: average weighted by kernel time
};
const std::vector<MetricSpec>& profile_metrics();

//! The metric's base name as `ncu --query-metrics` lists it ("dram__bytes_read").
std::string metric_base_name(std::string_view metric);

//! Parses CSV text (RFC 4180 quoting) into rows of fields.
std::vector<std::vector<std::string>> parse_csv(std::string_view text);

//! "V0".."V7", "CUB", "reducelab", or "" for a kernel that is none of ours, from the demangled
//! kernel name ncu prints.
std::string impl_of_kernel(std::string_view kernel_name);

//! Counters of one implementation, summed or time-weighted over its kernels, and the derived
//! figures the table shows.
struct ImplCounters {
  std::string impl;
  int kernels = 0;
  std::map<std::string, double> metric;  //!< aggregated raw metrics by ncu name
  double time_us = 0;                    //!< sum of kernel durations (clocks not locked)
  double dram_gbps = 0;                  //!< DRAM bytes read / time
  double dram_pct = 0;                   //!< DRAM throughput, % of peak
  double warp_efficiency_pct = 0;        //!< predicated-on threads per warp instruction / 32
  double branch_uniform_pct = 0;         //!< branches whose targets were uniform in the warp
  double bank_conflict_degree = 0;       //!< shared wavefronts per shared instruction (1 = none)
  double smem_conflicts = 0;             //!< shared-memory bank conflicts (load + store)
  double inst_per_element = 0;           //!< thread instructions per input element
  double smem_inst_per_element = 0;      //!< shared-memory instructions (x32 lanes) per element
  double global_loads_per_element = 0;   //!< global load instructions (x32 lanes) per element
  double barrier_stall_pct = 0;          //!< warp cycles stalled at a barrier, % of active
  double occupancy_pct = 0;              //!< achieved occupancy
};

//! Aggregates ncu's `--page raw --csv` output (header row, units row, one row per kernel) into
//! one entry per implementation, in the order V0..V7, CUB, reducelab. Throws reducelab::Error
//! when the CSV has no "Kernel Name" column.
std::vector<ImplCounters> aggregate_ncu_csv(std::string_view csv, std::size_t n);

//! One of the article's claims, checked: `rung` removes `bottleneck`, seen as `metric` going
//! from `before` (previous rung) to `after` in the right direction.
struct BottleneckCheck {
  std::string rung;
  std::string bottleneck;
  std::string metric;
  double before = 0;
  double after = 0;
  bool removed = false;
};
std::vector<BottleneckCheck> check_bottlenecks(const std::vector<ImplCounters>& impls);

//! Markdown: the implementation x metric table, then the checks with yes/no and the numbers.
std::string render_profile(const std::vector<ImplCounters>& impls,
                           const std::vector<BottleneckCheck>& checks);

}  // namespace reducelab::bench

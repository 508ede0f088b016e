#include "bench/profile.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "reducelab/error.hpp"

namespace reducelab::bench {

const std::vector<MetricSpec>& profile_metrics() {
  static const std::vector<MetricSpec> metrics = {
      {"gpu__time_duration.sum", true},
      {"dram__bytes_read.sum", true},
      {"dram__throughput.avg.pct_of_peak_sustained_elapsed", false},
      {"smsp__inst_executed.sum", true},
      {"smsp__thread_inst_executed.sum", true},
      {"smsp__thread_inst_executed_pred_on.sum", true},
      {"smsp__sass_average_branch_targets_threads_uniform.pct", false},
      {"smsp__inst_executed_op_shared_ld.sum", true},
      {"smsp__inst_executed_op_shared_st.sum", true},
      {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", true},
      {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", true},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", true},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", true},
      {"smsp__inst_executed_op_global_ld.sum", true},
      {"smsp__warp_issue_stalled_barrier_per_warp_active.pct", false},
      {"sm__warps_active.avg.pct_of_peak_sustained_active", false},
  };
  return metrics;
}

std::string metric_base_name(std::string_view metric) {
  return std::string(metric.substr(0, metric.find('.')));
}

std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  bool any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        row.push_back(field);
        rows.push_back(row);
      }
      row.clear();
      field.clear();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (any || !field.empty()) {
    row.push_back(field);
    rows.push_back(row);
  }
  return rows;
}

std::string impl_of_kernel(std::string_view name) {
  static const char* const kRungKernels[] = {
      "v0_naive_tree_kernel",        "v1_interleaved_kernel",
      "v2_sequential_kernel",        "v3_two_loads_kernel",
      "v4_unroll_last_warp_kernel",  "v5_complete_unroll_kernel",
      "v6_warp_shuffle_kernel",      "v7_vector_grid_stride_kernel"};
  for (int r = 0; r < 8; ++r)
    if (name.find(kRungKernels[r]) != std::string_view::npos) return "V" + std::to_string(r);
  // The production kernel, however ncu qualifies it: "reduce_kernel" alone (function base
  // names), "void reducelab::reduce_kernel<reducelab::SumTraits<float, 1>, ...>" (what ncu 2025
  // prints with --print-kernel-base demangled: it drops the inner namespace), or fully qualified.
  // A reduce_kernel of another library ("at::native::reduce_kernel") is not ours.
  if (const auto pos = name.find("reduce_kernel"); pos != std::string_view::npos) {
    const auto start = name.rfind(' ', pos);
    const std::string_view qualifier =
        name.substr(start == std::string_view::npos ? 0 : start + 1,
                    pos - (start == std::string_view::npos ? 0 : start + 1));
    if (qualifier.empty() || qualifier.rfind("reducelab::", 0) == 0) return "reducelab";
  }
  if (name.find("cub::") != std::string_view::npos || name.find("DeviceReduce") != std::string_view::npos)
    return "CUB";
  return "";
}

namespace {

const char* const kOrder[] = {"V0", "V1", "V2", "V3", "V4", "V5", "V6", "V7", "CUB", "reducelab"};

double to_number(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  if (text.empty() || text == "n/a") return 0.0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  return end == text.c_str() ? 0.0 : value;
}

double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }

}  // namespace

std::vector<ImplCounters> aggregate_ncu_csv(std::string_view csv, std::size_t n) {
  const auto rows = parse_csv(csv);
  // ncu may print "==PROF==" lines before the table: find the header row.
  std::size_t header = rows.size();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (std::find(rows[r].begin(), rows[r].end(), "Kernel Name") != rows[r].end()) {
      header = r;
      break;
    }
  }
  if (header == rows.size())
    throw Error(ErrorCode::invalid_argument, "ncu CSV has no 'Kernel Name' column");
  const auto& columns = rows[header];
  const auto column_of = [&](const std::string& name) -> int {
    const auto it = std::find(columns.begin(), columns.end(), name);
    return it == columns.end() ? -1 : static_cast<int>(it - columns.begin());
  };
  const int kernel_column = column_of("Kernel Name");
  const int time_column = column_of("gpu__time_duration.sum");

  std::map<std::string, ImplCounters> by_impl;
  std::map<std::string, std::map<std::string, double>> weighted;  // sum of value x time
  for (std::size_t r = header + 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (static_cast<int>(row.size()) <= kernel_column) continue;
    const std::string impl = impl_of_kernel(row[kernel_column]);
    if (impl.empty()) continue;  // also skips the units row
    ImplCounters& c = by_impl[impl];
    c.impl = impl;
    ++c.kernels;
    const double time = time_column >= 0 && time_column < static_cast<int>(row.size())
                            ? to_number(row[time_column])
                            : 1.0;
    for (const MetricSpec& spec : profile_metrics()) {
      const int column = column_of(spec.name);
      if (column < 0 || column >= static_cast<int>(row.size())) continue;
      const double value = to_number(row[column]);
      if (spec.additive) {
        c.metric[spec.name] += value;
      } else {
        weighted[impl][spec.name] += value * time;
      }
    }
  }

  std::vector<ImplCounters> out;
  const double elements = n > 0 ? static_cast<double>(n) : 1.0;
  for (const char* name : kOrder) {
    auto it = by_impl.find(name);
    if (it == by_impl.end()) continue;
    ImplCounters c = it->second;
    auto& m = c.metric;
    const double time_ns = m["gpu__time_duration.sum"];
    for (const MetricSpec& spec : profile_metrics())
      if (!spec.additive) m[spec.name] = ratio(weighted[c.impl][spec.name], time_ns);
    c.time_us = time_ns / 1e3;
    c.dram_gbps = ratio(m["dram__bytes_read.sum"], time_ns);
    c.dram_pct = m["dram__throughput.avg.pct_of_peak_sustained_elapsed"];
    // Lanes that did work (active and predicated on) per warp instruction: the compiler turns
    // short divergent branches into predication, so "active" alone hides divergence.
    c.warp_efficiency_pct = 100.0 * ratio(m["smsp__thread_inst_executed_pred_on.sum"],
                                          32.0 * m["smsp__inst_executed.sum"]);
    c.branch_uniform_pct = m["smsp__sass_average_branch_targets_threads_uniform.pct"];
    const double smem_inst =
        m["smsp__inst_executed_op_shared_ld.sum"] + m["smsp__inst_executed_op_shared_st.sum"];
    const double smem_wavefronts = m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] +
                                   m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"];
    c.bank_conflict_degree = ratio(smem_wavefronts, smem_inst);
    c.smem_conflicts = m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] +
                       m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"];
    c.inst_per_element = m["smsp__thread_inst_executed.sum"] / elements;
    c.smem_inst_per_element = 32.0 * smem_inst / elements;
    c.global_loads_per_element = 32.0 * m["smsp__inst_executed_op_global_ld.sum"] / elements;
    c.barrier_stall_pct = m["smsp__warp_issue_stalled_barrier_per_warp_active.pct"];
    c.occupancy_pct = m["sm__warps_active.avg.pct_of_peak_sustained_active"];
    out.push_back(c);
  }
  return out;
}

std::vector<BottleneckCheck> check_bottlenecks(const std::vector<ImplCounters>& impls) {
  auto find = [&](const std::string& id) -> const ImplCounters* {
    for (const auto& c : impls)
      if (c.impl == id) return &c;
    return nullptr;
  };
  struct Claim {
    const char* rung;
    const char* previous;
    const char* bottleneck;
    const char* metric;
    double ImplCounters::*field;
    bool higher_is_better;
  };
  static const Claim kClaims[] = {
      {"V1", "V0", "warp divergence", "warp execution efficiency %", &ImplCounters::warp_efficiency_pct, true},
      {"V1", "V0", "warp divergence", "thread instructions per element", &ImplCounters::inst_per_element, false},
      {"V2", "V1", "bank conflicts", "shared-memory bank conflicts", &ImplCounters::smem_conflicts, false},
      {"V2", "V1", "warp divergence", "warp execution efficiency %", &ImplCounters::warp_efficiency_pct, true},
      {"V3", "V2", "idle threads", "thread instructions per element", &ImplCounters::inst_per_element, false},
      {"V3", "V2", "idle threads", "kernel time us", &ImplCounters::time_us, false},
      {"V4", "V3", "redundant barriers", "barrier stall % of warp cycles", &ImplCounters::barrier_stall_pct, false},
      {"V5", "V4", "loop overhead", "thread instructions per element", &ImplCounters::inst_per_element, false},
      {"V6", "V5", "shared-memory round trips", "shared instructions per element", &ImplCounters::smem_inst_per_element, false},
      {"V7", "V6", "per-element loads", "global load instructions per element", &ImplCounters::global_loads_per_element, false},
      {"V7", "V6", "idle blocks", "DRAM throughput % of peak", &ImplCounters::dram_pct, true},
  };
  std::vector<BottleneckCheck> out;
  for (const Claim& claim : kClaims) {
    const ImplCounters* before = find(claim.previous);
    const ImplCounters* after = find(claim.rung);
    if (!before || !after) continue;
    BottleneckCheck check;
    check.rung = claim.rung;
    check.bottleneck = claim.bottleneck;
    check.metric = claim.metric;
    check.before = before->*claim.field;
    check.after = after->*claim.field;
    check.removed = claim.higher_is_better ? check.after > check.before : check.after < check.before;
    out.push_back(check);
  }
  return out;
}

namespace {
std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, value);
  return buffer;
}
}  // namespace

std::string render_profile(const std::vector<ImplCounters>& impls,
                           const std::vector<BottleneckCheck>& checks) {
  std::ostringstream out;
  out << "| impl | kernels | time | DRAM GB/s | DRAM % | warp eff. % | uniform br. % | smem "
         "wavefronts/inst | bank conflicts | inst/elem | smem inst/elem | global ld/elem | "
         "barrier stall % | occupancy % |\n";
  out << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& c : impls) {
    out << "| " << c.impl << " | " << c.kernels << " | " << fixed(c.time_us, 1) << " us | "
        << fixed(c.dram_gbps, 0) << " | " << fixed(c.dram_pct, 1) << " | "
        << fixed(c.warp_efficiency_pct, 1) << " | " << fixed(c.branch_uniform_pct, 1) << " | "
        << fixed(c.bank_conflict_degree, 2) << " | " << fixed(c.smem_conflicts, 0) << " | "
        << fixed(c.inst_per_element, 2) << " | " << fixed(c.smem_inst_per_element, 3) << " | "
        << fixed(c.global_loads_per_element, 3) << " | " << fixed(c.barrier_stall_pct, 1) << " | "
        << fixed(c.occupancy_pct, 1) << " |\n";
  }
  if (!checks.empty()) {
    out << "\n| rung | removes (article) | counter | previous rung | this rung | removed? |\n";
    out << "|---|---|---|---:|---:|---|\n";
    for (const auto& c : checks) {
      out << "| " << c.rung << " | " << c.bottleneck << " | " << c.metric << " | "
          << fixed(c.before, 3) << " | " << fixed(c.after, 3) << " | " << (c.removed ? "yes" : "no")
          << " |\n";
    }
  }
  return out.str();
}

}  // namespace reducelab::bench

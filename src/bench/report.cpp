#include "bench/report.hpp"

#include <cstdio>
#include <ctime>
#include <map>
#include <ostream>
#include <sstream>
#include <tuple>

namespace reducelab::bench {

void finish(Measurement& m, double peak_gbps) {
  m.gbps = gbps(m.bytes, m.time.median_us);
  m.peak_pct = peak_gbps > 0 ? 100.0 * m.gbps / peak_gbps : 0.0;
}

std::string format_count(std::size_t n) {
  if (n > 0 && (n & (n - 1)) == 0) {
    int k = 0;
    while ((std::size_t{1} << k) != n) ++k;
    return "2^" + std::to_string(k);
  }
  return std::to_string(n);
}

namespace {
std::string printf_string(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

std::string format_bytes(double bytes) {
  if (bytes >= 1e9) return printf_string("%.2f GB", bytes / 1e9);
  if (bytes >= 1e6) return printf_string("%.1f MB", bytes / 1e6);
  if (bytes >= 1e3) return printf_string("%.1f KB", bytes / 1e3);
  return printf_string("%.0f B", bytes);
}
}  // namespace

std::string format_time(double us) {
  if (us >= 1e3) return printf_string("%.3f ms", us / 1e3);
  return printf_string("%.1f us", us);
}

// Markdown would read 2*s*tid as emphasis and <float> as a tag.
std::string escape_markdown(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '_' || c == '|' || c == '<' || c == '>' || c == '`' || c == '[' || c == ']' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

std::string render_table(const std::vector<Measurement>& rows) {
  // Group rows by problem, keeping first-seen order.
  using Key = std::tuple<std::string, std::string, std::size_t, std::string, std::string>;
  std::vector<Key> keys;
  std::map<Key, std::vector<const Measurement*>> groups;
  for (const Measurement& m : rows) {
    const auto key = std::make_tuple(m.op, m.dtype, m.n, m.shape, m.axes);
    if (!groups.count(key)) keys.push_back(key);
    groups[key].push_back(&m);
  }
  std::ostringstream out;
  for (const auto& key : keys) {
    const auto& group = groups[key];
    const Measurement* v0 = nullptr;
    const Measurement* cub = nullptr;
    for (const Measurement* m : group) {
      if (m->impl == "V0" && m->status == "ok") v0 = m;
      // The first CUB row: the toolkit's, before a newer CCCL's fixed-size one.
      if (m->kind == "cub" && m->status == "ok" && cub == nullptr) cub = m;
    }
    out << "\n" << std::get<0>(key) << " " << std::get<1>(key) << ", N = "
        << format_count(std::get<2>(key));
    if (!std::get<4>(key).empty()) {
      out << ", shape " << std::get<3>(key) << " reduced along axes " << std::get<4>(key);
    } else if (!std::get<3>(key).empty()) {
      out << ", segments " << std::get<3>(key);
    }
    out << " (" << format_bytes(group.front()->bytes)
        << (std::get<3>(key).empty() ? " read" : " read and written") << ")\n\n";
    out << "| impl | change | median | noise | GB/s | % of peak |"
        << (v0 ? " vs V0 |" : "") << (cub ? " time / CUB |" : "") << "\n";
    out << "|---|---|---:|---:|---:|---:|" << (v0 ? "---:|" : "") << (cub ? "---:|" : "") << "\n";
    for (const Measurement* m : group) {
      out << "| " << m->impl << " | " << escape_markdown(m->change) << " | ";
      if (m->status != "ok") {
        out << m->status << " | | | |" << (v0 ? " |" : "") << (cub ? " |" : "") << "\n";
        continue;
      }
      out << format_time(m->time.median_us) << " | " << printf_string("%.1f%%", m->time.noise_pct)
          << " | " << printf_string("%.0f", m->gbps) << " | " << printf_string("%.1f%%", m->peak_pct)
          << " |";
      if (v0) out << " " << printf_string("%.2fx", v0->time.median_us / m->time.median_us) << " |";
      if (cub) out << " " << printf_string("%.2fx", m->time.median_us / cub->time.median_us) << " |";
      out << "\n";
    }
  }
  return out.str();
}

namespace {
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}
}  // namespace

void write_csv(std::ostream& out, const Context& c, const std::vector<Measurement>& rows) {
  out << "gpu,driver,cuda_runtime,commit,date,l2_policy,impl,kind,op,dtype,n,bytes,samples,"
         "median_us,mean_us,min_us,max_us,noise_pct,gbps,peak_pct,peak_gbps,status,shape,axes,kept,"
         "reduced\n";
  for (const Measurement& m : rows) {
    out << csv_field(c.device.name) << ',' << csv_field(c.device.driver) << ','
        << c.device.cuda_runtime << ',' << csv_field(c.commit) << ',' << c.date << ','
        << csv_field(c.l2_policy) << ',' << csv_field(m.impl) << ',' << m.kind << ',' << m.op
        << ',' << m.dtype << ',' << m.n << ',' << printf_string("%.0f", m.bytes) << ','
        << m.time.samples << ',' << printf_string("%.3f", m.time.median_us) << ','
        << printf_string("%.3f", m.time.mean_us) << ',' << printf_string("%.3f", m.time.min_us)
        << ',' << printf_string("%.3f", m.time.max_us) << ','
        << printf_string("%.2f", m.time.noise_pct) << ',' << printf_string("%.1f", m.gbps) << ','
        << printf_string("%.2f", m.peak_pct) << ',' << printf_string("%.1f", c.device.peak_gbps)
        << ',' << csv_field(m.status) << ',' << csv_field(m.shape) << ',' << csv_field(m.axes)
        << ',' << m.kept << ',' << m.reduced << '\n';
  }
}

nlohmann::json to_json(const Context& c, const std::vector<Measurement>& rows) {
  nlohmann::json context = {
      {"command", c.command},
      {"reducelab_version", c.version},
      {"commit", c.commit},
      {"date", c.date},
      {"gpu", c.device.name},
      {"compute_capability", std::to_string(c.device.cc_major) + "." + std::to_string(c.device.cc_minor)},
      {"sm_count", c.device.sm_count},
      {"l2_bytes", c.device.l2_bytes},
      {"memory_bytes", c.device.total_memory},
      {"memory_clock_khz", c.device.memory_clock_khz},
      {"bus_width_bits", c.device.bus_width_bits},
      {"peak_gbps", c.device.peak_gbps},
      {"driver", c.device.driver},
      {"cuda_driver", c.device.cuda_driver},
      {"cuda_runtime", c.device.cuda_runtime},
      {"l2_policy", c.l2_policy},
      {"timing", c.timing},
      {"seed", c.seed},
      {"reps", c.reps},
      {"warmup", c.warmup},
      {"copy_gbps", c.copy_gbps},
      {"launch_us", c.launch_us},
  };
  nlohmann::json results = nlohmann::json::array();
  for (const Measurement& m : rows) {
    results.push_back({{"impl", m.impl},
                       {"kind", m.kind},
                       {"change", m.change},
                       {"op", m.op},
                       {"dtype", m.dtype},
                       {"n", m.n},
                       {"bytes", m.bytes},
                       {"samples", m.time.samples},
                       {"median_us", m.time.median_us},
                       {"mean_us", m.time.mean_us},
                       {"min_us", m.time.min_us},
                       {"max_us", m.time.max_us},
                       {"noise_pct", m.time.noise_pct},
                       {"gbps", m.gbps},
                       {"peak_pct", m.peak_pct},
                       {"status", m.status},
                       {"shape", m.shape},
                       {"axes", m.axes},
                       {"kept", m.kept},
                       {"reduced", m.reduced}});
  }
  return {{"schema", "reducelab.results/1"}, {"context", context}, {"results", results}};
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

}  // namespace reducelab::bench

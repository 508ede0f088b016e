#pragma once
// Benchmark results and their three forms: the console/markdown table, CSV and JSON.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/stats.hpp"
#include "common/device_info.hpp"

namespace reducelab::bench {

//! One implementation timed on one problem.
struct Measurement {
  std::string impl;    //!< "V0".."V7", "cub", "reducelab"
  std::string kind;    //!< "ladder", "cub" or "production"
  std::string change;  //!< what the row changes (ladder rungs) or what it calls
  std::string op;
  std::string dtype;
  std::size_t n = 0;   //!< elements (segmented rows: in all segments together)
  double bytes = 0;    //!< bytes that must be read: every input element once (segmented rows:
                       //!< also the offsets read and the results written)
  Summary time;
  double gbps = 0;
  double peak_pct = 0;  //!< of the theoretical peak (DeviceInfo::peak_gbps)
  std::string status = "ok";  //!< "ok", or why the result was not timed
  std::string shape;  //!< segmented rows: the segments' spec ("fixed:4194304x32"); axis rows:
                      //!< the array's shape ("32768x4096"); else empty
  std::string axes;   //!< axis rows: the reduced axes ("0", "0,2"); else empty
  std::size_t kept = 0;     //!< segmented and axis rows: results (segments, kept indices)
  std::size_t reduced = 0;  //!< fixed segments and axis rows: elements per result; else 0
};

//! Where and how the measurements were taken; written into every CSV row and JSON file.
struct Context {
  std::string command;    //!< "bench" or "sweep"
  std::string version;    //!< reducelab version
  std::string commit;     //!< git commit the program was built from
  std::string date;       //!< UTC, ISO 8601
  DeviceInfo device;
  std::string l2_policy;  //!< how the L2 was kept cold
  std::string timing;     //!< how one sample is taken
  std::uint64_t seed = 0;
  int reps = 0;
  int warmup = 0;
  double copy_gbps = 0;   //!< measured device-to-device copy (read + write), 0 if not measured
  double launch_us = 0;   //!< measured empty-kernel call, 0 if not measured
};

//! Fills the measurement's derived figures (GB/s, % of peak) from its bytes and median time.
void finish(Measurement& m, double peak_gbps);

//! "2^27" for powers of two, otherwise the digits ("1048579").
std::string format_count(std::size_t n);
//! "127.6 us", "1.234 ms".
std::string format_time(double microseconds);

//! The article's table, one block per (op, dtype, n, shape): impl, change, median, noise, GB/s,
//! % of peak, speedup over V0 (when V0 is present) and time relative to CUB (when present; the
//! first ok CUB row when there are two, as in the segmented suite with a newer CCCL).
//! Markdown, so it pastes into docs/results unchanged.
std::string render_table(const std::vector<Measurement>& rows);

void write_csv(std::ostream& out, const Context& context, const std::vector<Measurement>& rows);
nlohmann::json to_json(const Context& context, const std::vector<Measurement>& rows);

//! Current UTC time, ISO 8601.
std::string utc_now();

}  // namespace reducelab::bench

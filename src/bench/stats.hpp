#pragma once
// Summary statistics of repeated timings.

#include <cstddef>
#include <vector>

namespace reducelab::bench {

struct Summary {
  std::size_t samples = 0;
  double median_us = 0;
  double mean_us = 0;
  double min_us = 0;
  double max_us = 0;
  double noise_pct = 0;  //!< relative standard deviation, 100 * stdev / mean (as nvbench reports)
};

//! Throws reducelab::Error on an empty sample.
Summary summarize(std::vector<double> samples_us);

//! GB/s (1e9 bytes per second) for `bytes` moved in `microseconds`.
constexpr double gbps(double bytes, double microseconds) {
  return microseconds > 0 ? bytes / (microseconds * 1e3) : 0.0;
}

}  // namespace reducelab::bench

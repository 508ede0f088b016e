#include "bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "reducelab/error.hpp"

namespace reducelab::bench {

Summary summarize(std::vector<double> samples) {
  if (samples.empty()) throw Error(ErrorCode::invalid_argument, "no timing samples");
  std::sort(samples.begin(), samples.end());
  Summary s;
  s.samples = samples.size();
  const std::size_t mid = samples.size() / 2;
  s.median_us = samples.size() % 2 ? samples[mid] : 0.5 * (samples[mid - 1] + samples[mid]);
  s.mean_us = std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
  s.min_us = samples.front();
  s.max_us = samples.back();
  double squares = 0;
  for (double v : samples) squares += (v - s.mean_us) * (v - s.mean_us);
  const double stdev = samples.size() > 1 ? std::sqrt(squares / (samples.size() - 1)) : 0.0;
  s.noise_pct = s.mean_us > 0 ? 100.0 * stdev / s.mean_us : 0.0;
  return s;
}

}  // namespace reducelab::bench

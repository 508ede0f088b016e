#include "bench/segments.hpp"

#include <cmath>
#include <algorithm>

#include "bench/random.hpp"
#include "reducelab/error.hpp"

namespace reducelab::bench {
namespace {

// [0, 1) from the counter-based stream `seed`, draw i.
double unit(std::uint64_t seed, std::uint64_t i) {
  return static_cast<double>(splitmix64(splitmix64(seed) + i) >> 11) * 0x1.0p-53;
}

std::vector<std::int64_t> heavy_offsets(std::size_t count, std::size_t mean) {
  constexpr double kPi = 3.14159265358979323846;
  std::vector<long double> cumulative(count + 1, 0.0L);
  for (std::size_t s = 0; s < count; ++s) {
    const double pick = unit(kSegmentSeed, 3 * s);
    const double u1 = unit(kSegmentSeed, 3 * s + 1);
    const double u2 = unit(kSegmentSeed, 3 * s + 2);
    double weight = 0;
    if (pick < 0.9) {
      // Box-Muller: a standard normal from two uniforms (1 - u1 is in (0, 1]).
      weight = std::exp(std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * kPi * u2));
    } else {
      weight = 4.0 * std::pow(1.0 - u1, -1.0 / 1.1);
    }
    cumulative[s + 1] = cumulative[s] + weight;
  }
  const long double total = static_cast<long double>(count) * static_cast<long double>(mean);
  std::vector<std::int64_t> offsets(count + 1, 0);
  for (std::size_t s = 1; s <= count; ++s)
    offsets[s] = static_cast<std::int64_t>(std::llround(total * cumulative[s] / cumulative[count]));
  offsets[count] = static_cast<std::int64_t>(count * mean);  // exactly, whatever the rounding
  for (std::size_t s = count; s-- > 1;) offsets[s] = std::min(offsets[s], offsets[s + 1]);
  return offsets;
}

}  // namespace

std::string SegmentSpec::text() const {
  switch (kind) {
    case SegmentKind::fixed: return "fixed:" + std::to_string(count) + "x" + std::to_string(size);
    case SegmentKind::ragged_uniform:
      return "ragged:uniform:" + std::to_string(count) + ":" + std::to_string(size);
    case SegmentKind::ragged_heavy:
      return "ragged:heavy:" + std::to_string(count) + ":" + std::to_string(size);
  }
  return "?";
}

std::size_t segment_elements_bound(const SegmentSpec& spec) {
  constexpr std::size_t kLimit = std::size_t{1} << 62;
  if (spec.size != 0 && spec.count > kLimit / spec.size)
    throw Error(ErrorCode::invalid_argument,
                "segments '" + spec.text() + "' hold more than 2^62 elements");
  return spec.count * spec.size;
}

std::vector<std::int64_t> segment_offsets(const SegmentSpec& spec) {
  segment_elements_bound(spec);
  if (spec.kind == SegmentKind::ragged_heavy) return heavy_offsets(spec.count, spec.size);
  std::vector<std::int64_t> offsets(spec.count + 1, 0);
  for (std::size_t s = 0; s < spec.count; ++s) {
    std::size_t length = spec.size;
    if (spec.kind == SegmentKind::ragged_uniform)
      length = static_cast<std::size_t>(splitmix64(splitmix64(kSegmentSeed) + s) % (spec.size + 1));
    offsets[s + 1] = offsets[s] + static_cast<std::int64_t>(length);
  }
  return offsets;
}

}  // namespace reducelab::bench

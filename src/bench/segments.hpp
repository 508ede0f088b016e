#pragma once
// The segment shapes `reducelab bench --segments` measures, and the offsets they expand to. CPU
// only, so the shapes are unit-tested without a GPU (tests/test_options.cpp).
//
// - fixed:NUMxSIZE       NUM contiguous rows of SIZE elements (a row-major NUM x SIZE array
//                        reduced along its last axis; `--shape NUMxSIZE --axis 1` is the same).
// - ragged:uniform:N:MAX N segments whose lengths are uniform integers in [0, MAX].
// - ragged:heavy:N:MEAN  N segments with a heavy-tailed length distribution of mean MEAN: each
//                        segment gets a weight, with probability 0.9 a lognormal draw
//                        exp(Normal(0, 1)) and with probability 0.1 a Pareto draw of scale 4 and
//                        shape 1.1 (mean 44, infinite variance); the offsets are then the rounded
//                        cumulative weights scaled so that the total is exactly N x MEAN. The
//                        largest segment grows like N^(1/1.1) x MEAN / 6, so with N x MEAN = 2^27
//                        and MEAN <= 2^12 a few segments exceed 2^20 elements, many are a few
//                        elements long and some are empty.
// Ragged lengths come from a fixed seed (kSegmentSeed), not from --seed: a spec names one shape
// in every run and every results file, while --seed still varies the values.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reducelab::bench {

enum class SegmentKind { fixed, ragged_uniform, ragged_heavy };

struct SegmentSpec {
  SegmentKind kind = SegmentKind::fixed;
  std::size_t count = 0;  //!< number of segments
  std::size_t size = 0;   //!< fixed: elements per segment; uniform: largest length; heavy: mean

  bool ragged() const { return kind != SegmentKind::fixed; }
  //! The spec as it is written on the command line, e.g. "fixed:4194304x32".
  std::string text() const;
};

//! The seed of the ragged segment lengths.
inline constexpr std::uint64_t kSegmentSeed = 0x5e9e17ed;

//! count + 1 nondecreasing offsets from 0 (fixed specs too: s x size).
std::vector<std::int64_t> segment_offsets(const SegmentSpec& spec);

//! Elements in all segments together. Throws reducelab::Error (invalid_argument) when a fixed
//! spec's NUM x SIZE or a ragged spec's N x MEAN/MAX overflows 2^62.
std::size_t segment_elements_bound(const SegmentSpec& spec);

}  // namespace reducelab::bench

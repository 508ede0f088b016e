#pragma once
// The segmented benchmark of `reducelab bench --segments`: one op and type over one segment
// shape, reducelab::reduce_segments against CUB's DeviceSegmentedReduce, every segment's result
// checked against the CPU reference before either is timed.

#include <cstddef>
#include <vector>

#include "bench/report.hpp"
#include "bench/segments.hpp"
#include "bench/suite.hpp"
#include "common/device_info.hpp"

namespace reducelab::bench {

//! Runs `config.op` on `config.dtype` over the segments `shape` (config.sizes and config.rungs
//! are not used: the shape fixes the size and the ladder has no segmented rungs). Random values
//! from config.seed; the results buffer is poisoned, each implementation runs once and every
//! segment is compared with bench::reference of that segment, then the right ones are timed as
//! run_suite times (CUDA events, median, inputs rotated for a cold L2). Each row's bytes are the
//! inputs and offsets read plus the results written; its `shape` is shape.text(). Throws
//! reducelab::Error when the shape does not fit in free device memory or on a CUDA failure; a
//! wrong result is a row status, as in run_suite.
std::vector<Measurement> run_segmented_suite(const SuiteConfig& config, const SegmentSpec& shape,
                                             const DeviceInfo& device, const Progress& progress);

}  // namespace reducelab::bench

#pragma once
// The segmented benchmark of `reducelab bench --segments`: one op and type over one segment
// shape, reducelab::reduce_segments against CUB's DeviceSegmentedReduce, every segment's result
// checked against the CPU reference before either is timed. And the axis benchmark of
// `reducelab bench --shape AxBxC --axis LIST`, the same with reducelab::reduce_axes.

#include <cstddef>
#include <vector>

#include "bench/axes.hpp"
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
//! wrong result is a row status, as in run_suite. With `axes` (whose segments() is `shape`),
//! reducelab's row calls reduce_axes over that array instead, and the rows carry its shape and
//! axes.
std::vector<Measurement> run_segmented_suite(const SuiteConfig& config, const SegmentSpec& shape,
                                             const DeviceInfo& device, const Progress& progress,
                                             const AxisShape* axes = nullptr);

//! A list of tensors (reducelab::reduce_tensors, per-tensor results and the total) whose lengths
//! are the segments of `shape`, each tensor a pointer into one input buffer, beside CUB's
//! DeviceSegmentedReduce over the same elements as segments (per-tensor results only; none for
//! the statistics) and reducelab::reduce_segments. The results and the total are checked first.
std::vector<Measurement> run_tensor_suite(const SuiteConfig& config, const SegmentSpec& shape,
                                          const DeviceInfo& device, const Progress& progress);

//! `shape` (contiguous, row-major) reduced along its axes, reducelab::reduce_axes against CUB.
//! Rows (shape.rows(): the last axes reduced, e.g. 2-D --axis 1) are run_segmented_suite with
//! `axes`: CUB's DeviceSegmentedReduce over the contiguous rows. Any other axis set (columns, a
//! middle axis, several axes) is CUB's DeviceSegmentedReduce through a strided iterator
//! (make_cub_strided_reduce), every result checked against axis_reference first. Each row's
//! bytes are the inputs read plus the results written; it carries shape, axes, kept and reduced.
//! Throws as run_segmented_suite.
std::vector<Measurement> run_axis_suite(const SuiteConfig& config, const AxisShape& shape,
                                        const DeviceInfo& device, const Progress& progress);

}  // namespace reducelab::bench

#pragma once
// The N-d shapes `reducelab bench --shape AxBxC --axis LIST` and `sweep --axis-sweep` measure: a
// contiguous row-major array of rank 1..8 reduced along some of its axes, and how its elements
// are walked result by result (for the CPU reference and CUB's strided baseline). CPU only, so
// it is unit-tested without a GPU (tests/test_axes.cpp).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/segments.hpp"
#include "reducelab/axis.hpp"

namespace reducelab::bench {

//! The elements of a view result by result: result s (row-major over the kept axes) reduces the
//! elements at kept_offset(s) + reduced_offset(j), j = 0 .. reduced_count - 1 row-major over the
//! reduced axes. Size-1 axes are dropped and neighbouring axes of the same kind merged, so a
//! column reduction is one kept and one reduced axis and needs one division per element.
struct AxisWalk {
  int kept_rank = 0;
  int reduced_rank = 0;
  std::int64_t kept_sizes[kMaxRank] = {};
  std::int64_t kept_strides[kMaxRank] = {};
  std::int64_t reduced_sizes[kMaxRank] = {};
  std::int64_t reduced_strides[kMaxRank] = {};
  std::int64_t reduced_count = 1;  //!< elements per result

  __host__ __device__ std::int64_t kept_offset(std::int64_t s) const {
    return offset_of(s, kept_rank, kept_sizes, kept_strides);
  }
  __host__ __device__ std::int64_t reduced_offset(std::int64_t j) const {
    return offset_of(j, reduced_rank, reduced_sizes, reduced_strides);
  }
  //! The element at segment-major index i (result i / reduced_count, position i % reduced_count).
  __host__ __device__ std::int64_t offset(std::int64_t i) const {
    const std::int64_t s = i / reduced_count;
    return kept_offset(s) + reduced_offset(i - s * reduced_count);
  }

 private:
  // Row-major index -> element offset; the outermost axis needs no division.
  __host__ __device__ static std::int64_t offset_of(std::int64_t index, int rank,
                                                    const std::int64_t* sizes,
                                                    const std::int64_t* strides) {
    std::int64_t offset = 0;
    for (int k = rank - 1; k > 0; --k) {
      const std::int64_t q = index / sizes[k];
      offset += (index - q * sizes[k]) * strides[k];
      index = q;
    }
    return rank > 0 ? offset + index * strides[0] : offset;
  }
};

//! A contiguous row-major array of `sizes` (each at least 1) reduced along the axes of `mask`.
struct AxisShape {
  std::vector<std::size_t> sizes;
  AxisMask mask = 0;  //!< bit k: axis k is reduced

  //! "32768x4096".
  std::string text() const;
  //! The reduced axes, ascending: "0" or "0,2".
  std::string axes_text() const;
  std::size_t elements() const;
  //! Results: the product of the kept sizes (1 when every axis is reduced).
  std::size_t results() const;
  //! Elements per result: the product of the reduced sizes.
  std::size_t reduced() const;
  //! The view reducelab::reduce_axes is given: contiguous strides, in elements.
  Layout layout() const;
  AxisWalk walk() const;
  //! True when every result reduces one contiguous run and the runs follow each other (the
  //! reduced axes are the last ones, size-1 axes aside): fixed segments, segments().
  bool rows() const;
  //! fixed:results()xreduced().
  SegmentSpec segments() const;
};

}  // namespace reducelab::bench

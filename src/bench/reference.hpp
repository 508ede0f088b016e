#pragma once
// The CPU reference every kernel is checked against before it is timed: sums and dot products
// in long double (64-bit mantissa on x86; integers exactly, wrapping modulo 2^64 like the GPU),
// min/max/argmin/argmax exactly with PyTorch's NaN rule (the first NaN wins).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "reducelab/dtype.hpp"
#include "reducelab/op.hpp"
#include "reducelab/types.hpp"

namespace reducelab::bench {

template <class T>
double to_double(T value) {
  if constexpr (std::is_same_v<T, __half>) {
    return static_cast<double>(__half2float(value));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return static_cast<double>(__bfloat162float(value));
  } else {
    return static_cast<double>(value);
  }
}

//! `value` rounded to T (to nearest even for f16 and bf16).
template <class T>
T from_double(double value) {
  if constexpr (std::is_same_v<T, __half>) {
    return __double2half(value);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __double2bfloat16(value);
  } else {
    return static_cast<T>(value);
  }
}

template <class T>
bool is_nan(T value) {
  if constexpr (is_floating_v<T>) {
    return std::isnan(to_double(value));
  } else {
    return false;
  }
}

template <class T>
using host_total_t =
    std::conditional_t<is_floating_v<T>, long double,
                       std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;

template <class T>
struct Reference {
  Op op = Op::sum;
  std::size_t n = 0;
  host_total_t<T> total{};     //!< sum or dot
  long double magnitude = 0;   //!< sum of |term|: the scale of the rounding error of a float sum
  T extremum{};                //!< min, max, argmin, argmax
  std::int64_t index = -1;     //!< argmin, argmax: first index of the extremum (or first NaN)
};

namespace detail {

// `later` covers indices after `earlier`; ties keep the earlier index; a NaN wins and the first
// NaN wins among NaNs.
template <class T>
bool later_wins(Op op, T earlier, T later) {
  if (is_nan(earlier)) return false;
  if (is_nan(later)) return true;
  const bool is_min = op == Op::min || op == Op::argmin;
  if constexpr (is_floating_v<T>) {
    return is_min ? to_double(later) < to_double(earlier) : to_double(later) > to_double(earlier);
  } else {
    return is_min ? later < earlier : later > earlier;
  }
}

//! Adds the next element of a reduction (x, and y for dot; `index` is its position) to r: the
//! one step of every CPU reference.
template <class T>
void add_element(Reference<T>& r, T x, T y, std::int64_t index) {
  ++r.n;
  if (r.op == Op::sum || r.op == Op::dot) {
    if constexpr (is_floating_v<T>) {
      long double term = to_double(x);
      if (r.op == Op::dot) term *= to_double(y);
      r.total += term;
      r.magnitude += term < 0 ? -term : term;
    } else {
      std::uint64_t term = static_cast<std::uint64_t>(static_cast<host_total_t<T>>(x));
      if (r.op == Op::dot) term *= static_cast<std::uint64_t>(static_cast<host_total_t<T>>(y));
      r.total = static_cast<host_total_t<T>>(static_cast<std::uint64_t>(r.total) + term);  // wraps
    }
  } else if (r.index < 0 || later_wins(r.op, r.extremum, x)) {
    r.extremum = x;
    r.index = index;
  }
}

//! Appends `later`, the reduction of the elements that follow r's (indices in the same numbering),
//! to r.
template <class T>
void merge(Reference<T>& r, const Reference<T>& later) {
  r.n += later.n;
  if (r.op == Op::sum || r.op == Op::dot) {
    if constexpr (is_floating_v<T>) {
      r.total += later.total;
    } else {
      r.total = static_cast<host_total_t<T>>(static_cast<std::uint64_t>(r.total) +
                                             static_cast<std::uint64_t>(later.total));
    }
    r.magnitude += later.magnitude;
  } else if (later.index >= 0 && (r.index < 0 || later_wins(r.op, r.extremum, later.extremum))) {
    r.extremum = later.extremum;
    r.index = later.index;
  }
}

template <class T>
Reference<T> reference_chunk(Op op, const T* x, const T* y, std::size_t begin, std::size_t end) {
  Reference<T> r;
  r.op = op;
  for (std::size_t i = begin; i < end; ++i)
    add_element(r, x[i], y == nullptr ? T{} : y[i], static_cast<std::int64_t>(i));
  return r;
}

//! Calls chunk(c) for every c in [0, chunks), on up to 16 threads (thread t takes t, t +
//! threads, ...); the caller combines the chunks' results in index order, so nothing depends on
//! the thread count. One chunk runs here, without asking for the thread count (which reads /sys:
//! not for each of 10,000 tiny tensors).
template <class Chunk>
void for_each_chunk(std::size_t chunks, Chunk chunk) {
  auto work = [&](std::size_t first, std::size_t step) {
    for (std::size_t c = first; c < chunks; c += step) chunk(c);
  };
  if (chunks <= 1) {
    work(0, 1);
    return;
  }
  const std::size_t threads =
      std::min<std::size_t>(chunks, std::max(1u, std::min(16u, std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t, threads);
  work(0, threads);
  for (std::thread& thread : pool) thread.join();
}

}  // namespace detail

//! Reduces n elements of x (and y, for dot) on the CPU. Chunks of 2^20 run in parallel and are
//! combined in index order, so the result does not depend on the thread count.
template <class T>
Reference<T> reference(Op op, const T* x, const T* y, std::size_t n) {
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  const std::size_t chunks = std::max<std::size_t>(1, (n + kChunk - 1) / kChunk);
  std::vector<Reference<T>> parts(chunks);
  detail::for_each_chunk(chunks, [&](std::size_t c) {
    parts[c] = detail::reference_chunk(op, x, y, c * kChunk, std::min(n, (c + 1) * kChunk));
  });

  Reference<T> r;
  r.op = op;
  for (const Reference<T>& part : parts) detail::merge(r, part);
  return r;
}

//! The extremum reducelab's segmented and axis reductions give a min/max/argmin/argmax of no
//! elements (segmented.hpp): the op's identity, +-inf for the floating types, the integer type's
//! largest or lowest value. The references of those reductions put it in the `extremum` of a
//! Reference of no elements (whose index stays -1).
template <class T>
T empty_extremum(Op op) {
  const bool is_min = op == Op::min || op == Op::argmin;
  if constexpr (is_floating_v<T>) {
    const float inf = std::numeric_limits<float>::infinity();
    return T(is_min ? inf : -inf);
  } else {
    return is_min ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
  }
}

//! Error bound for a float sum or dot: eps of the accumulation type times the sum of |terms|
//! times a small factor for the blocked summation order, plus eps times |total|.
template <class T>
double tolerance(const Reference<T>& r) {
  if constexpr (is_floating_v<T>) {
    const double eps = std::is_same_v<T, double> ? 0x1.0p-52 : 0x1.0p-23;
    return eps * 32.0 * static_cast<double>(r.magnitude) +
           eps * std::fabs(static_cast<double>(r.total)) + 1e-30;
  } else {
    return 0.0;
  }
}

//! Bitwise equality, and NaN equals NaN.
template <class T>
bool same_value(T a, T b) {
  if (is_nan(a) && is_nan(b)) return true;
  return std::memcmp(&a, &b, sizeof(T)) == 0 || (is_floating_v<T> && to_double(a) == to_double(b));
}

//! Checks the 16-byte result slot `raw` the way every implementation writes it: sum_t<T> for sum
//! and dot, T for min and max, ArgResult<T> (value at 0, index at 8) for argmin and argmax.
//! Returns an empty string when it matches, otherwise what differs.
template <class T>
std::string check_result(const Reference<T>& r, const void* raw) {
  std::string why;
  // Formats only what differs: a match (nearly every call) builds no stream.
  auto say = [&why](const auto&... parts) {
    std::ostringstream text;
    text.precision(17);
    (text << ... << parts);
    why += why.empty() ? text.str() : "; " + text.str();
  };
  if (r.op == Op::sum || r.op == Op::dot) {
    sum_t<T> got;
    std::memcpy(&got, raw, sizeof(got));
    if constexpr (is_floating_v<T>) {
      const double error = std::fabs(static_cast<double>(got) - static_cast<double>(r.total));
      const double bound = tolerance(r);
      if (!(error <= bound))
        say(to_string(r.op), " = ", static_cast<double>(got), ", reference ",
            static_cast<double>(r.total), ", error ", error, " > bound ", bound);
    } else {
      if (static_cast<host_total_t<T>>(got) != r.total)
        say(to_string(r.op), " = ", got, ", reference ", r.total);
    }
  } else {
    T got;
    std::memcpy(&got, raw, sizeof(got));
    if (!same_value(got, r.extremum))
      say(to_string(r.op), " value = ", to_double(got), ", reference ", to_double(r.extremum));
    if (r.op == Op::argmin || r.op == Op::argmax) {
      std::int64_t index = 0;
      std::memcpy(&index, static_cast<const unsigned char*>(raw) + 8, sizeof(index));
      if (index != r.index) say("index = ", index, ", reference ", r.index);
    }
  }
  return why;
}

}  // namespace reducelab::bench

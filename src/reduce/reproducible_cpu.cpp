// The CPU side of the gpu_to_gpu mode: the order of reproducible_plan.hpp, in plain IEEE
// arithmetic. Compiled with -ffp-contract=off (src/CMakeLists.txt): a fused multiply-add would
// round the dot's products differently from the GPU's __fmul_rn. x86-64 and AArch64 compute float
// and double in their own precision (SSE / NEON, never the x87's 80 bits).

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "reduce/reproducible_plan.hpp"
#include "reducelab/error.hpp"
#include "reducelab/reproducible.hpp"

namespace reducelab {
namespace {

using detail::repro::Plan;
using detail::repro::plan_for;

template <class A>
A widen(float v) { return static_cast<A>(v); }
template <class A>
A widen(double v) { return static_cast<A>(v); }
template <class A>
A widen(__half v) { return static_cast<A>(__half2float(v)); }  // exact
template <class A>
A widen(__nv_bfloat16 v) {  // exact: the bf16's bits are a float's upper half
  std::uint16_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  const std::uint32_t word = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof(f));
  return static_cast<A>(f);
}

template <class A>
A canonical(A v) {
  if (v == v) return v;
  if constexpr (sizeof(A) == 4) {
    const std::uint32_t bits = 0x7fffffffu;
    std::memcpy(&v, &bits, sizeof(v));
  } else {
    const std::uint64_t bits = 0x7fffffffffffffffull;
    std::memcpy(&v, &bits, sizeof(v));
  }
  return v;
}

// The complete tree of adjacent pairs over v, padded with -0 to a power of two.
template <class A>
A pairwise(std::vector<A>& v) {
  std::size_t size = 1;
  while (size < v.size()) size *= 2;
  v.resize(size, -A(0));
  for (; size > 1; size /= 2) {
    for (std::size_t j = 0; j < size / 2; ++j) {
      const A left = v[2 * j];
      const A right = v[2 * j + 1];
      v[j] = left + right;
    }
  }
  return v[0];
}

template <class T, class A>
A fixed_order_sum(const T* x, const T* y, std::size_t n) {
  const Plan plan = plan_for(sizeof(T), n);
  std::vector<A> tiles(plan.tiles);
  std::vector<A> lanes(plan.lanes);
  for (std::size_t t = 0; t < plan.tiles; ++t) {
    lanes.assign(plan.lanes, -A(0));
    const std::size_t first = t * plan.tile;
    for (std::size_t m = 0; m < plan.steps; ++m) {
      for (std::size_t l = 0; l < plan.lanes; ++l) {
        const std::size_t i = first + m * plan.lanes + l;
        if (i >= n) break;  // the rest of this step and the later steps are past the end
        A term = widen<A>(x[i]);
        if (y != nullptr) {
          const A other = widen<A>(y[i]);
          term = term * other;  // rounded: this file is compiled without contraction
        }
        lanes[l] = lanes[l] + term;
      }
    }
    tiles[t] = pairwise(lanes);
  }
  return pairwise(tiles);
}

template <class T>
void compute(Op op, const void* h_x, const void* h_y, std::size_t n, void* h_out) {
  using A = sum_t<T>;
  const T* x = static_cast<const T*>(h_x);
  const T* y = op == Op::dot ? static_cast<const T*>(h_y) : nullptr;
  A result = n == 0 ? A(0) : fixed_order_sum<T, A>(x, y, n);  // empty sum: +0, as reduce()
  if (op == Op::mean) result = result / static_cast<A>(n);    // empty: NaN
  result = canonical(result);
  std::memcpy(h_out, &result, sizeof(A));
}

void reject(const std::string& message) { throw Error(ErrorCode::invalid_argument, message); }

}  // namespace

void reproducible_reduce_cpu(Reduction r, DType dtype, const void* h_x, const void* h_y,
                             std::size_t n, void* h_out) {
  if (!is_valid(r.op) || !is_valid(dtype)) reject("reproducible_reduce_cpu: invalid Op or DType");
  if (info(dtype).kind != DTypeKind::floating ||
      (r.op != Op::sum && r.op != Op::dot && r.op != Op::mean))
    reject("reproducible_reduce_cpu: " + std::string(info(r.op).name) + " of " +
           std::string(info(dtype).name) +
           " is not computed here: it takes sum, dot and mean of f32, f64, f16 and bf16");
  if (h_out == nullptr || (n > 0 && h_x == nullptr) ||
      (r.op == Op::dot && n > 0 && h_y == nullptr))
    reject("reproducible_reduce_cpu: a null pointer");
  if (r.op != Op::dot && h_y != nullptr)
    reject("reproducible_reduce_cpu: " + std::string(info(r.op).name) +
           " reads one array; pass a null second array");
  switch (dtype) {
    case DType::f32: compute<float>(r.op, h_x, h_y, n, h_out); break;
    case DType::f64: compute<double>(r.op, h_x, h_y, n, h_out); break;
    case DType::f16: compute<__half>(r.op, h_x, h_y, n, h_out); break;
    case DType::bf16: compute<__nv_bfloat16>(r.op, h_x, h_y, n, h_out); break;
    default: reject("reproducible_reduce_cpu: not a floating type");
  }
}

double reproducible_error_bound(DType dtype, std::size_t n, Op op) {
  if (!is_valid(dtype) || info(dtype).kind != DTypeKind::floating)
    reject("reproducible_error_bound: not a floating type");
  const int depth = detail::repro::depth_of(plan_for(size_of(dtype), n)) + (op == Op::dot ? 1 : 0);
  const double u = dtype == DType::f64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  return depth * u / (1 - depth * u);
}

}  // namespace reducelab

// The sharded reduce (multigpu.hpp) on real GPUs. Every result is checked against the
// single-GPU reduce of the concatenated shards, itself tested against the CPU reference
// (test_production.cpp, test_stats.cpp): bitwise where the result does not depend on the order
// (min, max, argmin, argmax, aminmax, counts, any, all, every integer op) or where there is one
// rank, within the accumulation type's rounding otherwise.
//
// - One GPU: a 1-rank communicator (ncclCommInitAll of one device) runs the whole path and must
//   give the single-GPU bits; "virtual ranks" (several shards' states made on one GPU and folded
//   by the same fold kernel, no NCCL) cover uneven and empty shards, NaN on one rank, extremes on
//   shard boundaries and ties across ranks.
// - Two GPUs or more: the same cases over real ranks, one process driving both GPUs (one thread
//   per GPU on ncclCommInitAll's communicators) and one process per GPU (this binary started once
//   per rank, the ncclUniqueId passed through a file). Without a second GPU they skip, saying so.

#include <gtest/gtest.h>
#include <nccl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test.hpp"
#include "reducelab/axis.hpp"
#include "reducelab/multigpu.hpp"
#include "reducelab/reduce.hpp"

extern char** environ;

namespace reducelab::test {
namespace {

using Bytes = std::vector<unsigned char>;

#define NCCL_OK(call)                                                              \
  do {                                                                             \
    const ncclResult_t status_ = (call);                                           \
    ASSERT_EQ(status_, ncclSuccess) << #call << ": " << ncclGetErrorString(status_); \
  } while (0)

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

//! Every reduction of the library that takes `dtype`, each norm ord and the population variance.
std::vector<Reduction> reductions_for(DType dtype) {
  std::vector<Reduction> out;
  for (Op op : kAllOps) {
    if (!takes(op, dtype)) continue;
    if (op == Op::norm) {
      for (double ord : {0.0, 1.0, 2.0, double(INFINITY), -double(INFINITY)}) out.push_back(Reduction::norm(ord));
    } else {
      out.push_back(op);
    }
  }
  if (takes(Op::var, dtype)) out.push_back(Reduction::var(0));
  return out;
}

std::string describe(const Reduction& r, DType dtype) {
  std::string s = std::string(to_string(r.op)) + " " + std::string(to_string(dtype));
  if (r.op == Op::norm) s += " ord " + std::to_string(r.ord);
  if (takes_correction(r.op)) s += " correction " + std::to_string(r.correction);
  return s;
}

//! Whether the result is the same whatever the order of the elements (then ranks must give the
//! single-GPU bits exactly).
bool exact(const Reduction& r, DType dtype) {
  if (info(dtype).kind != DTypeKind::floating) return true;
  switch (r.op) {
    case Op::min: case Op::max: case Op::argmin: case Op::argmax: case Op::aminmax:
    case Op::count_nonzero: case Op::any: case Op::all: return true;
    case Op::norm: return r.ord == 0 || std::isinf(r.ord);
    default: return false;
  }
}

//! Compares a sharded result with the single-GPU one: bytes, or each floating value of the
//! result (1 or 2 of float or double) within n x eps of the data's scale (|x| <= 1 here) and a
//! relative eps.
void expect_same_result(const Bytes& got, const Bytes& want, const Reduction& r, DType dtype,
                        std::size_t n, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  if (exact(r, dtype)) {
    EXPECT_EQ(got, want) << what;
    return;
  }
  const bool wide = dtype == DType::f64;
  const std::size_t width = wide ? 8 : 4;
  const double eps = wide ? 0x1p-52 : 0x1p-23;
  for (std::size_t offset = 0; offset + width <= got.size(); offset += width) {
    double g = 0, w = 0;
    if (wide) {
      std::memcpy(&g, got.data() + offset, 8);
      std::memcpy(&w, want.data() + offset, 8);
    } else {
      float gf = 0, wf = 0;
      std::memcpy(&gf, got.data() + offset, 4);
      std::memcpy(&wf, want.data() + offset, 4);
      g = gf;
      w = wf;
    }
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << what << ": " << g << " instead of NaN";
    } else if (std::isinf(w)) {
      EXPECT_EQ(g, w) << what;
    } else {
      // Sums (sum, dot, the 1-norm) carry an absolute rounding of up to n eps max|x| (|x| <= 1)
      // in either order; the statistics are relative to their value (a mean, a variance, a
      // 2-norm, a logsumexp of well-scaled data), so a lost or doubled shard shows in both.
      const bool summed = r.op == Op::sum || r.op == Op::dot || (r.op == Op::norm && r.ord == 1);
      const double tol = summed ? eps * (4.0 * static_cast<double>(n) + 64.0 * std::fabs(w))
                                : eps * 1024.0 * (1.0 + std::fabs(w));
      EXPECT_NEAR(g, w, tol) << what;
    }
  }
}

//! The host bytes of an array of `n` random elements of `dtype` (indices [first, first + n) of
//! the seed's stream), as upload() takes them.
Bytes random_bytes(DType dtype, std::size_t n, std::uint64_t seed) {
  Bytes out(n * size_of(dtype));
  dispatch_dtype(dtype, [&](auto value) {
    using T = decltype(value);
    bench::fill_random(reinterpret_cast<T*>(out.data()), n, seed, bench::Distribution::uniform);
  });
  return out;
}

template <class T>
void set_element(Bytes& bytes, std::size_t i, double v) {
  const T value = static_cast<T>(static_cast<float>(v));
  std::memcpy(bytes.data() + i * sizeof(T), &value, sizeof(T));
}
void set_value(Bytes& bytes, DType dtype, std::size_t i, double v) {
  dispatch_dtype(dtype, [&](auto value) {
    using T = decltype(value);
    if constexpr (is_floating_v<T>) {
      set_element<T>(bytes, i, v);
    } else {
      const T integer = static_cast<T>(std::isnan(v) ? 0 : v);
      std::memcpy(bytes.data() + i * sizeof(T), &integer, sizeof(T));
    }
  });
}

//! A value above every random element (floats in [-1, 1), integers in [-1000, 1000]), exact
//! in every type.
double extreme(DType dtype) { return info(dtype).kind == DTypeKind::floating ? 2.0 : 5000.0; }

DeviceBuffer<unsigned char> upload_bytes(const Bytes& host) {
  DeviceBuffer<unsigned char> d(host.size() + 64);
  if (!host.empty())
    REDUCELAB_CUDA_CHECK(cudaMemcpy(d.data(), host.data(), host.size(), cudaMemcpyHostToDevice));
  return d;
}

//! The single-GPU reduce of d_x[0..n) (the reference of every case), as bytes; for an empty
//! input of an op without an empty value, the documented empty result of the segmented reduce.
Bytes single_gpu(const Reduction& r, DType dtype, const void* d_x, const void* d_y,
                 std::size_t n) {
  return poisoned_output(result_size(r.op, dtype), [&](void* d_out) {
    reduce(r, dtype, d_x, info(r.op).inputs == 2 ? d_y : nullptr, n, d_out, nullptr);
  });
}

bool undefined_when_empty(const Reduction& r) {
  return info(r.op).empty == EmptyRule::error || (r.op == Op::norm && std::isinf(r.ord));
}

//! Virtual ranks: the shards are consecutive slices of one device array (so their pointers have
//! every offset in a 16-byte line), each reduced to its state on this GPU, folded in rank order.
Bytes virtual_ranks(const Reduction& r, DType dtype, const unsigned char* d_x,
                    const unsigned char* d_y, const std::vector<std::size_t>& lengths) {
  DeviceBuffer<unsigned char> states(lengths.size() * kShardStateBytes);
  std::size_t offset = 0;
  for (std::size_t q = 0; q < lengths.size(); ++q) {
    const std::size_t at = offset * size_of(dtype);
    reduce_to_shard_state(r, dtype, d_x + at, info(r.op).inputs == 2 ? d_y + at : nullptr,
                          lengths[q], states.data() + q * kShardStateBytes, nullptr);
    offset += lengths[q];
  }
  return poisoned_output(result_size(r.op, dtype), [&](void* d_out) {
    fold_shard_states(r, dtype, states.data(), static_cast<int>(lengths.size()), d_out, nullptr);
  });
}

std::size_t total(const std::vector<std::size_t>& lengths) {
  std::size_t n = 0;
  for (std::size_t l : lengths) n += l;
  return n;
}

// Uneven shards with an empty and a 1-element one, and lengths around a tile and a vector.
const std::vector<std::size_t> kUneven = {37, 0, 1, 4099, 1000, 0, (1u << 16) + 5, 3};

constexpr DType kTestTypes[] = {DType::f32, DType::f64, DType::f16, DType::i64};

// ---- one GPU: virtual ranks ------------------------------------------------------------------

class VirtualRanks : public GpuTest {};

TEST_F(VirtualRanks, EveryOpOfUnevenShardsMatchesTheConcatenation) {
  const std::size_t n = total(kUneven);
  for (DType dtype : kAllDTypes) {
    const Bytes hx = random_bytes(dtype, n, kSeed);
    const Bytes hy = random_bytes(dtype, n, kSeed + 1);
    const auto dx = upload_bytes(hx);
    const auto dy = upload_bytes(hy);
    for (const Reduction& r : reductions_for(dtype)) {
      const std::string what = describe(r, dtype);
      expect_same_result(virtual_ranks(r, dtype, dx.data(), dy.data(), kUneven),
                         single_gpu(r, dtype, dx.data(), dy.data(), n), r, dtype, n, what);
    }
  }
}

TEST_F(VirtualRanks, NaNOnOneRankExtremesOnBoundariesAndTies) {
  const std::size_t n = total(kUneven);
  for (DType dtype : kTestTypes) {
    // Extremes: the max (2) is the last element of rank 0 and again the first of rank 3; the min
    // (-2) the first element of rank 2 (after an empty rank 1) and the last of rank 6: the first
    // of each must win, across ranks.
    Bytes hx = random_bytes(dtype, n, kSeed + 2);
    const double big = extreme(dtype);
    set_value(hx, dtype, 36, big);
    set_value(hx, dtype, 38, big);
    set_value(hx, dtype, 37, -big);
    set_value(hx, dtype, 37 + 1 + 4099 + 1000 + (1u << 16) + 4, -big);
    {
      const auto dx = upload_bytes(hx);
      for (Op op : {Op::argmax, Op::argmin, Op::max, Op::min, Op::aminmax}) {
        const Bytes got = virtual_ranks(op, dtype, dx.data(), nullptr, kUneven);
        EXPECT_EQ(got, single_gpu(op, dtype, dx.data(), nullptr, n)) << describe(op, dtype);
        if (op == Op::argmax || op == Op::argmin) {
          std::int64_t index = 0;
          std::memcpy(&index, got.data() + 8, 8);
          EXPECT_EQ(index, op == Op::argmax ? 36 : 37) << describe(op, dtype);
        }
      }
    }
    if (info(dtype).kind != DTypeKind::floating) continue;
    // NaN on rank 4 only (global index 37 + 0 + 1 + 4099 + 10).
    set_value(hx, dtype, 37 + 1 + 4099 + 10, NAN);
    const auto dx = upload_bytes(hx);
    for (const Reduction& r : reductions_for(dtype)) {
      const Bytes got = virtual_ranks(r, dtype, dx.data(), dx.data(), kUneven);
      expect_same_result(got, single_gpu(r, dtype, dx.data(), dx.data(), n), r, dtype, n,
                         describe(r, dtype) + " with a NaN on rank 4");
      if (r.op == Op::argmax || r.op == Op::argmin) {
        std::int64_t index = 0;
        std::memcpy(&index, got.data() + 8, 8);
        EXPECT_EQ(index, 37 + 1 + 4099 + 10) << describe(r, dtype);
      }
    }
  }
}

TEST_F(VirtualRanks, EveryShardEmpty) {
  const std::vector<std::size_t> empty = {0, 0, 0};
  DeviceBuffer<unsigned char> dummy(64);
  for (DType dtype : kTestTypes) {
    for (const Reduction& r : reductions_for(dtype)) {
      const Bytes got = virtual_ranks(r, dtype, dummy.data(), dummy.data(), empty);
      if (undefined_when_empty(r)) {
        // The segmented reduce's empty result: the identity, index -1.
        const Bytes want = dispatch_dtype(dtype, [&](auto value) {
          return r.op == Op::norm ? Bytes() : empty_result<decltype(value)>(r.op);
        });
        if (!want.empty() && r.op != Op::aminmax) EXPECT_EQ(got, want) << describe(r, dtype);
      } else {
        EXPECT_EQ(got, single_gpu(r, dtype, nullptr, nullptr, 0)) << describe(r, dtype);
      }
    }
  }
}

TEST_F(VirtualRanks, ArgumentErrorsAreClear) {
  DeviceBuffer<float> d(16);
  std::vector<float> host(16, 1.0f);
  expect_invalid_argument([&] { reduce_to_shard_state(Op::sum, DType::f32, host.data(), nullptr, 16, d.data(), nullptr); },
                          "host input", "host");
  expect_invalid_argument([&] { reduce_to_shard_state(Op::sum, DType::f32, d.data(), nullptr, 16, nullptr, nullptr); },
                          "null state", "null");
  expect_invalid_argument([&] { fold_shard_states(Op::sum, DType::f32, d.data(), 0, d.data(), nullptr); },
                          "no ranks", "ranks must be >= 1");
  expect_invalid_argument([&] { reduce_to_shard_state(Op::var, DType::i32, d.data(), nullptr, 16, d.data(), nullptr); },
                          "var of i32", "floating");
  expect_invalid_argument([&] { reduce_to_shard_state(Reduction(Op::sum).reproducible(), DType::f32, d.data(), nullptr, 16, d.data(), nullptr); },
                          "gpu_to_gpu sum", "gpu_to_gpu");
  // The context is still usable.
  EXPECT_EQ(sum(d.data(), 0), 0.0f);
}

// ---- one or more GPUs: real communicators ---------------------------------------------------

//! Runs body(rank, comm) on `ranks` GPUs of this process, one host thread per GPU (a thread per
//! communicator is how one process drives several GPUs without group calls, which would defer
//! the all-gather past the fold kernel queued after it).
void on_ranks(int ranks, const std::function<void(int, ncclComm_t)>& body) {
  std::vector<int> devices(ranks);
  for (int q = 0; q < ranks; ++q) devices[q] = q;
  std::vector<ncclComm_t> comms(ranks);
  NCCL_OK(ncclCommInitAll(comms.data(), ranks, devices.data()));
  std::vector<std::thread> threads;
  for (int q = 0; q < ranks; ++q)
    threads.emplace_back([&, q] {
      REDUCELAB_CUDA_CHECK(cudaSetDevice(q));
      body(q, comms[q]);
      REDUCELAB_CUDA_CHECK(cudaDeviceSynchronize());
    });
  for (auto& t : threads) t.join();
  for (ncclComm_t comm : comms) NCCL_OK(ncclCommDestroy(comm));
  REDUCELAB_CUDA_CHECK(cudaSetDevice(0));
}

class OneRank : public GpuTest {};

TEST_F(OneRank, EveryOpAndTypeGivesTheSingleGpuBits) {
  on_ranks(1, [&](int, ncclComm_t comm) {
    for (std::size_t n : {std::size_t{1}, std::size_t{1000}, (std::size_t{1} << 20) + 3}) {
      for (DType dtype : kAllDTypes) {
        const Bytes hx = random_bytes(dtype, n, kSeed + n);
        const auto dx = upload_bytes(hx);
        for (const Reduction& r : reductions_for(dtype)) {
          const std::string what = describe(r, dtype) + " n " + std::to_string(n);
          const void* y = info(r.op).inputs == 2 ? dx.data() : nullptr;
          const Bytes want = single_gpu(r, dtype, dx.data(), dx.data(), n);
          EXPECT_EQ(poisoned_output(want.size(), [&](void* d_out) {
                      reduce_sharded(r, dtype, dx.data(), y, n, d_out, comm, nullptr);
                    }),
                    want)
              << what;
          EXPECT_EQ(poisoned_output(want.size(), [&](void* d_out) {
                      reduce_sharded_root(r, dtype, dx.data(), y, n, d_out, 0, comm, nullptr);
                    }),
                    want)
              << what << " (root)";
          Bytes host(want.size());
          reduce_sharded_to_host(r, dtype, dx.data(), y, n, host.data(), comm, nullptr);
          EXPECT_EQ(host, want) << what << " (to host)";
        }
      }
    }
  });
}

TEST_F(OneRank, EmptyInputFollowsTheSingleGpuRules) {
  on_ranks(1, [&](int, ncclComm_t comm) {
    float total = -1;
    reduce_sharded_to_host(Op::sum, DType::f32, nullptr, nullptr, 0, &total, comm, nullptr);
    EXPECT_EQ(total, 0.0f);
    float mean = 0;
    reduce_sharded_to_host(Op::mean, DType::f32, nullptr, nullptr, 0, &mean, comm, nullptr);
    EXPECT_TRUE(std::isnan(mean));
    ArgResult<float> arg{};
    try {
      reduce_sharded_to_host(Op::argmax, DType::f32, nullptr, nullptr, 0, &arg, comm, nullptr);
      ADD_FAILURE() << "argmax of nothing: no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
    }
  });
}

TEST_F(OneRank, SameBitsTwiceAndRows) {
  on_ranks(1, [&](int, ncclComm_t comm) {
    const std::size_t n = std::size_t{1} << 24;
    const auto dx = upload_bytes(random_bytes(DType::f32, n, kSeed));
    for (const Reduction& r : {Reduction(Op::sum), Reduction::var(), Reduction(Op::logsumexp)}) {
      auto run = [&] {
        return poisoned_output(4, [&](void* d_out) {
          reduce_sharded(r, DType::f32, dx.data(), nullptr, n, d_out, comm, nullptr);
        });
      };
      EXPECT_EQ(run(), run()) << describe(r, DType::f32);
    }
    // Rows: 1,000 rows of 1,031 (the rank's whole row), against reduce_axes along the rows.
    const std::int64_t rows = 1000, cols = 1031;
    for (const Reduction& r : reductions_for(DType::f32)) {
      const std::size_t bytes = result_size(r.op, DType::f32) * rows;
      const Bytes want = poisoned_output(bytes, [&](void* d_out) {
        reduce_axes(r, DType::f32, dx.data(), info(r.op).inputs == 2 ? dx.data() : nullptr,
                    Layout::contiguous({rows, cols}), axis_mask({1}), d_out, nullptr, nullptr);
      });
      const Bytes got = poisoned_output(bytes, [&](void* d_out) {
        reduce_rows_sharded(r, DType::f32, dx.data(), info(r.op).inputs == 2 ? dx.data() : nullptr,
                            rows, cols, d_out, comm, nullptr);
      });
      const std::size_t each = result_size(r.op, DType::f32);
      for (std::int64_t i = 0; i < rows; i += 97)
        expect_same_result(Bytes(got.begin() + i * each, got.begin() + (i + 1) * each),
                           Bytes(want.begin() + i * each, want.begin() + (i + 1) * each), r,
                           DType::f32, cols, describe(r, DType::f32) + " row " + std::to_string(i));
    }
  });
}

TEST_F(OneRank, ErrorsAreClearAndLeaveTheContextUsable) {
  DeviceBuffer<float> d(16);
  expect_invalid_argument([&] { reduce_sharded(Op::sum, DType::f32, d.data(), nullptr, 16, d.data(), nullptr, nullptr); },
                          "null comm", "communicator is null");
  on_ranks(1, [&](int, ncclComm_t comm) {
    std::vector<float> host(16, 1.0f);
    // A rejected argument still takes part in the collective, then throws.
    expect_invalid_argument([&] { reduce_sharded(Op::sum, DType::f32, host.data(), nullptr, 16, d.data(), comm, nullptr); },
                            "host input", "host");
    expect_invalid_argument([&] { reduce_sharded(Op::sum, DType::f32, d.data(), d.data(), 16, d.data(), comm, nullptr); },
                            "second array for sum", "one array");
    expect_invalid_argument([&] { reduce_sharded(Reduction(Op::mean).reproducible(), DType::f32, d.data(), nullptr, 16, d.data(), comm, nullptr); },
                            "gpu_to_gpu mean", "gpu_to_gpu");
    expect_invalid_argument([&] { reduce_sharded_root(Op::sum, DType::f32, d.data(), nullptr, 16, d.data(), 3, comm, nullptr); },
                            "root out of range", "root 3");
    // Then a good call on the same communicator gives the right result.
    std::vector<float> ones(16, 1.0f);
    REDUCELAB_CUDA_CHECK(cudaMemcpy(d.data(), ones.data(), 64, cudaMemcpyHostToDevice));
    float total = 0;
    reduce_sharded_to_host(Op::sum, DType::f32, d.data(), nullptr, 16, &total, comm, nullptr);
    EXPECT_EQ(total, 16.0f);
  });
}

// ---- two GPUs -----------------------------------------------------------------------------------

//! The cases every multi-rank run checks on rank `rank` of `ranks`: the global array is drawn
//! from the seed on every rank; each rank reduces its own shard through `comm` and compares with
//! the single-GPU reduce of the whole array on its own GPU. Splits: uneven, an empty shard, a
//! 1-element shard; a NaN on the last rank only; the max on a shard boundary and tied on the
//! next rank.
void check_ranks(int rank, int ranks, ncclComm_t comm) {
  const std::size_t n = (std::size_t{1} << 20) + 77;
  const std::vector<std::vector<std::size_t>> splits = [&] {
    std::vector<std::vector<std::size_t>> s;
    auto even = std::vector<std::size_t>(ranks, n / ranks);
    even.back() += n % ranks;
    s.push_back(even);
    std::vector<std::size_t> empty_first(ranks, 0), one_first(ranks, 0);
    empty_first.back() = n;  // every rank empty but the last
    one_first[0] = 1;        // rank 0 holds one element
    one_first.back() = n - 1;
    s.push_back(empty_first);
    s.push_back(one_first);
    return s;
  }();
  for (DType dtype : kTestTypes) {
    for (int variant = 0; variant < 3; ++variant) {
      Bytes hx = random_bytes(dtype, n, kSeed + variant);
      for (const auto& lengths : splits) {
        std::size_t begin = 0;
        for (int q = 0; q < rank; ++q) begin += lengths[q];
        Bytes h = hx;
        if (variant == 1 && info(dtype).kind == DTypeKind::floating)
          set_value(h, dtype, n - 5, NAN);  // the last rank's alone
        if (variant == 2 && lengths[0] > 0) {
          set_value(h, dtype, lengths[0] - 1, extreme(dtype));  // the last element of rank 0
          set_value(h, dtype, lengths[0], extreme(dtype));      // tied, the first of rank 1
        }
        const auto whole = upload_bytes(h);
        const Bytes mine_host(h.begin() + begin * size_of(dtype),
                              h.begin() + (begin + lengths[rank]) * size_of(dtype));
        const auto mine = upload_bytes(mine_host);
        for (const Reduction& r : reductions_for(dtype)) {
          const std::string what = describe(r, dtype) + " rank " + std::to_string(rank) +
                                   " variant " + std::to_string(variant) + " first shard " +
                                   std::to_string(lengths[0]);
          const Bytes want = single_gpu(r, dtype, whole.data(), whole.data(), n);
          const void* y = info(r.op).inputs == 2 ? mine.data() : nullptr;
          const Bytes got = poisoned_output(want.size(), [&](void* d_out) {
            reduce_sharded(r, dtype, mine.data(), y, lengths[rank], d_out, comm, nullptr);
          });
          expect_same_result(got, want, r, dtype, n, what);
          if (variant == 2 && lengths[0] > 0 && r.op == Op::argmax) {
            std::int64_t index = 0;
            std::memcpy(&index, got.data() + 8, 8);
            EXPECT_EQ(index, static_cast<std::int64_t>(lengths[0] - 1)) << what;
          }
        }
      }
    }
  }
  // Rows sharded along their length: 64 rows, each rank its own piece of every row (uneven, and
  // rank 0's empty in the second split), against reduce_axes along the rows of the whole array.
  for (int split = 0; split < 2; ++split) {
    const std::int64_t rows = 64;
    std::vector<std::int64_t> cols(ranks);
    for (int q = 0; q < ranks; ++q) cols[q] = (split == 1 && q == 0) ? 0 : 100 + 37 * q;
    std::int64_t total_cols = 0, before = 0;
    for (int q = 0; q < ranks; ++q) {
      if (q < rank) before += cols[q];
      total_cols += cols[q];
    }
    for (DType dtype : kTestTypes) {
      const std::size_t item = size_of(dtype);
      const Bytes whole = random_bytes(dtype, static_cast<std::size_t>(rows * total_cols), kSeed + 9);
      Bytes piece(static_cast<std::size_t>(rows * cols[rank]) * item);
      for (std::int64_t i = 0; i < rows; ++i)
        std::memcpy(piece.data() + static_cast<std::size_t>(i * cols[rank]) * item,
                    whole.data() + static_cast<std::size_t>(i * total_cols + before) * item,
                    static_cast<std::size_t>(cols[rank]) * item);
      const auto d_whole = upload_bytes(whole);
      const auto d_piece = upload_bytes(piece);
      for (const Reduction& r : reductions_for(dtype)) {
        const std::size_t each = result_size(r.op, dtype);
        const void* y_whole = info(r.op).inputs == 2 ? d_whole.data() : nullptr;
        const void* y_piece = info(r.op).inputs == 2 ? d_piece.data() : nullptr;
        const Bytes want = poisoned_output(each * rows, [&](void* d_out) {
          reduce_axes(r, dtype, d_whole.data(), y_whole, Layout::contiguous({rows, total_cols}),
                      axis_mask({1}), d_out, nullptr, nullptr);
        });
        const Bytes got = poisoned_output(each * rows, [&](void* d_out) {
          reduce_rows_sharded(r, dtype, d_piece.data(), y_piece, rows, cols[rank], d_out, comm,
                              nullptr);
        });
        for (std::int64_t i = 0; i < rows; i += 7)
          expect_same_result(Bytes(got.begin() + i * each, got.begin() + (i + 1) * each),
                             Bytes(want.begin() + i * each, want.begin() + (i + 1) * each), r,
                             dtype, total_cols,
                             describe(r, dtype) + " rows split " + std::to_string(split) +
                                 " rank " + std::to_string(rank) + " row " + std::to_string(i));
      }
    }
  }
  // The same bits twice.
  const std::size_t each = n / ranks;
  const auto shard = upload_bytes(random_bytes(DType::f32, each, kSeed + rank));
  auto run = [&] {
    return poisoned_output(4, [&](void* d_out) {
      reduce_sharded(Reduction::var(), DType::f32, shard.data(), nullptr, each, d_out, comm, nullptr);
    });
  };
  EXPECT_EQ(run(), run()) << "var twice, rank " << rank;
}

class TwoGpus : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    if (device_count() < 2)
      GTEST_SKIP() << "needs 2 GPUs, this machine has " << device_count()
                   << " (the 1-rank and virtual-rank tests cover one GPU)";
  }
};

TEST_F(TwoGpus, OneProcessDrivesBothGpus) {
  on_ranks(2, [&](int rank, ncclComm_t comm) { check_ranks(rank, 2, comm); });
}

//! One process per GPU: this binary again, once per rank, running MultiGpuChild.Rank with the
//! ncclUniqueId in a file. Each child checks its own results (check_ranks); the test passes when
//! both exit 0 within the time limit (a hang is a failure, and the children are killed).
TEST_F(TwoGpus, OneProcessPerGpu) {
  ncclUniqueId id;
  NCCL_OK(ncclGetUniqueId(&id));
  char path[] = "/tmp/reducelab-nccl-id-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, &id, sizeof(id)), static_cast<ssize_t>(sizeof(id)));
  close(fd);
  std::vector<pid_t> children;
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<std::string> env_strings = {std::string("REDUCELAB_NCCL_ID_FILE=") + path,
                                            "REDUCELAB_NCCL_RANK=" + std::to_string(rank),
                                            "REDUCELAB_NCCL_RANKS=2"};
    std::vector<char*> env;
    for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
    for (auto& s : env_strings) env.push_back(s.data());
    env.push_back(nullptr);
    std::string self = "/proc/self/exe", filter = "--gtest_filter=MultiGpuChild.Rank";
    char* argv[] = {self.data(), filter.data(), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, env.data()), 0);
    children.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  for (pid_t pid : children) {
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (done == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "rank process " << pid << " did not finish in 300 s";
      continue;
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "rank process " << pid << " failed (its output is above)";
  }
  std::remove(path);
}

TEST(MultiGpuChild, Rank) {
  const char* file = std::getenv("REDUCELAB_NCCL_ID_FILE");
  if (file == nullptr) GTEST_SKIP() << "runs only as a rank process of TwoGpus.OneProcessPerGpu";
  const int rank = std::atoi(std::getenv("REDUCELAB_NCCL_RANK"));
  const int ranks = std::atoi(std::getenv("REDUCELAB_NCCL_RANKS"));
  ncclUniqueId id;
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(in.read(reinterpret_cast<char*>(&id), sizeof(id))) << file;
  REDUCELAB_CUDA_CHECK(cudaSetDevice(rank));
  ncclComm_t comm = nullptr;
  NCCL_OK(ncclCommInitRank(&comm, ranks, id, rank));
  check_ranks(rank, ranks, comm);
  REDUCELAB_CUDA_CHECK(cudaDeviceSynchronize());
  NCCL_OK(ncclCommDestroy(comm));
}

}  // namespace
}  // namespace reducelab::test

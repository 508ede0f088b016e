// reducelab._reducelab: the nanobind extension under the Python package. Thin on purpose: it
// takes raw device pointers, shapes, strides, dtype and op codes and a stream handle, turns them
// into a reducelab::Layout, and calls the runtime-typed entry points (reduce, reduce_to_host,
// reduce_axes, reduce_segments) with the GIL released. Everything torch-shaped (dim, keepdim,
// result dtypes, allocation of outputs) lives in python/reducelab/_ops.py.
//
// Per-call cost matters (issue 13: <= 1.5 us over the C++ call at 2^10 elements), so the
// arguments are plain ints and tuples read with the CPython API, nothing is allocated on the
// heap, and the op and dtype tables go to Python once, at import (table()).
//
// Errors: reducelab::Error becomes ValueError (invalid_argument) or reducelab.CudaError, a
// RuntimeError subclass (no_device, cuda_error); the library throws before it launches anything,
// so the CUDA context stays usable.

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "reducelab/axis.hpp"
#include "reducelab/reduce.hpp"
#include "reducelab/segmented.hpp"
#include "reducelab/shard.hpp"
#include "reducelab/tensors.hpp"
#include "reducelab/version.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

PyObject* g_cuda_error = nullptr;  // reducelab.CudaError, created in the module init

// Test hook (_set_dry_run): parse and check every argument, then return before touching CUDA,
// so the host cost of the Python layer and the binding can be measured on a machine without a
// GPU. Never set by the package itself.
bool g_dry_run = false;

struct CudaFailure {
  std::string message;
};

cudaStream_t to_stream(std::uintptr_t handle) { return reinterpret_cast<cudaStream_t>(handle); }
const void* to_ptr(std::uintptr_t address) { return reinterpret_cast<const void*>(address); }

// Makes `device` current for the call and restores the previous one after it. The tensor's
// device decides, not whatever device the thread last used (torch and CuPy each keep their own
// notion of the current device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (device < 0) return;  // the caller does not know: the current device
    cudaError_t status = cudaGetDevice(&previous_);
    if (status == cudaSuccess && previous_ != device) status = cudaSetDevice(device);
    if (status != cudaSuccess) {
      cudaGetLastError();  // clears the sticky-less error so the next call starts clean
      throw CudaFailure{std::string("reducelab: cannot use CUDA device ") +
                        std::to_string(device) + ": " + cudaGetErrorName(status) + " (" +
                        cudaGetErrorString(status) + ")"};
    }
    restore_ = previous_ != device;
  }
  ~DeviceGuard() {
    if (restore_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

// determinism: 0 run_to_run, 1 gpu_to_gpu (reducelab::Determinism's values; _ops.py maps the
// names).
reducelab::Reduction make_reduction(int op, double correction, double ord, int determinism = 0) {
  if (op < 0 || static_cast<std::size_t>(op) >= reducelab::kOpCount)
    throw nb::value_error("reducelab: invalid op code");
  if (determinism != 0 && determinism != 1)
    throw nb::value_error("reducelab: invalid determinism code (0 run_to_run, 1 gpu_to_gpu)");
  reducelab::Reduction r{static_cast<reducelab::Op>(op), correction, ord};
  return r.with(static_cast<reducelab::Determinism>(determinism));
}

reducelab::DType make_dtype(int dtype) {
  if (dtype < 0 || static_cast<std::size_t>(dtype) >= reducelab::kDTypeCount)
    throw nb::value_error("reducelab: invalid dtype code");
  return static_cast<reducelab::DType>(dtype);
}

std::int64_t read_int(PyObject* item) {
  const long long value = PyLong_AsLongLong(item);
  if (value == -1 && PyErr_Occurred()) throw nb::python_error();
  return value;
}

// Reads sizes and strides (tuples or lists of ints; torch.Size is a tuple) into a Layout.
// Strides come in units of `stride_unit` (1: elements, as torch gives them; the itemsize: bytes,
// as CuPy and __cuda_array_interface__ give them) and must be whole elements.
reducelab::Layout read_layout(nb::handle shape, nb::handle strides, std::int64_t stride_unit) {
  PyObject* s = shape.ptr();
  PyObject* t = strides.ptr();
  if (!PySequence_Check(s) || !PySequence_Check(t))
    throw nb::type_error("reducelab: shape and strides must be sequences of ints");
  const Py_ssize_t rank = PySequence_Size(s);
  if (rank < 0 || PySequence_Size(t) != rank)
    throw nb::value_error("reducelab: shape and strides differ in length");
  if (rank > reducelab::kMaxRank)
    throw nb::value_error(("reducelab: a strided view of rank " + std::to_string(rank) +
                           " is not supported (at most " + std::to_string(reducelab::kMaxRank) +
                           "); make it contiguous or reshape it")
                              .c_str());
  reducelab::Layout layout;
  layout.rank = static_cast<int>(rank);
  const bool fast = PyTuple_Check(s) && PyTuple_Check(t);
  for (Py_ssize_t k = 0; k < rank; ++k) {
    nb::object size_item, stride_item;
    PyObject* size_ptr;
    PyObject* stride_ptr;
    if (fast) {
      size_ptr = PyTuple_GET_ITEM(s, k);
      stride_ptr = PyTuple_GET_ITEM(t, k);
    } else {
      size_item = nb::steal(PySequence_GetItem(s, k));
      stride_item = nb::steal(PySequence_GetItem(t, k));
      if (!size_item.is_valid() || !stride_item.is_valid()) throw nb::python_error();
      size_ptr = size_item.ptr();
      stride_ptr = stride_item.ptr();
    }
    layout.sizes[k] = read_int(size_ptr);
    const std::int64_t stride = read_int(stride_ptr);
    if (stride % stride_unit != 0)
      throw nb::value_error(("reducelab: stride " + std::to_string(stride) + " of axis " +
                             std::to_string(k) + " is not a whole number of " +
                             std::to_string(stride_unit) + "-byte elements")
                                .c_str());
    layout.strides[k] = stride / stride_unit;
  }
  return layout;
}

// Negative strides (CuPy's x[::-1]): a reduced axis read backwards holds the same elements, so
// the view is flipped onto a positive stride (the base pointer moves to the axis's last element)
// for every op whose result does not depend on the order. Index results (argmin, argmax) would
// count from the other end, and a kept axis would write its results backwards; both are rejected
// rather than copied.
void flip_negative_strides(reducelab::Layout& layout, reducelab::AxisMask mask, bool index_op,
                           std::uintptr_t& base, std::size_t itemsize) {
  for (int k = 0; k < layout.rank; ++k) {
    if (layout.strides[k] >= 0 || layout.sizes[k] <= 1) {
      if (layout.strides[k] < 0) layout.strides[k] = 0;  // size 0 or 1: the stride is never used
      continue;
    }
    const bool reduced = (mask >> k) & 1u;
    if (!reduced || index_op)
      throw nb::value_error(
          ("reducelab: axis " + std::to_string(k) + " has a negative stride; reducelab reads " +
           (index_op ? std::string("it for an index result") : std::string("it as a kept axis")) +
           " only with non-negative strides (no copy is made: pass a copy, e.g. x.copy())")
              .c_str());
    const std::int64_t shift = (layout.sizes[k] - 1) * layout.strides[k];  // negative
    base = static_cast<std::uintptr_t>(static_cast<std::intptr_t>(base) +
                                       shift * static_cast<std::intptr_t>(itemsize));
    layout.strides[k] = -layout.strides[k];
  }
}

bool is_contiguous(const reducelab::Layout& layout) {
  std::int64_t expected = 1;
  for (int k = layout.rank - 1; k >= 0; --k) {
    if (layout.sizes[k] == 1) continue;
    if (layout.sizes[k] == 0) return true;
    if (layout.strides[k] != expected) return false;
    expected *= layout.sizes[k];
  }
  return true;
}

// reduce over a view: x (and y for dot, 0 otherwise) are device addresses, `shape`/`strides` the
// view, `mask` the reduced axes (-1: all of them, any rank, for a contiguous view), `out` where
// the results go (contiguous, row-major over the kept axes). A contiguous view reduced over every
// axis takes the flat entry point (reduce), everything else reduce_axes.
void reduce_view(int op, double correction, double ord, int dtype, std::uintptr_t x,
                 std::uintptr_t y, nb::handle shape, nb::handle strides, std::int64_t stride_unit,
                 std::int64_t mask, std::uintptr_t out, std::uintptr_t stream, int device,
                 int determinism) {
  const reducelab::Reduction r = make_reduction(op, correction, ord, determinism);
  const reducelab::DType dt = make_dtype(dtype);
  const std::size_t itemsize = reducelab::size_of(dt);

  // Whole-array fast path, any rank: a contiguous view needs no Layout.
  std::int64_t n = 1;
  bool contiguous = true;
  {
    PyObject* s = shape.ptr();
    PyObject* t = strides.ptr();
    if (mask == -1 && PyTuple_Check(s) && PyTuple_Check(t) &&
        PyTuple_GET_SIZE(s) == PyTuple_GET_SIZE(t)) {
      std::int64_t expected = stride_unit;
      for (Py_ssize_t k = PyTuple_GET_SIZE(s) - 1; k >= 0; --k) {
        const std::int64_t size = read_int(PyTuple_GET_ITEM(s, k));
        n *= size;
        if (size != 1 && read_int(PyTuple_GET_ITEM(t, k)) != expected) contiguous = false;
        expected *= size;
      }
      if (n == 0) contiguous = true;
      if (contiguous) {
        if (g_dry_run) return;
        nb::gil_scoped_release release;
        DeviceGuard guard(device);
        reducelab::reduce(r, dt, to_ptr(x), to_ptr(y), static_cast<std::size_t>(n),
                          reinterpret_cast<void*>(out), to_stream(stream));
        return;
      }
    }
  }

  reducelab::Layout layout = read_layout(shape, strides, stride_unit);
  const reducelab::AxisMask axes =
      mask == -1 ? static_cast<reducelab::AxisMask>((1u << layout.rank) - 1u)
                 : static_cast<reducelab::AxisMask>(mask);
  const bool index_op = r.op == reducelab::Op::argmin || r.op == reducelab::Op::argmax;
  std::uintptr_t y_base = y;
  if (y != 0) {
    reducelab::Layout y_layout = layout;  // dot reads y through x's layout
    flip_negative_strides(y_layout, axes, index_op, y_base, itemsize);
  }
  flip_negative_strides(layout, axes, index_op, x, itemsize);
  if (g_dry_run) return;
  nb::gil_scoped_release release;
  DeviceGuard guard(device);
  if (axes == static_cast<reducelab::AxisMask>((1u << layout.rank) - 1u) && is_contiguous(layout)) {
    reducelab::reduce(r, dt, to_ptr(x), to_ptr(y_base), static_cast<std::size_t>(layout.count()),
                      reinterpret_cast<void*>(out), to_stream(stream));
  } else {
    reducelab::reduce_axes(r, dt, to_ptr(x), to_ptr(y_base), layout, axes,
                           reinterpret_cast<void*>(out), nullptr, to_stream(stream));
  }
}

// The whole-array reduction of a contiguous array, as a Python number (or a pair), after
// synchronising `stream` only: the fast path to a host value (reducelab.item).
// The two halves of a sharded reduce (reducelab/shard.hpp), for reducelab.distributed: this
// rank's state into kShardStateBytes of device memory, and the rank-order fold of `ranks`
// gathered states into `out`.
void shard_state(int op, double correction, double ord, int dtype, std::uintptr_t x,
                 std::uintptr_t y, std::int64_t n, std::uintptr_t state, std::uintptr_t stream,
                 int device, int determinism) {
  const reducelab::Reduction r = make_reduction(op, correction, ord, determinism);
  const reducelab::DType dt = make_dtype(dtype);
  if (n < 0) throw reducelab::Error(reducelab::ErrorCode::invalid_argument, "n must be >= 0");
  if (g_dry_run) return;
  nb::gil_scoped_release release;
  DeviceGuard guard(device);
  reducelab::reduce_to_shard_state(r, dt, to_ptr(x), to_ptr(y), static_cast<std::size_t>(n),
                                   reinterpret_cast<void*>(state), to_stream(stream));
}

void fold_states(int op, double correction, double ord, int dtype, std::uintptr_t states,
                 int ranks, std::uintptr_t out, std::uintptr_t stream, int device,
                 int determinism) {
  const reducelab::Reduction r = make_reduction(op, correction, ord, determinism);
  const reducelab::DType dt = make_dtype(dtype);
  if (g_dry_run) return;
  nb::gil_scoped_release release;
  DeviceGuard guard(device);
  reducelab::fold_shard_states(r, dt, to_ptr(states), ranks, reinterpret_cast<void*>(out),
                               to_stream(stream));
}

nb::object reduce_item(int op, double correction, double ord, int dtype, std::uintptr_t x,
                       std::uintptr_t y, std::int64_t n, std::uintptr_t stream, int device,
                       int determinism) {
  const reducelab::Reduction r = make_reduction(op, correction, ord, determinism);
  const reducelab::DType dt = make_dtype(dtype);
  alignas(16) unsigned char bytes[16] = {};
  if (!g_dry_run) {
    nb::gil_scoped_release release;
    DeviceGuard guard(device);
    reducelab::reduce_to_host(r, dt, to_ptr(x), to_ptr(y), static_cast<std::size_t>(n), bytes,
                              to_stream(stream));
  }
  // One element of type T at `at` as a Python number (f16/bf16 widened to float exactly).
  auto element = [&](reducelab::DType type, const unsigned char* at) -> nb::object {
    return reducelab::dispatch_dtype(type, [&](auto tag) -> nb::object {
      using T = decltype(tag);
      T value;
      std::memcpy(&value, at, sizeof(T));
      if constexpr (std::is_same_v<T, __half>) {
        return nb::float_(static_cast<double>(__half2float(value)));
      } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        return nb::float_(static_cast<double>(__bfloat162float(value)));
      } else if constexpr (std::is_floating_point_v<T>) {
        return nb::float_(static_cast<double>(value));
      } else {
        return nb::int_(value);
      }
    });
  };
  const reducelab::DType stat = dt == reducelab::DType::f64 ? reducelab::DType::f64
                                                            : reducelab::DType::f32;
  switch (reducelab::info(r.op).result) {
    case reducelab::ResultKind::accumulator:
      return element(reducelab::info(dt).sum_dtype, bytes);
    case reducelab::ResultKind::element: return element(dt, bytes);
    case reducelab::ResultKind::value_index: {
      std::int64_t index;
      std::memcpy(&index, bytes + 8, sizeof index);
      return nb::int_(index);
    }
    case reducelab::ResultKind::statistic: return element(stat, bytes);
    case reducelab::ResultKind::statistic_pair:
      return nb::make_tuple(element(stat, bytes), element(stat, bytes + size_of(stat)));
    case reducelab::ResultKind::count: return element(reducelab::DType::i64, bytes);
    case reducelab::ResultKind::boolean: return nb::bool_(bytes[0] != 0);
    case reducelab::ResultKind::min_max:
      return nb::make_tuple(element(dt, bytes), element(dt, bytes + size_of(dt)));
  }
  return nb::none();
}

// Fixed-size segments of a contiguous array: num_segments rows of segment_size elements.
void reduce_segments_fixed(int op, double correction, double ord, int dtype, std::uintptr_t x,
                           std::uintptr_t y, std::int64_t num_segments, std::int64_t segment_size,
                           std::uintptr_t out, std::uintptr_t stream, int device,
                           int determinism) {
  const reducelab::Reduction r = make_reduction(op, correction, ord, determinism);
  const reducelab::DType dt = make_dtype(dtype);
  if (num_segments < 0 || segment_size < 0)
    throw nb::value_error("reducelab: negative number of segments or segment size");
  if (g_dry_run) return;
  nb::gil_scoped_release release;
  DeviceGuard guard(device);
  reducelab::reduce_segments(r, dt, to_ptr(x), to_ptr(y), static_cast<std::size_t>(num_segments),
                             static_cast<std::size_t>(segment_size), reinterpret_cast<void*>(out),
                             to_stream(stream));
}

// Ragged segments: num_segments + 1 offsets (int32 when offsets_itemsize is 4, else int64) in
// device memory.
void reduce_segments_ragged(int op, double correction, double ord, int dtype, std::uintptr_t x,
                            std::uintptr_t y, std::int64_t num_segments, std::uintptr_t offsets,
                            int offsets_itemsize, std::uintptr_t out, std::uintptr_t stream,
                            int device, int determinism) {
  const reducelab::Reduction r = make_reduction(op, correction, ord, determinism);
  const reducelab::DType dt = make_dtype(dtype);
  if (num_segments < 0) throw nb::value_error("reducelab: negative number of segments");
  if (offsets_itemsize != 4 && offsets_itemsize != 8)
    throw nb::type_error("reducelab: offsets must be int32 or int64");
  if (g_dry_run) return;
  nb::gil_scoped_release release;
  DeviceGuard guard(device);
  if (offsets_itemsize == 4) {
    reducelab::reduce_segments(r, dt, to_ptr(x), to_ptr(y), static_cast<std::size_t>(num_segments),
                               reinterpret_cast<const std::int32_t*>(offsets),
                               reinterpret_cast<void*>(out), to_stream(stream));
  } else {
    reducelab::reduce_segments(r, dt, to_ptr(x), to_ptr(y), static_cast<std::size_t>(num_segments),
                               reinterpret_cast<const std::int64_t*>(offsets),
                               reinterpret_cast<void*>(out), to_stream(stream));
  }
}

// A list of tensors (tensors.hpp): their addresses and lengths as two equal-length lists of
// ints, results to `out` (one per tensor) and, when `total` is not 0, the list's total there.
void reduce_tensors(int op, double correction, double ord, int dtype,
                    const std::vector<std::uintptr_t>& addresses,
                    const std::vector<std::int64_t>& sizes, std::uintptr_t out,
                    std::uintptr_t total, std::uintptr_t stream, int device) {
  const reducelab::Reduction r = make_reduction(op, correction, ord);
  const reducelab::DType dt = make_dtype(dtype);
  if (addresses.size() != sizes.size())
    throw nb::value_error("reducelab: as many addresses as sizes");
  static thread_local std::vector<reducelab::TensorSpan> spans;
  spans.resize(addresses.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (sizes[i] < 0) throw nb::value_error("reducelab: a negative tensor size");
    spans[i] = {to_ptr(addresses[i]), static_cast<std::size_t>(sizes[i])};
  }
  if (g_dry_run) return;
  nb::gil_scoped_release release;
  DeviceGuard guard(device);
  reducelab::reduce_tensors(r, dt, spans.data(), spans.size(), reinterpret_cast<void*>(out),
                            reinterpret_cast<void*>(total), to_stream(stream));
}

// The op and dtype tables (op.hpp's kOps, dtype.hpp's kDTypes), read once by the Python layer so
// that names, codes, result kinds and the integer rule are written down only in C++.
nb::dict table() {
  static const char* const kResultKinds[] = {"accumulator", "element",    "value_index",
                                             "statistic",   "statistic_pair", "count",
                                             "boolean",     "min_max"};
  static const char* const kEmptyRules[] = {"zero", "error", "value"};
  static const char* const kKinds[] = {"floating", "signed_integer", "unsigned_integer"};
  auto str = [](std::string_view text) { return nb::str(text.data(), text.size()); };
  nb::dict ops;
  for (const reducelab::OpInfo& info : reducelab::kOps) {
    nb::dict row;
    row["code"] = static_cast<int>(info.op);
    row["inputs"] = info.inputs;
    row["result"] = kResultKinds[static_cast<int>(info.result)];
    row["empty"] = kEmptyRules[static_cast<int>(info.empty)];
    row["integers"] = info.integers;
    row["summary"] = str(info.summary);
    ops[str(info.name)] = row;
  }
  nb::dict dtypes;
  for (const reducelab::DTypeInfo& info : reducelab::kDTypes) {
    nb::dict row;
    row["code"] = static_cast<int>(info.dtype);
    row["size"] = info.size;
    row["kind"] = kKinds[static_cast<int>(info.kind)];
    row["sum_dtype"] = str(reducelab::to_string(info.sum_dtype));
    dtypes[str(info.name)] = row;
  }
  nb::dict table;
  table["ops"] = ops;
  table["dtypes"] = dtypes;
  table["max_rank"] = reducelab::kMaxRank;
  return table;
}

}  // namespace

NB_MODULE(_reducelab, m) {
  m.doc() = "reducelab's nanobind extension (raw pointers in, results in device memory); use the "
            "functions of the reducelab package instead.";
  m.attr("__version__") = REDUCELAB_VERSION_STRING;

  nb::object cuda_error = nb::steal(PyErr_NewExceptionWithDoc(
      "reducelab.CudaError",
      "A CUDA failure (no device or driver, an error from a CUDA call) reported by reducelab. "
      "A RuntimeError; the process and its CUDA context remain usable.",
      PyExc_RuntimeError, nullptr));
  g_cuda_error = cuda_error.ptr();
  m.attr("CudaError") = cuda_error;
  cuda_error.inc_ref();  // kept for the life of the process, as the translator uses it

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const reducelab::Error& e) {
      PyObject* type = e.code() == reducelab::ErrorCode::invalid_argument ? PyExc_ValueError
                                                                         : g_cuda_error;
      PyErr_SetString(type, e.what());
    } catch (const CudaFailure& e) {
      PyErr_SetString(g_cuda_error, e.message.c_str());
    }
  });

  m.def("reduce", &reduce_view, "op"_a, "correction"_a, "ord"_a, "dtype"_a, "x"_a, "y"_a,
        "shape"_a, "strides"_a, "stride_unit"_a, "mask"_a, "out"_a, "stream"_a, "device"_a,
        "determinism"_a = 0,
        "Reduces the axes in `mask` (-1: all) of the view at device address x (and y for dot) "
        "into `out` (contiguous results, row-major over the kept axes). determinism: 0 "
        "run_to_run, 1 gpu_to_gpu (reducelab/reproducible.hpp).");
  m.def("item", &reduce_item, "op"_a, "correction"_a, "ord"_a, "dtype"_a, "x"_a, "y"_a, "n"_a,
        "stream"_a, "device"_a, "determinism"_a = 0,
        "The whole-array reduction of n contiguous elements as a Python number (or a pair), "
        "after synchronising `stream`.");
  m.def("reduce_segments_fixed", &reduce_segments_fixed, "op"_a, "correction"_a, "ord"_a,
        "dtype"_a, "x"_a, "y"_a, "num_segments"_a, "segment_size"_a, "out"_a, "stream"_a,
        "device"_a, "determinism"_a = 0);
  m.def("reduce_segments_ragged", &reduce_segments_ragged, "op"_a, "correction"_a, "ord"_a,
        "dtype"_a, "x"_a, "y"_a, "num_segments"_a, "offsets"_a, "offsets_itemsize"_a, "out"_a,
        "stream"_a, "device"_a, "determinism"_a = 0);
  m.def("reduce_tensors", &reduce_tensors, "op"_a, "correction"_a, "ord"_a, "dtype"_a,
        "addresses"_a, "sizes"_a, "out"_a, "total"_a, "stream"_a, "device"_a,
        "One result per tensor of a list (device addresses and lengths) into `out`, and the "
        "list's total into `total` unless it is 0.");
  m.def("shard_state", &shard_state, "op"_a, "correction"_a, "ord"_a, "dtype"_a, "x"_a, "y"_a,
        "n"_a, "state"_a, "stream"_a, "device"_a, "determinism"_a = 0,
        "This rank's partial state of x[0, n) (y for dot) into shard_state_bytes of device "
        "memory at `state` (reducelab/shard.hpp).");
  m.def("fold_states", &fold_states, "op"_a, "correction"_a, "ord"_a, "dtype"_a, "states"_a,
        "ranks"_a, "out"_a, "stream"_a, "device"_a, "determinism"_a = 0,
        "Folds `ranks` gathered states (rank 0 first) into the result at `out`.");
  m.attr("shard_state_bytes") = reducelab::kShardStateBytes;
  m.def("table", &table, "The op and dtype tables of the C++ library.");
  m.def("_set_dry_run", [](bool on) { g_dry_run = on; },
        "Test hook: parse every argument but launch nothing (host-overhead measurements).");
}

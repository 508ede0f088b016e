// A Python extension's situation (e.g. PyTorch's): the static reducelab inside a shared object.
// CMakeLists.txt links every object of libreducelab.a into this library with --no-undefined,
// which fails unless the library is position-independent and needs nothing beyond the CUDA
// runtime that reducelab::reducelab names.

#include <reducelab/reducelab.hpp>

#include <cstddef>

extern "C" float reducelab_consumer_extension_sum(const float* d_x, std::size_t n) {
  return reducelab::sum(d_x, n);
}

// Entry point of the GPU tests: prints the seed, or the reason every test will skip (CTest reads
// "GPU tests skipped" as a skip).

#include <gtest/gtest.h>

#include <iostream>

#include "gpu_test.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!reducelab::test::no_gpu_reason().empty()) {
    std::cout << "reducelab: " << reducelab::test::no_gpu_reason() << "; GPU tests skipped"
              << std::endl;
  } else {
    std::cout << "reducelab GPU tests: random inputs from seed " << reducelab::test::kSeed
              << std::endl;
  }
  return RUN_ALL_TESTS();
}

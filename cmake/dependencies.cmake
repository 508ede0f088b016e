# Every dependency comes from the system (Debian packages, the CUDA toolkit) through
# find_package. CI and the GPU machine have no network: FetchContent is only a fallback for a
# machine that lacks a package and has a network.
include(FetchContent)

find_package(CUDAToolkit REQUIRED)
# CUB is the baseline we compare against; the CUDA toolkit ships it as CCCL.
find_package(CCCL CONFIG REQUIRED HINTS "${CUDAToolkit_LIBRARY_DIR}/cmake/cccl")

find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  message(STATUS "CLI11 not found on the system: fetching it")
  FetchContent_Declare(cli11 URL https://github.com/CLIUtils/CLI11/archive/refs/tags/v2.4.2.tar.gz)
  FetchContent_MakeAvailable(cli11)
endif()

find_package(nlohmann_json 3.10 CONFIG QUIET)
if(NOT nlohmann_json_FOUND)
  message(STATUS "nlohmann_json not found on the system: fetching it")
  FetchContent_Declare(json URL https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz)
  FetchContent_MakeAvailable(json)
endif()

if(REDUCELAB_BUILD_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    message(STATUS "GoogleTest not found on the system: fetching it")
    FetchContent_Declare(googletest
      URL https://github.com/google/googletest/archive/refs/tags/v1.14.0.tar.gz)
    FetchContent_MakeAvailable(googletest)
  endif()
endif()

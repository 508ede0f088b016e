# Every dependency comes from the system (Debian packages, the CUDA toolkit) through find_package.
# The library needs only the CUDA toolkit; the tools and the tests need more, and those are looked
# for only when they are built. CI and the GPU machine have no network, so a missing package fails
# the configure at once with the package to install; downloading is opt-in
# (REDUCELAB_FETCH_DEPENDENCIES=ON) for a machine that has a network but not the package.

find_package(CUDAToolkit REQUIRED)

# find_package(<name>), else the download (opt-in), else one clear error naming the Debian package.
#   reducelab_require(<name> DEBIAN <package> NEEDED_BY <option> [VERSION <v>] [FIND_ARGS ...]
#                     [FETCH_NAME <n> FETCH_URL <url>])
macro(reducelab_require name)
  cmake_parse_arguments(_req "" "DEBIAN;NEEDED_BY;VERSION;FETCH_NAME;FETCH_URL" "FIND_ARGS"
                        ${ARGN})
  find_package(${name} ${_req_VERSION} ${_req_FIND_ARGS} QUIET)
  set(_req_VERSION_TEXT "")
  if(_req_VERSION)
    set(_req_VERSION_TEXT " >= ${_req_VERSION}")
  endif()
  if(NOT ${name}_FOUND)
    if(REDUCELAB_FETCH_DEPENDENCIES AND _req_FETCH_URL)
      message(STATUS "reducelab: ${name} not found on the system: downloading ${_req_FETCH_URL}")
      include(FetchContent)
      FetchContent_Declare(${_req_FETCH_NAME} URL ${_req_FETCH_URL})
      FetchContent_MakeAvailable(${_req_FETCH_NAME})
    else()
      message(FATAL_ERROR
        "reducelab: ${name}${_req_VERSION_TEXT} not found; ${_req_NEEDED_BY}=ON needs it.\n"
        "Install the Debian package ${_req_DEBIAN} (apt-get install ${_req_DEBIAN}), or configure "
        "with -D${_req_NEEDED_BY}=OFF, or with -DREDUCELAB_FETCH_DEPENDENCIES=ON to download it "
        "(needs network).")
    endif()
  endif()
endmacro()

if(REDUCELAB_BUILD_TOOLS)
  # CUB is the bench's baseline; the CUDA toolkit ships it as CCCL.
  find_package(CCCL CONFIG QUIET HINTS "${CUDAToolkit_LIBRARY_DIR}/cmake/cccl")
  if(NOT CCCL_FOUND)
    message(FATAL_ERROR "reducelab: CCCL (CUB) not found in the CUDA toolkit "
                        "(${CUDAToolkit_LIBRARY_DIR}/cmake/cccl); REDUCELAB_BUILD_TOOLS=ON needs "
                        "it for the CUB baseline. Use a CUDA toolkit >= 12, or "
                        "-DREDUCELAB_BUILD_TOOLS=OFF.")
  endif()
  reducelab_require(CLI11 DEBIAN libcli11-dev NEEDED_BY REDUCELAB_BUILD_TOOLS FIND_ARGS CONFIG
                    FETCH_NAME cli11
                    FETCH_URL https://github.com/CLIUtils/CLI11/archive/refs/tags/v2.4.2.tar.gz)
  reducelab_require(nlohmann_json VERSION 3.10 DEBIAN nlohmann-json3-dev
                    NEEDED_BY REDUCELAB_BUILD_TOOLS FIND_ARGS CONFIG
                    FETCH_NAME json
                    FETCH_URL https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz)
endif()

if(REDUCELAB_BUILD_TESTS)
  reducelab_require(GTest DEBIAN libgtest-dev NEEDED_BY REDUCELAB_BUILD_TESTS
                    FETCH_NAME googletest
                    FETCH_URL https://github.com/google/googletest/archive/refs/tags/v1.14.0.tar.gz)
endif()

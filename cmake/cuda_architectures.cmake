# Which GPUs reducelab's device code is built for.
#
# Default: real machine code for the article's A100 (sm_80) and our H200 (sm_90), plus compute_90
# PTX so newer GPUs JIT it: REDUCELAB_CUDA_ARCHITECTURES = "80-real;90". A user or a parent project
# that chose CMAKE_CUDA_ARCHITECTURES gets its choice instead.
#
# "Chose" has to be detected after the fact: by the time this runs, enable_language(CUDA) (ours
# or the parent's) has filled CMAKE_CUDA_ARCHITECTURES with the compiler's default (75 for nvcc
# 13.0) whenever nobody set it. CMake 3.25 keeps no record of that default
# (CMAKE_CUDA_ARCHITECTURES_DEFAULT does not exist; CMakeCUDACompiler.cmake stores only the
# _ALL, _ALL_MAJOR and _NATIVE lists), but the cache entry it writes has its own docstring,
# "CUDA architectures" (Modules/CMakeDetermineCUDACompiler.cmake). So CMAKE_CUDA_ARCHITECTURES
# counts as chosen when
#   - the CUDAARCHS environment variable is set (CMake copies it into the cache, same docstring);
#   - a normal variable shadows the cache entry with another value, or there is no cache entry
#     (a parent's or toolchain's set(CMAKE_CUDA_ARCHITECTURES ...));
#   - the cache entry's docstring is not CMake's: -D on the command line or a preset's
#     cacheVariables (docstring "No help, variable specified on the command line.", also when it
#     replaces CMake's entry on a later configure; checked with CMake 3.25.1) or a set(... CACHE)
#     with its own docstring.
# Not detected: a value edited in ccmake/cmake-gui (the docstring stays CMake's), and a parent's
# normal variable equal to the compiler default. For those, set REDUCELAB_CUDA_ARCHITECTURES.
#
# The choice is applied by setting CMAKE_CUDA_ARCHITECTURES as a normal variable in reducelab's
# own directory scope: it initialises the CUDA_ARCHITECTURES property of every reducelab target
# (library, tools, tests) and never leaks into a parent project.

function(_reducelab_cuda_architectures_chosen out_var)
  set(chosen FALSE)
  get_property(help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
  if(NOT "$ENV{CUDAARCHS}" STREQUAL "")
    set(chosen TRUE)
  elseif(DEFINED CMAKE_CUDA_ARCHITECTURES AND
         (NOT DEFINED CACHE{CMAKE_CUDA_ARCHITECTURES} OR
          NOT "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "$CACHE{CMAKE_CUDA_ARCHITECTURES}"))
    set(chosen TRUE)
  elseif(DEFINED CACHE{CMAKE_CUDA_ARCHITECTURES} AND NOT help STREQUAL "CUDA architectures")
    set(chosen TRUE)
  endif()
  set(${out_var} ${chosen} PARENT_SCOPE)
endfunction()

_reducelab_cuda_architectures_chosen(_reducelab_archs_chosen)
if(_reducelab_archs_chosen)
  message(STATUS "reducelab: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES} "
                 "(CMAKE_CUDA_ARCHITECTURES, chosen by the user or the parent project)")
else()
  set(CMAKE_CUDA_ARCHITECTURES ${REDUCELAB_CUDA_ARCHITECTURES})
  message(STATUS "reducelab: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES} "
                 "(REDUCELAB_CUDA_ARCHITECTURES; CMAKE_CUDA_ARCHITECTURES was not chosen)")
endif()

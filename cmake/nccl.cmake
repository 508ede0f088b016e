# NCCL, for the optional sharded reduce (reducelab::nccl, include/reducelab/multigpu.hpp).
# Looked for in the CUDA toolkit's directories (NVIDIA's HPC images and some toolkits ship it
# there) and the system's (Debian's libnccl-dev). Defines the imported target NCCL::nccl, linked
# dynamically (libnccl.so.2 at run time), and NCCL_FOUND. Also installed as reducelab's package
# helper, so that find_package(reducelab) finds NCCL the same way for reducelab::nccl.
if(NOT TARGET NCCL::nccl)
  set(_nccl_roots "")
  if(CUDAToolkit_LIBRARY_ROOT)
    list(APPEND _nccl_roots "${CUDAToolkit_LIBRARY_ROOT}")
  endif()
  if(CUDAToolkit_BIN_DIR)
    get_filename_component(_nccl_toolkit "${CUDAToolkit_BIN_DIR}" DIRECTORY)
    list(APPEND _nccl_roots "${_nccl_toolkit}")
  endif()
  find_path(NCCL_INCLUDE_DIR nccl.h
            HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS} ${_nccl_roots}
            PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY NAMES nccl
               HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR} ${_nccl_roots}
               PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_version_lines
         REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) [0-9]+")
    set(NCCL_VERSION "")
    foreach(_part MAJOR MINOR PATCH)
      string(REGEX MATCH "NCCL_${_part} ([0-9]+)" _match "${_nccl_version_lines}")
      list(APPEND NCCL_VERSION "${CMAKE_MATCH_1}")
    endforeach()
    string(REPLACE ";" "." NCCL_VERSION "${NCCL_VERSION}")
    add_library(NCCL::nccl SHARED IMPORTED)
    set_target_properties(NCCL::nccl PROPERTIES
      IMPORTED_LOCATION "${NCCL_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
    set(NCCL_FOUND TRUE)
  else()
    set(NCCL_FOUND FALSE)
  endif()
else()
  set(NCCL_FOUND TRUE)
endif()

# `cmake --install` of the build tree into a fresh PREFIX, then a check of what landed there:
# the library, the public headers with the generated version.hpp, the package files, the
# LICENSE, and nothing of the tools.
#   cmake -DBUILD_DIR=<build> -DPREFIX=<dir> [-DCONFIG=<cfg>] -P install_reducelab.cmake
file(REMOVE_RECURSE "${PREFIX}")
set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} ${config_args}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${status}):\n${out}")
endif()

file(GLOB_RECURSE installed RELATIVE ${PREFIX} ${PREFIX}/*)
list(SORT installed)
string(REPLACE ";" "\n  " listing "${installed}")
message(STATUS "installed into ${PREFIX}:\n  ${listing}")

foreach(pattern
    "^include/reducelab/reducelab\\.hpp$"
    "^include/reducelab/reduce\\.hpp$"
    "^include/reducelab/version\\.hpp$"
    "^lib[^/]*/libreducelab\\.(a|so)$"
    "^lib[^/]*/cmake/reducelab/reducelabConfig\\.cmake$"
    "^lib[^/]*/cmake/reducelab/reducelabConfigVersion\\.cmake$"
    "^lib[^/]*/cmake/reducelab/reducelabTargets\\.cmake$"
    "^share/doc/reducelab/LICENSE$")
  set(hits ${installed})
  list(FILTER hits INCLUDE REGEX "${pattern}")
  if(NOT hits)
    message(FATAL_ERROR "nothing installed matches ${pattern}")
  endif()
endforeach()
# reducelab::nccl (the sharded reduce) is a library of the package, installed with
# REDUCELAB_WITH_NCCL (WITH_NCCL here), with its header and the helper that finds NCCL.
if(WITH_NCCL)
  foreach(pattern
      "^include/reducelab/multigpu\\.hpp$"
      "^lib[^/]*/libreducelab_nccl\\.(a|so)$"
      "^lib[^/]*/cmake/reducelab/reducelabFindNCCL\\.cmake$")
    set(hits ${installed})
    list(FILTER hits INCLUDE REGEX "${pattern}")
    if(NOT hits)
      message(FATAL_ERROR "REDUCELAB_WITH_NCCL: nothing installed matches ${pattern}")
    endif()
  endforeach()
  list(FILTER installed EXCLUDE REGEX "^lib[^/]*/libreducelab_nccl\\.(a|so)(\\.[0-9.]+)?$")
else()
  set(hits ${installed})
  list(FILTER hits INCLUDE REGEX "multigpu|nccl|NCCL")
  if(hits)
    message(FATAL_ERROR "installed the sharded reduce without REDUCELAB_WITH_NCCL: ${hits}")
  endif()
endif()
foreach(pattern "^bin/" "\\.in$" "/common/" "/bench/" "/reduce/" "reducelab_")
  set(hits ${installed})
  list(FILTER hits INCLUDE REGEX "${pattern}")
  if(hits)
    message(FATAL_ERROR "installed what only the tools use (${pattern}): ${hits}")
  endif()
endforeach()

# `cmake --install <build> [--prefix <dir>]`: the library, its public headers (with the generated
# version.hpp), the LICENSE and a CMake package, so that a project does
#   find_package(reducelab 0.2 CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE reducelab::reducelab)
# Only the library is installed: the tools are for this repository's measurements.
include(CMakePackageConfigHelpers)

set(REDUCELAB_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/reducelab)

# With REDUCELAB_WITH_NCCL also reducelab::nccl (multigpu.hpp), whose package side finds NCCL
# again (reducelabFindNCCL.cmake, the same search as cmake/nccl.cmake).
set(_reducelab_installed_targets reducelab)
set(_reducelab_header_excludes "")
if(REDUCELAB_WITH_NCCL)
  list(APPEND _reducelab_installed_targets reducelab_nccl)
else()
  set(_reducelab_header_excludes PATTERN "multigpu.hpp" EXCLUDE)
endif()
install(TARGETS ${_reducelab_installed_targets} EXPORT reducelabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Every public header; version.hpp.in stays behind (its generated version.hpp goes instead).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/reducelab
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" ${_reducelab_header_excludes})
install(FILES ${REDUCELAB_GENERATED_INCLUDE_DIR}/reducelab/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/reducelab)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/reducelab)

install(EXPORT reducelabTargets
        NAMESPACE reducelab::
        FILE reducelabTargets.cmake
        DESTINATION ${REDUCELAB_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/reducelabConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/reducelabConfig.cmake
                              INSTALL_DESTINATION ${REDUCELAB_INSTALL_CMAKEDIR})
# SameMinorVersion: while the major version is 0, a minor release (0.2 -> 0.3) may change the
# API, as semantic versioning allows for 0.x; patch releases keep it. So find_package(reducelab
# 0.2) accepts 0.2.0 and 0.2.7 but neither 0.3.0 nor 0.1.x. (SameMajorVersion would accept 0.3 for
# a 0.2 request, a promise a 0.x project does not make.) Revisit at 1.0: SameMajorVersion then.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/reducelabConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMinorVersion)
if(REDUCELAB_WITH_NCCL)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/nccl.cmake DESTINATION ${REDUCELAB_INSTALL_CMAKEDIR}
          RENAME reducelabFindNCCL.cmake)
endif()
install(FILES ${PROJECT_BINARY_DIR}/reducelabConfig.cmake
              ${PROJECT_BINARY_DIR}/reducelabConfigVersion.cmake
        DESTINATION ${REDUCELAB_INSTALL_CMAKEDIR})

# Configures and builds tests/consumer in a fresh BINARY_DIR (the run is a test of its own, so that
# "no GPU" can be a skip).
#   cmake -DSOURCE_DIR=<tests/consumer> -DBINARY_DIR=<dir> -DGENERATOR=<gen> -DMODE=<mode>
#         [-DCONFIGURE_ONLY=ON] [-DEXPECT_ARCHS=80-real,90] [-DARGS=-DA=1|-DB=2]
#         -P build_consumer.cmake
# ARGS: extra cache arguments separated by '|'; EXPECT_ARCHS: ',' for ';' (CTest's command line
# would split a ';').
file(REMOVE_RECURSE "${BINARY_DIR}")
string(REPLACE "|" ";" args "${ARGS}")
set(expect_arg)  # one quoted argument, so that its ';' survives
if(DEFINED EXPECT_ARCHS)
  string(REPLACE "," ";" expect "${EXPECT_ARCHS}")
  set(expect_arg "-DEXPECT_CUDA_ARCHITECTURES=${expect}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G ${GENERATOR}
                        -DREDUCELAB_CONSUME=${MODE} ${args} "${expect_arg}"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
message(STATUS "configure (${MODE}):\n${out}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "configuring the consumer (${MODE}) failed (${status})")
endif()
if(CONFIGURE_ONLY)
  return()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} --config Release
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
message(STATUS "build (${MODE}):\n${out}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "building the consumer (${MODE}) failed (${status})")
endif()

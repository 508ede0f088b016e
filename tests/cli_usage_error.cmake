# A usage error of `reducelab` end to end, with or without a GPU: exit 2, nothing on stdout, and
# exactly one line on stderr that starts "reducelab: " and contains EXPECT, printed before
# anything runs (so without a GPU it comes instead of the "no CUDA device" error).
# ARGS holds the arguments separated by "|" (a CTest argument cannot hold a list).
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${REDUCELAB} ${args}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REPLACE "|" " " shown "${ARGS}")
string(REGEX MATCHALL "\n" newlines "${err}")
list(LENGTH newlines lines)
string(FIND "${err}" "${EXPECT}" found)
if(NOT status EQUAL 2 OR NOT out STREQUAL "" OR NOT lines EQUAL 1 OR NOT err MATCHES "^reducelab: "
   OR found EQUAL -1)
  message(FATAL_ERROR "reducelab ${shown}: expected exit 2 and one stderr line containing "
                      "'${EXPECT}'; got exit ${status}, stdout:\n${out}\nstderr:\n${err}")
endif()
string(STRIP "${err}" err)
message(STATUS "reducelab ${shown}: exit ${status}: ${err}")

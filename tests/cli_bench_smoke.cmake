# `reducelab bench` end to end. With a GPU: a tiny table with every rung, CUB and reducelab.
# Without one: exactly one line on stderr naming the problem, and a non-zero exit.
# ARGS (optional, "|"-separated) replaces the size arguments and ROWS the rows the table must
# have, separated by ",": the segmented smoke test passes "--segments|fixed:64x1024" and
# "| CUB |,| reducelab |".
if(DEFINED ARGS)
  string(REPLACE "|" ";" size_args "${ARGS}")
else()
  set(size_args --n 2^12+3)
endif()
if(NOT DEFINED ROWS)
  set(ROWS "| V0 |,| V7 |,| CUB |,| reducelab |")
endif()
string(REPLACE "," ";" ROWS "${ROWS}")
execute_process(COMMAND ${REDUCELAB} bench ${size_args} --reps 20 --warmup 1
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(status EQUAL 0)
  foreach(row ${ROWS})
    string(FIND "${out}" "${row}" found)
    if(found EQUAL -1)
      message(FATAL_ERROR "bench table lacks ${row}:\n${out}")
    endif()
  endforeach()
  message(STATUS "bench ran on a GPU:\n${out}")
else()
  string(STRIP "${err}" err)
  string(FIND "${err}" "\n" newline)
  if(NOT newline EQUAL -1 OR NOT err MATCHES "no CUDA device")
    message(FATAL_ERROR "without a GPU, bench must print one line naming the problem; got (exit ${status}):\n${err}")
  endif()
  message(STATUS "no GPU: bench exited ${status} with: ${err}")
endif()

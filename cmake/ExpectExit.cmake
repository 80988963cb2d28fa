# A test of a program's refusal: runs PROGRAM with the one argument ARG and fails unless it
# exits with EXIT_CODE and prints (stdout or stderr) something matching the regular expression
# OUTPUT.
#   cmake -DPROGRAM=<file> -DARG=<argument> -DEXIT_CODE=2 -DOUTPUT=<regex> -P ExpectExit.cmake
execute_process(COMMAND "${PROGRAM}" "${ARG}" RESULT_VARIABLE code OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
if(NOT code STREQUAL EXIT_CODE)
  message(FATAL_ERROR "'${PROGRAM} ${ARG}' exited with ${code}, not ${EXIT_CODE}:\n${out}")
endif()
if(NOT out MATCHES "${OUTPUT}")
  message(FATAL_ERROR "'${PROGRAM} ${ARG}' did not say why (expected '${OUTPUT}'):\n${out}")
endif()
message(STATUS "'${PROGRAM} ${ARG}': exit ${code}, ${out}")

# Says at configure time whether the GPU tests will run or be reported as skipped, and why: ctest
# does not show a skipped test's own message. A small program asks the CUDA runtime, as the tests
# will, and prints the device or the runtime's reason (the driver may be missing or too old even
# where nvidia-smi answers). Each GPU test binary, run by hand, prints the same reason.
if(CMAKE_CROSSCOMPILING)
  message(STATUS "Cross-compiling: whether the GPU tests will run is decided on the target; a "
                 "GPU test binary run there says.")
  return()
endif()
try_run(_gpu_probe_ran _gpu_probe_compiled
        SOURCES ${CMAKE_CURRENT_LIST_DIR}/gpu_probe.cpp
        LINK_LIBRARIES CUDA::cudart
        COMPILE_OUTPUT_VARIABLE _gpu_probe_build_log
        RUN_OUTPUT_VARIABLE _gpu_probe_said)
if(NOT _gpu_probe_compiled)
  message(STATUS "Could not build the GPU probe (cmake/gpu_probe.cpp), so whether the GPU tests "
                 "will run is not known here; a GPU test binary run by hand says.")
elseif(_gpu_probe_ran EQUAL 0)
  message(STATUS "GPU found: ${_gpu_probe_said}. The GPU tests and the benchmarks will run.")
else()
  if(NOT _gpu_probe_said)
    set(_gpu_probe_said "the probe (cmake/gpu_probe.cpp) ended with '${_gpu_probe_ran}'")
  endif()
  message(STATUS "No usable GPU: ${_gpu_probe_said}. The GPU tests will be reported as skipped "
                 "and the benchmarks cannot run.")
endif()

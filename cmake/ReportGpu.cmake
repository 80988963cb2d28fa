# Says at configure time whether a GPU is present, and so whether the GPU tests will run or be
# reported as skipped (ctest does not show a skipped test's own message). Each GPU test binary,
# run by hand, prints the exact reason the CUDA runtime gives.
find_program(NVIDIA_SMI nvidia-smi)
set(_gpu "")
if(NVIDIA_SMI)
  execute_process(COMMAND ${NVIDIA_SMI} --query-gpu=name --format=csv,noheader
                  OUTPUT_VARIABLE _gpu ERROR_VARIABLE _gpu_error RESULT_VARIABLE _rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    set(_gpu "")
  endif()
endif()
if(_gpu)
  string(REPLACE "\n" ", " _gpu "${_gpu}")
  message(STATUS "GPU found: ${_gpu}. The GPU tests and the benchmarks will run.")
elseif(NVIDIA_SMI)
  message(STATUS "No usable GPU: nvidia-smi failed (${_gpu_error}). The GPU tests will be reported "
                 "as skipped and the benchmarks cannot run.")
else()
  message(STATUS "No GPU: nvidia-smi not found. The GPU tests will be reported as skipped (each "
                 "test binary prints the reason when run) and the benchmarks cannot run.")
endif()

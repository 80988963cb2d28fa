# Sets CMAKE_CUDA_ARCHITECTURES before project() enables CUDA:
#   - the compute capability of every GPU nvidia-smi reports (e.g. "90" on an H100/H200);
#   - otherwise 90 (Hopper), so that a machine without a GPU, such as CI, still builds for sm_90.
# CMake's own "native" value is not used because it fails when no GPU is present.
find_program(_nvidia_smi nvidia-smi)
set(_archs "")
if(_nvidia_smi)
  execute_process(COMMAND ${_nvidia_smi} --query-gpu=compute_cap --format=csv,noheader
                  OUTPUT_VARIABLE _caps RESULT_VARIABLE _rc ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_rc EQUAL 0 AND _caps)
    string(REPLACE "\n" ";" _caps "${_caps}")
    foreach(_cap IN LISTS _caps)
      string(STRIP "${_cap}" _cap)
      string(REPLACE "." "" _cap "${_cap}")
      if(_cap MATCHES "^[0-9]+$")
        list(APPEND _archs ${_cap})
      endif()
    endforeach()
    list(REMOVE_DUPLICATES _archs)
  endif()
endif()
if(_archs)
  message(STATUS "CUDA architectures: ${_archs} (from the GPU found by nvidia-smi)")
else()
  set(_archs 90)
  message(STATUS "CUDA architectures: 90 (no GPU found; override with -DCMAKE_CUDA_ARCHITECTURES=...)")
endif()
set(CMAKE_CUDA_ARCHITECTURES "${_archs}" CACHE STRING "CUDA architectures to build for")

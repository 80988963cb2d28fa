# add_chapter(): every chapter is built twice from one description, once from the skeleton in
# <chapter>/ (the student's build) and once from solutions/<chapter>/ (the reference build).
#
#   add_chapter(NAME chNN_topic
#     TODO_SOURCES  kernels.cu              # files with TODO regions; solutions/<NAME>/ has them filled
#     SOURCES       cpu_ref.cpp check.cpp   # shared by both builds: CPU reference and checker
#     TESTS         test_kernels.cpp        # GPU tests of the kernels, built for student and solution
#     CHECKER_TESTS test_checker.cpp wrong_kernels.cu  # GPU tests: the checker rejects wrong kernels
#     CPU_TESTS     test_cpu_ref.cpp        # tests that need no GPU
#     TODO_CPU_TESTS test_trap.cpp          # tests of TODOs that run on the CPU, built for student
#                                           # and solution; they need no GPU (ch10_norm has one)
#     BENCH         bench_kernels.cu        # benchmark; the binary is named after the file
#     LINK          CUDA::cublas)           # extra libraries for every target of the chapter
#
# ctest labels, one per test (selections that do not overlap):
#   student_<NAME>  the student's tests           ctest --test-dir build -L ch07_reduction
#   solutions       the reference build's tests   ctest --test-dir build -L solutions
#   checker         the checker rejects known-wrong kernels
#   cpu             tests that need no GPU, the solution benchmark's refusal of a malformed
#                   command line among them (TODO_CPU_TESTS need none either, but are labelled
#                   student_<NAME> and solutions, as the build they test)
# The full suite is everything but the student's tests (they fail until the TODOs are filled):
#   ctest --test-dir build -LE student
# GPU test binaries exit with code 77 when no CUDA device is usable; ctest reports them as skipped.
set(CHAPTER_GPU_SKIP_CODE 77)
# A GPU test that skips itself for want of free GPU memory says so in its output
# (SKIP_UNLESS_FREE_GPU_MEMORY, common/catch_compat.hpp); ctest then reports it as skipped.
set(CHAPTER_GPU_SKIP_REGEX "too.little.free.GPU.memory")

function(add_chapter)
  cmake_parse_arguments(CH "" "NAME;BENCH"
                        "TODO_SOURCES;SOURCES;TESTS;CHECKER_TESTS;CPU_TESTS;TODO_CPU_TESTS;LINK"
                        ${ARGN})
  set(chapter_dir ${CMAKE_CURRENT_SOURCE_DIR})
  set(solution_dir ${PROJECT_SOURCE_DIR}/solutions/${CH_NAME})

  add_library(${CH_NAME}_support STATIC ${CH_SOURCES})
  target_include_directories(${CH_NAME}_support PUBLIC ${chapter_dir})
  target_link_libraries(${CH_NAME}_support PUBLIC common ${CH_LINK} PRIVATE project_warnings)

  foreach(build student solution)
    if(build STREQUAL "student")
      set(todo_dir ${chapter_dir})
      set(out_dir ${CMAKE_BINARY_DIR}/${CH_NAME})
      set(test_prefix "${CH_NAME}.")
      set(label "student_${CH_NAME}")
    else()
      set(todo_dir ${solution_dir})
      set(out_dir ${CMAKE_BINARY_DIR}/solutions/${CH_NAME})
      set(test_prefix "solutions.${CH_NAME}.")
      set(label "solutions")
    endif()

    set(todo_files)
    foreach(src IN LISTS CH_TODO_SOURCES)
      list(APPEND todo_files ${todo_dir}/${src})
    endforeach()
    add_library(${CH_NAME}_${build}_kernels STATIC ${todo_files})
    target_link_libraries(${CH_NAME}_${build}_kernels PUBLIC ${CH_NAME}_support
                          PRIVATE project_warnings)

    if(CH_TESTS)
      add_executable(${CH_NAME}_${build}_tests ${CH_TESTS})
      target_link_libraries(${CH_NAME}_${build}_tests PRIVATE ${CH_NAME}_${build}_kernels
                            common_test_main_gpu project_warnings)
      set_target_properties(${CH_NAME}_${build}_tests PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${out_dir})
      catch_discover_tests(${CH_NAME}_${build}_tests
        TEST_PREFIX "${test_prefix}"
        PROPERTIES LABELS "${label}" SKIP_RETURN_CODE ${CHAPTER_GPU_SKIP_CODE}
                   SKIP_REGULAR_EXPRESSION ${CHAPTER_GPU_SKIP_REGEX})
    endif()

    if(CH_TODO_CPU_TESTS)
      add_executable(${CH_NAME}_${build}_cpu_todo_tests ${CH_TODO_CPU_TESTS})
      target_link_libraries(${CH_NAME}_${build}_cpu_todo_tests PRIVATE ${CH_NAME}_${build}_kernels
                            common_test_main_cpu project_warnings)
      set_target_properties(${CH_NAME}_${build}_cpu_todo_tests PROPERTIES
        RUNTIME_OUTPUT_DIRECTORY ${out_dir})
      # The solution's are named cpu.solutions.<NAME>.*: they pass without a GPU, unlike every
      # test named solutions.* (which CI checks).
      set(cpu_prefix "${test_prefix}")
      if(build STREQUAL "solution")
        set(cpu_prefix "cpu.${test_prefix}")
      endif()
      catch_discover_tests(${CH_NAME}_${build}_cpu_todo_tests
        TEST_PREFIX "${cpu_prefix}" PROPERTIES LABELS "${label}")
    endif()

    if(CH_BENCH)
      get_filename_component(bench_name ${CH_BENCH} NAME_WE)
      add_executable(${CH_NAME}_${build}_bench ${chapter_dir}/${CH_BENCH})
      target_link_libraries(${CH_NAME}_${build}_bench PRIVATE ${CH_NAME}_${build}_kernels
                            project_warnings)
      set_target_properties(${CH_NAME}_${build}_bench PROPERTIES
        OUTPUT_NAME ${bench_name} RUNTIME_OUTPUT_DIRECTORY ${out_dir})
      if(build STREQUAL "solution")
        set_property(GLOBAL APPEND PROPERTY CHAPTER_SOLUTION_BENCHMARKS ${CH_NAME}_${build}_bench)
        # A malformed command line is refused (exit 2) before any GPU is looked for: CPU tests.
        foreach(refusal "no_such_option|--no-such-option|unknown option '--no-such-option'"
                        "malformed_size|--sizes=x|bad --sizes entry 'x'"
                        "empty_size|--sizes=1,,2|--sizes=1,,2 has an empty entry")
          string(REPLACE "|" ";" refusal "${refusal}")
          list(GET refusal 0 what)
          list(GET refusal 1 arg)
          list(GET refusal 2 output)
          add_test(NAME cpu.${CH_NAME}.${bench_name}_refuses_${what}
                   COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${CH_NAME}_${build}_bench>
                           -DARG=${arg} -DEXIT_CODE=2 "-DOUTPUT=${output}"
                           -P ${PROJECT_SOURCE_DIR}/cmake/ExpectExit.cmake)
          set_tests_properties(cpu.${CH_NAME}.${bench_name}_refuses_${what} PROPERTIES LABELS cpu)
        endforeach()
      endif()
    endif()
  endforeach()

  if(CH_CHECKER_TESTS)
    add_executable(${CH_NAME}_checker_tests ${CH_CHECKER_TESTS})
    target_link_libraries(${CH_NAME}_checker_tests PRIVATE ${CH_NAME}_support
                          common_test_main_gpu project_warnings)
    catch_discover_tests(${CH_NAME}_checker_tests
      TEST_PREFIX "checker.${CH_NAME}."
      PROPERTIES LABELS "checker" SKIP_RETURN_CODE ${CHAPTER_GPU_SKIP_CODE}
                   SKIP_REGULAR_EXPRESSION ${CHAPTER_GPU_SKIP_REGEX})
  endif()

  if(CH_CPU_TESTS)
    add_executable(${CH_NAME}_cpu_tests ${CH_CPU_TESTS})
    target_link_libraries(${CH_NAME}_cpu_tests PRIVATE ${CH_NAME}_support common_test_main_cpu
                          project_warnings)
    catch_discover_tests(${CH_NAME}_cpu_tests
      TEST_PREFIX "cpu.${CH_NAME}."
      PROPERTIES LABELS "cpu")
  endif()
endfunction()

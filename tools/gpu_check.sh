#!/usr/bin/env bash
# Everything a GPU machine must confirm, in one run, for the chapters named (default: all):
#   1. a clean Release build of the chapters' solution, student, checker and CPU targets;
#   2. the full solution suite (labels solutions, checker, cpu) of those chapters: nothing may be
#      skipped or fail;
#   3. compute-sanitizer memcheck and racecheck over the solution tests (tests tagged [large]
#      excluded: under the sanitizer they would take hours);
#   4. the student tests on the untouched skeletons, which must fail, all but the tests of code
#      the chapters give (their log is kept);
#   5. the solution benchmarks (BENCH_ARGS narrows them; NO_BENCH=1 skips them).
# Logs go to ./gpu-logs; when $OUT is set (a result folder to copy back) they are also packed
# into $OUT/gpu-logs.tgz, with the benchmark tables beside it. BUILD_DIR picks the build folder
# (default build-gpu). SANITIZE lists the chapters for step 3 (default: all of them), and
# SANITIZE_TESTS the Catch2 test spec they run (default "~[large]"). ARCHS sets
# CMAKE_CUDA_ARCHITECTURES (default: CUDAARCHS when set, else the GPU's own); ARCHS=80 on a Hopper
# GPU runs the pre-Hopper code paths, from the compute_80 PTX the driver compiles at load time.
#   tools/gpu_check.sh ch07_reduction
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=$root/gpu-logs
rm -rf "$out"; mkdir -p "$out"
build=${BUILD_DIR:-build-gpu}
chapters=("$@")
[ ${#chapters[@]} -gt 0 ] || chapters=($(ls -d ch[0-9]*_* | sort))
status=0
step() { echo; echo "==== $*"; }

step "device"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/device.txt"

step "configure + build (${chapters[*]})"
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
chapter_list=$(IFS=';'; echo "${chapters[*]}")
rm -rf "$build"
arch_flag=(); [ -n "${ARCHS:-}" ] && arch_flag=("-DCMAKE_CUDA_ARCHITECTURES=$ARCHS")
# ${a[@]+"${a[@]}"}: an empty array under set -u, which bash before 4.4 calls unbound.
cmake -S . -B "$build" ${generator[@]+"${generator[@]}"} -DCMAKE_BUILD_TYPE=Release \
  -DCHAPTERS_WERROR=ON "-DCHAPTERS=$chapter_list" ${arch_flag[@]+"${arch_flag[@]}"} \
  >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
# Every target of the chapters: a test binary left unbuilt would drop its tests from the suite
# without a word (ctest lists it as an unlabelled placeholder that no -L selects).
cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1 \
  || { grep -E "error|warning" "$out/build.log" | head -40; exit 1; }
echo "built every target of: ${chapters[*]}"

regex=$(IFS='|'; echo "${chapters[*]}|consistency|common")
step "solution suite"
ctest --test-dir "$build" -L "solutions|checker|cpu" -R "$regex" --output-on-failure \
  >"$out/ctest_solutions.log" 2>&1 || status=1
tail -5 "$out/ctest_solutions.log"
grep -E "\*\*\*(Failed|Skipped|Exception|Timeout)|Not Run" "$out/ctest_solutions.log" | head -20
if grep -q "Skipped" "$out/ctest_solutions.log"; then echo "SOME TESTS WERE SKIPPED"; status=1; fi

step "compute-sanitizer"
for ch in ${SANITIZE:-${chapters[@]}}; do
  exe=$(find "$build/solutions/$ch" -maxdepth 1 -name "${ch}_solution_tests" -type f)
  for tool in memcheck racecheck; do
    if compute-sanitizer --tool "$tool" --error-exitcode 9 "$exe" "${SANITIZE_TESTS:-~[large]}" \
        >"$out/sanitizer_${tool}_${ch}.log" 2>&1; then
      echo "$ch $tool: clean ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer_${tool}_${ch}.log" | tail -1))"
    else
      echo "$ch $tool: FAILED"; grep -E "=====|FAILED|failed" "$out/sanitizer_${tool}_${ch}.log" | head -15
      status=1
    fi
  done
done

step "student tests on the untouched skeletons (must fail)"
# Only the tests of code the chapters give may pass before the TODOs are filled: the argument
# checks and the vendor library as a second reference (README, "As a student").
given_code='bad arguments|arguments are validated|CUB agrees'
# Before sm_90 there are no clusters and no bulk copies: the versions that need them only check
# their refusal there, which is given code too. "Before sm_90" is the code the GPU runs: the
# newest architecture of the build that is not newer than the GPU (common::has_sm90_features);
# a build without a number (native, all) includes the GPU's own. The tests run on CUDA device 0:
# the first GPU CUDA_VISIBLE_DEVICES names, counted as nvidia-smi counts them when
# CUDA_DEVICE_ORDER=PCI_BUS_ID (CUDA's default order puts the fastest first).
gpu=${CUDA_VISIBLE_DEVICES:-0}
cc=$(nvidia-smi -i "${gpu%%,*}" --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
gpu_arch=$(echo "$cc" | tr -d '.')
if [[ $gpu_arch =~ ^[0-9]+$ ]]; then
  runs_arch=$gpu_arch
  archs=${ARCHS:-${CUDAARCHS:-}}
  if [ -n "$archs" ]; then
    runs_arch=0
    for a in ${archs//;/ }; do
      n=${a%%[!0-9]*}
      if [ -z "$n" ]; then runs_arch=$gpu_arch; break; fi
      if (( n <= gpu_arch && n > runs_arch )); then runs_arch=$n; fi
    done
  fi
  if (( runs_arch < 90 )); then
    given_code="$given_code|pipelined|version 4b|row split across a cluster"
  fi
fi
for ch in "${chapters[@]}"; do
  ctest --test-dir "$build" -L "^student_${ch}\$" --output-on-failure >"$out/ctest_student_${ch}.log" 2>&1
  echo "$ch: $(grep -E "tests passed" "$out/ctest_student_${ch}.log")"; grep -ohE "(implemented by|fill|TODO).{0,80}" "$out/ctest_student_${ch}.log" | sort | uniq -c | head -8
  if grep -E "Test +#[0-9]+: .* Passed" "$out/ctest_student_${ch}.log" | grep -vE "$given_code"; then
    echo "$ch: FAILED: the tests above pass on the untouched skeleton"
    status=1
  fi
done

if [ -z "${NO_BENCH:-}" ]; then
  step "benchmarks"
  for ch in "${chapters[@]}"; do
    exe=$(find "$build/solutions/$ch" -maxdepth 1 -name "bench_*" -type f)
    "$exe" ${BENCH_ARGS:-} 2>&1 | tee "$out/bench_${ch}.txt" || status=1
  done
fi
if [ -n "${OUT:-}" ]; then
  tar czf "$OUT/gpu-logs.tgz" -C "$out" .
  cp "$out"/bench_*.txt "$OUT/" 2>/dev/null || true
fi
exit $status

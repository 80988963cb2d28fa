#!/usr/bin/env bash
# Everything a GPU machine must confirm, in one run, for the chapters named (default: all):
#   1. a clean Release build of the chapters' solution, student, checker and CPU targets;
#   2. the full solution suite (labels solutions, checker, cpu) of those chapters: nothing may be
#      skipped or fail;
#   3. compute-sanitizer memcheck and racecheck over the solution tests (tests tagged [large]
#      excluded: under the sanitizer they would take hours; racecheck also leaves out [threads]:
#      under it that test's host memory grows by about 10 GB a second until the kernel's OOM
#      killer ends the process (an H200 host of 128 GiB, after 14 s), while memcheck runs it
#      clean and racecheck runs the same kernels from one thread clean);
#   4. the student tests on the untouched skeletons, which must fail, all but the tests of code
#      the chapters give (tagged [given], and [sm90] where the build has no sm_90 code for the
#      GPU; their log is kept);
#   5. the solution benchmarks (NO_BENCH=1 skips them). BENCH_ARGS narrows them; it is passed
#      to every chapter's benchmark, whose sizes and version names differ: with --sizes or
#      --versions, name one chapter (a filter that selects nothing exits 2).
# Logs go to ./gpu-logs; when $OUT names a folder, the logs are also packed into
# $OUT/gpu-logs.tgz, with the benchmark tables beside it. BUILD_DIR picks the build folder
# (default build-gpu). SANITIZE lists the chapters for step 3 (default: all of them), and
# SANITIZE_TESTS the Catch2 test spec they run, in tags (default "~[large]"; racecheck appends
# ~[threads] to each alternative, which a test name would swallow). ARCHS sets
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
    spec=${SANITIZE_TESTS:-~[large]}
    # Every alternative (a,b) of the spec leaves [threads] out.
    [ "$tool" = racecheck ] && spec="${spec//,/~[threads],}~[threads]"
    log="$out/sanitizer_${tool}_${ch}.log"
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$exe" "$spec" >"$log" 2>&1
    rc=$?
    if grep -q "No test cases matched" "$log"; then  # Catch2 v2 exits 0 then
      echo "$ch $tool: FAILED, no test matches \"$spec\""
      status=1
    elif [ $rc -eq 0 ]; then
      echo "$ch $tool: clean ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1))"
    else
      echo "$ch $tool: FAILED"; grep -E "=====|FAILED|failed" "$log" | head -15
      status=1
    fi
  done
done

step "student tests on the untouched skeletons (must fail)"
# Only the tests of code the chapters give may pass before the TODOs are filled: those tagged
# [given] (argument checks, the vendor library as a second reference; README, "As a student").
# So may those tagged [sm90] where the test binary reports no sm_90 features (`--gpu`): there they
# only check that the versions needing sm_90 refuse.
catch_names() {  # the test cases of Catch2 binary $1 that test spec $2 selects, one per line
  # The whole help first: grep -q would stop reading it, and the binary's SIGPIPE would fail the
  # pipe under pipefail.
  local help; help=$("$1" --help 2>&1)
  if [[ $help == *--list-test-names-only* ]]; then
    "$1" "$2" --list-test-names-only || true  # Catch2 v2 exits with the number listed
  else
    "$1" "$2" --list-tests --verbosity quiet
  fi | grep -v '^$'
}
for ch in "${chapters[@]}"; do
  exe=$build/$ch/${ch}_student_tests
  "$exe" --gpu | tee "$out/gpu_${ch}.txt"
  spec="[given]"
  grep -q "^sm_90 features.*: no" "$out/gpu_${ch}.txt" && spec="[given],[sm90]"
  names=$(catch_names "$exe" "$spec")
  # ctest's -E takes a regular expression: the names' own metacharacters are escaped.
  given=$(printf '%s' "$names" | sed -e 's/[][\\.^$*+?(){}|]/\\&/g' \
    -e 's/^/^'"$ch"'\\./' -e 's/$/$/' | paste -sd '|')
  echo "$ch: left out as given code ($spec):"; printf '%s\n' "${names:-(none)}" | sed 's/^/  /'
  ctest --test-dir "$build" -L "^student_${ch}\$" ${given:+-E "$given"} --output-on-failure \
    >"$out/ctest_student_${ch}.log" 2>&1
  echo "$ch: $(grep -E "tests passed" "$out/ctest_student_${ch}.log")"; grep -ohE "(implemented by|fill|TODO).{0,80}" "$out/ctest_student_${ch}.log" | sort | uniq -c | head -8
  if grep -E "Test +#[0-9]+: .* Passed" "$out/ctest_student_${ch}.log"; then
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

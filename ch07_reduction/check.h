// Chapter 7's checker: runs a reduction on poisoned, guarded device buffers and compares the
// result with the double-precision CPU reference. The student's tests, the solution's tests and
// the tests that feed it deliberately wrong kernels all go through it.
#pragma once

#include "common/compare.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace check {

// How rounding error can build up in a kernel's order of additions.
enum class Accumulation {
  Tree,    // balanced trees over short per-thread runs: error grows with log2(n)
  Serial,  // one running sum updated in an unknown order (atomics): error grows with sqrt(n)
};

enum class Op { Sum, Max };

// The bound |gpu − exact| must stay under for a float sum of values whose absolute values sum
// to `sum_abs` (u = 2^-24, the float unit roundoff; inputs are exact in float):
//   Tree:   (ceil(log2(n+1)) + ceil(n / t) + 8) · u · Σ|x|   — a worst case: a tree of depth
//           log2(n) over per-thread runs of at most n / t additions, plus the final rounding
//           of the result; t = tree_run_threads() = 1024 per SM: versions 5 and 6 launch
//           a full wave (1024 to 2048 threads per SM); the final version's runs are shorter
//           still (1024 to 1536 threads per SM once its grid is full, each thread folding its
//           packs into 4 or 8 accumulators, and at most one pack per accumulator before then);
//   Serial: 6 · sqrt(n) · u · Σ|x|   — the worst case n · u · Σ|x| says nothing once n ≥ 2^24,
//           so this is a probabilistic bound: with the rounding errors modelled as independent
//           and of mean zero, the error (to first order) is a martingale whose steps are at most
//           u · Σ|x|, and the Azuma-Hoeffding inequality puts 6 standard steps beyond reach but
//           for probability 2 · exp(-18) ≈ 3e-8 whatever n (the argument of Connolly, Higham &
//           Mary, 2021; Higham & Mary's 2019 bound carries a factor n in that probability).
// Both shrink relative to |Σx| only when the data are not cancelling: tests of the serial
// version therefore use data with a positive mean.
double sum_error_bound(int64_t n, double sum_abs, Accumulation accumulation, int64_t run_threads);

// t above for the current GPU: 1024 times its SM count.
int64_t tree_run_threads();

// A reduction under test: `run` must leave the result in out[0] (device pointers).
template <typename T>
struct Reduction {
  std::string name;
  Op op = Op::Sum;
  Accumulation accumulation = Accumulation::Tree;
  std::function<size_t(int64_t n)> workspace_bytes;
  std::function<void(const T* x, int64_t n, float* out, void* workspace, size_t workspace_size)>
      run;
};

// Copies x to the device `misalign` elements past a 256-byte boundary, poisons the output, runs
// the reduction once on a zero-filled workspace of exactly workspace_bytes(n) between guard zones,
// and checks: the output was written, it is within the bound (sums; exact where every partial sum
// is, integers whose absolute values total at most 2^24) or exact (max, NaN propagated), nothing
// was written outside the output or the workspace, the input is unchanged.
template <typename T>
common::CheckResult check_reduction(const Reduction<T>& reduction, const std::vector<T>& x,
                                    size_t misalign = 0);

// Runs the reduction `runs` times on the same input and one workspace, zero-filled before the
// first run only (as reduction.h lets a caller reuse it); every result must be bitwise identical.
template <typename T>
common::CheckResult check_deterministic(const Reduction<T>& reduction, const std::vector<T>& x,
                                        int runs);

}  // namespace check

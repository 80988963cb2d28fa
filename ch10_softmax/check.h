// Chapter 10's checker: runs a softmax (or its backward) on poisoned, guarded device buffers
// placed at chosen alignments, and compares with the double-precision CPU reference. The
// student's tests, the solution's tests and the tests that feed it deliberately wrong kernels
// all go through it.
#pragma once

#include "common/compare.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace check {

enum class Op { Softmax, LogSoftmax };

template <typename T>
using ForwardRun = std::function<void(const T* x, T* y, int64_t rows, int64_t cols)>;
template <typename T>
using BackwardRun = std::function<void(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols)>;

// Where the buffers sit: each `*_misalign` elements past a 256-byte boundary, so that kernels
// meet every phase of the 16-byte grid; in_place runs the kernel with the output on the input
// (forward: y == x; backward: dx == dy, or dx == y with dx_on_y). The backward reads y at
// in_misalign and dy at out_misalign; dx sits at dx_misalign, or by default at
// (in + out + 1) % 8: out of phase with y (which the kernels compare dx's phase with) unless
// out + 1 is a multiple of the elements in 16 bytes, which no placement of the tests is.
struct Placement {
  size_t in_misalign = 0;
  size_t out_misalign = 0;
  bool in_place = false;
  int dx_misalign = -1;
  bool dx_on_y = false;
};

// Tolerances, per element |gpu - exact| <= atol + rtol * |exact| (u_T: the unit roundoff of T;
// the kernels compute in float with __expf):
//   softmax      rtol = u_T + 2^-17, atol = 1e-30 (half: 2^-24, its subnormal spacing).
//                float: __expf(a) with a = x - max <= 0 errs by about |a| * 2^-24 relative (the
//                argument's rounding), the sum by (log2(cols) + 2) * 2^-24, the scaling by 2 ulp:
//                under 2^-17 for |a| <= 64, and the rest of the range is below 1e-27 in value.
//                A reduced type adds its one rounding of the result, u_T.
//                Also: each row sums to 1 within rtol + cols * atol, and for float the relative
//                L2 error over the whole output is under 2^-18 (typical errors sit far under the
//                elementwise worst case, except the error of the row's sum, which every element
//                of the row shares: the online versions 2 and 3 rescale it at every new maximum
//                with __expf, and passed 2^-20 (about 1e-6) at 131072 columns of the benchmark's
//                logits).
//   log_softmax  rtol = u_T + 2^-21, atol = 2^-18: (x - max) and log(sum) are each good to
//                about 2^-24 of their size, log(sum) <= log(cols), and the result is rounded once.
//   backward     rtol = u_T + 2^-21, atol = max|y| * (2^-16 * sum|y * dy| + 2^-21 * (max|dy| +
//                |dot|)) per row: the float dot product's error scaled by y, plus the rounding
//                of dy - dot.
// None of them lets an all-zero output pass: every row has an element >= 1/cols in softmax,
// and far from 0 in log_softmax and in the backward.
// `roundings` widens the reduced type's share, u_T, to that many roundings; the chapter's
// kernels are held to one.
struct Tolerance {
  double atol;
  double rtol;
};
template <typename T>
Tolerance forward_tolerance(Op op, int roundings = 1);

// What the benchmark allows cuDNN, whose output it checks before timing it: cuDNN's bf16
// softmax errs by about one bf16 ulp (two roundings' worth; on an H200, 17978 of the 131072
// elements of a 1x131072 row lay beyond one rounding), more than the chapter's kernels may. Four
// roundings still reject a wrong call (a wrong row, axis or scaling); they do not grade
// accuracy.
constexpr int kVendorRoundings = 4;

// Copies x to the device, poisons the output, runs once and checks: no exception, every output
// element written, values within tolerance (NaN where the reference is NaN), rows summing to 1
// (softmax), guards intact, input unchanged (unless in place). `sample_rows`: compare only
// these rows with the reference (for matrices too large for a double copy); empty: all rows.
template <typename T>
common::CheckResult check_forward(const ForwardRun<T>& run, Op op, const std::vector<T>& x,
                                  int64_t rows, int64_t cols, Placement placement = {},
                                  const std::vector<int64_t>& sample_rows = {});

template <typename T>
common::CheckResult check_backward(const BackwardRun<T>& run, const std::vector<T>& y,
                                   const std::vector<T>& dy, int64_t rows, int64_t cols,
                                   Placement placement = {});

// The comparisons of check_forward and check_backward alone, for outputs computed elsewhere (the
// benchmark checks the first and last rows of its matrices with them): got against the double
// reference of the same `rows` rows of x (or y and dy), with the tolerances above.
template <typename T>
common::CheckResult compare_forward(const std::vector<T>& x, const std::vector<T>& got, Op op,
                                    int64_t rows, int64_t cols, int roundings = 1);
template <typename T>
common::CheckResult compare_backward(const std::vector<T>& y, const std::vector<T>& dy,
                                     const std::vector<T>& got, int64_t rows, int64_t cols);

// Test data. Logits: a normal body (std 2) with a heavy right tail, so that probabilities span
// many orders of magnitude and a wrong max or sum shows.
template <typename T>
std::vector<T> logits(int64_t rows, int64_t cols, uint64_t seed);
// Flat: uniform in [-1, 1], so that every element carries a like share of its row's sum. On
// logits a few elements carry most of it, and a (max, sum) that leaves out an ordinary element
// of a long row stays within the tolerance; on flat rows of 131072 fp32 elements it does not.
template <typename T>
std::vector<T> flat(int64_t rows, int64_t cols, uint64_t seed);

// Nine rows of `cols` that exercise the semantics, in this order: all -inf; a quarter -inf
// (one entry always finite); one NaN; one +inf; huge magnitudes (+-1e30, half: +-6e4); all
// equal; -inf except one entry; -inf but for one NaN and two finite entries 16 places from it;
// plain logits.
template <typename T>
std::vector<T> special_rows(int64_t cols, uint64_t seed);
constexpr int64_t kSpecialRows = 9;

// A softmax output y (rounded to T) and a gradient dy for the backward.
template <typename T>
void backward_inputs(int64_t rows, int64_t cols, uint64_t seed, std::vector<T>& y,
                     std::vector<T>& dy);

}  // namespace check

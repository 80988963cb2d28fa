// Chapter 10's checker: runs a normalization on poisoned, guarded device buffers placed at chosen
// misalignments, and compares every output (y, and mean, rstd, the written-back residual where
// the operation has them) with the double-precision CPU reference, element by element, within
// bounds derived from the element type. The student's tests, the solution's tests and the tests
// that feed it deliberately wrong kernels all go through it.
#pragma once

#include "common/compare.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace check {

// What the rows hold.
enum class Data {
  Normal,     // mean 0.5, standard deviation 2
  LargeMean,  // mean 1e4 (fp32) or 100 (fp16, bf16: their spacing there is 1/16 and 1/2),
              // standard deviation 1: the data on which E[x²] − E[x]² cancels catastrophically
  HugeMean,   // mean 2e19, standard deviation 1e16 (float only, LayerNorm only): finite rows
              // whose mean squared overflows float, as an empty set's merge once computed
  ConstantRows,  // every even row constant, row 2 all zeros (for the fused add, r = x + residual
                 // is constant there too, row 0 all zeros): variance exactly 0
  NonFinite,     // normal rows, but row 0 holds a NaN, row 1 a +inf, row 2 a −inf
};
const char* data_name(Data data);

// Misalignment, in elements, of each device buffer from a 256-byte boundary, whether the
// output overwrites the input (y == x; then y's misalignment is x's), and whether the run asks
// for the statistics (without: mean and rstd are nullptr, which norm.h allows, and only y and
// the fused add's residual are compared).
struct Placement {
  size_t x = 0;
  size_t y = 0;
  size_t residual = 0;
  size_t params = 0;  // γ and β
  bool in_place = false;
  bool statistics = true;
};
std::string describe(const Placement& p);

template <typename T>
struct Problem {
  int64_t rows = 0;
  int64_t n = 0;
  float eps = 1e-5f;
  Data data = Data::Normal;
  std::vector<T> x;
  std::vector<T> residual;  // the fused operation's second input; empty otherwise
  std::vector<T> gamma;     // empty: absent (γ = 1)
  std::vector<T> beta;      // empty: absent (β = 0)
  std::string describe() const;
};

template <typename T>
Problem<T> make_problem(int64_t rows, int64_t n, Data data, bool with_gamma, bool with_beta,
                        bool with_residual, uint64_t seed);

// The reference outputs and, element by element, how far a correct kernel may be from them.
struct Expected {
  std::vector<double> y, y_tol;
  std::vector<double> mean, mean_tol;  // empty for RMSNorm
  std::vector<double> rstd, rstd_tol;
  std::vector<double> residual, residual_tol;  // the fused operation only
};

// Bounds (u = 2^-24, the float unit roundoff; u_T that of the output type; K(n) below):
//   statistics: a float sum of n terms in a tree over per-thread runs of at most n/32 terms is
//     off by at most about K(n) · u · Σ|terms|, K(n) = 2 (log2(n+1) + sqrt(n/32) + 8) (the
//     square root: rounding errors of a serial run grow like sqrt(length), not its worst case).
//   LayerNorm: relative to the spread of the row, mean and variance are off by
//     ε_row = K(n) · u · (1 + mean|x| · rstd): the larger the mean next to the standard deviation,
//     the more float statistics lose (this is the whole story of the large-mean test). Then
//     |Δy| ≤ u_T |y| + (1 + u_T) (|γ| (1 + |ẑ|) + |β|) · ε_row with ẑ = (x − mean) · rstd: the
//     float result is off by the second term, and rounding it to nearest adds at most u_T of it
//     (a kernel that truncates can exceed the bound, and test_checker.cpp shows one rejected);
//     |Δmean| ≤ K(n) · u · mean|x|,
//     |Δrstd| ≤ 2 ε_row · rstd.
//   RMSNorm: Σx² has no cancellation, ε_row = K(n) · u; |Δy| ≤ (u_T + (1 + u_T) ε_row) |y|,
//     |Δrstd| ≤ 2 ε_row · rstd. The written-back residual is compared with the reference's own
//     rounding of the sum, which a correct kernel matches bit for bit: |Δr| ≤ u_T |r| / 2, less
//     than one unit in the last place anywhere in a binade of normal numbers.
// The bounds of y and of the residual also have an absolute floor near zero, tiny<T>() in
// check.cpp (the mean's is 2^-126, rstd's none): for half 2^-24, its smallest subnormal, one step
// of the grid a float result that small is rounded to; for float and bf16 2^-126, the smallest
// normal float, so that a float result below it may come out flushed to zero. The floor alone
// lets a zero pass only where the reference is smaller than it.
double stats_error_factor(int64_t n);

template <typename T>
Expected expect_layernorm(const Problem<T>& p);
template <typename T>
Expected expect_rmsnorm(const Problem<T>& p);
template <typename T>
Expected expect_add_rmsnorm(const Problem<T>& p);

// The operations under test, as the checker calls them (device pointers).
template <typename T>
using LayerNormRun =
    std::function<void(const T* x, const T* gamma, const T* beta, T* y, float* mean, float* rstd,
                       int64_t rows, int64_t n, float eps)>;
template <typename T>
using RmsNormRun = std::function<void(const T* x, const T* gamma, T* y, float* rstd, int64_t rows,
                                      int64_t n, float eps)>;
template <typename T>
using AddRmsNormRun = std::function<void(const T* x, T* residual, const T* gamma, T* y, float* rstd,
                                         int64_t rows, int64_t n, float eps)>;

// Host copies of consecutive output rows, the first of them row first_row, against e (computed
// for those rows): every element written and within its bound, NaN where the reference is NaN,
// and for LayerNorm (e.mean filled) a non-finite mean or rstd where the reference's is
// non-finite. mean is compared for LayerNorm only, residual (x + residual, written back) for the
// fused add only (e.residual filled); an empty mean or rstd is not compared (a run that did not
// ask for it). The comparison check_* make after their run; the benchmark's check of its first
// and last rows. `what` starts every message.
template <typename T>
common::CheckResult compare_outputs(const Expected& e, const std::vector<T>& y,
                                    const std::vector<float>& mean, const std::vector<float>& rstd,
                                    const std::vector<T>& residual, int64_t n, int64_t first_row,
                                    const std::string& what);

// Runs once and checks: every output element written and within its bound (NaN where the
// reference is NaN; a non-finite mean or rstd where the reference's is non-finite: which
// non-finite value a merge of inf and finite statistics yields is not specified), guards
// intact, inputs unchanged. In place, y is read from x's buffer: an element left unwritten there
// still holds its input, which the comparison rejects wherever the output differs from the input
// by more than its bound (so in-place runs want data of that kind: Data::Normal).
template <typename T>
common::CheckResult check_layernorm(const std::string& name, const LayerNormRun<T>& run,
                                    const Problem<T>& p, const Expected& e, const Placement& at);
template <typename T>
common::CheckResult check_rmsnorm(const std::string& name, const RmsNormRun<T>& run,
                                  const Problem<T>& p, const Expected& e, const Placement& at);
template <typename T>
common::CheckResult check_add_rmsnorm(const std::string& name, const AddRmsNormRun<T>& run,
                                      const Problem<T>& p, const Expected& e, const Placement& at);

// M · N beyond 2^31 elements: `rows` rows that repeat a few distinct random rows (so the input
// is built on the device, not the host), run once. Every element of y, mean and rstd must have
// been written; the first rows, the rows on both sides of element 2^31 and the last rows are
// compared with the reference; x, gamma and beta must be unchanged and every guard intact. For
// the [large] tests.
template <typename T>
common::CheckResult check_layernorm_huge(const std::string& name, const LayerNormRun<T>& run,
                                         int64_t rows, int64_t n);
template <typename T>
common::CheckResult check_rmsnorm_huge(const std::string& name, const RmsNormRun<T>& run,
                                       int64_t rows, int64_t n);
// The fused add's residual is compared in every row.
template <typename T>
common::CheckResult check_add_rmsnorm_huge(const std::string& name, const AddRmsNormRun<T>& run,
                                           int64_t rows, int64_t n);

}  // namespace check

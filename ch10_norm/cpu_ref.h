// Chapter 10's CPU reference: every statistic and every output in double, from the values the GPU
// reads (inputs widened from T exactly). Its own error (about N · 2^-53 relative) is far below any
// float kernel's, so the difference from it is the kernel's error.
#pragma once

#include <cstdint>
#include <vector>

namespace cpu_ref {

// Outputs of a normalization of `rows` rows of n elements. `mean` stays empty for RMSNorm.
struct NormOutput {
  std::vector<double> y;
  std::vector<double> mean;
  std::vector<double> rstd;
};

// Two-pass in double: mean, then the mean of (x − mean)², then y = (x − mean) · rstd · γ + β.
// An empty gamma means γ = 1, an empty beta β = 0.
template <typename T>
NormOutput layernorm(const std::vector<T>& x, const std::vector<T>& gamma,
                     const std::vector<T>& beta, int64_t rows, int64_t n, double eps);

// y = x · rstd · γ with rstd = 1 / sqrt(mean(x²) + eps).
template <typename T>
NormOutput rmsnorm(const std::vector<T>& x, const std::vector<T>& gamma, int64_t rows, int64_t n,
                   double eps);

// The fused residual add: r = x + residual rounded to T (what the kernel writes back), then
// RMSNorm of the rounded r.
template <typename T>
struct AddRmsNormOutput {
  std::vector<T> residual;
  NormOutput norm;
};
template <typename T>
AddRmsNormOutput<T> add_rmsnorm(const std::vector<T>& x, const std::vector<T>& residual,
                                const std::vector<T>& gamma, int64_t rows, int64_t n, double eps);

// Σ|x| / n of one row: how large the values are next to their spread, the quantity that decides
// how much float statistics lose (see check::stats_error_factor).
template <typename T>
double mean_abs(const T* row, int64_t n);

// Population variance of x, two passes in double: the exact value the tests measure against.
double variance(const std::vector<float>& x);

}  // namespace cpu_ref

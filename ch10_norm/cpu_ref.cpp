#include "cpu_ref.h"

#include "common/dtype.hpp"

#include <cmath>

namespace cpu_ref {
namespace {

template <typename T>
double at(const std::vector<T>& v, int64_t i) {
  return static_cast<double>(common::to_float(v[static_cast<size_t>(i)]));
}

// γ_j, or 1 when there is no γ; β_j, or 0.
template <typename T>
double param(const std::vector<T>& p, int64_t j, double absent) {
  return p.empty() ? absent : at(p, j);
}

template <typename T>
NormOutput rmsnorm_of(const std::vector<T>& x, const std::vector<T>& gamma, int64_t rows, int64_t n,
                      double eps) {
  NormOutput out;
  out.y.resize(static_cast<size_t>(rows * n));
  out.rstd.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double sum_sq = 0.0;
    for (int64_t j = 0; j < n; ++j)
      sum_sq += at(x, r * n + j) * at(x, r * n + j);
    const double rstd = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps);
    for (int64_t j = 0; j < n; ++j)
      out.y[static_cast<size_t>(r * n + j)] = at(x, r * n + j) * rstd * param(gamma, j, 1.0);
    out.rstd[static_cast<size_t>(r)] = rstd;
  }
  return out;
}

}  // namespace

template <typename T>
NormOutput layernorm(const std::vector<T>& x, const std::vector<T>& gamma,
                     const std::vector<T>& beta, int64_t rows, int64_t n, double eps) {
  NormOutput out;
  out.y.resize(static_cast<size_t>(rows * n));
  out.mean.resize(static_cast<size_t>(rows));
  out.rstd.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j)
      sum += at(x, r * n + j);
    const double mean = sum / static_cast<double>(n);
    double sum_sq = 0.0;
    for (int64_t j = 0; j < n; ++j)
      sum_sq += (at(x, r * n + j) - mean) * (at(x, r * n + j) - mean);
    const double rstd = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps);
    for (int64_t j = 0; j < n; ++j)
      out.y[static_cast<size_t>(r * n + j)] =
          (at(x, r * n + j) - mean) * rstd * param(gamma, j, 1.0) + param(beta, j, 0.0);
    out.mean[static_cast<size_t>(r)] = mean;
    out.rstd[static_cast<size_t>(r)] = rstd;
  }
  return out;
}

template <typename T>
NormOutput rmsnorm(const std::vector<T>& x, const std::vector<T>& gamma, int64_t rows, int64_t n,
                   double eps) {
  return rmsnorm_of(x, gamma, rows, n, eps);
}

template <typename T>
AddRmsNormOutput<T> add_rmsnorm(const std::vector<T>& x, const std::vector<T>& residual,
                                const std::vector<T>& gamma, int64_t rows, int64_t n, double eps) {
  AddRmsNormOutput<T> out;
  out.residual.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    out.residual[i] = common::from_float<T>(static_cast<float>(
        static_cast<double>(common::to_float(x[i])) + common::to_float(residual[i])));
  out.norm = rmsnorm_of(out.residual, gamma, rows, n, eps);
  return out;
}

template <typename T>
double mean_abs(const T* row, int64_t n) {
  double s = 0.0;
  for (int64_t j = 0; j < n; ++j)
    s += std::fabs(static_cast<double>(common::to_float(row[j])));
  return s / static_cast<double>(n);
}

#define CH10_INSTANTIATE(T)                                                                   \
  template NormOutput layernorm(const std::vector<T>&, const std::vector<T>&,                 \
                                const std::vector<T>&, int64_t, int64_t, double);             \
  template NormOutput rmsnorm(const std::vector<T>&, const std::vector<T>&, int64_t, int64_t, \
                              double);                                                        \
  template AddRmsNormOutput<T> add_rmsnorm(const std::vector<T>&, const std::vector<T>&,      \
                                           const std::vector<T>&, int64_t, int64_t, double);  \
  template double mean_abs(const T*, int64_t);
CH10_INSTANTIATE(float)
CH10_INSTANTIATE(__half)
CH10_INSTANTIATE(__nv_bfloat16)
#undef CH10_INSTANTIATE

double variance(const std::vector<float>& x) {
  double mean = 0.0, m2 = 0.0;
  for (float v : x)
    mean += v;
  mean /= static_cast<double>(x.size());
  for (float v : x)
    m2 += (v - mean) * (v - mean);
  return m2 / static_cast<double>(x.size());
}

}  // namespace cpu_ref

#include "cpu_ref.h"

#include "common/dtype.hpp"

#include <cmath>
#include <limits>

namespace cpu_ref {

template <typename T>
double sum(const std::vector<T>& x) {
  double s = 0.0;
  for (const T& v : x) s += static_cast<double>(common::to_float(v));
  return s;
}

template <typename T>
double sum_abs(const std::vector<T>& x) {
  double s = 0.0;
  for (const T& v : x) s += std::fabs(static_cast<double>(common::to_float(v)));
  return s;
}

template double sum(const std::vector<float>&);
template double sum(const std::vector<__half>&);
template double sum(const std::vector<__nv_bfloat16>&);
template double sum_abs(const std::vector<float>&);
template double sum_abs(const std::vector<__half>&);
template double sum_abs(const std::vector<__nv_bfloat16>&);

double max(const std::vector<float>& x) {
  double m = -std::numeric_limits<double>::infinity();
  for (float v : x) {
    if (std::isnan(v)) return std::numeric_limits<double>::quiet_NaN();
    if (v > m) m = v;
  }
  return m;
}

float naive_float_sum(const std::vector<float>& x) {
  float s = 0.0f;
  for (float v : x) s += v;
  return s;
}

}  // namespace cpu_ref

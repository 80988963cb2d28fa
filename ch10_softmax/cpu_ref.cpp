#include "cpu_ref.h"

#include <cmath>
#include <limits>

namespace cpu_ref {
namespace {

enum class Output { Probabilities, Logs };

std::vector<double> forward(const std::vector<double>& x, int64_t rows, int64_t cols, Output out) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x.data() + r * cols;
    double* yr = y.data() + r * cols;
    double m = -INFINITY;
    bool undefined = false;  // NaN or +inf: the formula gives NaN (inf - inf)
    for (int64_t j = 0; j < cols; ++j) {
      if (std::isnan(xr[j]) || xr[j] == INFINITY) undefined = true;
      m = std::max(m, xr[j]);
    }
    if (undefined || m == -INFINITY) {  // m = -inf: every entry is -inf, 0 / 0
      for (int64_t j = 0; j < cols; ++j)
        yr[j] = nan;
      continue;
    }
    // Subtracting the maximum changes nothing mathematically (the factor exp(-m) cancels) but
    // keeps every exponent <= 0, so nothing overflows even in double for |x| ~ 1e300.
    double l = 0.0;
    for (int64_t j = 0; j < cols; ++j)
      l += std::exp(xr[j] - m);
    const double log_l = std::log(l);
    for (int64_t j = 0; j < cols; ++j)
      yr[j] = out == Output::Logs ? (xr[j] - m) - log_l : std::exp(xr[j] - m) / l;
  }
  return y;
}

}  // namespace

std::vector<double> softmax(const std::vector<double>& x, int64_t rows, int64_t cols) {
  return forward(x, rows, cols, Output::Probabilities);
}

std::vector<double> log_softmax(const std::vector<double>& x, int64_t rows, int64_t cols) {
  return forward(x, rows, cols, Output::Logs);
}

std::vector<double> softmax_backward(const std::vector<double>& y, const std::vector<double>& dy,
                                     int64_t rows, int64_t cols) {
  std::vector<double> dx(y.size());
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r * cols;
    double dot = 0.0;
    for (int64_t j = 0; j < cols; ++j)
      dot += dy[o + j] * y[o + j];
    for (int64_t j = 0; j < cols; ++j)
      dx[o + j] = y[o + j] * (dy[o + j] - dot);
  }
  return dx;
}

}  // namespace cpu_ref

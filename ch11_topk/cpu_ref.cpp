#include "cpu_ref.h"

#include "common/dtype.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace cpu_ref {

bool ranks_before(double a, int64_t index_a, double b, int64_t index_b) {
  const bool nan_a = std::isnan(a), nan_b = std::isnan(b);
  if (nan_a != nan_b) return nan_a;
  if (!nan_a && a != b) return a > b;  // -0.0 == +0.0 falls through to the index
  return index_a < index_b;
}

namespace {

// The k first positions of row[0, N) in the chapter's order.
std::vector<int64_t> row_topk(const double* row, int64_t N, int k) {
  std::vector<int64_t> order(static_cast<size_t>(N));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int64_t i, int64_t j) { return ranks_before(row[i], i, row[j], j); });
  order.resize(static_cast<size_t>(k));
  return order;
}

}  // namespace

template <typename T>
TopK topk(const std::vector<T>& x, int64_t M, int64_t N, int k) {
  TopK out;
  out.values.reserve(static_cast<size_t>(M * k));
  out.indices.reserve(static_cast<size_t>(M * k));
  std::vector<double> row(static_cast<size_t>(N));
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t i = 0; i < N; ++i)
      row[static_cast<size_t>(i)] = common::to_float(x[static_cast<size_t>(r * N + i)]);
    for (int64_t i : row_topk(row.data(), N, k)) {
      out.indices.push_back(i);
      out.values.push_back(row[static_cast<size_t>(i)]);
    }
  }
  return out;
}

template <typename T>
SoftmaxTopK softmax_topk(const std::vector<T>& x, int64_t M, int64_t N, int k, double temperature) {
  SoftmaxTopK out;
  std::vector<double> row(static_cast<size_t>(N));
  // y = x * (1 / temperature) as the API defines it, in float: the reciprocal rounded to float,
  // the product (exact in double, 24 by 24 bits) rounded to float once, so a y from FLT_MAX plus
  // half an ulp on is an infinity. Everything after y is double. At tiny temperatures the
  // rounding matters: a y of 1e10 has an ulp of 1024, and two logits an ulp of x apart may round
  // to the same y (probabilities 1/2 and 1/2, not 1 and 0).
  const double reciprocal = 1.0f / static_cast<float>(temperature);
  const auto scaled = [reciprocal](double v) {
    const double y = v * reciprocal;
    if (std::fabs(y) >= 0x1.ffffffp+127) return std::copysign(HUGE_VAL, y);
    return static_cast<double>(static_cast<float>(y));
  };
  for (int64_t r = 0; r < M; ++r) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < N; ++i) {
      const double v = common::to_float(x[static_cast<size_t>(r * N + i)]);
      row[static_cast<size_t>(i)] = v;
      const double y = scaled(v);
      if (std::isnan(y) || std::isnan(m))
        m = std::numeric_limits<double>::quiet_NaN();
      else
        m = std::max(m, y);
    }
    // A masked value (-inf) adds nothing; skipping it also keeps an all -inf row at l = 0
    // (the empty sum: lse = -inf, probabilities 0 / 0 = NaN) instead of exp(-inf - -inf).
    double l = 0.0;
    for (double v : row) {
      const double y = scaled(v);
      if (y != -std::numeric_limits<double>::infinity()) l += std::exp(y - m);
    }
    for (int64_t i : row_topk(row.data(), N, k)) {
      out.indices.push_back(i);
      out.probs.push_back(std::exp(scaled(row[static_cast<size_t>(i)]) - m) / l);
    }
    out.lse.push_back(m + std::log(l));
  }
  return out;
}

#define CPU_REF_INSTANTIATE(T)                                      \
  template TopK topk(const std::vector<T>&, int64_t, int64_t, int); \
  template SoftmaxTopK softmax_topk(const std::vector<T>&, int64_t, int64_t, int, double);
CPU_REF_INSTANTIATE(float)
CPU_REF_INSTANTIATE(__half)
CPU_REF_INSTANTIATE(__nv_bfloat16)
#undef CPU_REF_INSTANTIATE

}  // namespace cpu_ref

// CPU-only tests of the reference: the truth the GPU tests compare against.
#include "check.h"
#include "cpu_ref.h"

#include "common/catch_compat.hpp"
#include "common/data_gen.hpp"
#include "common/dtype.hpp"

#include <cmath>
#include <vector>

TEST_CASE("softmax of a known row", "[ch10_softmax][cpu]") {
  const std::vector<double> x = {1.0, 2.0, 3.0};
  const auto y = cpu_ref::softmax(x, 1, 3);
  const double l = std::exp(-2.0) + std::exp(-1.0) + 1.0;
  REQUIRE(y[0] == Approx(std::exp(-2.0) / l).epsilon(1e-15));
  REQUIRE(y[2] == Approx(1.0 / l).epsilon(1e-15));
  const auto ly = cpu_ref::log_softmax(x, 1, 3);
  REQUIRE(ly[1] == Approx(-1.0 - std::log(l)).epsilon(1e-15));
}

TEST_CASE("the reference's semantics", "[ch10_softmax][cpu]") {
  const double inf = INFINITY;
  const std::vector<double> x = {-inf,  -inf,     // all -inf: NaN
                                 -inf,  0.0,      // -inf entry: exact 0
                                 NAN,   1.0,      // NaN: NaN row
                                 inf,   1.0,      // +inf: NaN row
                                 1e300, -1e300};  // huge: no overflow
  const auto y = cpu_ref::softmax(x, 5, 2);
  REQUIRE(std::isnan(y[0]));
  REQUIRE(std::isnan(y[1]));
  REQUIRE(y[2] == 0.0);
  REQUIRE(y[3] == 1.0);
  REQUIRE(std::isnan(y[4]));
  REQUIRE(std::isnan(y[5]));
  REQUIRE(std::isnan(y[6]));
  REQUIRE(std::isnan(y[7]));
  REQUIRE(y[8] == 1.0);
  REQUIRE(y[9] == 0.0);
  const auto ly = cpu_ref::log_softmax(x, 5, 2);
  REQUIRE(ly[2] == -inf);
  REQUIRE(ly[3] == 0.0);
}

TEST_CASE("rows sum to one and the backward of a constant gradient is zero",
          "[ch10_softmax][cpu]") {
  const int64_t rows = 5, cols = 777;
  const auto x = common::widen(common::gen::logits(rows * cols, 3));
  const auto y = cpu_ref::softmax(x, rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j)
      sum += y[r * cols + j];
    REQUIRE(sum == Approx(1.0).epsilon(1e-13));
  }
  // softmax is invariant to adding a constant to a row, so its Jacobian maps a constant
  // gradient to zero.
  const std::vector<double> dy(y.size(), 2.5);
  for (double v : cpu_ref::softmax_backward(y, dy, rows, cols))
    REQUIRE(std::fabs(v) < 1e-14);
}

TEST_CASE("the backward matches a finite difference", "[ch10_softmax][cpu]") {
  const int64_t cols = 9;
  const auto x = common::widen(common::gen::normal(cols, 4));
  const auto dy = common::widen(common::gen::normal(cols, 5));
  const auto y = cpu_ref::softmax(x, 1, cols);
  const auto dx = cpu_ref::softmax_backward(y, dy, 1, cols);
  // dx_k = d/dx_k sum_j dy_j * softmax(x)_j
  for (int64_t k = 0; k < cols; ++k) {
    const double h = 1e-6;
    auto xp = x, xm = x;
    xp[k] += h;
    xm[k] -= h;
    const auto yp = cpu_ref::softmax(xp, 1, cols), ym = cpu_ref::softmax(xm, 1, cols);
    double f = 0;
    for (int64_t j = 0; j < cols; ++j)
      f += dy[j] * (yp[j] - ym[j]);
    REQUIRE(f / (2 * h) == Approx(dx[k]).margin(1e-8));
  }
}

TEST_CASE("tolerances do not let zeros pass", "[ch10_softmax][cpu]") {
  // The largest probability of a row is at least 1 / cols; the tolerance at that value must be
  // far below it, for every type and the longest row tested.
  const double p = 1.0 / (131072 + 5);
  for (auto tol : {check::forward_tolerance<float>(check::Op::Softmax),
                   check::forward_tolerance<__half>(check::Op::Softmax),
                   check::forward_tolerance<__nv_bfloat16>(check::Op::Softmax)})
    REQUIRE(tol.atol + tol.rtol * p < 0.1 * p);
}

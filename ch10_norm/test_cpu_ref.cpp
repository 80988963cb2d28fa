// CPU-only tests: the reference itself, and the float arithmetic behind the chapter's story
// (the one-pass formula's cancellation next to two-pass and Welford in float).
#include "check.h"
#include "cpu_ref.h"

#include "common/catch_compat.hpp"
#include "common/data_gen.hpp"
#include "common/dtype.hpp"

#include <cmath>
#include <limits>
#include <vector>

namespace {

// The three ways to a variance, in float, as a kernel would compute them (serially here).
float one_pass_float(const std::vector<float>& x) {
  float s = 0.0f, s2 = 0.0f;
  for (float v : x) {
    s += v;
    s2 += v * v;
  }
  const float mean = s / static_cast<float>(x.size());
  return s2 / static_cast<float>(x.size()) - mean * mean;
}
float two_pass_float(const std::vector<float>& x) {
  float s = 0.0f;
  for (float v : x)
    s += v;
  const float mean = s / static_cast<float>(x.size());
  float m2 = 0.0f;
  for (float v : x)
    m2 += (v - mean) * (v - mean);
  return m2 / static_cast<float>(x.size());
}
float welford_float(const std::vector<float>& x) {
  float count = 0.0f, mean = 0.0f, m2 = 0.0f;
  for (float v : x) {
    count += 1.0f;
    const float delta = v - mean;
    mean += delta / count;
    m2 += delta * (v - mean);
  }
  return m2 / count;
}

}  // namespace

TEST_CASE("float variance of large-mean data: one-pass cancels, two-pass and Welford hold",
          "[ch10_norm][one_pass_trap][cpu]") {
  const std::vector<float> x = common::gen::normal(4096, 3, 1e4f, 1.0f);
  const double exact = cpu_ref::variance(x);
  // E[x²] ≈ 1e8 and E[x]² are each off by tens of units or more (the float sum of the squares
  // reaches 4e11, where an ulp is 32768): no digit of var ≈ 1 is left.
  CHECK(std::fabs(one_pass_float(x) - exact) > 0.5 * exact);
  // Both stable forms only ever square deviations of size ≈ 1.
  CHECK(std::fabs(two_pass_float(x) - exact) < 1e-3 * exact);
  CHECK(std::fabs(welford_float(x) - exact) < 1e-3 * exact);
}

TEST_CASE("cpu_ref::layernorm on a hand-computed row", "[cpu]") {
  const std::vector<float> x{1, 2, 3, 4};
  const std::vector<float> gamma{1, 2, 1, 1}, beta{0, 0, 0, 10};
  const auto out = cpu_ref::layernorm(x, gamma, beta, 1, 4, 0.0);
  // mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25
  REQUIRE(out.mean[0] == Approx(2.5));
  REQUIRE(out.rstd[0] == Approx(1.0 / std::sqrt(1.25)));
  REQUIRE(out.y[1] == Approx(2.0 * -0.5 / std::sqrt(1.25)));
  REQUIRE(out.y[3] == Approx(1.5 / std::sqrt(1.25) + 10.0));
}

TEST_CASE("cpu_ref::layernorm: a constant row gives beta, a NaN only poisons its own row",
          "[cpu]") {
  std::vector<float> x{3, 3, 3, 1, 2, 3, 5, 6, 7};
  x[4] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> beta{0.5f, -1.0f, 2.0f};
  const auto out = cpu_ref::layernorm(x, std::vector<float>{}, beta, 3, 3, 1e-5);
  for (int j = 0; j < 3; ++j) {
    REQUIRE(out.y[j] == beta[j]);          // row 0: exactly β
    REQUIRE(std::isnan(out.y[3 + j]));     // row 1: NaN
    REQUIRE(std::isfinite(out.y[6 + j]));  // row 2: untouched
  }
  REQUIRE(out.y[8] == Approx(1.0 / std::sqrt(2.0 / 3.0 + 1e-5) + 2.0));  // (7 - 6) · rstd + β
}

TEST_CASE("cpu_ref::rmsnorm and the fused add", "[cpu]") {
  const std::vector<float> x{3, 4}, residual{1, -8}, gamma{2, 1};
  const auto rms = cpu_ref::rmsnorm(x, gamma, 1, 2, 0.0);
  // mean(x²) = 12.5
  REQUIRE(rms.rstd[0] == Approx(1.0 / std::sqrt(12.5)));
  REQUIRE(rms.y[0] == Approx(6.0 / std::sqrt(12.5)));
  REQUIRE(rms.mean.empty());
  const auto fused = cpu_ref::add_rmsnorm(x, residual, gamma, 1, 2, 0.0);
  REQUIRE(fused.residual == std::vector<float>{4, -4});
  REQUIRE(fused.norm.y[1] == Approx(-1.0));  // r = (4, -4): rms 4
}

TEST_CASE("cpu_ref::add_rmsnorm rounds the residual to the element type", "[cpu]") {
  const std::vector<__nv_bfloat16> x = common::convert<__nv_bfloat16>({1.0f}),
                                   r = common::convert<__nv_bfloat16>({0x1p-9f});
  const auto fused = cpu_ref::add_rmsnorm(x, r, std::vector<__nv_bfloat16>{}, 1, 1, 0.0);
  // 1 + 2^-9 is not a bf16 (8 significant bits): the stored residual and the normalized value
  // both see 1.
  REQUIRE(common::to_float(fused.residual[0]) == 1.0f);
}

TEST_CASE("the checker's bounds scale with the data and never admit an all-zero output", "[cpu]") {
  const auto p = check::make_problem<float>(2, 1024, check::Data::Normal, true, true, false, 1);
  const auto e = check::expect_layernorm(p);
  for (size_t i = 0; i < e.y.size(); ++i)
    if (std::fabs(e.y[i]) > 1e-3) REQUIRE(e.y_tol[i] < std::fabs(e.y[i]));
  const auto large =
      check::make_problem<float>(1, 1024, check::Data::LargeMean, true, true, false, 1);
  // Large mean next to the spread: the statistics' bound grows by about mean|x| · rstd = 1e4.
  REQUIRE(check::expect_layernorm(large).rstd_tol[0] > 100 * e.rstd_tol[0] / e.rstd[0]);
}

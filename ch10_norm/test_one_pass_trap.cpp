// The test of TODO 2, the one-pass variance on the CPU: built twice like the GPU tests, against the
// skeleton (label student_ch10_norm, selected by -L ch10_norm) and against the solution (label
// solutions; its ctest name begins with cpu.solutions), and run without a GPU.
#include "cpu_ref.h"
#include "norm.h"

#include "common/catch_compat.hpp"
#include "common/data_gen.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

TEST_CASE("the one-pass variance E[x^2] - E[x]^2 fails on data with a large mean",
          "[ch10_norm][one_pass_trap]") {
  INFO("fill TODO 2 in ch10_norm/one_pass_trap.cpp");
  const int64_t n = 4096;
  // Mean 0: the formula is right (Σx² and Σx are both well below float's ulp trouble).
  const std::vector<float> centered = common::gen::normal(n, 11, 0.0f, 1.0f);
  const double centered_var = cpu_ref::variance(centered);
  const float centered_got = normalization::one_pass_variance_float(centered.data(), n);
  INFO("mean 0, std 1: one-pass gives " << centered_got << ", exact " << centered_var);
  REQUIRE(std::fabs(centered_got - centered_var) <= 1e-4 * centered_var);

  // Mean 1e4, std 1: E[x²] ≈ 1e8, where one float ulp is 8, so the difference of the two terms
  // (≈ 1) is pure rounding noise. This is the failure the chapter documents: the result is off
  // by more than the variance itself, or even negative (rsqrt would give NaN).
  const std::vector<float> shifted = common::gen::normal(n, 11, 1e4f, 1.0f);
  const double shifted_var = cpu_ref::variance(shifted);
  const float shifted_got = normalization::one_pass_variance_float(shifted.data(), n);
  INFO("mean 1e4, std 1: one-pass gives " << shifted_got << ", exact " << shifted_var);
  REQUIRE_FALSE(std::fabs(shifted_got - shifted_var) <= 0.5 * shifted_var);

  // Given code before the TODO refuses what it cannot average.
  REQUIRE_INVALID_ARGUMENT(normalization::one_pass_variance_float(centered.data(), 0),
                           "one_pass_variance_float: n must be >= 1");
  REQUIRE_INVALID_ARGUMENT(normalization::one_pass_variance_float(nullptr, n),
                           "one_pass_variance_float: x is null");
}

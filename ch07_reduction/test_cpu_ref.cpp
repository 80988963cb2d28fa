// CPU-only tests of chapter 7: the reference, the error bound, and why a float loop is no
// reference.
#include "check.h"
#include "cpu_ref.h"

#include "common/catch_compat.hpp"
#include "common/data_gen.hpp"
#include "common/dtype.hpp"

#include <cmath>
#include <limits>

// The bound's threads term for a GPU of 132 SMs (an H100 or H200): check::tree_run_threads() there.
constexpr int64_t kRunThreads = 1024 * 132;

TEST_CASE("cpu_ref::sum is exact on integers and defines the empty sum", "[ch07_reduction][cpu_ref]") {
  std::vector<float> x(100000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7);
  double expected = 0;
  for (size_t i = 0; i < x.size(); ++i) expected += static_cast<double>(i % 7);
  REQUIRE(cpu_ref::sum(x) == expected);
  REQUIRE(cpu_ref::sum(std::vector<float>{}) == 0.0);
  REQUIRE(cpu_ref::sum_abs(std::vector<float>{-1.5f, 2.0f}) == 3.5);
}

TEST_CASE("cpu_ref::max propagates NaN and gives -inf for the empty input", "[ch07_reduction][cpu_ref]") {
  REQUIRE(cpu_ref::max({1.0f, 3.0f, -2.0f}) == 3.0);
  REQUIRE(std::isnan(cpu_ref::max({1.0f, NAN, 3.0f})));
  REQUIRE(cpu_ref::max({}) == -std::numeric_limits<double>::infinity());
  REQUIRE(cpu_ref::max({-INFINITY, -INFINITY}) == -std::numeric_limits<double>::infinity());
}

TEST_CASE("cpu_ref::sum reads half and bf16 values as they are stored", "[ch07_reduction][cpu_ref]") {
  // 0.1 is not representable: the reference must sum the rounded values the GPU reads.
  const std::vector<float> x(1000, 0.1f);
  const auto bf16 = common::convert<__nv_bfloat16>(x);
  REQUIRE(cpu_ref::sum(bf16) == Approx(1000.0 * common::to_float(bf16[0])).epsilon(1e-12));
  REQUIRE(cpu_ref::sum(bf16) != Approx(100.0).epsilon(1e-6));
  const auto fp16 = common::convert<__half>(x);
  REQUIRE(cpu_ref::sum(fp16) == Approx(1000.0 * common::to_float(fp16[0])).epsilon(1e-12));
  REQUIRE(cpu_ref::sum(fp16) != Approx(100.0).epsilon(1e-6));
}

TEST_CASE("a float loop is no reference: it stops growing at 2^24", "[ch07_reduction][cpu_ref]") {
  // 2^25 ones: once the float accumulator reaches 2^24 = 16777216, adding 1 rounds back down.
  const std::vector<float> ones(size_t{1} << 25, 1.0f);
  REQUIRE(cpu_ref::naive_float_sum(ones) == 16777216.0f);
  REQUIRE(cpu_ref::sum(ones) == 33554432.0);
  // A tree's error bound at this size is far tighter than the float loop's actual error.
  const double tree_bound = check::sum_error_bound(ones.size(), cpu_ref::sum_abs(ones),
                                                   check::Accumulation::Tree, kRunThreads);
  REQUIRE(tree_bound < 33554432.0 - 16777216.0);
}

TEST_CASE("the error bound grows with n and never admits an all-zero sum", "[ch07_reduction][cpu_ref]") {
  using check::Accumulation;
  REQUIRE(check::sum_error_bound(1 << 10, 1.0, Accumulation::Tree, kRunThreads) <
          check::sum_error_bound(1 << 20, 1.0, Accumulation::Tree, kRunThreads));
  // For positive data (sum == sum |x|) the bound is a small fraction of the sum: at 2^31 for the
  // tree versions, at 2^24 (the largest size it is tested at) for the serial one.
  REQUIRE(check::sum_error_bound(int64_t{1} << 31, 1.0, Accumulation::Tree, kRunThreads) < 1e-2);
  REQUIRE(check::sum_error_bound(int64_t{1} << 24, 1.0, Accumulation::Serial, kRunThreads) < 2e-3);
  // Mean-zero normal data at the largest tested size: |sum| ~ sqrt(n) stays above the bound, so a
  // kernel that writes 0 cannot pass.
  const auto x = common::gen::normal(size_t{1} << 24, 11);
  REQUIRE(std::fabs(cpu_ref::sum(x)) >
          check::sum_error_bound(x.size(), cpu_ref::sum_abs(x), Accumulation::Tree, kRunThreads));
}

// The checker must reject deliberately wrong kernels (and accept the same kernel without its
// bug), or a passing test of a student's kernel would prove nothing.
#include "check.h"
#include "wrong_kernels.h"

#include "common/catch_compat.hpp"
#include "common/device_buffer.hpp"
#include "common/errors.hpp"

using check::Data;
using check::Placement;
using wrong::Bug;

namespace {

template <typename T>
common::CheckResult run_layernorm(const check::LayerNormRun<T>& run, int64_t rows, int64_t n,
                                  Data data, Placement at = {}, float eps = 1e-5f) {
  auto p = check::make_problem<T>(rows, n, data, true, true, false, 5);
  p.eps = eps;
  return check::check_layernorm<T>("wrong layernorm", run, p, check::expect_layernorm(p), at);
}

// The control passes on 3 rows of n and the wrong kernel does not, with `expect_in_message` in
// what the checker says: a checker that rejects everything fails too.
template <typename T>
void require_rejected_beside_control(const check::LayerNormRun<T>& control,
                                     const check::LayerNormRun<T>& wrong_run, const char* bug,
                                     int64_t n, Data data, const char* expect_in_message,
                                     float eps = 1e-5f) {
  const auto passed = run_layernorm<T>(control, 3, n, data, {}, eps);
  INFO("control: " << passed.message);
  REQUIRE(passed.ok);
  const auto result = run_layernorm<T>(wrong_run, 3, n, data, {}, eps);
  INFO(bug << ": " << result.message);
  REQUIRE_FALSE(result.ok);
  REQUIRE(result.message.find(expect_in_message) != std::string::npos);
}

}  // namespace

TEST_CASE("the checker accepts the control kernel on every kind of data", "[checker]") {
  for (Data data : {Data::Normal, Data::LargeMean, Data::ConstantRows, Data::NonFinite})
    for (int64_t n : {1, 33, 1025, 4096}) {
      const auto result =
          run_layernorm<float>(wrong::layernorm(Bug::None), 4, n, data, {1, 2, 0, 3});
      INFO(check::data_name(data) << ", N = " << n << ": " << result.message);
      REQUIRE(result.ok);
    }
}

TEST_CASE("in place, the checker rejects an output left unwritten", "[checker]") {
  // In place, y is x's buffer and cannot be poisoned: an element never written still holds its
  // input. This run computes the statistics right but writes y elsewhere.
  const check::LayerNormRun<float> writes_y_elsewhere =
      [](const float* x, const float* g, const float* b, float*, float* mean, float* rstd,
         int64_t rows, int64_t n, float eps) {
        common::DeviceBuffer<float> elsewhere(static_cast<size_t>(rows * n));
        wrong::layernorm(Bug::None)(x, g, b, elsewhere.data(), mean, rstd, rows, n, eps);
        CUDA_CHECK(cudaDeviceSynchronize());
      };
  for (const Placement& at : {Placement{0, 0, 0, 0, true}, Placement{1, 1, 2, 3, true}}) {
    const auto control =
        run_layernorm<float>(wrong::layernorm(Bug::None), 3, 1025, Data::Normal, at);
    INFO(control.message);
    REQUIRE(control.ok);
    const auto result = run_layernorm<float>(writes_y_elsewhere, 3, 1025, Data::Normal, at);
    INFO(result.message);
    REQUIRE_FALSE(result.ok);
    REQUIRE(result.message.find("out of tolerance") != std::string::npos);
  }
}

TEST_CASE("the checker rejects each wrong layernorm", "[checker]") {
  struct Case {
    Bug bug;
    Data data;  // data on which the bug shows
    const char* expect_in_message;
    float eps = 1e-5f;
  };
  const Case cases[] = {
      {Bug::WritesZeros, Data::Normal, "out of tolerance"},
      {Bug::MissesCrossWarpMerge, Data::Normal, "out of tolerance"},
      {Bug::DropsLastElement, Data::Normal, "out of tolerance"},
      {Bug::OnePassVariance, Data::LargeMean, "out of tolerance"},
      {Bug::NoEps, Data::ConstantRows, "out of tolerance"},
      {Bug::HardCodesEps, Data::Normal, "out of tolerance", 0.1f},
      {Bug::WritesPastRow, Data::Normal, "guard"},
  };
  for (const Case& c : cases) {
    require_rejected_beside_control(wrong::layernorm(Bug::None), wrong::layernorm(c.bug),
                                    wrong::bug_name(c.bug), 1025, c.data, c.expect_in_message,
                                    c.eps);
  }
}

TEST_CASE("the one-pass variance passes centred data: only the large-mean test exposes it",
          "[checker]") {
  // Why the tests carry large-mean data: with mean 0.5 and spread 2 the bug is invisible.
  const auto on_normal =
      run_layernorm<float>(wrong::layernorm(Bug::OnePassVariance), 3, 1025, Data::Normal);
  INFO(on_normal.message);
  CHECK(on_normal.ok);
  CHECK_FALSE(
      run_layernorm<float>(wrong::layernorm(Bug::OnePassVariance), 3, 1025, Data::LargeMean).ok);
}

TEST_CASE("the checker rejects statistics accumulated in bf16", "[checker]") {
  require_rejected_beside_control(wrong::layernorm_bf16_control(),
                                  wrong::layernorm_bf16_statistics(), "bf16 statistics", 4096,
                                  Data::Normal, "out of tolerance");
}

TEST_CASE("the checker rejects an output truncated to bf16 instead of rounded", "[checker]") {
  // Truncation is off by up to one unit in the last place, rounding to nearest by half of one:
  // the bound on y allows the rounding and not the truncation.
  require_rejected_beside_control(wrong::layernorm_bf16_control(),
                                  wrong::layernorm_bf16_truncates(), "truncated to bf16", 4096,
                                  Data::Normal, "out of tolerance");
}

TEST_CASE("the checker rejects an rmsnorm without gamma and a fused add without write-back",
          "[checker]") {
  {
    const auto p = check::make_problem<float>(3, 1025, Data::Normal, true, false, false, 6);
    const auto control = check::check_rmsnorm<float>("rmsnorm with gamma", wrong::rmsnorm_control(),
                                                     p, check::expect_rmsnorm(p), {});
    INFO("control: " << control.message);
    REQUIRE(control.ok);
    const auto result = check::check_rmsnorm<float>(
        "rmsnorm without gamma", wrong::rmsnorm_ignores_gamma(), p, check::expect_rmsnorm(p), {});
    INFO(result.message);
    REQUIRE_FALSE(result.ok);
  }
  {
    const auto p = check::make_problem<float>(3, 1025, Data::Normal, false, false, true, 7);
    const auto control = check::check_add_rmsnorm<float>(
        "add with write-back", wrong::add_rmsnorm_control(), p, check::expect_add_rmsnorm(p), {});
    INFO("control: " << control.message);
    REQUIRE(control.ok);
    const auto result = check::check_add_rmsnorm<float>("add without write-back",
                                                        wrong::add_rmsnorm_forgets_residual(), p,
                                                        check::expect_add_rmsnorm(p), {});
    INFO(result.message);
    REQUIRE_FALSE(result.ok);
    // The residual's own comparison, not y's: the message names the tensor that failed.
    REQUIRE(result.message.find("residual (x + residual)") != std::string::npos);
  }
}

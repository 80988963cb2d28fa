// The checker must reject deliberately wrong kernels: a test that passes them proves nothing.
#include "check.h"
#include "test_data.h"
#include "wrong_kernels.h"

#include "common/catch_compat.hpp"
#include "common/data_gen.hpp"
#include "common/dtype.hpp"

#include <cmath>

TEST_CASE("the checker rejects a kernel that writes zero", "[ch07_reduction][checker]") {
  // Mean-zero data: the sum is small next to sum |x|, the hardest case for a relative bound.
  for (size_t n : {size_t{33}, size_t{1025}, size_t{1} << 20, size_t{1} << 24}) {
    INFO("n = " << n);
    const auto x = common::gen::normal(n, n);
    REQUIRE_FALSE(check::check_reduction(wrong::writes_zero(), x).ok);
  }
}

TEST_CASE("the checker rejects a reduction missing its cross-warp step", "[ch07_reduction][checker]") {
  const auto x = common::gen::normal(4096, 1);
  REQUIRE_FALSE(check::check_reduction(wrong::misses_cross_warp_step(), x).ok);
}

TEST_CASE("the checker rejects an off-by-one tail", "[ch07_reduction][checker]") {
  // The tests' "edges" data put a large value last, so the dropped element is never within the
  // error bound (with values in [0, 1) alone it would be from about 2^20 elements on).
  for (size_t n : {size_t{1025}, (size_t{1} << 20) + 3, size_t{1} << 24}) {
    INFO("n = " << n);
    REQUIRE_FALSE(check::check_reduction(wrong::drops_last_element(), data::with_large_edges(n, 2)).ok);
  }
}

TEST_CASE("the checker rejects one element dropped in the middle, on exactly summable data",
          "[ch07_reduction][checker]") {
  // At n = 2^24 a float sum may err by about 80 (check::sum_error_bound), so one missing value
  // in [0, 1) hides in the bound; on zeros and ones the sum is exact and the checker allows no
  // error at all.
  const size_t n = size_t{1} << 24;
  std::vector<float> x = common::gen::uniform(n, 11, 0.0f, 1.0f);
  REQUIRE(check::check_reduction(wrong::drops_middle_element(), x).ok);  // hidden by the bound
  x = common::gen::ties(n, 12, 2);
  x[n / 2] = 1.0f;
  REQUIRE_FALSE(check::check_reduction(wrong::drops_middle_element(), x).ok);
  for (size_t small : {size_t{2}, size_t{33}, size_t{1025}}) {
    INFO("n = " << small);
    std::vector<float> ones(small, 1.0f);
    REQUIRE_FALSE(check::check_reduction(wrong::drops_middle_element(), ones).ok);
  }
}

TEST_CASE("the checker rejects a sum that skips the elements before the first 16-byte boundary",
          "[ch07_reduction][checker]") {
  for (size_t n : {size_t{3}, size_t{1025}, (size_t{1} << 20) + 3}) {
    const auto x = data::with_large_edges(n, 13);
    for (size_t misalign : {1, 2, 3}) {
      INFO("n = " << n << ", input " << misalign << " elements past alignment");
      REQUIRE_FALSE(check::check_reduction(wrong::drops_unaligned_head(), x, misalign).ok);
    }
    REQUIRE(check::check_reduction(wrong::drops_unaligned_head(), x, 0).ok);  // nothing to skip
  }
}

TEST_CASE("the checker rejects a read past the input (guard canaries)",
          "[ch07_reduction][checker]") {
  // The element past the end lies in the input's guard zone, inside the same allocation (no
  // sanitizer sees the read), and its canary bytes make a float of about 1e36, far beyond any
  // error bound. Misaligned by 3, the zone also starts off a 16-byte boundary.
  for (size_t n : {size_t{1}, size_t{33}, size_t{1025}, (size_t{1} << 20) + 3}) {
    INFO("n = " << n);
    const auto x = common::gen::uniform(n, n + 7, 0.0f, 1.0f);
    REQUIRE_FALSE(check::check_reduction(wrong::reads_past_input(), x).ok);
    REQUIRE_FALSE(check::check_reduction(wrong::reads_past_input(), x, 3).ok);
  }
}

TEST_CASE("the checker rejects a write past the output (guard canaries)", "[ch07_reduction][checker]") {
  const auto result = check::check_reduction(wrong::writes_past_output(), common::gen::normal(1000, 3));
  REQUIRE_FALSE(result.ok);
  REQUIRE(result.message.find("canary") != std::string::npos);
}

TEST_CASE("the checker rejects a bf16 sum that accumulates in bf16", "[ch07_reduction][checker]") {
  // The data of the final version's half and bf16 test: values in [-2, 4), whose running sums
  // soon leave bf16's 8 bits of exact integers.
  for (size_t n : {size_t{1025}, (size_t{1} << 20) + 3}) {
    INFO("n = " << n);
    const auto x = common::convert<__nv_bfloat16>(common::gen::uniform(n, n + 3, -2.0f, 4.0f));
    REQUIRE_FALSE(check::check_reduction(wrong::accumulates_in_bf16(), x).ok);
  }
}

TEST_CASE("the checker rejects a max that drops NaN", "[ch07_reduction][checker]") {
  auto x = common::gen::normal(5000, 4);
  common::gen::sprinkle(x, NAN, 1, 5);
  REQUIRE_FALSE(check::check_reduction(wrong::max_ignores_nan(), x).ok);
}

TEST_CASE("the determinism check rejects an order-dependent finish", "[ch07_reduction][checker]") {
  // Block sums of mean-zero data added atomically: the rounding changes with the finishing order.
  const auto x = common::gen::normal(size_t{1} << 24, 6);
  REQUIRE(check::check_reduction(wrong::order_dependent_finish(), x).ok);  // the value is fine...
  REQUIRE_FALSE(check::check_deterministic(wrong::order_dependent_finish(), x, 50).ok);  // ...its bits are not
}

TEST_CASE("the determinism check rejects a finish that leaves its counter set",
          "[ch07_reduction][checker]") {
  // reduction.h lets a caller reuse the workspace, so the last block must return the counter to
  // zero; the determinism check runs every launch on one workspace to catch a finish that does not.
  const auto x = common::gen::normal(100000, 7);
  const auto control = check::check_deterministic(wrong::resets_its_counter(), x, 3);
  INFO("control: " << control.message);
  REQUIRE(control.ok);
  const auto result = check::check_deterministic(wrong::keeps_its_counter(), x, 3);
  INFO(result.message);
  REQUIRE_FALSE(result.ok);
  REQUIRE(result.message.find("never written") != std::string::npos);
}

TEST_CASE("the checker rejects a write past the workspace the reduction asked for",
          "[ch07_reduction][checker]") {
  // The workspace lies between guard zones, exactly as large as workspace_bytes says: the last
  // block sum, stored one float past it, changes a canary though the result is right.
  const auto x = common::gen::normal(100000, 8);
  const auto result = check::check_reduction(wrong::asks_too_little_workspace(), x);
  INFO(result.message);
  REQUIRE_FALSE(result.ok);
  REQUIRE(result.message.find("workspace: a guard canary changed") != std::string::npos);
}

// CPU-only tests of the reference: the order rules on hand-made rows.
#include "cpu_ref.h"

#include "common/catch_compat.hpp"
#include "common/dtype.hpp"

#include <cmath>
#include <limits>

namespace {
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
}  // namespace

TEST_CASE("cpu_ref::topk sorts descending and breaks ties by the lower index", "[cpu]") {
  const std::vector<float> x = {1, 5, 3, 5, 2, 5};
  const auto r = cpu_ref::topk(x, 1, 6, 4);
  REQUIRE(r.indices == std::vector<int64_t>{1, 3, 5, 2});
  REQUIRE(r.values == std::vector<double>{5, 5, 5, 3});
}

TEST_CASE("cpu_ref::topk ranks NaN above +inf and -0.0 equal to +0.0", "[cpu]") {
  const std::vector<float> x = {-0.0f, kInf, -kNaN, 0.0f, kNaN, -kInf, -1.0f};
  const auto r = cpu_ref::topk(x, 1, 7, 7);
  REQUIRE(r.indices == std::vector<int64_t>{2, 4, 1, 0, 3, 6, 5});
  REQUIRE(std::signbit(r.values[3]));  // the -0.0 itself, first of the tied zeros
}

TEST_CASE("cpu_ref::topk works row by row and on 16-bit inputs", "[cpu]") {
  const std::vector<__nv_bfloat16> x = common::convert<__nv_bfloat16>({3, 1, 2, 9, 9, 0});
  const auto r = cpu_ref::topk(x, 2, 3, 2);
  REQUIRE(r.indices == std::vector<int64_t>{0, 2, 0, 1});
}

TEST_CASE("cpu_ref::softmax_topk normalizes over the whole row", "[cpu]") {
  const std::vector<float> x = {0.0f, std::log(3.0f), -kInf, 0.0f};
  const auto r = cpu_ref::softmax_topk(x, 1, 4, 2, 1.0);
  REQUIRE(r.indices == std::vector<int64_t>{1, 0});
  REQUIRE(r.probs[0] == Approx(0.6).epsilon(1e-6));
  REQUIRE(r.probs[1] == Approx(0.2).epsilon(1e-6));
  REQUIRE(r.lse[0] == Approx(std::log(5.0)).epsilon(1e-6));
}

TEST_CASE("cpu_ref::softmax_topk applies the temperature", "[cpu]") {
  const std::vector<float> x = {2.0f, 0.0f};
  const auto r = cpu_ref::softmax_topk(x, 1, 2, 1, 2.0);
  REQUIRE(r.probs[0] == Approx(std::exp(1.0) / (std::exp(1.0) + 1.0)).epsilon(1e-9));
}

TEST_CASE("cpu_ref::softmax_topk's special rows", "[cpu]") {
  SECTION("only -inf: lse -inf, probabilities NaN") {
    const auto r = cpu_ref::softmax_topk(std::vector<float>{-kInf, -kInf}, 1, 2, 1, 1.0);
    REQUIRE(std::isnan(r.probs[0]));
    REQUIRE(r.lse[0] == -std::numeric_limits<double>::infinity());
  }
  SECTION("a NaN or a +inf: everything NaN") {
    for (float special : {kNaN, kInf}) {
      const auto r = cpu_ref::softmax_topk(std::vector<float>{1.0f, special}, 1, 2, 2, 1.0);
      REQUIRE(std::isnan(r.probs[0]));
      REQUIRE(std::isnan(r.probs[1]));
      REQUIRE(std::isnan(r.lse[0]));
    }
  }
}

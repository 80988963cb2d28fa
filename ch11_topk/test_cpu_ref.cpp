// CPU-only tests of the reference: the order rules on hand-made rows.
#include "cpu_ref.h"
#include "seed_sample.h"

#include "common/catch_compat.hpp"
#include "common/dtype.hpp"

#include <algorithm>
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
  SECTION("a finite x whose x * (1 / temperature) overflows float counts as +inf") {
    const std::vector<float> x = {2e38f, 1.0f};
    const auto hot = cpu_ref::softmax_topk(x, 1, 2, 2, 0.5);
    REQUIRE(std::isnan(hot.probs[0]));
    REQUIRE(std::isnan(hot.lse[0]));
    const auto cool = cpu_ref::softmax_topk(x, 1, 2, 2, 1.0);
    REQUIRE(cool.probs[0] == 1.0);
    REQUIRE(cool.lse[0] == Approx(2e38).epsilon(1e-7));
  }
  SECTION("y is rounded to float, as topk.h defines it") {
    // Two neighbouring floats whose products with float(1 / 1e-9f) round to one float: a tie.
    const std::vector<float> x = {0x1.80000ep+0f, 0x1.80001p+0f};
    REQUIRE(x[0] != x[1]);
    const auto r = cpu_ref::softmax_topk(x, 1, 2, 2, 1e-9f);
    REQUIRE(r.probs[0] == 0.5);
    REQUIRE(r.probs[1] == 0.5);
  }
  SECTION("the reciprocal of the temperature is rounded to float, as topk.h defines y") {
    // x / 0.93f is below FLT_MAX + half an ulp; x * float(1 / 0.93f) is not.
    const float x = 0x1.dc28f4p+127f;
    REQUIRE(x / static_cast<double>(0.93f) < 0x1.ffffffp+127);
    const auto r = cpu_ref::softmax_topk(std::vector<float>{x, 1.0f}, 1, 2, 2, 0.93f);
    REQUIRE(std::isnan(r.probs[0]));
    REQUIRE(std::isnan(r.lse[0]));
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

// The guessed seed (seed_sample.h) under its model, a row in random order: X, the number of the
// 128 thread bests (each the best of 16 elements) above the k-th best of n, is binomial(128, p)
// with p = 1 - (1 - k/n)^16, and the guess of rank r is too high exactly when X >= r. The tail
// is summed here exactly, in double, for every k and the vocabulary sizes of common LLMs.
TEST_CASE("seed_rank: a guessed seed is too high less than once in a million chunks", "[cpu]") {
  using topk::detail::kElementsPerThread;
  using topk::detail::kFilterThreads;
  auto tail = [](double p, int r) {  // P(X >= r)
    double sum = 0;
    for (int x = r; x <= kFilterThreads; ++x)
      sum += std::exp(std::lgamma(kFilterThreads + 1.0) - std::lgamma(x + 1.0) -
                      std::lgamma(kFilterThreads - x + 1.0) + x * std::log(p) +
                      (kFilterThreads - x) * std::log1p(-p));
    return sum;
  };
  double worst = 0;
  for (int64_t n : {16384, 32000, 50257, 65536, 128256, 151936, 256000, 1 << 20, 1 << 24}) {
    for (int k = 1; k <= 1024; ++k) {
      const int r = topk::detail::seed_rank(k, n, true);
      INFO("n=" << n << " k=" << k << " r=" << r);
      REQUIRE(r >= 1);
      REQUIRE(r <= k);
      REQUIRE(topk::detail::seed_rank(k, n, false) == k);
      if (r == k || r > kFilterThreads) continue;  // the safe seed, or none
      const double p = 1.0 - std::pow(1.0 - static_cast<double>(k) / n, kElementsPerThread);
      worst = std::max(worst, tail(p, r));
      REQUIRE(tail(p, r) < 1e-6);
    }
  }
  INFO("worst tail " << worst);
  REQUIRE(worst > 0);  // some guesses were made
  // What the guess buys at the benchmark's largest k: the 38th of 128 instead of no seed at all.
  REQUIRE(topk::detail::seed_rank(1024, 128256, true) <= 40);
}

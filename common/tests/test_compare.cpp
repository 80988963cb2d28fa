#include "common/catch_compat.hpp"
#include "common/compare.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

using namespace common;

TEST_CASE("check_close accepts values within atol + rtol|ref| and rejects others", "[compare]") {
  const std::vector<double> ref{1.0, -2.0, 100.0};
  REQUIRE(check_close(std::vector<float>{1.0f, -2.0f, 100.001f}, ref, 0.0, 1e-4, "y").ok);
  const auto bad = check_close(std::vector<float>{1.0f, -2.0f, 101.0f}, ref, 0.0, 1e-4, "y");
  REQUIRE_FALSE(bad.ok);
  REQUIRE(bad.message.find("[2]") != std::string::npos);
}

TEST_CASE("check_close treats NaN and infinities as values that must match", "[compare]") {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> ref{NAN, inf, -inf};
  REQUIRE(check_close(std::vector<float>{NAN, INFINITY, -INFINITY}, ref, 0, 0, "y").ok);
  REQUIRE_FALSE(check_close(std::vector<float>{0.0f, INFINITY, -INFINITY}, ref, 0, 0, "y").ok);
  REQUIRE_FALSE(check_close(std::vector<float>{NAN, -INFINITY, -INFINITY}, ref, 0, 0, "y").ok);
  REQUIRE_FALSE(check_close(std::vector<float>{1.0f}, std::vector<double>{NAN}, 10, 10, "y").ok);
}

TEST_CASE("check_close reports outputs that still hold the poison pattern", "[compare]") {
  std::vector<float> got{1.0f, 2.0f};
  std::memset(&got[1], kPoisonByte, sizeof(float));
  const auto result = check_close(got, {1.0, 2.0}, 1e30, 1e30, "y");
  REQUIRE_FALSE(result.ok);
  REQUIRE(result.message.find("never written") != std::string::npos);
}

TEST_CASE("check_indices compares exactly and catches unwritten indices", "[compare]") {
  REQUIRE(check_indices(std::vector<int32_t>{3, 1, 2}, {3, 1, 2}, "idx").ok);
  REQUIRE_FALSE(check_indices(std::vector<int32_t>{3, 2, 1}, {3, 1, 2}, "idx").ok);
  REQUIRE_FALSE(check_indices(std::vector<int32_t>{3, -1, 2}, {3, 1, 2}, "idx").ok);
}

TEST_CASE("check_same_bits compares bit patterns and catches unwritten slots", "[compare]") {
  const auto with_bits = [](uint32_t bits) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  };
  const float quiet = with_bits(0x7FC00000u), payload = with_bits(0x7FC00001u);
  const float all_ones = with_bits(0xFFFFFFFFu);  // a NaN, and the poison pattern
  const std::vector<float> want{1.0f, -0.0f, quiet, all_ones};
  REQUIRE(check_same_bits(want, want, "v").ok);
  // Equal as numbers, different as bits.
  REQUIRE_FALSE(check_same_bits(std::vector<float>{1.0f, 0.0f, quiet, all_ones}, want, "v").ok);
  REQUIRE_FALSE(check_same_bits(std::vector<float>{1.0f, -0.0f, payload, all_ones}, want, "v").ok);
  // A slot left as the poison: unwritten, unless the input itself had those bits.
  const auto unwritten =
      check_same_bits(std::vector<float>{1.0f, -0.0f, all_ones, all_ones}, want, "v");
  REQUIRE_FALSE(unwritten.ok);
  REQUIRE(unwritten.message.find("element 2 was never written") != std::string::npos);
  REQUIRE_FALSE(check_same_bits(std::vector<float>{1.0f}, want, "v").ok);
}

TEST_CASE("max_abs_error is the largest elementwise difference over finite references",
          "[compare]") {
  REQUIRE(max_abs_error(std::vector<float>{1.0f, 2.0f}, {1.0, 2.0}) == 0.0);
  REQUIRE(max_abs_error(std::vector<float>{1.5f, 1.0f, 0.0f}, {1.0, 4.0, NAN}) == 3.0);
  REQUIRE(std::isnan(max_abs_error(std::vector<float>{NAN, 1.0f}, {1.0, 4.0})));
}

TEST_CASE("relative_l2_error is the normwise relative error", "[compare]") {
  REQUIRE(relative_l2_error(std::vector<float>{3.0f, 4.0f}, {3.0, 4.0}) == 0.0);
  REQUIRE(relative_l2_error(std::vector<float>{3.0f, 0.0f}, {3.0, 4.0}) == Approx(0.8));
}

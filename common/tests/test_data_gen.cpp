#include "common/catch_compat.hpp"
#include "common/data_gen.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <stdexcept>
#include <vector>

using namespace common;

TEST_CASE("generators are deterministic per seed and differ across seeds", "[data_gen]") {
  REQUIRE(gen::normal(1000, 7) == gen::normal(1000, 7));
  REQUIRE(gen::normal(1000, 7) != gen::normal(1000, 8));
  REQUIRE(gen::uniform(1000, 7) == gen::uniform(1000, 7));
}

TEST_CASE("neighbouring seeds give unrelated streams, not one stream shifted", "[data_gen]") {
  // The tests seed a row with s and what they sprinkle into it with s + 1.
  std::vector<uint64_t> a, b;
  gen::Rng rng_a(7), rng_b(8);
  for (int i = 0; i < 1000; ++i) {
    a.push_back(rng_a.next_u64());
    b.push_back(rng_b.next_u64());
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<uint64_t> shared;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(shared));
  REQUIRE(shared.empty());
}

TEST_CASE("uniform stays in range and normal has the asked moments", "[data_gen]") {
  const auto u = gen::uniform(100000, 1, -2.0f, 3.0f);
  REQUIRE(*std::min_element(u.begin(), u.end()) >= -2.0f);
  REQUIRE(*std::max_element(u.begin(), u.end()) <= 3.0f);  // [lo, hi]: a draw may round up to hi

  const auto x = gen::normal(200000, 2, 5.0f, 2.0f);
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / x.size();
  double var = 0;
  for (float v : x) var += (v - mean) * (v - mean);
  var /= x.size();
  // Standard errors: 2/sqrt(2e5) ~ 0.0045 for the mean, ~0.013 for the variance.
  REQUIRE(std::fabs(mean - 5.0) < 0.03);
  REQUIRE(std::fabs(var - 4.0) < 0.1);
}

TEST_CASE("logits have a heavy right tail", "[data_gen]") {
  const auto x = gen::logits(100000, 3);
  const float top = *std::max_element(x.begin(), x.end());
  // A normal body of std 2 stays below ~10 in 1e5 draws; the tail goes well beyond.
  REQUIRE(top > 15.0f);
}

TEST_CASE("ties use only the asked number of distinct values", "[data_gen]") {
  auto x = gen::ties(10000, 4, 3);
  std::sort(x.begin(), x.end());
  x.erase(std::unique(x.begin(), x.end()), x.end());
  REQUIRE(x == std::vector<float>{0.0f, 1.0f, 2.0f});
  REQUIRE_THROWS_AS(gen::ties(10, 4, 0), std::invalid_argument);
}

TEST_CASE("sprinkle places exactly the asked number of specials", "[data_gen]") {
  auto x = gen::normal(1000, 5);
  gen::sprinkle(x, NAN, 17, 6);
  REQUIRE(std::count_if(x.begin(), x.end(), [](float v) { return std::isnan(v); }) == 17);
}

TEST_CASE("sizes_around brackets every boundary", "[data_gen]") {
  REQUIRE(gen::sizes_around({1, 32}) == std::vector<size_t>{1, 2, 31, 32, 33});
}

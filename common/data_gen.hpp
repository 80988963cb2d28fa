// Deterministic, seeded test and benchmark data. The generator is our own (splitmix64 with
// Box-Muller), so a seed gives the same numbers on every run of a build. Across compilers,
// platforms and maths libraries the bits may differ (std::log and std::cos in normal and
// logits; a contracted multiply-add in uniform_as): the tests compute their references from the
// data they generate, never from stored numbers.
#pragma once

#include "dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace common::gen {

class Rng {
 public:
  // The seed is mixed first: splitmix64 steps its state by a constant, so a state derived
  // linearly from the seed made Rng(s + 1) the stream of Rng(s) one draw later, and data made
  // from neighbouring seeds (a row and the positions sprinkled into it) shared almost every value.
  explicit Rng(uint64_t seed);
  uint64_t next_u64();
  double uniform01();  // [0, 1)
  double normal();     // mean 0, standard deviation 1
  size_t below(size_t bound) { return static_cast<size_t>(uniform01() * static_cast<double>(bound)); }

 private:
  uint64_t state_;
};

// Uniform in [lo, hi]: a draw just below hi can round to hi in float.
std::vector<float> uniform(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f);
std::vector<float> normal(size_t n, uint64_t seed, float mean = 0.0f, float stddev = 1.0f);

// Logit-like: a normal body (std 2) with a heavy right tail, a few values far above the rest,
// as in a language model's output where a handful of tokens are likely.
std::vector<float> logits(size_t n, uint64_t seed);

// Values from a small set {0, 1, ..., distinct - 1}: many exact ties. distinct >= 1, else
// std::invalid_argument.
std::vector<float> ties(size_t n, uint64_t seed, int distinct = 4);

// Uniform values in [lo, hi] generated straight into T, for inputs too large to stage as float
// (hi itself where a draw rounds up to it in T, as in uniform).
template <typename T>
std::vector<T> uniform_as(size_t n, uint64_t seed, float lo, float hi) {
  Rng rng(seed);
  std::vector<T> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = from_float<T>(lo + (hi - lo) * static_cast<float>(rng.uniform01()));
  return out;
}

// Overwrite `count` distinct random positions with `value` (inf, NaN, huge numbers, ...).
void sprinkle(std::vector<float>& values, float value, size_t count, uint64_t seed);

// Each boundary b gives b - 1, b and b + 1 (values below 1 dropped), sorted and unique: the
// sizes around warp, block and vector-width boundaries where off-by-one errors live.
std::vector<size_t> sizes_around(std::initializer_list<size_t> boundaries);

}  // namespace common::gen

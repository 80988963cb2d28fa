#include "data_gen.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_set>

namespace common::gen {

namespace {

// splitmix64's output function: a bijection of 64-bit words that spreads every input bit.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

Rng::Rng(uint64_t seed) : state_(mix64(seed + 0x632BE59BD9B4E019ull)) {}

uint64_t Rng::next_u64() {
  return mix64(state_ += 0x9E3779B97F4A7C15ull);
}

double Rng::uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1p-53; }

double Rng::normal() {
  // Box-Muller; 1 - u keeps the logarithm's argument in (0, 1].
  const double u = 1.0 - uniform01();
  const double v = uniform01();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
}

std::vector<float> uniform(size_t n, uint64_t seed, float lo, float hi) {
  Rng rng(seed);
  std::vector<float> out(n);
  for (auto& x : out) x = static_cast<float>(lo + (hi - lo) * rng.uniform01());
  return out;
}

std::vector<float> normal(size_t n, uint64_t seed, float mean, float stddev) {
  Rng rng(seed);
  std::vector<float> out(n);
  for (auto& x : out) x = static_cast<float>(mean + stddev * rng.normal());
  return out;
}

std::vector<float> logits(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> out(n);
  for (auto& x : out) {
    double v = 2.0 * rng.normal();
    // About one value in a thousand gets an exponential boost of mean 10: the tail.
    if (rng.uniform01() < 1e-3) v += -10.0 * std::log(1.0 - rng.uniform01());
    x = static_cast<float>(v);
  }
  return out;
}

std::vector<float> ties(size_t n, uint64_t seed, int distinct) {
  if (distinct < 1) throw std::invalid_argument("ties: distinct must be >= 1");
  Rng rng(seed);
  std::vector<float> out(n);
  for (auto& x : out) x = static_cast<float>(rng.below(static_cast<size_t>(distinct)));
  return out;
}

void sprinkle(std::vector<float>& values, float value, size_t count, uint64_t seed) {
  Rng rng(seed);
  count = std::min(count, values.size());
  std::unordered_set<size_t> chosen;
  while (chosen.size() < count) chosen.insert(rng.below(values.size()));
  for (size_t i : chosen) values[i] = value;
}

std::vector<size_t> sizes_around(std::initializer_list<size_t> boundaries) {
  std::vector<size_t> sizes;
  for (size_t b : boundaries) {
    if (b > 1) sizes.push_back(b - 1);
    if (b > 0) sizes.push_back(b);
    sizes.push_back(b + 1);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

}  // namespace common::gen

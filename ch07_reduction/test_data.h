// Test inputs of chapter 7 beyond the common generators.
#pragma once

#include "common/data_gen.hpp"

#include <vector>

namespace data {

// Uniform [0, 1) with 10^5 at the first and last positions: any kernel that skips the head or
// the tail misses far more than the error bound allows (check::sum_error_bound with sum |x| of
// about n / 2: at n = 2^24, about 80 for a tree on a GPU of 132 SMs and 1.3e4 for the atomic
// version's probabilistic bound).
inline std::vector<float> with_large_edges(size_t n, uint64_t seed) {
  std::vector<float> x = common::gen::uniform(n, seed, 0.0f, 1.0f);
  if (n > 0) x.front() = 1.0e5f;
  if (n > 0) x.back() = 1.0e5f;
  return x;
}

}  // namespace data

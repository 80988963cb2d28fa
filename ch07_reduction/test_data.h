// Test inputs of chapter 7 beyond the common generators.
#pragma once

#include "common/data_gen.hpp"

#include <vector>

namespace data {

// Uniform [0, 1) with 10^4 at the first and last positions: any kernel that skips the head or
// the tail misses far more than the error bound allows (at n = 2^24 about 80 on a GPU of 132
// SMs: check::sum_error_bound with sum |x| of about n / 2).
inline std::vector<float> with_large_edges(size_t n, uint64_t seed) {
  std::vector<float> x = common::gen::uniform(n, seed, 0.0f, 1.0f);
  if (n > 0) x.front() = 1.0e4f;
  if (n > 0) x.back() = 1.0e4f;
  return x;
}

}  // namespace data

// Chapter 7's CPU reference: sums accumulate in double, so the reference's own error (at most
// about n * 2^-53 relative to sum |x|) is far below any float kernel's.
#pragma once

#include <cstdint>
#include <vector>

namespace cpu_ref {

template <typename T>
double sum(const std::vector<T>& x);
template <typename T>
double sum_abs(const std::vector<T>& x);
// NaN-propagating maximum; -inf for the empty input.
double max(const std::vector<float>& x);

// The loop a first attempt writes: a float accumulator. It is no reference: once the running
// sum is large, each addend loses its low bits (16777216.0f + 1.0f == 16777216.0f).
float naive_float_sum(const std::vector<float>& x);

}  // namespace cpu_ref

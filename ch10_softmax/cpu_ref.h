// Chapter 10's CPU reference, in double: the truth every kernel is checked against. The inputs
// are the values the GPU reads (common::widen of the device data), so only the kernels round.
#pragma once

#include <cstdint>
#include <vector>

namespace cpu_ref {

// Row-wise over a row-major [rows, cols] matrix, with the semantics of softmax.h: a row with a
// NaN or a +inf, or with nothing but -inf, is all NaN; -inf entries of other rows give 0
// (log_softmax: -inf).
std::vector<double> softmax(const std::vector<double>& x, int64_t rows, int64_t cols);
std::vector<double> log_softmax(const std::vector<double>& x, int64_t rows, int64_t cols);

// dx = y * (dy - sum_j dy_j * y_j) per row.
std::vector<double> softmax_backward(const std::vector<double>& y, const std::vector<double>& dy,
                                     int64_t rows, int64_t cols);

}  // namespace cpu_ref

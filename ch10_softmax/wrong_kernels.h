// Deliberately wrong softmax kernels (test-only code). Each has a bug a student might write; the
// checker must reject every one of them, or a passing test would prove nothing.
#pragma once

#include "check.h"

#include <cuda_bf16.h>

namespace wrong {

check::ForwardRun<float> writes_zero();                // never computes: y = 0
check::ForwardRun<float> skips_max_subtraction();      // exp(x) / sum exp(x): overflows at x > 88
check::ForwardRun<float> misses_cross_warp_merge();    // each warp normalises by its own sum
check::ForwardRun<float> drops_last_column();          // off-by-one: j < cols - 1
check::ForwardRun<float>
stats_miss_last_column();  // writes every column; its (max, sum) skips the last
check::ForwardRun<float> writes_past_row();            // right values, plus y[row][cols]
check::ForwardRun<float> merge_without_empty_guard();  // exp(-inf - -inf) = NaN in the merge
check::ForwardRun<__nv_bfloat16> sums_in_bf16();       // accumulates the sum in the I/O type
check::ForwardRun<float> wraps_offsets_at_32_bits();   // int row * cols

// The backward, dx = y * (dy - sum(y * dy)), block per row: the control, then one bug each.
check::BackwardRun<float> backward_control();
check::BackwardRun<float> backward_misses_cross_warp_dot();  // each warp uses its own dot
check::BackwardRun<float> backward_dot_not_scaled();         // dx = y * dy - dot
check::BackwardRun<float> backward_drops_last_column();      // dx left unwritten at j = cols - 1

}  // namespace wrong

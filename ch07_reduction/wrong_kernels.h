// Deliberately wrong reductions (test-only code). Each has a bug a student might write; the
// checker must reject every one of them, or a passing test would prove nothing.
#pragma once

#include "check.h"

#include <cuda_bf16.h>

#include <vector>

namespace wrong {

check::Reduction<float> writes_zero();              // never sums: out = 0
check::Reduction<float> misses_cross_warp_step();   // keeps warp 0's sum, drops the other warps'
check::Reduction<float> drops_last_element();       // off-by-one tail: i < n - 1
check::Reduction<float> drops_middle_element();     // skips x[n / 2]: inside any bound at large n
check::Reduction<float> drops_unaligned_head();     // starts at the first 16-byte boundary
check::Reduction<float> reads_past_input();         // off-by-one the other way: i <= n
check::Reduction<float> writes_past_output();       // right sum, but also stores to out[1]
check::Reduction<float> max_ignores_nan();          // fmaxf drops NaN instead of propagating it
check::Reduction<__nv_bfloat16> accumulates_in_bf16();  // running sums rounded to bf16
check::Reduction<float> order_dependent_finish();   // adds block results in finishing order
check::Reduction<float> keeps_its_counter();        // last block done, counter never reset
check::Reduction<float> resets_its_counter();       // the same, counter reset: the control
check::Reduction<float> asks_too_little_workspace();  // the control, its last block sum past the
                                                      // workspace it asks for

}  // namespace wrong

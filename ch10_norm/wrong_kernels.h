// Deliberately wrong normalizations (test-only code). Each has a bug a student might write; the
// checker must reject every one of them, or a passing test would prove nothing. Each has a
// control, the same kernel without the bug (Bug::None, the *_control functions): the checker
// must accept it, or it rejects everything.
#pragma once

#include "check.h"

#include <cuda_bf16.h>

namespace wrong {

enum class Bug {
  None,                  // the control: a plain two-pass kernel
  WritesZeros,           // y = 0, mean = 0, rstd = 0: never normalizes
  MissesCrossWarpMerge,  // each warp uses its own partial statistics; no merge across warps
  DropsLastElement,      // off-by-one tail: statistics over i < n − 1
  OnePassVariance,       // var = E[x²] − E[x]² in float: fine on centred data, not with a mean
  NoEps,                 // rstd = rsqrt(var): a constant row divides by zero
  HardCodesEps,          // rstd = rsqrt(var + 1e-5f), whatever eps the caller passes
  WritesPastRow,         // right values, plus one store past the end of the last row
};
const char* bug_name(Bug bug);

check::LayerNormRun<float> layernorm(Bug bug);
// Statistics accumulated in bf16 instead of float: each addition rounds to 8 bits. The control
// accumulates in float.
check::LayerNormRun<__nv_bfloat16> layernorm_bf16_statistics();
check::LayerNormRun<__nv_bfloat16> layernorm_bf16_control();
// y converted to bf16 by truncation (__float2bfloat16_rz) instead of rounding to nearest; the
// control is layernorm_bf16_control.
check::LayerNormRun<__nv_bfloat16> layernorm_bf16_truncates();
// RMSNorm that forgets γ, and the same kernel with γ.
check::RmsNormRun<float> rmsnorm_ignores_gamma();
check::RmsNormRun<float> rmsnorm_control();
// The fused add that normalizes x + residual but never writes it back to `residual`, and the
// same kernel with the write-back.
check::AddRmsNormRun<float> add_rmsnorm_forgets_residual();
check::AddRmsNormRun<float> add_rmsnorm_control();

}  // namespace wrong

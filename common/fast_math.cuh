// Exponentials for memory-bound kernels, where every instruction per element counts.
#pragma once

namespace common {

constexpr float kLog2E = 1.44269504088896341f;

// 2^x in one instruction (MUFU.EX2), results below 2^-126 flushed to zero.
__device__ __forceinline__ float exp2_flush_denormals(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// e^x in two instructions (a multiply and MUFU.EX2), results below 2^-126 flushed to zero.
// __expf keeps such denormal results, which costs four more instructions per element. Where the
// largest term of a sum is exp(0) = 1, a flushed term changes no sum, and a flushed output is off
// by less than 2^-126 in absolute terms.
__device__ __forceinline__ float exp_flush_denormals(float x) {
  return exp2_flush_denormals(x * kLog2E);
}

}  // namespace common

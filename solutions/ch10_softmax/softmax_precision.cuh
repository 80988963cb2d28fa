// Reduced-precision I/O (version 8): half and bf16 travel through memory, float does the work.
// Every kernel of the chapter reads with to_compute and writes with from_compute, so this one
// place decides the precision rules:
//   - exp and every sum run in float: a half sum of 2048 ones stalls at 2048 already, and the
//     exponent range of half would overflow exp(x) at x = 11.1;
//   - the result is rounded once, to nearest even, when it is stored.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace softmax::detail {

__device__ __forceinline__ float to_compute(float v) {
  return v;
}

template <typename T>
__device__ __forceinline__ T from_compute(float v);
template <>
__device__ __forceinline__ float from_compute<float>(float v) {
  return v;
}

// TODO 8 (about 4 lines; checked by [ch10_softmax][reduced_precision]):
//   Replace the bodies of the four stubs below with one return each: to_compute for __half and
//   __nv_bfloat16 widens to float (exact: every half and bf16 value is a float), and
//   from_compute<__half> / from_compute<__nv_bfloat16> round a float to nearest even.
//   cuda_fp16.h and cuda_bf16.h have one intrinsic for each direction; pick the _rn ones for
//   rounding. Never compute in half: only these four functions touch the reduced types.
// BEGIN TODO 8
__device__ __forceinline__ float to_compute(__half v) {
  return __half2float(v);
}
__device__ __forceinline__ float to_compute(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <>
__device__ __forceinline__ __half from_compute<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_compute<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
// END TODO 8

}  // namespace softmax::detail

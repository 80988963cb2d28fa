// The bit patterns of the chapters' element types on the device, and back: register moves that
// keep every bit (a NaN's sign and payload, -0.0), where a conversion would not. half and bf16
// use the low 16 bits of the word. On the host, dtype.hpp's from_bits16 does the same.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace common {

__device__ __forceinline__ uint32_t to_bits(float v) {
  return __float_as_uint(v);
}
__device__ __forceinline__ uint32_t to_bits(__half v) {
  return __half_as_ushort(v);
}
__device__ __forceinline__ uint32_t to_bits(__nv_bfloat16 v) {
  return __bfloat16_as_ushort(v);
}

template <typename T>
__device__ __forceinline__ T from_bits(uint32_t bits);
template <>
__device__ __forceinline__ float from_bits<float>(uint32_t bits) {
  return __uint_as_float(bits);
}
template <>
__device__ __forceinline__ __half from_bits<__half>(uint32_t bits) {
  return __ushort_as_half(static_cast<unsigned short>(bits));
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_bits<__nv_bfloat16>(uint32_t bits) {
  return __ushort_as_bfloat16(static_cast<unsigned short>(bits));
}

}  // namespace common

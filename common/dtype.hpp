// The element types of the chapters (float, half, bf16) seen from host code: names, rounding and
// conversions, so that a new dtype is a template argument rather than a copied function.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace common {

template <typename T>
struct DType;

template <>
struct DType<float> {
  static constexpr const char* name = "fp32";
  static constexpr double unit_roundoff = 0x1p-24;  // half an ulp of 1.0
};
template <>
struct DType<__half> {
  static constexpr const char* name = "fp16";
  static constexpr double unit_roundoff = 0x1p-11;
};
template <>
struct DType<__nv_bfloat16> {
  static constexpr const char* name = "bf16";
  static constexpr double unit_roundoff = 0x1p-8;
};

// Host and device: kernels widen with these too (the conversions are exact; rounding back is to
// nearest even).
__host__ __device__ inline float to_float(float v) { return v; }
__host__ __device__ inline float to_float(__half v) { return __half2float(v); }
__host__ __device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__host__ __device__ T from_float(float v);
template <>
__host__ __device__ inline float from_float<float>(float v) { return v; }
template <>
__host__ __device__ inline __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__host__ __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// A half or bf16 value from its bit pattern, on the host: a NaN's sign and payload survive, where
// converting a float NaN gives the one canonical NaN.
template <typename T>
T from_bits16(uint16_t bits) {
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>);
  std::conditional_t<std::is_same_v<T, __half>, __half_raw, __nv_bfloat16_raw> raw;
  raw.x = bits;
  return T(raw);
}

// Round every value to T (what the GPU will read), e.g. to build a bf16 input from fp32 data.
template <typename T>
std::vector<T> convert(const std::vector<float>& values) {
  std::vector<T> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = from_float<T>(values[i]);
  return out;
}

// The values T holds, widened to double: the input a CPU reference must use.
template <typename T>
std::vector<double> widen(const std::vector<T>& values) {
  std::vector<double> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<double>(to_float(values[i]));
  return out;
}

}  // namespace common

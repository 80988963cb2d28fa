// 16-byte loads and stores, and the arithmetic to reach a 16-byte boundary from any pointer.
// One 16-byte access per thread per request is what lets a warp move 512 bytes per instruction.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace common {

// 16 bytes of T: 4 floats, or 8 halfs / bf16s.
template <typename T>
struct alignas(16) Pack {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

// Read-only load through the non-coherent path; `p` must be 16-byte aligned. The data must not
// change while the kernel may still read it; a kernel writing in place (y == x) may use it when
// every thread reads its elements before anyone writes them.
template <typename T>
__device__ __forceinline__ Pack<T> load_pack(const T* p) {
  Pack<T> pack;
  *reinterpret_cast<int4*>(&pack) = __ldg(reinterpret_cast<const int4*>(p));
  return pack;
}

// Load for data read exactly once: evict-first, so it does not push out data that is reused.
template <typename T>
__device__ __forceinline__ Pack<T> load_pack_streaming(const T* p) {
  Pack<T> pack;
  *reinterpret_cast<int4*>(&pack) = __ldcs(reinterpret_cast<const int4*>(p));
  return pack;
}

template <typename T>
__device__ __forceinline__ void store_pack(T* p, const Pack<T>& pack) {
  *reinterpret_cast<int4*>(p) = *reinterpret_cast<const int4*>(&pack);
}

// Store of data nothing reads again soon: evict-first in L2, so it does not push out what is.
template <typename T>
__device__ __forceinline__ void store_pack_streaming(T* p, const Pack<T>& pack) {
  __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&pack));
}

// The values of a pack widened to float, and floats rounded (to nearest even) into a pack. Half
// and bf16 packs are handled as four 32-bit pairs: the pack stays in 4 registers, and a pair is
// widened or narrowed by one or two instructions (a bf16 is the high half of a float: a shift or
// a mask) instead of being split into 8 registers first.
template <typename T>
__device__ __forceinline__ void widen(const Pack<T>& pack, float (&out)[Pack<T>::kSize]) {
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int e = 0; e < Pack<T>::kSize; ++e)
      out[e] = static_cast<float>(pack.v[e]);
  } else {
    uint32_t words[4];
    memcpy(words, &pack, sizeof(words));
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        out[2 * i] = __uint_as_float(words[i] << 16);
        out[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
      } else {
        __half2 pair;
        memcpy(&pair, &words[i], sizeof(pair));
        const float2 f = __half22float2(pair);
        out[2 * i] = f.x;
        out[2 * i + 1] = f.y;
      }
    }
  }
}

template <typename T>
__device__ __forceinline__ Pack<T> narrow(const float (&in)[Pack<T>::kSize]) {
  Pack<T> pack;
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int e = 0; e < Pack<T>::kSize; ++e)
      pack.v[e] = in[e];
  } else {
    uint32_t words[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        const __nv_bfloat162 pair = __floats2bfloat162_rn(in[2 * i], in[2 * i + 1]);
        memcpy(&words[i], &pair, sizeof(pair));
      } else {
        const __half2 pair = __floats2half2_rn(in[2 * i], in[2 * i + 1]);
        memcpy(&words[i], &pair, sizeof(pair));
      }
    }
    memcpy(&pack, words, sizeof(words));
  }
  return pack;
}

// Elements before the first 16-byte boundary at or after `p`, at most n. Arrays of T are
// always sizeof(T)-aligned, so the count is exact.
template <typename T>
__host__ __device__ __forceinline__ int64_t elements_to_alignment(const T* p, int64_t n) {
  const auto misalignment = static_cast<int64_t>(reinterpret_cast<uintptr_t>(p) % 16);
  const int64_t head =
      misalignment == 0 ? 0 : (16 - misalignment) / static_cast<int64_t>(sizeof(T));
  return head < n ? head : n;
}

}  // namespace common

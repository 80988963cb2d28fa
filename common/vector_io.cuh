// 16-byte loads and stores, and the arithmetic to reach a 16-byte boundary from any pointer.
// One 16-byte access per thread per request is what lets a warp move 512 bytes per instruction.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace common {

// 16 bytes of T: 4 floats, or 8 halfs / bf16s.
template <typename T>
struct alignas(16) Pack {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

// Read-only load through the non-coherent path; `p` must be 16-byte aligned.
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

// Elements before the first 16-byte boundary at or after `p`, at most n. Arrays of T are
// always sizeof(T)-aligned, so the count is exact.
template <typename T>
__host__ __device__ __forceinline__ int64_t elements_to_alignment(const T* p, int64_t n) {
  const auto misalignment = static_cast<int64_t>(reinterpret_cast<uintptr_t>(p) % 16);
  const int64_t head = misalignment == 0 ? 0 : (16 - misalignment) / static_cast<int64_t>(sizeof(T));
  return head < n ? head : n;
}

}  // namespace common

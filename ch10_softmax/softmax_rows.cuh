// Device building blocks shared by the kernels of chapter 10: row windows for 16-byte access at
// any alignment, per-pack math, reductions over part of a warp, and the last step of a row.
//
// Include softmax_precision.cuh first, from the including file's own folder: the skeleton and the
// solution each have their own (it holds TODO 8), and an #include here would always find the
// skeleton's, next to this file.
#pragma once

#include "common/block_reduce.cuh"
#include "common/vector_io.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace softmax::detail {

template <typename T>
constexpr int kPackSize = common::Pack<T>::kSize;  // elements per 16 bytes: 4 float, 8 half

// -inf in T, written as bits so that no conversion (and no TODO) stands between a kernel and
// its padding value.
template <typename T>
__device__ __forceinline__ T negative_infinity();
template <>
__device__ __forceinline__ float negative_infinity<float>() {
  return -INFINITY;
}
template <>
__device__ __forceinline__ __half negative_infinity<__half>() {
  return __ushort_as_half(0xFC00);
}
template <>
__device__ __forceinline__ __nv_bfloat16 negative_infinity<__nv_bfloat16>() {
  return __ushort_as_bfloat16(0xFF80);
}

// A row seen as 16-byte windows of memory. The first window starts at the 16-byte boundary at
// or before the row, so every window can be one 16-byte access; the first and the last may
// hang over the row's ends, and those elements are never touched in memory. Rows of a matrix
// with cols * sizeof(T) not a multiple of 16 each start at a different offset: each row
// computes its own layout.
struct RowWindows {
  int head;       // elements of the first window that lie before the row
  int64_t count;  // windows that cover the row
};

template <typename T>
__device__ __forceinline__ RowWindows row_windows(const T* row, int64_t cols) {
  const int head = static_cast<int>((reinterpret_cast<uintptr_t>(row) % 16) / sizeof(T));
  return {head, (head + cols + kPackSize<T> - 1) / kPackSize<T>};
}

// 16 bytes of a row held in four 32-bit registers. Elements are taken out with shifts, never
// through memory: eight 2-byte values addressed one by one would put the whole register cache
// in local memory (common::Pack does that for half and bf16, so the kernels use this instead).
template <typename T>
struct Window {
  uint32_t word[4];
};

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

// Element i of a window (i a compile-time constant after unrolling).
template <typename T>
__device__ __forceinline__ T window_get(const Window<T>& w, int i) {
  constexpr int kPerWord = 4 / sizeof(T);
  if constexpr (kPerWord == 1) {
    return from_bits<T>(w.word[i]);
  } else {
    return from_bits<T>((w.word[i / kPerWord] >> (16 * (i % kPerWord))) & 0xFFFFu);
  }
}

template <typename T>
__device__ __forceinline__ void window_set(Window<T>& w, int i, T value) {
  constexpr int kPerWord = 4 / sizeof(T);
  if constexpr (kPerWord == 1) {
    w.word[i] = to_bits(value);
  } else {
    const int shift = 16 * (i % kPerWord);
    uint32_t& word = w.word[i / kPerWord];
    word = (word & ~(0xFFFFu << shift)) | (to_bits(value) << shift);
  }
}

template <typename T>
__device__ __forceinline__ Window<T> fill_pack(T fill) {
  const uint32_t bits = sizeof(T) == 4 ? to_bits(fill) : to_bits(fill) * 0x10001u;
  return {{bits, bits, bits, bits}};
}

// Window `w` of a row laid out by `layout`; elements outside [0, cols) read as `fill`.
// `vector_ok`: this row's 16-byte boundaries fall where the layout's do (true for the row the
// layout was computed from; for a second input, when both pointers differ by a multiple of 16
// bytes). The full windows of a long row take the one 16-byte load; the rest go element by
// element. Streaming loads (ld.global.cs): every byte is read once, and it should not evict what
// is reused; unlike the read-only path they stay correct when y == x.
template <typename T>
__device__ __forceinline__ Window<T> load_window(const T* row, int64_t cols, RowWindows layout,
                                                 int64_t w, T fill, bool vector_ok) {
  const int64_t first = w * kPackSize<T> - layout.head;
  if (vector_ok && first >= 0 && first + kPackSize<T> <= cols) {
    const int4 v = __ldcs(reinterpret_cast<const int4*>(row + first));
    return {{static_cast<uint32_t>(v.x), static_cast<uint32_t>(v.y), static_cast<uint32_t>(v.z),
             static_cast<uint32_t>(v.w)}};
  }
  Window<T> window = fill_pack(fill);
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i) {
    const int64_t j = first + i;
    if (j >= 0 && j < cols) window_set(window, i, row[j]);
  }
  return window;
}

// Stores window `w`; elements outside [0, cols) are not written.
template <typename T>
__device__ __forceinline__ void store_window(T* row, int64_t cols, RowWindows layout, int64_t w,
                                             const Window<T>& window, bool vector_ok) {
  const int64_t first = w * kPackSize<T> - layout.head;
  if (vector_ok && first >= 0 && first + kPackSize<T> <= cols) {
    *reinterpret_cast<int4*>(row + first) =
        make_int4(static_cast<int>(window.word[0]), static_cast<int>(window.word[1]),
                  static_cast<int>(window.word[2]), static_cast<int>(window.word[3]));
    return;
  }
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i) {
    const int64_t j = first + i;
    if (j >= 0 && j < cols) row[j] = window_get(window, i);
  }
}

// The register cache of the fast kernels: each window widened to float once, as it arrives.
// Every later pass (max, exp and sum, write) works on these floats: one conversion per element
// instead of one per pass, which matters for half and bf16 (twice the elements per byte).
template <typename T>
using Floats = float[kPackSize<T>];

template <typename T>
__device__ __forceinline__ void widen(const Window<T>& window, Floats<T>& out) {
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i)
    out[i] = to_compute(window_get(window, i));
}

template <typename T>
__device__ __forceinline__ Window<T> narrow(const Floats<T>& in) {
  Window<T> window;
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i)
    window_set(window, i, from_compute<T>(in[i]));
  return window;
}

// Floats per thread a block of `threads` can afford without spilling: 64K registers per SM.
constexpr int max_threads_for_floats(int floats_per_thread) {
  return floats_per_thread <= 16   ? 1024
         : floats_per_thread <= 32 ? 512
         : floats_per_thread <= 64 ? 256
                                   : 128;
}

// Maximum of a window. fmaxf drops NaN, and that is enough here: a NaN (or a +inf, through
// inf - inf) still reaches the sum of exponentials, which makes the whole row NaN.
template <typename T>
__device__ __forceinline__ float floats_max(const Floats<T>& v, float running) {
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i)
    running = fmaxf(running, v[i]);
  return running;
}

// The exponent shift for a set whose maximum is m: m itself, except that a set with nothing
// but -inf (or nothing at all) shifts by 0, so that its sum is exp(-inf) = 0 and not
// exp(-inf - -inf) = NaN. This is how a thread, a warp or a block that sees only masked values
// contributes the empty pair {-inf, 0} instead of poisoning the merge.
__device__ __forceinline__ float exp_shift(float m) {
  return m == -INFINITY ? 0.0f : m;
}

// Adds exp(v - shift) to the running sum; for softmax (not log_softmax) the exponentials replace
// the inputs in the cache, so the write multiplies instead of computing exp again.
template <typename T>
__device__ __forceinline__ float floats_sum_exp(Floats<T>& v, float shift, bool keep_inputs,
                                                float running) {
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i) {
    const float e = __expf(v[i] - shift);
    running += e;
    if (!keep_inputs) v[i] = e;
  }
  return running;
}

// What the last step of a row needs, from the row's (max, sum) pair.
struct RowStats {
  float max;
  float inv_sum;  // one division per row, one multiplication per element
  float log_sum;
};

__device__ __forceinline__ RowStats row_stats(common::MaxSum pair) {
  // __fdividef: an IEEE division would pull in a slow-path subroutine for one value per row.
  return {pair.max, __fdividef(1.0f, pair.sum), logf(pair.sum)};
}

// softmax: exp(x - m) / l; log_softmax: x - m - log(l). An all -inf row has m = -inf and
// l = 0: x - m is NaN, and so is the whole row (documented in softmax.h).
__device__ __forceinline__ float finish(float x, const RowStats& stats, bool log_softmax) {
  return log_softmax ? (x - stats.max) - stats.log_sum : __expf(x - stats.max) * stats.inv_sum;
}

// The write of the cached kernels. softmax: the cache holds e = exp(x - s) for the shift s the
// cache's owner used (its own maximum, or 0 if it saw only -inf); y = e * exp(s - m) / l.
// `scale` = exp(s - m) / l, from cached_scale. log_softmax: the cache holds x.
template <typename T>
__device__ __forceinline__ Window<T> finish_floats(const Floats<T>& v, const RowStats& stats,
                                                   float scale, bool log_softmax) {
  Floats<T> out;
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i)
    out[i] = log_softmax ? (v[i] - stats.max) - stats.log_sum : v[i] * scale;
  return narrow<T>(out);
}

// exp(s - m) / l for a cache whose maximum was `own_max` (shifted by exp_shift(own_max)), in a
// row with statistics `stats`. A cache that saw only -inf holds zeros: 0 * inv_sum is 0 in a
// good row and NaN in a row that is NaN (l NaN or l = 0), never exp(0 - m) * ..., which would
// overflow for m < -88.
__device__ __forceinline__ float cached_scale(float own_max, const RowStats& stats) {
  return own_max == -INFINITY ? 0.0f * stats.inv_sum : __expf(own_max - stats.max) * stats.inv_sum;
}

// Butterfly over groups of kLanes consecutive lanes (a power of two up to 32): every lane of a
// group ends with the group's result. All 32 lanes must call it (full-mask shuffles).
template <int kLanes, typename V, typename Op>
__device__ __forceinline__ V group_reduce(V value, Op op) {
  static_assert(kLanes >= 1 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0, "power of two");
#pragma unroll
  for (int mask = kLanes / 2; mask > 0; mask /= 2)
    value = op(value, common::shfl_xor(value, mask));
  return value;
}

}  // namespace softmax::detail

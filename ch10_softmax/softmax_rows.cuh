// Device building blocks shared by the kernels of chapter 10: row windows for 16-byte access at
// any alignment, per-pack math, reductions over part of a warp, and the last step of a row.
//
// Include softmax_precision.cuh first, from the including file's own folder: the skeleton and the
// solution each have their own (it holds TODO 8), and an #include here would always find the
// skeleton's, next to this file.
#pragma once

#include "common/bits.cuh"
#include "common/block_reduce.cuh"
#include "common/fast_math.cuh"
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
// The rows laid out this way are the ones a register cache holds (at most 16 blocks of 4096
// windows) and those of version 5b and the backward's reread kernel, which take rows of at most
// kRereadRowCapacity = 2^30 elements: all below 2^31, so positions inside a row are 32-bit,
// which takes half the registers and instructions of 64-bit arithmetic.
struct RowWindows {
  int head;   // elements of the first window that lie before the row
  int count;  // windows that cover the row
};

template <typename T>
__device__ __forceinline__ RowWindows row_windows(const T* row, int64_t cols) {
  const int head = static_cast<int>((reinterpret_cast<uintptr_t>(row) % 16) / sizeof(T));
  return {head, (head + static_cast<int>(cols) + kPackSize<T> - 1) / kPackSize<T>};
}

// The layout of a row that starts on a 16-byte boundary and fills whole windows (cols a
// multiple of the pack): when every row of x and of y is like that, the kernels take an instance
// that knows it at compile time, with no head to subtract, no partial window to test and no
// element-by-element path: fewer instructions and fewer registers (README, section 3).
struct AlignedRowWindows {
  static constexpr int head = 0;
  int count;
};

template <typename T>
__device__ __forceinline__ AlignedRowWindows aligned_row_windows(int64_t cols) {
  return {static_cast<int>(cols) / kPackSize<T>};
}

// row_windows or aligned_row_windows, as the kernel instance was chosen.
template <bool kAligned, typename T>
__device__ __forceinline__ auto row_layout(const T* row, int64_t cols) {
  if constexpr (kAligned)
    return aligned_row_windows<T>(cols);
  else
    return row_windows(row, cols);
}

// Whether a matrix's rows all have the aligned layout, in every tensor given.
template <typename T, typename... Pointers>
bool rows_aligned(int64_t cols, const Pointers*... tensors) {
  return (cols * static_cast<int64_t>(sizeof(T))) % 16 == 0 &&
         ((reinterpret_cast<uintptr_t>(tensors) % 16 == 0) && ...);
}

// The most windows a row of x needs: every row starts on a 16-byte boundary when the matrix does
// and a row is a whole number of windows; otherwise a row may need one window more than cols
// fill. Launchers size blocks and clusters with it.
template <typename T>
int64_t max_windows_per_row(const T* x, int64_t cols) {
  return (cols + kPackSize<T> - 1) / kPackSize<T> + (rows_aligned<T>(cols, x) ? 0 : 1);
}

// 16 bytes of a row held in four 32-bit registers. Elements are taken out with shifts, never
// through memory: eight 2-byte values addressed one by one would put the whole register cache
// in local memory (common::Pack does that for half and bf16, so the kernels use this instead).
template <typename T>
struct Window {
  uint32_t word[4];
};

// Element i of a window (i a compile-time constant after unrolling).
template <typename T>
__device__ __forceinline__ T window_get(const Window<T>& w, int i) {
  constexpr int kPerWord = 4 / sizeof(T);
  if constexpr (kPerWord == 1) {
    return common::from_bits<T>(w.word[i]);
  } else {
    return common::from_bits<T>((w.word[i / kPerWord] >> (16 * (i % kPerWord))) & 0xFFFFu);
  }
}

template <typename T>
__device__ __forceinline__ void window_set(Window<T>& w, int i, T value) {
  constexpr int kPerWord = 4 / sizeof(T);
  if constexpr (kPerWord == 1) {
    w.word[i] = common::to_bits(value);
  } else {
    const int shift = 16 * (i % kPerWord);
    uint32_t& word = w.word[i / kPerWord];
    word = (word & ~(0xFFFFu << shift)) | (common::to_bits(value) << shift);
  }
}

template <typename T>
__device__ __forceinline__ Window<T> fill_pack(T fill) {
  const uint32_t bits = sizeof(T) == 4 ? common::to_bits(fill) : common::to_bits(fill) * 0x10001u;
  return {{bits, bits, bits, bits}};
}

// Whether a load is the last read of its bytes (Reuse::Once) or will be read again soon
// (Reuse::Again, version 5b's first pass: its rows are read a second time from cache).
enum class Reuse { Once, Again };

// One whole window at a 16-byte boundary. Read once: a streaming load (ld.global.cs), which
// should not evict what is reused; read again: a plain load, kept in L1 and L2. Unlike the
// read-only path both stay correct when y == x.
template <typename T>
__device__ __forceinline__ Window<T> load_whole_window(const int4* at, Reuse reuse = Reuse::Once) {
  const int4 v = reuse == Reuse::Once ? __ldcs(at) : *at;
  return {{static_cast<uint32_t>(v.x), static_cast<uint32_t>(v.y), static_cast<uint32_t>(v.z),
           static_cast<uint32_t>(v.w)}};
}

// A store of output that nothing reads again soon may be marked Reuse::Once: a streaming store
// (st.global.cs), whose lines L2 evicts first, so that the output does not push out input rows
// waiting for their second read (version 5b). The default is a plain store.
template <typename T>
__device__ __forceinline__ void store_whole_window(int4* at, const Window<T>& window,
                                                   Reuse reuse = Reuse::Again) {
  const int4 v = make_int4(static_cast<int>(window.word[0]), static_cast<int>(window.word[1]),
                           static_cast<int>(window.word[2]), static_cast<int>(window.word[3]));
  if (reuse == Reuse::Once)
    __stcs(at, v);
  else
    *at = v;
}

// Window `w` of a row laid out by `layout`; elements outside [0, cols) read as `fill`.
// `vector_ok`: this row's 16-byte boundaries fall where the layout's do (true for the row the
// layout was computed from; for a second input, when both pointers differ by a multiple of 16
// bytes). The full windows of a long row take the one 16-byte load; the rest go element by
// element.
template <typename T>
__device__ __forceinline__ Window<T> load_window(const T* row, int64_t cols, RowWindows layout,
                                                 int64_t w, T fill, bool vector_ok,
                                                 Reuse reuse = Reuse::Once) {
  const int n = static_cast<int>(cols);
  const int first = static_cast<int>(w) * kPackSize<T> - layout.head;
  if (vector_ok && first >= 0 && first + kPackSize<T> <= n)
    return load_whole_window<T>(reinterpret_cast<const int4*>(row + first), reuse);
  Window<T> window = fill_pack(fill);
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i) {
    const int j = first + i;
    if (j >= 0 && j < n) window_set(window, i, row[j]);
  }
  return window;
}

// Window `w` of an aligned row: always one whole 16-byte load. Unlike the general overload it
// has no elements outside the row to pad: w must be below layout.count (the kernels' w < end).
template <typename T>
__device__ __forceinline__ Window<T> load_window(const T* row, int64_t /*cols*/,
                                                 AlignedRowWindows /*layout*/, int64_t w,
                                                 T /*fill*/, bool /*vector_ok*/,
                                                 Reuse reuse = Reuse::Once) {
  return load_whole_window<T>(reinterpret_cast<const int4*>(row) + static_cast<int>(w), reuse);
}

// Stores window `w`; elements outside [0, cols) are not written.
template <typename T>
__device__ __forceinline__ void store_window(T* row, int64_t cols, RowWindows layout, int64_t w,
                                             const Window<T>& window, bool vector_ok,
                                             Reuse reuse = Reuse::Again) {
  const int n = static_cast<int>(cols);
  const int first = static_cast<int>(w) * kPackSize<T> - layout.head;
  if (vector_ok && first >= 0 && first + kPackSize<T> <= n) {
    store_whole_window(reinterpret_cast<int4*>(row + first), window, reuse);
    return;
  }
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i) {
    const int j = first + i;
    if (j >= 0 && j < n) row[j] = window_get(window, i);
  }
}

// Window `w` of an aligned row: always one whole 16-byte store; w below layout.count.
template <typename T>
__device__ __forceinline__ void store_window(T* row, int64_t /*cols*/, AlignedRowWindows /*layout*/,
                                             int64_t w, const Window<T>& window, bool /*vector_ok*/,
                                             Reuse reuse = Reuse::Again) {
  store_whole_window(reinterpret_cast<int4*>(row) + static_cast<int>(w), window, reuse);
}

// The register cache of the fast kernels (versions 4, 5, 6 and 9) keeps each window as the 16
// bytes it was loaded as: 4 registers per window whatever the type. Every pass widens the
// elements it uses again (no instruction for float, one for half or bf16): widening once into
// floats would double the registers of a half or bf16 cache, and registers decide how many
// blocks share an SM (README, section 3).
template <typename T>
__device__ __forceinline__ float element(const Window<T>& window, int i) {
  return to_compute(window_get(window, i));
}

// Floats rounded into a window. Two 16-bit results are put together into one word, which lets
// the compiler round both with one instruction.
template <typename T>
__device__ __forceinline__ Window<T> narrow(const float (&in)[kPackSize<T>]) {
  Window<T> window;
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
      window.word[i] = common::to_bits(from_compute<T>(in[i]));
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i)
      window.word[i] = common::to_bits(from_compute<T>(in[2 * i])) |
                       (common::to_bits(from_compute<T>(in[2 * i + 1])) << 16);
  }
  return window;
}

// Threads a block can have when each holds `windows` cached windows (4 registers each) without
// spilling: 64K registers per SM, and room left for addresses and sums.
constexpr int max_threads_for_windows(int windows_per_thread) {
  return windows_per_thread <= 4    ? 1024
         : windows_per_thread <= 8  ? 512
         : windows_per_thread <= 16 ? 256
                                    : 128;
}

// Maximum of a window; a NaN makes it NaN (one instruction per element on sm_80+, as fmaxf,
// which would skip the NaN). The NaN must reach the maximum: a thread that read a NaN among
// nothing but -inf would otherwise hold the pair {-inf, NaN}, which the merges take for an empty
// set and drop, and the row would not turn NaN.
template <typename T>
__device__ __forceinline__ float window_max(const Window<T>& window, float running) {
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i)
    running = common::MaxOneInstruction{}(running, element(window, i));
  return running;
}

// The exponent shift for a set whose maximum is m: m itself, except that a set with nothing
// but -inf (or nothing at all) shifts by 0, so that its sum is exp(-inf) = 0 and not
// exp(-inf - -inf) = NaN. This is how a thread, a warp or a block that sees only masked values
// contributes the empty pair {-inf, 0} instead of poisoning the merge.
__device__ __forceinline__ float exp_shift(float m) {
  return m == -INFINITY ? 0.0f : m;
}

// Adds exp(x - shift) over the window to the running sum. The largest term of a row is
// exp(0) = 1, so the terms that exp_flush_denormals flushes change no sum.
template <typename T>
__device__ __forceinline__ float window_sum_exp(const Window<T>& window, float shift,
                                                float running) {
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i)
    running += common::exp_flush_denormals(element(window, i) - shift);
  return running;
}

// What the last step of a row needs, from the row's (max, sum) pair. A kernel whose element type
// and epilogue are template arguments keeps only the fields it uses; versions 1-3, which take
// the epilogue at run time, compute all of them once per row.
struct RowStats {
  float max;
  float inv_sum;   // float softmax: one division per row, one multiplication per element
  float log2_sum;  // half and bf16 softmax: the division folded into the exponent
  float log_sum;   // log_softmax
};

__device__ __forceinline__ RowStats row_stats(common::MaxSum pair) {
  // __fdividef and __log2f: an IEEE division or an accurate log2f pulls in code (and registers)
  // for one value per row.
  return {pair.max, __fdividef(1.0f, pair.sum), __log2f(pair.sum), logf(pair.sum)};
}

// softmax: exp(x - m) / l; log_softmax: x - m - log(l). An all -inf row has m = -inf and
// l = 0: x - m is NaN, and so is the whole row (documented in softmax.h). A softmax output
// below 2^-126 may be flushed to zero: off by less than 1.2e-38.
// For half and bf16 outputs the division by l goes into the exponent,
// 2^((x - m) · log2(e) - log2(l)): one fused multiply-add and MUFU.EX2 after the subtraction
// instead of a multiply, MUFU.EX2 and a multiply, which counts where 16-bit elements make twice
// the instructions per byte. It costs accuracy that only float would notice: __log2f is off by
// up to 2 ulp for l > 2 (about 3e-6 relative in the output for l ~ 1e5), against half's
// 4.9e-4. x - m stays a subtraction of its own, exact where it matters: folding m into the
// multiply-add too would round m · log2(e), which for |m| ~ 6e4 is off by 4e-3.
template <typename T>
__device__ __forceinline__ float finish(float x, const RowStats& stats, bool log_softmax) {
  if (log_softmax) return (x - stats.max) - stats.log_sum;
  if constexpr (sizeof(T) == 2)
    return common::exp2_flush_denormals(fmaf(x - stats.max, common::kLog2E, -stats.log2_sum));
  else
    return common::exp_flush_denormals(x - stats.max) * stats.inv_sum;
}

// The write of the cached kernels: the window's elements finished with the row's statistics.
template <typename T>
__device__ __forceinline__ Window<T> finish_window(const Window<T>& window, const RowStats& stats,
                                                   bool log_softmax) {
  float out[kPackSize<T>];
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i)
    out[i] = finish<T>(element(window, i), stats, log_softmax);
  return narrow<T>(out);
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

// Chapter 10, version 5b: a block per row, the row cached in L1 and L2 instead of registers.
//
//   5b_block_reread  the first pass streams the row in batches of 16-byte windows with plain loads
//                    (they stay in L1 and L2) and keeps the thread's (max, sum) pair; one block
//                    reduction; the second pass reads every window again, the last batch first,
//                    and writes. Two reads for the SM, one for HBM: the second comes from cache.
// Why: version 5 keeps each window in a register from its load to its store, through the block
// reduction, and registers decide how many rows an SM works on at once. Here a window lives in a
// register only while its batch is summed, so a block needs few registers and an SM takes more
// rows; the cache holds what the registers no longer do. The rows in flight must fit in the
// cache, which the dispatcher checks (prefers_reread), except for rows whose other versions do
// worse even so. Any row of up to kRereadRowCapacity elements, any alignment.
// Test it:  ./ch10_softmax/ch10_softmax_student_tests "[block_reread]"
#include "softmax_launch.h"
#include "softmax_precision.cuh"  // first: see softmax_rows.cuh
#include "softmax_rows.cuh"

#include "common/block_reduce.cuh"
#include "common/errors.hpp"
#include "common/gpu_info.hpp"
#include "common/register_caps.cuh"

#include <algorithm>
#include <cstdint>

namespace softmax::detail {
namespace {

constexpr int64_t kMaxGrid = int64_t{1} << 30;  // more rows take more launches

// The fewest registers that compile without spilling, so that as many blocks as possible share
// an SM (the point of this version).
template <typename T>
constexpr int reread_registers(int packs) {
  if (packs <= 4) return sizeof(T) == 4 ? 40 : 48;
  return sizeof(T) == 4 ? 64 : 80;
}

// The largest block the register file takes at that cap (registers are allocated per warp).
template <typename T>
constexpr int reread_max_threads(int packs) {
  return std::min(1024, 65536 / (32 * reread_registers<T>(packs)) * 32);
}

// The block size is a template parameter: read from blockDim, it costs the batches registers
// (fp32, 512 threads x 4 windows: 40 registers instead of 32) and time (bf16 1024x32768 on an
// H200: 38.8 us instead of 36.7).
template <typename T, int kThreads, int kPacks, bool kLogSoftmax, bool kAligned>
__global__ void __launch_bounds__(kThreads)
    COMMON_TUNED_MAX_REGISTERS(reread_registers<T>(kPacks), kThreads)
        reread_kernel(const T* x, T* y, int64_t cols, bool y_vector_ok) {
  constexpr bool log_softmax = kLogSoftmax;
  {  // one row per block: a loop over rows would keep its bounds in registers the batches need
    const T* x_row = x + blockIdx.x * cols;
    T* y_row = y + blockIdx.x * cols;
    const auto layout = row_layout<kAligned>(x_row, cols);
    constexpr int batch_windows = kPacks * kThreads;
    const int batches = (layout.count + batch_windows - 1) / batch_windows;
    // TODO 5b (about 35 lines; checked by [ch10_softmax][block_reread]):
    //   Window k of batch b for this thread: w = b * batch_windows + k * kThreads + threadIdx.x
    //   (consecutive threads, consecutive 16 bytes), present when w < layout.count.
    //   (a) Start from the empty pair common::MaxSum{-INFINITY, 0.0f}. For each batch: load its
    //       windows into Window<T> batch[kPacks] with load_window(x_row, cols, layout, w,
    //       negative_infinity<T>(), true, Reuse::Again) (a plain load: the second pass reads
    //       them again from cache), missing windows fill_pack(negative_infinity<T>()); take the
    //       batch's maximum m (window_max) and sum l (window_sum_exp with exp_shift(m)) as in
    //       version 5, and fold {m, l} into the thread's pair with common::MaxSumMerge{}.
    //   (b) pair = common::block_reduce_max_sum(pair); stats = row_stats(pair).
    //   (c) For each batch, the last one first (its windows are the likeliest still in L1):
    //       load every present window again (Reuse::Once: this is its last read) and
    //       store_window(y_row, cols, layout, w, finish_window(window, stats, log_softmax),
    //       y_vector_ok, Reuse::Once) (streaming stores: y is not read again). In place
    //       (y == x) stays correct: each window is read again and written by the same thread,
    //       after every first-pass read (the block reduction's barrier).
    //   #pragma unroll the loops over k, not over b.
    // BEGIN TODO 5b
    float m = -INFINITY, l = 0.0f;  // the thread's running pair
    // Each batch is folded in with common::MaxSumMerge's rule written out: batch_max starts at
    // the running m, so the batch's terms are summed about the merged maximum at once and only
    // the running sum is rescaled, one exponential per batch where merging the batch's own pair
    // takes two. A batch that leaves the maximum at -inf merges two empty sets (m - batch_max
    // would be NaN): skipped, as MaxSumMerge returns the empty pair.
#pragma unroll 1
    for (int b = 0; b < batches; ++b) {
      Window<T> batch[kPacks];
      float batch_max = m;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int w = b * batch_windows + k * kThreads + static_cast<int>(threadIdx.x);
        batch[k] = w < layout.count ? load_window(x_row, cols, layout, w, negative_infinity<T>(),
                                                  true, Reuse::Again)
                                    : fill_pack(negative_infinity<T>());
        batch_max = window_max(batch[k], batch_max);
      }
      if (batch_max == -INFINITY) continue;  // nothing but -inf so far: the pair stays empty
      l *= common::exp_flush_denormals(m - batch_max);
#pragma unroll
      for (int k = 0; k < kPacks; ++k)
        l = window_sum_exp(batch[k], batch_max, l);
      m = batch_max;
    }
    const RowStats stats = row_stats(common::block_reduce_max_sum({m, l}));
#pragma unroll 1
    for (int b = batches - 1; b >= 0; --b) {
      Window<T> batch[kPacks];
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int w = b * batch_windows + k * kThreads + static_cast<int>(threadIdx.x);
        if (w < layout.count)
          batch[k] = load_window(x_row, cols, layout, w, negative_infinity<T>(), true, Reuse::Once);
      }
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int w = b * batch_windows + k * kThreads + static_cast<int>(threadIdx.x);
        if (w < layout.count)
          store_window(y_row, cols, layout, w, finish_window(batch[k], stats, log_softmax),
                       y_vector_ok, Reuse::Once);
      }
    }
    // END TODO 5b
  }
}

template <typename T, int kThreads, int kPacks>
void launch_shape(const T* x, T* y, int64_t rows, int64_t cols, bool log_softmax, bool y_vector_ok,
                  cudaStream_t stream) {
  const bool aligned = rows_aligned<T>(cols, x, y);
  const auto kernel = log_softmax ? (aligned ? reread_kernel<T, kThreads, kPacks, true, true>
                                             : reread_kernel<T, kThreads, kPacks, true, false>)
                                  : (aligned ? reread_kernel<T, kThreads, kPacks, false, true>
                                             : reread_kernel<T, kThreads, kPacks, false, false>);
  for (int64_t first = 0; first < rows; first += kMaxGrid) {
    kernel<<<static_cast<unsigned>(std::min(rows - first, kMaxGrid)), kThreads, 0, stream>>>(
        x + first * cols, y + first * cols, cols, y_vector_ok);
    CUDA_CHECK_LAUNCH();
  }
}

// The block sizes 128 to 1024 (powers of two) at 4 or 8 windows per thread and batch, as far as
// the register file takes them.
template <typename T, int kPacks>
void launch_packs(const T* x, T* y, int64_t rows, int64_t cols, int threads, bool log_softmax,
                  bool y_vector_ok, cudaStream_t stream) {
  switch (threads) {
    case 128:
      return launch_shape<T, 128, kPacks>(x, y, rows, cols, log_softmax, y_vector_ok, stream);
    case 256:
      return launch_shape<T, 256, kPacks>(x, y, rows, cols, log_softmax, y_vector_ok, stream);
    case 512:
      return launch_shape<T, 512, kPacks>(x, y, rows, cols, log_softmax, y_vector_ok, stream);
  }
  if constexpr (reread_max_threads<T>(kPacks) >= 1024)
    return launch_shape<T, 1024, kPacks>(x, y, rows, cols, log_softmax, y_vector_ok, stream);
}

}  // namespace

// The shapes that were fastest on an H200 (every shape timed at rows of 8 to 256 KiB, fp32 and
// bf16): one batch covers the row, in windows of 8 per thread from 1024 windows up (4 below, so
// that a short row does not leave half a batch empty), in blocks of up to 1024 threads for fp32
// and 256 for 16-bit types, whose 8 windows need 80 registers. Longer 16-bit rows do better in
// 4 batches of 4 windows per thread (512 x 4 at 64 K elements, 1024 x 4 at 128 K).
template <typename T>
RereadShape reread_shape(const T* x, int64_t cols) {
  const int64_t windows = max_windows_per_row(x, cols);
  const bool long_16bit_row = sizeof(T) == 2 && windows > 4096;
  const int packs = windows >= 1024 && !long_16bit_row ? 8 : 4;
  const int64_t per_block = long_16bit_row ? windows / 4 : windows;
  const int limit = sizeof(T) == 4 || long_16bit_row ? 1024 : 256;
  int threads = 128;
  while (threads < limit && int64_t{threads} * packs < per_block)
    threads *= 2;
  return {threads, packs};
}

template <typename T>
bool rereads_from_cache(const T* x, int64_t rows, int64_t cols) {
  const RereadShape shape = reread_shape(x, cols);
  return common::rows_in_flight_fit_l2(rows, cols * static_cast<int64_t>(sizeof(T)), shape.threads,
                                       reread_registers<T>(shape.packs));
}

// Whether version 5b's batch leaves windows of an aligned 16-bit row idle where version 5 would
// take the row in one block: 5b's blocks are powers of two, version 5's are not. The idle
// windows cost 16-bit rows more than fp32 ones (H200: bf16 2730x6144, 768 windows in a batch of
// 256 x 4, 21.1 us against 18.5 for version 5; 1365x12288 21.0 against 19.7; fp32 rows tied). A
// misaligned 16-bit row runs version 5's general instance, which lost (1676x10007: 38.4 us
// against 34.1 for 5b). Only x is known here: with x aligned and y not, version 5 runs its
// general instance too.
template <typename T>
bool block_cached_fills_better(const T* x, int64_t rows, int64_t cols) {
  if (sizeof(T) != 2 || !rows_aligned<T>(cols, x) || !fits_preferred_chunk(x, cols) ||
      rows < 2 * common::device_properties().multiProcessorCount)
    return false;
  const RereadShape shape = reread_shape(x, cols);
  return max_windows_per_row(x, cols) < int64_t{shape.threads} * shape.packs;
}

// Where version 5b beat versions 5 and 6 on the H200: rows of 8 KiB and more, up to 128 KiB
// for fp32 (at 256 KiB the cluster of version 6 was faster, 86% of copy against 85%) and 256 KiB
// for 16-bit types; at least one row per SM; and the rows in flight fit in L2.
template <typename T>
bool reread_shape_pays(const T* x, int64_t rows, int64_t cols) {
  const int64_t row_bytes = cols * static_cast<int64_t>(sizeof(T));
  const int64_t max_row_bytes = (sizeof(T) == 4 ? 128 : 256) * 1024;
  return row_bytes >= 8 * 1024 && row_bytes <= max_row_bytes &&
         rows >= common::device_properties().multiProcessorCount &&
         rereads_from_cache(x, rows, cols);
}

// Where version 5b beat versions 5, 6 and 3 with few rows (H200, 2026-11-26, 1 to 256 rows):
// - a row beyond the registers of a cluster of 16 blocks, at any count: the other version left
//   is 3, one element at a time and two reads of HBM (fp32 8x524288: 1317 us against 71 for 5b,
//   which reads HBM once while the rows in flight fit in L2, twice beyond);
// - rows whose chunks give version 6 blocks so large that one fills an SM's registers (blocks
//   of 832 threads or more in fp32, 704 in 16-bit: rows beyond 800 KiB and 672 KiB),
//   from a third of the SMs' worth of rows on: a cluster then takes 16 SMs of one GPC for a
//   single row (fp32 48x262144: 40.8 us against 47.3, 132 rows 95.0 against 122.7, 256 rows
//   186.4 against 232.8; bf16 64x393216: 42.7 against 54.6). More rows give version 6 no more
//   room, so the rule has no upper bound;
// - rows too long for one block of version 5, up to 256 KiB (fp32) or 512 KiB (16-bit), from 3/4
//   (fp32) or half (16-bit) of the SMs' worth of rows to one row per SM: every row runs at once
//   on an SM of its own, where version 6 runs clusters of 8 or 16 blocks per row in waves (bf16
//   100x131072: 18.5 us against 21.6; 80x131072: 17.0 against 18.1; 132x196608: 34.7 against
//   38.3; fp32 132x65536: 20.3 against 21.6). fp32 rows of 512 KiB lost at every count
//   (132x131072: 45.1 against 40.7).
template <typename T>
bool reread_few_rows_pays(const T* x, int64_t rows, int64_t cols) {
  if (!cached_fits(x, cols, kMaxCluster)) return cols <= kRereadRowCapacity;
  const int64_t sms = common::device_properties().multiProcessorCount;
  if (split_row_blocks_per_sm(x, rows, cols) == 1) return 3 * rows >= sms;
  const int64_t row_bytes = cols * static_cast<int64_t>(sizeof(T));
  const int64_t max_row_bytes = (sizeof(T) == 4 ? 256 : 512) * 1024;
  if (rows > sms || cached_fits(x, cols, 1) || row_bytes > max_row_bytes) return false;
  return sizeof(T) == 4 ? 4 * rows >= 3 * sms : 2 * rows >= sms;
}

// Whether, with fewer than two rows per SM, version 5b's blocks take the rows in a full wave
// and a second one less than half full: that second wave leaves most SMs idle, where version
// 6's smaller blocks spread evenly. With fewer than two rows per SM this happens only where 5b
// fits one block per SM: fp32 rows of 128 KiB and 16-bit rows of 256 KiB, whose blocks have
// 1024 threads (H200: fp32 170x32768 18.5 us against 16.3 for version 6, bf16 170x131072 33.2
// against 31.3; with a fuller second wave 5b won or came close: bf16 200x131072 34.2 against
// 35.7, fp32 200x32768 19.3 against 17.9).
template <typename T>
bool reread_second_wave_mostly_idle(const T* x, int64_t rows, int64_t cols) {
  const int64_t sms = common::device_properties().multiProcessorCount;
  const RereadShape shape = reread_shape(x, cols);
  const int64_t resident = common::resident_blocks(shape.threads, reread_registers<T>(shape.packs));
  return rows < 2 * sms && rows > resident && 2 * rows < 3 * resident;
}

template <typename T>
bool prefers_reread(const T* x, int64_t rows, int64_t cols) {
  return reread_few_rows_pays(x, rows, cols) ||
         (reread_shape_pays(x, rows, cols) && !block_cached_fills_better(x, rows, cols) &&
          !reread_second_wave_mostly_idle(x, rows, cols));
}

template <typename T>
void launch_reread(const T* x, T* y, int64_t rows, int64_t cols, Epilogue epilogue,
                   cudaStream_t stream, RereadShape shape) {
  CHECK_ARG(cols <= kRereadRowCapacity,
            "version 5b takes rows of at most " << kRereadRowCapacity << " elements, got " << cols);
  if (shape.threads == 0) shape = reread_shape(x, cols);
  CHECK_ARG((shape.packs == 4 || shape.packs == 8) && shape.threads >= 128 &&
                shape.threads <= reread_max_threads<T>(shape.packs) &&
                (shape.threads & (shape.threads - 1)) == 0,
            "version 5b: block of " << shape.threads << " threads x " << shape.packs
                                    << " windows is not one of its shapes");
  if (rows == 0) return;
  const bool log_softmax = epilogue == Epilogue::LogSoftmax;
  const bool y_vector_ok =
      (reinterpret_cast<uintptr_t>(y) - reinterpret_cast<uintptr_t>(x)) % 16 == 0;
  if (shape.packs == 4)
    launch_packs<T, 4>(x, y, rows, cols, shape.threads, log_softmax, y_vector_ok, stream);
  else
    launch_packs<T, 8>(x, y, rows, cols, shape.threads, log_softmax, y_vector_ok, stream);
}

#define INSTANTIATE(T)                                                                   \
  template RereadShape reread_shape<T>(const T*, int64_t);                               \
  template bool rereads_from_cache<T>(const T*, int64_t, int64_t);                       \
  template bool prefers_reread<T>(const T*, int64_t, int64_t);                           \
  template bool reread_shape_pays<T>(const T*, int64_t, int64_t);                        \
  template bool reread_few_rows_pays<T>(const T*, int64_t, int64_t);                     \
  template void launch_reread<T>(const T*, T*, int64_t, int64_t, Epilogue, cudaStream_t, \
                                 RereadShape);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
#undef INSTANTIATE

}  // namespace softmax::detail

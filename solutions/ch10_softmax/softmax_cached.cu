// Chapter 10, versions 5 and 6: the row (or a chunk of it) cached in a block's registers.
//
//   5_block_cached  one block per row; each thread holds up to 8 windows of 16 bytes, so a row
//                   of up to 16k floats (32k half/bf16) is read once and written once. Each
//                   thread's (max, sum) pair is merged over the block in one reduction
//                   (common::block_reduce_max_sum).
//   6_split_row     a row cut into chunks, one per block of a thread-block cluster (sm_90).
//                   Each block reduces its chunk to a (max, sum) pair, the pairs are merged
//                   through distributed shared memory, and every block writes its chunk from
//                   its registers: still one read and one write, but up to 16 SMs per row.
// Why version 6: with few rows, one block per row leaves SMs idle (1 row = 1 of 132 SMs, and
// one SM alone reaches a fraction of the memory bandwidth), and a very long row does not fit in
// one SM's registers at all. Splitting the row fixes both; the price is the merge of the chunks'
// pairs: two cluster barriers per row where clusters pull (TODO 6), one where each cluster pushes
// its one row. Both versions are one kernel: a cluster of one block is version 5.
// Test them:  ./ch10_softmax/ch10_softmax_student_tests "[block_cached],[split_row]"
#include "softmax_cluster.cuh"
#include "softmax_launch.h"
#include "softmax_precision.cuh"  // first: see softmax_rows.cuh
#include "softmax_rows.cuh"

#include "common/block_reduce.cuh"
#include "common/errors.hpp"
#include "common/gpu_info.hpp"
#include "common/register_caps.cuh"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace softmax::detail {
namespace {

constexpr int64_t kMaxGridRows = 65535;  // gridDim.y limit; more rows loop
constexpr int kPackChoices[] = {4, 8};

// Registers decide how many blocks share an SM, and the compiler has to be told: left to itself
// it gives a thread whatever the block size allows (64 registers at 1024 threads, 85 at 384),
// and 256-thread blocks of a row cached in 8 windows then share an SM only 2 or 3 at a time. The
// caps below are the fewest registers that compile without spilling (measured, README section
// 3): blocks of 256 threads share an SM 6 at a time (float, 4 windows), 5 (half/bf16, 4
// windows: 8 elements per window need more temporaries) or 4 (float, 8 windows). The instances
// for aligned rows fit 8 half/bf16 windows in 80 (3 blocks instead of 2); their log_softmax
// needs 56 for 4 windows.
template <typename T>
constexpr int max_registers_for(int packs, bool aligned, bool log_softmax) {
  if (packs <= 4) return sizeof(T) == 4 ? 40 : (aligned && log_softmax ? 56 : 48);
  return sizeof(T) == 4 ? 56 : (aligned ? 80 : 128);
}

template <typename T>
constexpr int max_threads_for(int packs) {
  return packs <= 4 ? 1024 : (sizeof(T) == 4 ? 384 : 256);
}

// Window k of this thread in a block's chunk that starts at `first`: first + threadIdx.x +
// k * blockDim.x. For half and bf16 the thread index is read afresh (asm volatile), so that the
// compiler recomputes the indices for the stores instead of keeping one register per window alive
// through the reductions: at 48 registers it spilled one. Float has room and schedules its loads
// better without (1024x32768: 78 against 85 us).
template <typename T>
__device__ __forceinline__ int block_window(int first, int k) {
  unsigned t = threadIdx.x;
  if constexpr (sizeof(T) == 2) asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t));
  return first + static_cast<int>(t) + k * static_cast<int>(blockDim.x);
}

// gridDim = (cluster size, row slots): block b of a cluster owns windows
// [b * windows_per_block, (b + 1) * windows_per_block) of the row; thread t holds windows
// first + t + k * blockDim.x (consecutive threads, consecutive 16 bytes: coalesced).
// The epilogue is a template parameter: a runtime flag keeps both epilogues' values alive in
// registers that the cache needs.
// kOneRow: every block handles a single row, and the cluster's merge pushes instead of pulling
// (softmax_cluster.cuh).
template <typename T, int kPacks, bool kLogSoftmax, bool kAligned, bool kOneRow>
__global__ void __launch_bounds__(max_threads_for<T>(kPacks))
    COMMON_TUNED_MAX_REGISTERS(max_registers_for<T>(kPacks, kAligned, kLogSoftmax),
                               max_threads_for<T>(kPacks))
        cached_kernel(const T* x, T* y, int64_t rows, int64_t cols, int64_t windows_per_block,
                      bool y_vector_ok) {
  constexpr bool log_softmax = kLogSoftmax;
  if constexpr (kOneRow) cluster_arrive_started();
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const T* x_row = x + row * cols;
    T* y_row = y + row * cols;
    const auto layout = row_layout<kAligned>(x_row, cols);
    // Window indices within a row fit 32 bits (at most 16 blocks of 4096 windows), and 32-bit
    // arithmetic needs fewer registers than 64-bit.
    const int first = blockIdx.x * static_cast<int>(windows_per_block);
    const int end = static_cast<int>(
        first + windows_per_block < layout.count ? first + windows_per_block : layout.count);
    Window<T> cache[kPacks];
    std::conditional_t<kOneRow, OneRowClusterToken, ClusterToken> token;
    // TODO 5 (about 25 lines; checked by [ch10_softmax][block_cached]):
    //   Version 4 with a block instead of a group of lanes:
    //   (a) window w = block_window<T>(first, k) (k < kPacks, #pragma unroll on every loop over
    //       k): cache[k] = load_window(x_row, cols, layout, w, negative_infinity<T>(),
    //       true) when w < end, else fill_pack(negative_infinity<T>()); m = window_max(cache[k],
    //       m): the maximum of what this thread holds.
    //   (b) The thread's own pair: l = window_sum_exp(cache[k], exp_shift(m), l) over k. The
    //       block's pair is common::block_reduce_max_sum({m, l}): one block reduction (one
    //       barrier pair) per row instead of one for the maximum and one for the sum.
    //   (c) The block's pair is the row's when gridDim.x == 1. Otherwise (version 6) the
    //       blocks of the cluster hold the row's chunks: merge their pairs with
    //       cluster_reduce(pair, common::MaxSumMerge{}, common::MaxSum{-INFINITY, 0.0f}, token).
    //       [block_cached] never runs this branch; [split_row] (TODO 6's test, sm_90) is the
    //       first test that does.
    //   (d) stats = row_stats(row pair); store finish_window(cache[k], stats, log_softmax) to
    //       window w when w < end (store_window, y_vector_ok).
    // BEGIN TODO 5
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int w = block_window<T>(first, k);
      cache[k] = w < end ? load_window(x_row, cols, layout, w, negative_infinity<T>(), true)
                         : fill_pack(negative_infinity<T>());
      m = window_max(cache[k], m);
    }
    float l = 0.0f;
#pragma unroll
    for (int k = 0; k < kPacks; ++k)
      l = window_sum_exp(cache[k], exp_shift(m), l);
    common::MaxSum pair = common::block_reduce_max_sum({m, l});
    if (gridDim.x > 1)
      pair = cluster_reduce(pair, common::MaxSumMerge{}, common::MaxSum{-INFINITY, 0.0f}, token);
    const RowStats stats = row_stats(pair);
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int w = block_window<T>(first, k);
      if (w < end)
        store_window(y_row, cols, layout, w, finish_window(cache[k], stats, log_softmax),
                     y_vector_ok);
    }
    // END TODO 5
    cluster_reduce_done(token);
  }
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

struct BlockShape {
  int packs = 0;    // windows per thread
  int threads = 0;  // a multiple of 32
};

// The block for a chunk of `windows` (packs = 0: no block holds it). Blocks of at most 256 threads
// come first, then 512: two or more of them share an SM, so one block's loads overlap another's
// reductions and stores; then as few windows per thread as fit (fewer registers, more blocks per
// SM).
template <typename T>
BlockShape block_shape(int64_t windows) {
  for (int thread_limit : {256, 512, 1024}) {
    for (int packs : kPackChoices) {
      const int64_t threads = std::max<int64_t>(32, ceil_div(ceil_div(windows, packs), 32) * 32);
      if (threads <= std::min(thread_limit, max_threads_for<T>(packs)))
        return {packs, static_cast<int>(threads)};
    }
  }
  return {};
}

template <typename T>
int64_t max_windows_per_block() {
  int64_t most = 0;
  for (int packs : kPackChoices)
    most = std::max<int64_t>(most, int64_t{packs} * max_threads_for<T>(packs));
  return most;
}

template <typename T, int kPacks, bool kOneRow>
auto pick_kernel(bool log_softmax, bool aligned) {
  return log_softmax ? (aligned ? cached_kernel<T, kPacks, true, true, kOneRow>
                                : cached_kernel<T, kPacks, true, false, kOneRow>)
                     : (aligned ? cached_kernel<T, kPacks, false, true, kOneRow>
                                : cached_kernel<T, kPacks, false, false, kOneRow>);
}

template <typename T, int kPacks>
void launch_shape(const T* x, T* y, int64_t rows, int64_t cols, int cluster, int threads,
                  int64_t windows_per_block, bool log_softmax, bool y_vector_ok,
                  cudaStream_t stream) {
  const bool aligned = rows_aligned<T>(cols, x, y);
  // A row per cluster and all of them at once, one block per SM: the push merge (the latency
  // regime). Otherwise the pull merge, and blocks may loop over rows.
  const bool one_row =
      cluster > 1 && rows * cluster <= common::device_properties().multiProcessorCount;
  const auto kernel = one_row ? pick_kernel<T, kPacks, true>(log_softmax, aligned)
                              : pick_kernel<T, kPacks, false>(log_softmax, aligned);
  const dim3 grid(cluster, static_cast<unsigned>(std::min(rows, kMaxGridRows)));
  launch_clustered(kernel, grid, threads, cluster, stream, x, y, rows, cols, windows_per_block,
                   y_vector_ok);
}

}  // namespace

bool clusters_supported() {
  return common::has_sm90_features();
}

template <typename T>
int64_t cached_row_capacity(int cluster) {
  // A misaligned row needs one window more than its elements fill.
  return (cluster * max_windows_per_block<T>() - 1) * kPackSize<T>;
}

template <typename T>
bool cached_fits(const T* x, int64_t cols, int cluster) {
  return ceil_div(max_windows_per_row(x, cols), cluster) <= max_windows_per_block<T>();
}

template <typename T>
bool fits_preferred_chunk(const T* x, int64_t cols) {
  return max_windows_per_row(x, cols) <= kPreferredChunkWindows;
}

template <typename T>
bool block_per_row_pays(const T* x, int64_t rows, int64_t cols) {
  if (!cached_fits(x, cols, 1)) return false;
  const int64_t sms = common::device_properties().multiProcessorCount;
  if (cols <= kBlockPerRowElements) return rows < 2 * sms;
  const bool from_enough_rows =
      fits_preferred_chunk(x, cols) ? 4 * rows >= sms : 8 * rows >= 3 * sms;
  return rows <= sms && from_enough_rows;
}

template <typename T>
int split_row_blocks_per_sm(const T* x, int64_t rows, int64_t cols) {
  const int cluster = split_row_cluster(x, rows, cols);
  const BlockShape shape = block_shape<T>(ceil_div(max_windows_per_row(x, cols), cluster));
  // The softmax instance's cap: log_softmax's aligned 16-bit one takes 56, not 48, and fits
  // fewer blocks; the rule that asks was measured on softmax.
  const int registers = max_registers_for<T>(shape.packs, rows_aligned<T>(cols, x), false);
  return common::blocks_per_sm(shape.threads, registers);
}

template <typename T>
int split_row_cluster(const T* x, int64_t rows, int64_t cols) {
  // As few blocks per row as hold it in chunks of kPreferredChunkWindows (32 KiB: 8192 floats,
  // 16384 bf16) where 16 blocks can, then more, up to the portable 8, until rows x blocks covers
  // the SMs twice. A handful of rows (32 x rows <= SMs: the latency regime) of 16384 packs or
  // more takes 16 blocks.
  // The exact window count matters: an aligned row of 32768 floats is 8192 windows, 4 chunks of
  // 2048; counting one window more for a misalignment it does not have took 8 blocks, and 8
  // smaller chunks were slower (H200: 77.8 against 71.5 us at 1024x32768 fp32).
  const int64_t windows = max_windows_per_row(x, cols);
  const int64_t sms = common::device_properties().multiProcessorCount;
  int cluster = 2;
  while (cluster < kMaxCluster && ceil_div(windows, cluster) > kPreferredChunkWindows)
    cluster *= 2;
  while (cluster < kMaxPortableCluster && rows * cluster < 2 * sms)
    cluster *= 2;
  if (rows * kMaxPortableCluster * 4 <= sms && ceil_div(cols, kPackSize<T>) >= 16 * 1024)
    cluster = kMaxCluster;
  return cluster;
}

template <typename T>
void launch_cached(const T* x, T* y, int64_t rows, int64_t cols, int cluster, Epilogue epilogue,
                   cudaStream_t stream) {
  CHECK_ARG(cluster >= 1 && cluster <= kMaxCluster,
            "cluster size " << cluster << " outside 1.." << kMaxCluster);
  CHECK_ARG(cluster == 1 || clusters_supported(),
            "splitting a row across a cluster of blocks needs sm_90 or newer; "
                << common::sm90_features_missing());
  // The exact count for this alignment: an aligned row of 16384 floats fits one block, the same
  // row one element off needs one window more (cached_row_capacity assumes the worst).
  const int64_t windows_per_block = ceil_div(max_windows_per_row(x, cols), cluster);
  CHECK_ARG(windows_per_block <= max_windows_per_block<T>(),
            "a row of " << cols << " elements at this alignment does not fit in the registers of "
                        << cluster << " block(s): at most " << cached_row_capacity<T>(cluster)
                        << " at any alignment");
  if (rows == 0) return;
  const BlockShape shape = block_shape<T>(windows_per_block);
  const bool log_softmax = epilogue == Epilogue::LogSoftmax;
  const bool y_vector_ok =
      (reinterpret_cast<uintptr_t>(y) - reinterpret_cast<uintptr_t>(x)) % 16 == 0;
  switch (shape.packs) {
    case 4:
      launch_shape<T, 4>(x, y, rows, cols, cluster, shape.threads, windows_per_block, log_softmax,
                         y_vector_ok, stream);
      break;
    default:
      launch_shape<T, 8>(x, y, rows, cols, cluster, shape.threads, windows_per_block, log_softmax,
                         y_vector_ok, stream);
      break;
  }
}

#define INSTANTIATE(T)                                                 \
  template int64_t cached_row_capacity<T>(int);                        \
  template bool cached_fits<T>(const T*, int64_t, int);                \
  template bool fits_preferred_chunk<T>(const T*, int64_t);            \
  template bool block_per_row_pays<T>(const T*, int64_t, int64_t);     \
  template int split_row_cluster<T>(const T*, int64_t, int64_t);       \
  template int split_row_blocks_per_sm<T>(const T*, int64_t, int64_t); \
  template void launch_cached<T>(const T*, T*, int64_t, int64_t, int, Epilogue, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
#undef INSTANTIATE

}  // namespace softmax::detail

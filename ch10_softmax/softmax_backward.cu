// Chapter 10, version 9: the backward pass, dx = y * (dy - sum_j dy_j * y_j) per row.
//
// The same machinery as the forward with one reduction instead of two and three tensors
// instead of two: the row of y and of dy cached in registers, the dot product sum(dy * y)
// reduced over the row's lanes (rows of at most 1 KiB), over a block, or over a cluster
// of blocks (a long row split into chunks, sm_90); then dx is written from the registers.
// Each byte of y, dy and dx moves once. Where the forward runs version 5b, so does the
// backward: y and dy are read a second time from L1/L2 instead of being kept in registers
// (backward_reread_kernel), and long rows whose blocks in flight would not fit in L2 are split
// into chunks over a cluster for it. Rows too long for any register cache (or long rows on a GPU
// without clusters) take a streaming kernel that reads y and dy twice.
// Test it:  ./ch10_softmax/ch10_softmax_student_tests "[backward]"
#include "softmax.h"
#include "softmax_cluster.cuh"
#include "softmax_launch.h"
#include "softmax_precision.cuh"  // first: see softmax_rows.cuh
#include "softmax_rows.cuh"

#include "common/block_reduce.cuh"
#include "common/errors.hpp"
#include "common/gpu_info.hpp"
#include "common/overlap.hpp"
#include "common/register_caps.cuh"

#include <algorithm>
#include <cstdint>

namespace softmax {
namespace detail {
namespace {

constexpr int kWarpKernelThreads = 128;
constexpr int kStreamingThreads = 512;
constexpr int64_t kMaxGrid = 1 << 20;
constexpr int64_t kMaxGridRows = 65535;
// The block kernel's shape: 4 windows of y and 4 of dy per thread, at most 512 threads, so a
// block holds a chunk of up to 2048 windows (the largest the launcher makes).
constexpr int kBlockPacks = 4;
// Two register caches (y and dy) of packs windows each.
constexpr int max_threads_for(int packs) {
  return max_threads_for_windows(2 * packs);
}

// Register caps of the block kernel, as in the forward (softmax_cached.cu): the fewest that
// compile without spilling. Left to itself the compiler gave a thread caching 4 windows of y and
// of dy 98 registers for bf16, so 2 blocks of 256 threads shared an SM; at 80, 3 do (H200, bf16
// 4096x8192: 70.9 -> 60.2 us). Float takes 56, and 48 for aligned rows (5 blocks of 256 instead
// of 4).
template <typename T>
constexpr int backward_max_registers(bool aligned) {
  return sizeof(T) == 4 ? (aligned ? 48 : 56) : 80;
}

template <typename T>
__device__ __forceinline__ float window_dot(const Window<T>& y, const Window<T>& dy,
                                            float running) {
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i)
    running += element(y, i) * element(dy, i);
  return running;
}

template <typename T>
__device__ __forceinline__ Window<T> backward_window(const Window<T>& y, const Window<T>& dy,
                                                     float dot) {
  float dx[kPackSize<T>];
#pragma unroll
  for (int i = 0; i < kPackSize<T>; ++i)
    dx[i] = element(y, i) * (element(dy, i) - dot);
  return narrow<T>(dx);
}

// Rows of at most 1 KiB: kLanes lanes per row, as in version 4. The windows follow y's
// alignment; dy and dx use 16-byte accesses when they share it.
template <typename T, int kLanes, int kPacks, bool kAligned>
__global__ void __launch_bounds__(kWarpKernelThreads)
    backward_warp_kernel(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols,
                         bool dy_vector_ok, bool dx_vector_ok) {
  constexpr int kRowsPerBlock = kWarpKernelThreads / kLanes;
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  const int group = static_cast<int>(threadIdx.x / kLanes);
  const int64_t row_step = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  for (int64_t first_row = blockIdx.x * int64_t{kRowsPerBlock}; first_row < rows;
       first_row += row_step) {
    const int64_t row = first_row + group;
    const bool active = row < rows;
    const int64_t offset = (active ? row : 0) * cols;
    const auto layout = row_layout<kAligned>(y + offset, cols);
    Window<T> y_cache[kPacks], dy_cache[kPacks];
    float dot = 0.0f;
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int64_t w = lane + int64_t{k} * kLanes;
      const bool inside = active && w < layout.count;
      y_cache[k] = inside ? load_window(y + offset, cols, layout, w, T{}, true) : fill_pack(T{});
      dy_cache[k] =
          inside ? load_window(dy + offset, cols, layout, w, T{}, dy_vector_ok) : fill_pack(T{});
      dot = window_dot(y_cache[k], dy_cache[k], dot);
    }
    dot = group_reduce<kLanes>(dot, common::Sum{});
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int64_t w = lane + int64_t{k} * kLanes;
      if (active && w < layout.count)
        store_window(dx + offset, cols, layout, w, backward_window(y_cache[k], dy_cache[k], dot),
                     dx_vector_ok);
    }
  }
}

// Longer rows: a block, or a cluster of blocks (gridDim.x > 1), per row, as in versions 5/6.
template <typename T, int kPacks, bool kAligned>
__global__ void __launch_bounds__(max_threads_for(kPacks))
    COMMON_TUNED_MAX_REGISTERS(backward_max_registers<T>(kAligned), max_threads_for(kPacks))
        backward_cached_kernel(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols,
                               int64_t windows_per_block, bool dy_vector_ok, bool dx_vector_ok) {
  static_assert(kPacks == kBlockPacks, "the register caps were measured for this shape");
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const int64_t offset = row * cols;
    const auto layout = row_layout<kAligned>(y + offset, cols);
    const int first = blockIdx.x * static_cast<int>(windows_per_block);
    const int end = static_cast<int>(
        first + windows_per_block < layout.count ? first + windows_per_block : layout.count);
    Window<T> y_cache[kPacks], dy_cache[kPacks];
    ClusterToken token;
    // TODO 9 (about 20 lines; checked by [ch10_softmax][backward]):
    //   backward_warp_kernel above does this for a group of lanes; do it for a block and a
    //   cluster, the way version 5/6 does the forward:
    //   (a) window w = first + threadIdx.x + k * blockDim.x (int; k < kPacks, #pragma unroll) of
    //       y and of dy into y_cache[k] / dy_cache[k] when w < end: load_window(y + offset, cols,
    //       layout, w, T{}, true), and the same for dy with dy_vector_ok (fill T{}, not -inf:
    //       padding must add nothing to the dot product); else fill_pack(T{}); the thread's
    //       window_dot;
    //   (b) the row's dot product: common::block_reduce(dot, common::Sum{}, 0.0f), then, when
    //       gridDim.x > 1, cluster_reduce(dot, common::Sum{}, 0.0f, token) over the row's blocks;
    //   (c) when w < end, store_window(dx + offset, cols, layout, w, backward_window(y_cache[k],
    //       dy_cache[k], dot), dx_vector_ok): dx may sit at another alignment than y.
    // BEGIN TODO 9
    (void)dy;
    (void)dx;
    (void)layout;
    (void)first;
    (void)end;
    (void)y_cache;
    (void)dy_cache;
    (void)dy_vector_ok;
    (void)dx_vector_ok;
    // END TODO 9
    cluster_reduce_done(token);
  }
}

// Windows per chunk when a row of `count` windows is cut into `chunks`: a multiple of 8 (128
// bytes), so that a row that starts on a cache line is cut at line boundaries.
__device__ __forceinline__ int chunk_windows(int count, int chunks) {
  return ((count + chunks - 1) / chunks + 7) / 8 * 8;
}

// Version 5b's design (softmax_reread.cu) for the backward: the dot product over batches of
// kThreads x kPacks windows of y and dy read with plain loads, which stay in L1 and L2; then
// every window again, the last batch first, and dx written with streaming stores. One read of
// y and dy from memory as long as the rows in flight fit in L2 (prefers_reread_backward).
// At most kBackwardRereadRegisters registers (enough blocks to fill the register file): the
// fewest at which every instance compiles without spilling.
constexpr int kBackwardRereadRegisters = 64;
// With kSplit, a row is cut into `chunks` chunks, one per block of a cluster (sm_90): rows too long
// for their blocks in flight to fit in L2 (bf16 256x131072 on an H200: 72.0 us as a cluster of
// register caches, 58.1 split into 8 chunks of 32 KiB here). Block `chunk` of a row owns its
// windows [first, end), and the blocks' dot products are merged as in version 6.
template <typename T, int kThreads, int kPacks, bool kAligned, bool kSplit>
__global__ void __launch_bounds__(
    kThreads, COMMON_TUNED_MIN_BLOCKS(common::blocks_per_sm(kThreads, kBackwardRereadRegisters)))
    backward_reread_kernel(const T* y, const T* dy, T* dx, int64_t cols, int split_chunks,
                           bool dy_vector_ok, bool dx_vector_ok) {
  const int chunks = kSplit ? split_chunks : 1;
  const unsigned row = blockIdx.x / static_cast<unsigned>(chunks);
  const int chunk = static_cast<int>(blockIdx.x - row * static_cast<unsigned>(chunks));
  const int64_t offset = row * cols;
  const auto layout = row_layout<kAligned>(y + offset, cols);
  const int per_chunk = chunk_windows(layout.count, chunks);
  const int first = min(chunk * per_chunk, layout.count);
  const int end = min(first + per_chunk, layout.count);
  constexpr int batch_windows = kPacks * kThreads;
  const int batches = (end - first + batch_windows - 1) / batch_windows;
  float dot = 0.0f;
#pragma unroll 1
  for (int b = 0; b < batches; ++b) {
    Window<T> y_batch[kPacks], dy_batch[kPacks];
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int w = first + b * batch_windows + k * kThreads + static_cast<int>(threadIdx.x);
      const bool inside = w < end;
      y_batch[k] = inside ? load_window(y + offset, cols, layout, w, T{}, true, Reuse::Again)
                          : fill_pack(T{});
      dy_batch[k] = inside
                        ? load_window(dy + offset, cols, layout, w, T{}, dy_vector_ok, Reuse::Again)
                        : fill_pack(T{});
    }
#pragma unroll
    for (int k = 0; k < kPacks; ++k)
      dot = window_dot(y_batch[k], dy_batch[k], dot);
  }
  dot = common::block_reduce(dot, common::Sum{}, 0.0f);
  ClusterToken token;
  if (chunks > 1) dot = cluster_reduce(dot, common::Sum{}, 0.0f, token);
#pragma unroll 1
  for (int b = batches - 1; b >= 0; --b) {
    Window<T> y_batch[kPacks], dy_batch[kPacks];
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int w = first + b * batch_windows + k * kThreads + static_cast<int>(threadIdx.x);
      if (w < end) {
        y_batch[k] = load_window(y + offset, cols, layout, w, T{}, true, Reuse::Once);
        dy_batch[k] = load_window(dy + offset, cols, layout, w, T{}, dy_vector_ok, Reuse::Once);
      }
    }
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int w = first + b * batch_windows + k * kThreads + static_cast<int>(threadIdx.x);
      if (w < end)
        store_window(dx + offset, cols, layout, w, backward_window(y_batch[k], dy_batch[k], dot),
                     dx_vector_ok, Reuse::Once);
    }
  }
  cluster_reduce_done(token);
}

// Any length: the dot product in a first pass over y and dy, dx in a second.
template <typename T>
__global__ void __launch_bounds__(kStreamingThreads)
    backward_streaming_kernel(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t offset = row * cols;
    float dot = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      dot += to_compute(y[offset + j]) * to_compute(dy[offset + j]);
    dot = common::block_reduce(dot, common::Sum{}, 0.0f);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      const float yj = to_compute(y[offset + j]);
      dx[offset + j] = from_compute<T>(yj * (to_compute(dy[offset + j]) - dot));
    }
  }
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

bool same_16_byte_phase(const void* a, const void* b) {
  return (reinterpret_cast<uintptr_t>(a) - reinterpret_cast<uintptr_t>(b)) % 16 == 0;
}

template <typename T, int kLanes, int kPacks>
void launch_warp(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols, cudaStream_t stream) {
  constexpr int kRowsPerBlock = kWarpKernelThreads / kLanes;
  const int64_t grid = std::min(ceil_div(rows, kRowsPerBlock), kMaxGrid);
  const auto kernel = rows_aligned<T>(cols, y, dy, dx)
                          ? backward_warp_kernel<T, kLanes, kPacks, true>
                          : backward_warp_kernel<T, kLanes, kPacks, false>;
  kernel<<<static_cast<int>(grid), kWarpKernelThreads, 0, stream>>>(
      y, dy, dx, rows, cols, same_16_byte_phase(dy, y), same_16_byte_phase(dx, y));
  CUDA_CHECK_LAUNCH();
}

template <typename T, int kPacks>
void launch_cached_backward(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols, int cluster,
                            int threads, int64_t windows_per_block, cudaStream_t stream) {
  const dim3 grid(cluster, static_cast<unsigned>(std::min(rows, kMaxGridRows)));
  const auto kernel = rows_aligned<T>(cols, y, dy, dx) ? backward_cached_kernel<T, kPacks, true>
                                                       : backward_cached_kernel<T, kPacks, false>;
  launch_clustered(kernel, grid, threads, cluster, stream, y, dy, dx, rows, cols, windows_per_block,
                   same_16_byte_phase(dy, y), same_16_byte_phase(dx, y));
}

// kSplit: rows in `chunks` chunks. Split rows have aligned instances only: the unaligned float
// ones spill at 64 registers.
template <typename T, int kThreads, bool kSplit = false>
void launch_reread_backward(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols, int chunks,
                            cudaStream_t stream) {
  constexpr int kPacks = 4;
  const bool aligned = rows_aligned<T>(cols, y, dy, dx);
  CHECK_ARG(kSplit ? aligned && chunks >= 1 && chunks <= kMaxCluster : chunks == 1,
            "backward: a row in " << chunks << " chunks at this alignment");
  const auto kernel = kSplit    ? backward_reread_kernel<T, kThreads, kPacks, true, true>
                      : aligned ? backward_reread_kernel<T, kThreads, kPacks, true, false>
                                : backward_reread_kernel<T, kThreads, kPacks, false, false>;
  const int64_t max_rows = kMaxGrid / chunks;
  for (int64_t first = 0; first < rows; first += max_rows) {
    const dim3 grid(static_cast<unsigned>(std::min(rows - first, max_rows) * chunks));
    launch_clustered(kernel, grid, kThreads, chunks, stream, y + first * cols, dy + first * cols,
                     dx + first * cols, cols, chunks, same_16_byte_phase(dy, y),
                     same_16_byte_phase(dx, y));
  }
}

// The forward's rule (reread_shape_pays; the forward's exception for rows that version 5 fills
// better was measured for the forward only), where the rows in flight of this kernel (blocks of
// `threads` at kBackwardRereadRegisters), a row of y and one of dy each, fit in L2.
template <typename T>
bool prefers_reread_backward(const T* y, int64_t rows, int64_t cols, int threads) {
  return reread_shape_pays(y, rows, cols) &&
         common::rows_in_flight_fit_l2(rows, 2 * cols * static_cast<int64_t>(sizeof(T)), threads,
                                       kBackwardRereadRegisters);
}

// Rows of 128 KiB and more that version 5b's rule turns away, when rows times chunks give every
// SM two blocks, the chunks in flight fit in L2 and the rows are aligned: chunks of
// kSplitChunkBytes of y (and of dy) in blocks of kSplitThreads. 0: no split. Timed on an H200 at
// 128 to 1024 threads and 1 to 16 chunks: this shape was the best or within 1% of it at bf16
// 256x131072 (72.0 us before, 58.1 now), fp32 256x131072 (117.0 -> 113.7) and fp32 512x65536
// (a tie).
constexpr int kSplitThreads = 256;
constexpr int64_t kSplitChunkBytes = 32 * 1024;
template <typename T>
int reread_split_chunks(const T* y, const T* dy, const T* dx, int64_t rows, int64_t cols) {
  const int64_t row_bytes = cols * static_cast<int64_t>(sizeof(T));
  if (!clusters_supported() || !rows_aligned<T>(cols, y, dy, dx) ||
      row_bytes < 4 * kSplitChunkBytes)
    return 0;
  const int chunks = static_cast<int>(std::min<int64_t>(kMaxCluster, row_bytes / kSplitChunkBytes));
  const int64_t sms = common::device_properties().multiProcessorCount;
  const int64_t chunk_bytes = ceil_div(row_bytes, chunks);
  if (rows * chunks < 2 * sms ||
      !common::rows_in_flight_fit_l2(rows * chunks, 2 * chunk_bytes, kSplitThreads,
                                     kBackwardRereadRegisters))
    return 0;
  return chunks;
}

template <typename T>
void launch_backward(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols,
                     cudaStream_t stream) {
  const int64_t windows = max_windows_per_row(y, cols);
  // 4 windows of y and of dy per thread: one batch per row up to 4096 windows.
  const int reread_threads = windows <= 512    ? 128
                             : windows <= 1024 ? 256
                             : windows <= 2048 ? 512
                                               : 1024;
  if (prefers_reread_backward(y, rows, cols, reread_threads)) {  // rows of 8 KiB and more
    switch (reread_threads) {
      case 128:
        return launch_reread_backward<T, 128>(y, dy, dx, rows, cols, 1, stream);
      case 256:
        return launch_reread_backward<T, 256>(y, dy, dx, rows, cols, 1, stream);
      case 512:
        return launch_reread_backward<T, 512>(y, dy, dx, rows, cols, 1, stream);
      default:
        return launch_reread_backward<T, 1024>(y, dy, dx, rows, cols, 1, stream);
    }
  }
  const int split_chunks = reread_split_chunks(y, dy, dx, rows, cols);
  if (split_chunks > 1)
    return launch_reread_backward<T, kSplitThreads, true>(y, dy, dx, rows, cols, split_chunks,
                                                          stream);
  // Rows of at most 64 windows (1 KiB): lanes of a warp; longer ones: blocks of the forward's
  // shape (y and dy double the registers per window; blocks were measured faster from 4 KiB rows
  // on, and rows of 1 to 4 KiB, not measured against warps, take them too).
  if (windows <= 64) {
    const int64_t lanes_wanted = ceil_div(windows, 4);
    if (lanes_wanted <= 2) return launch_warp<T, 2, 4>(y, dy, dx, rows, cols, stream);
    if (lanes_wanted <= 4) return launch_warp<T, 4, 4>(y, dy, dx, rows, cols, stream);
    if (lanes_wanted <= 8) return launch_warp<T, 8, 4>(y, dy, dx, rows, cols, stream);
    return launch_warp<T, 16, 4>(y, dy, dx, rows, cols, stream);
  }
  // As the forward's dispatcher: a block per row when rows are many and the row fits, else
  // chunks of at most 2048 windows over a cluster, with enough blocks for every SM.
  // Up to 16 blocks (non-portable, sm_90): a row of 131072 floats is 32768 windows.
  const int max_cluster = clusters_supported() ? kMaxCluster : 1;
  const int64_t sms = common::device_properties().multiProcessorCount;
  const int64_t block_limit = int64_t{kBlockPacks} * max_threads_for(kBlockPacks);  // 2048
  int cluster = 1;
  if (!(rows >= 2 * sms && windows <= block_limit)) {
    while (cluster < max_cluster && ceil_div(windows, cluster) > block_limit)
      cluster *= 2;
    while (cluster < max_cluster && rows * cluster < 2 * sms)
      cluster *= 2;
  }
  const int64_t windows_per_block = ceil_div(windows, cluster);
  const int64_t threads =
      std::max<int64_t>(32, ceil_div(ceil_div(windows_per_block, kBlockPacks), 32) * 32);
  if (threads <= max_threads_for(kBlockPacks))
    return launch_cached_backward<T, kBlockPacks>(
        y, dy, dx, rows, cols, cluster, static_cast<int>(threads), windows_per_block, stream);
  backward_streaming_kernel<T>
      <<<static_cast<int>(std::min(rows, kMaxGrid)), kStreamingThreads, 0, stream>>>(y, dy, dx,
                                                                                     rows, cols);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace detail

template <typename T>
void softmax_backward(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols,
                      cudaStream_t stream) {
  CHECK_ARG(rows >= 0, "rows must be >= 0, got " << rows);
  CHECK_ARG(cols >= 1, "cols must be >= 1, got " << cols);
  CHECK_ARG(common::matrix_bytes_fit<T>(rows, cols),
            "rows * cols elements overflow 64 bits of bytes: " << rows << " x " << cols);
  if (rows == 0) return;
  CHECK_ARG(y != nullptr && dy != nullptr && dx != nullptr,
            "y, dy and dx must be device pointers, got null");
  CHECK_ARG(common::elements_aligned(y, dy, dx),
            "y, dy and dx must be aligned to their element size (" << alignof(T) << " bytes)");
  const size_t bytes = static_cast<size_t>(rows * cols) * sizeof(T);
  CHECK_ARG((dx == y || !common::buffers_overlap(dx, y, bytes)) &&
                (dx == dy || !common::buffers_overlap(dx, dy, bytes)),
            "dx overlaps y or dy without being equal to it: in place (dx == y or dx == dy) is "
            "supported, partial overlap is not");
  detail::launch_backward(y, dy, dx, rows, cols, stream);
}

#define INSTANTIATE(T) \
  template void softmax_backward<T>(const T*, const T*, T*, int64_t, int64_t, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
#undef INSTANTIATE

}  // namespace softmax

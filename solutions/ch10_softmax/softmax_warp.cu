// Chapter 10, version 4: a warp, or a group of lanes of one, per row; the row lives in
// registers between the reductions and the write.
//
//   4_warp_per_row  one read and one write of the row; the max and the sum are butterflies over
//                   the row's lanes (no shared memory, no barrier). Rows of at most 1024 floats
//                   (2048 half/bf16): 32 lanes x 8 windows of 16 bytes, plus one window for a
//                   row that does not start on a 16-byte boundary.
// Short rows share a warp: a row of 128 floats is 32 windows, 8 lanes of 4 windows each, so a
// warp does 4 rows at once and each lane still has 4 independent 16-byte loads in flight.
// Test it:  ./ch10_softmax/ch10_softmax_student_tests "[warp_per_row]"
#include "softmax_launch.h"
#include "softmax_precision.cuh"  // first: see softmax_rows.cuh
#include "softmax_rows.cuh"

#include "common/block_reduce.cuh"
#include "common/errors.hpp"

#include <algorithm>
#include <cstdint>

namespace softmax::detail {
namespace {

constexpr int kWarpKernelThreads = 128;
constexpr int64_t kMaxGrid = 1 << 20;  // larger row counts loop
constexpr int kMaxWindowsPerLane = 9;  // 8 for the longest aligned row, +1 for a misaligned one

// kLanes lanes per row, each holding kPacks windows: window w of the row belongs to lane
// w % kLanes, so the lanes of a row read consecutive 16-byte windows (coalesced).
template <typename T, int kLanes, int kPacks, bool kAligned>
__global__ void __launch_bounds__(kWarpKernelThreads)
    warp_per_row_kernel(const T* x, T* y, int64_t rows, int64_t cols, bool log_softmax,
                        bool y_vector_ok) {
  constexpr int kRowsPerBlock = kWarpKernelThreads / kLanes;
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  const int group = static_cast<int>(threadIdx.x / kLanes);
  const int64_t row_step = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  // The loop bounds are the same for every thread of the block: groups without a row (the last
  // rows of the matrix) still run the shuffles of their warp, on padding only.
  for (int64_t first_row = blockIdx.x * int64_t{kRowsPerBlock}; first_row < rows;
       first_row += row_step) {
    const int64_t row = first_row + group;
    const bool active = row < rows;
    const T* x_row = x + (active ? row : 0) * cols;
    T* y_row = y + (active ? row : 0) * cols;
    const auto layout = row_layout<kAligned>(x_row, cols);
    Window<T> cache[kPacks];
    // TODO 4 (about 21 lines; checked by [ch10_softmax][warp_per_row]):
    //   (a) For k = 0 .. kPacks-1 (loops under #pragma unroll, so that cache stays in registers):
    //       window w = lane + k * kLanes of the row, cache[k] = load_window(x_row, cols, layout,
    //       w, negative_infinity<T>(), true) when active && w < layout.count, else
    //       fill_pack(negative_infinity<T>()) (padding changes neither max nor sum); keep the
    //       lane's maximum with window_max.
    //   (b) Row maximum: group_reduce<kLanes>(m, common::Max{}). Lane sum with window_sum_exp
    //       (shift = exp_shift(m)); row sum with group_reduce and common::Sum.
    //   (c) stats = row_stats({m, l}); store finish_window(cache[k], stats, log_softmax) to the
    //       same windows of y_row with store_window(..., y_vector_ok), active rows only. One
    //       read of x, one write of y: nothing is loaded twice.
    // BEGIN TODO 4
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int64_t w = lane + int64_t{k} * kLanes;
      cache[k] = (active && w < layout.count)
                     ? load_window(x_row, cols, layout, w, negative_infinity<T>(), true)
                     : fill_pack(negative_infinity<T>());
      m = window_max(cache[k], m);
    }
    m = group_reduce<kLanes>(m, common::Max{});
    const float shift = exp_shift(m);
    float l = 0.0f;
#pragma unroll
    for (int k = 0; k < kPacks; ++k)
      l = window_sum_exp(cache[k], shift, l);
    l = group_reduce<kLanes>(l, common::Sum{});
    const RowStats stats = row_stats({m, l});
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int64_t w = lane + int64_t{k} * kLanes;
      if (active && w < layout.count)
        store_window(y_row, cols, layout, w, finish_window(cache[k], stats, log_softmax),
                     y_vector_ok);
    }
    // END TODO 4
  }
}

// Rows that are all aligned (softmax_rows.cuh) take the instance that knows it, which never
// needs the extra window of a misaligned row.
template <typename T, int kLanes, int kPacks>
void launch_config(const T* x, T* y, int64_t rows, int64_t cols, bool log_softmax, bool y_vector_ok,
                   cudaStream_t stream) {
  constexpr int kRowsPerBlock = kWarpKernelThreads / kLanes;
  const int64_t grid = std::min((rows + kRowsPerBlock - 1) / kRowsPerBlock, kMaxGrid);
  constexpr int kAlignedPacks = kPacks == kMaxWindowsPerLane ? kPacks - 1 : kPacks;
  const auto kernel = rows_aligned<T>(cols, x, y)
                          ? warp_per_row_kernel<T, kLanes, kAlignedPacks, true>
                          : warp_per_row_kernel<T, kLanes, kPacks, false>;
  kernel<<<static_cast<int>(grid), kWarpKernelThreads, 0, stream>>>(x, y, rows, cols, log_softmax,
                                                                    y_vector_ok);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

template <typename T>
int64_t warp_row_capacity() {
  return int64_t{common::kWarpSize} * (kMaxWindowsPerLane - 1) * kPackSize<T>;
}

template <typename T>
void launch_warp_per_row(const T* x, T* y, int64_t rows, int64_t cols, Epilogue epilogue,
                         cudaStream_t stream) {
  CHECK_ARG(cols <= warp_row_capacity<T>(),
            "version 4 keeps a row in one warp's registers: at most "
                << warp_row_capacity<T>() << " elements of this type, got cols = " << cols);
  if (rows == 0) return;
  const bool log_softmax = epilogue == Epilogue::LogSoftmax;
  const bool y_vector_ok =
      (reinterpret_cast<uintptr_t>(y) - reinterpret_cast<uintptr_t>(x)) % 16 == 0;
  // About 4 windows per lane (4 loads of 16 bytes in flight), as few lanes per row as that
  // allows: fewer shuffle steps per element and more rows per warp. Rows of 9 to 16 windows are
  // the exception: 8 lanes of 2 windows beat 4 lanes of 4 (H200: bf16 65536x128 10.9 us against
  // 11.2, 131072x128 18.2 against 18.9); at 32 windows 16 lanes of 2 did not (fp32 65536x128
  // 18.1 against 17.7).
  const int64_t windows = max_windows_per_row(x, cols);
  const int64_t lanes_wanted = (windows + 3) / 4;
  if (lanes_wanted <= 2) {
    launch_config<T, 2, 4>(x, y, rows, cols, log_softmax, y_vector_ok, stream);
  } else if (lanes_wanted <= 4) {
    launch_config<T, 8, 2>(x, y, rows, cols, log_softmax, y_vector_ok, stream);
  } else if (lanes_wanted <= 8) {
    launch_config<T, 8, 4>(x, y, rows, cols, log_softmax, y_vector_ok, stream);
  } else if (lanes_wanted <= 16) {
    launch_config<T, 16, 4>(x, y, rows, cols, log_softmax, y_vector_ok, stream);
  } else if (lanes_wanted <= 32) {
    launch_config<T, 32, 4>(x, y, rows, cols, log_softmax, y_vector_ok, stream);
  } else {
    launch_config<T, 32, kMaxWindowsPerLane>(x, y, rows, cols, log_softmax, y_vector_ok, stream);
  }
}

#define INSTANTIATE(T)                     \
  template int64_t warp_row_capacity<T>(); \
  template void launch_warp_per_row<T>(const T*, T*, int64_t, int64_t, Epilogue, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
#undef INSTANTIATE

}  // namespace softmax::detail

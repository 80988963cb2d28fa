// Chapter 10, versions 1-3: one block per row, the row read from global memory on every pass.
//
//   1_three_pass       max, then sum of exp(x - max), then the write: 3 reads + 1 write of the
//                      row, two shared-memory trees.
//   2_online           one pass keeps the running pair (m, l) per thread, merged by a
//                      shared-memory tree; a second pass writes: 2 reads + 1 write.
//   3_two_level_merge  the pair merged with warp shuffles inside warps, then once across warps:
//                      5 shuffle steps instead of 8 barrier-separated tree levels.
// All three take any shape; their memory traffic (3 or 2 reads) is what versions 4-6 remove.
// Test one:  ./ch10_softmax/ch10_softmax_student_tests "[three_pass]"
#include "softmax_launch.h"
#include "softmax_precision.cuh"  // first: see softmax_rows.cuh
#include "softmax_rows.cuh"

#include "common/block_reduce.cuh"
#include "common/errors.hpp"

#include <algorithm>

namespace softmax::detail {
namespace {

constexpr int kMultipassThreads = 256;  // a power of two: the shared-memory tree halves it
constexpr int64_t kMaxGrid = 1 << 20;   // larger row counts loop

// Sequential-addressing tree over shared memory (chapter 7, version 4); every thread returns
// the result. blockDim.x must be a power of two no larger than the scratch array.
template <typename V, typename Op>
__device__ V shared_tree_reduce(V* scratch, V value, Op op) {
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      scratch[threadIdx.x] = op(scratch[threadIdx.x], scratch[threadIdx.x + stride]);
    __syncthreads();
  }
  const V result = scratch[0];
  __syncthreads();  // the scratch is overwritten by the next reduction
  return result;
}

// Version 1: the textbook formula, one pass per quantity.
template <typename T>
__global__ void __launch_bounds__(kMultipassThreads)
    three_pass_kernel(const T* x, T* y, int64_t rows, int64_t cols, bool log_softmax) {
  __shared__ float scratch[kMultipassThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x_row = x + row * cols;
    T* y_row = y + row * cols;
    // TODO 1 (about 12 lines; checked by [ch10_softmax][three_pass]):
    //   Three strided loops over the row (j = threadIdx.x; j < cols; j += blockDim.x):
    //   (a) each thread's maximum (common::Max: it propagates NaN), then
    //       shared_tree_reduce(scratch, ..., common::Max{}) for the row maximum m;
    //   (b) each thread's sum of __expf(x - shift) with shift = exp_shift(m) (a row of -inf
    //       only must sum to 0, not NaN), then shared_tree_reduce with common::Sum{};
    //   (c) y_row[j] = from_compute<T>(finish<T>(to_compute(x_row[j]), stats, log_softmax)) with
    //       stats = row_stats({m, l}). Read with to_compute(x_row[j]).
    // BEGIN TODO 1
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      m = common::Max{}(m, to_compute(x_row[j]));
    m = shared_tree_reduce(scratch, m, common::Max{});
    const float shift = exp_shift(m);
    float l = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      l += __expf(to_compute(x_row[j]) - shift);
    l = shared_tree_reduce(scratch, l, common::Sum{});
    const RowStats stats = row_stats({m, l});
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      y_row[j] = from_compute<T>(finish<T>(to_compute(x_row[j]), stats, log_softmax));
    // END TODO 1
  }
}

// Version 2: the online pair. Adding x to a set with pair (m, l) is merging it with the set
// {x}, whose pair is (x, 1): l' = l * exp(m - m') + exp(x - m') with m' = max(m, x).
template <typename T>
__global__ void __launch_bounds__(kMultipassThreads)
    online_kernel(const T* x, T* y, int64_t rows, int64_t cols, bool log_softmax) {
  __shared__ common::MaxSum scratch[kMultipassThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x_row = x + row * cols;
    T* y_row = y + row * cols;
    // TODO 2 (about 8 lines; checked by [ch10_softmax][online]):
    //   One strided loop keeps the thread's pair, starting from the empty set {-INFINITY, 0}:
    //   pair = common::MaxSumMerge{}(pair, {value, 1.0f}) per element (read MaxSumMerge: it
    //   turns the merge of two empty sets into an empty set, never into NaN). Merge the
    //   threads' pairs with shared_tree_reduce(scratch, pair, common::MaxSumMerge{}), then a
    //   second loop writes finish(...) with row_stats(row_pair), as in version 1.
    // BEGIN TODO 2
    common::MaxSum pair{-INFINITY, 0.0f};
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      pair = common::MaxSumMerge{}(pair, {to_compute(x_row[j]), 1.0f});
    const RowStats stats = row_stats(shared_tree_reduce(scratch, pair, common::MaxSumMerge{}));
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      y_row[j] = from_compute<T>(finish<T>(to_compute(x_row[j]), stats, log_softmax));
    // END TODO 2
  }
}

// Version 3's merge: the (m, l) pair of the whole block, returned to every thread.
// Warps merge in registers (no barrier), one pair per warp crosses shared memory.
__device__ common::MaxSum block_merge_pairs(common::MaxSum pair) {
  const int lane = threadIdx.x % common::kWarpSize;
  const int warp = threadIdx.x / common::kWarpSize;
  const int num_warps = blockDim.x / common::kWarpSize;
  // TODO 3 (about 12 lines; checked by [ch10_softmax][two_level_merge]):
  //   Shared memory: __shared__ common::MaxSum warp_pairs[common::kWarpSize] and block_pair.
  //   (a) pair = common::warp_reduce(pair, common::MaxSumMerge{}); lane 0 of each warp stores
  //       it in warp_pairs[warp]; barrier;
  //   (b) warp 0 merges warp_pairs[0 .. num_warps) the same way (lanes past num_warps bring the
  //       empty pair {-INFINITY, 0}) and lane 0 stores the result in block_pair; barrier;
  //   (c) every thread reads block_pair, and a last barrier keeps the next call from
  //       overwriting the shared pairs while a slow warp still reads them.
  // BEGIN TODO 3
  __shared__ common::MaxSum warp_pairs[common::kWarpSize];
  __shared__ common::MaxSum block_pair;
  pair = common::warp_reduce(pair, common::MaxSumMerge{});
  if (lane == 0) warp_pairs[warp] = pair;
  __syncthreads();
  if (warp == 0) {
    pair = lane < num_warps ? warp_pairs[lane] : common::MaxSum{-INFINITY, 0.0f};
    pair = common::warp_reduce(pair, common::MaxSumMerge{});
    if (lane == 0) block_pair = pair;
  }
  __syncthreads();
  pair = block_pair;
  __syncthreads();
  return pair;
  // END TODO 3
}

template <typename T>
__global__ void __launch_bounds__(kMultipassThreads)
    two_level_merge_kernel(const T* x, T* y, int64_t rows, int64_t cols, bool log_softmax) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x_row = x + row * cols;
    T* y_row = y + row * cols;
    common::MaxSum pair{-INFINITY, 0.0f};
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      pair = common::MaxSumMerge{}(pair, {to_compute(x_row[j]), 1.0f});
    const RowStats stats = row_stats(block_merge_pairs(pair));
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      y_row[j] = from_compute<T>(finish<T>(to_compute(x_row[j]), stats, log_softmax));
  }
}

int grid_for(int64_t rows) {
  return static_cast<int>(std::min(rows, kMaxGrid));
}

}  // namespace

template <typename T>
void launch_three_pass(const T* x, T* y, int64_t rows, int64_t cols, Epilogue epilogue,
                       cudaStream_t stream) {
  if (rows == 0) return;
  three_pass_kernel<T><<<grid_for(rows), kMultipassThreads, 0, stream>>>(
      x, y, rows, cols, epilogue == Epilogue::LogSoftmax);
  CUDA_CHECK_LAUNCH();
}

template <typename T>
void launch_online(const T* x, T* y, int64_t rows, int64_t cols, Epilogue epilogue,
                   cudaStream_t stream) {
  if (rows == 0) return;
  online_kernel<T><<<grid_for(rows), kMultipassThreads, 0, stream>>>(
      x, y, rows, cols, epilogue == Epilogue::LogSoftmax);
  CUDA_CHECK_LAUNCH();
}

template <typename T>
void launch_two_level_merge(const T* x, T* y, int64_t rows, int64_t cols, Epilogue epilogue,
                            cudaStream_t stream) {
  if (rows == 0) return;
  two_level_merge_kernel<T><<<grid_for(rows), kMultipassThreads, 0, stream>>>(
      x, y, rows, cols, epilogue == Epilogue::LogSoftmax);
  CUDA_CHECK_LAUNCH();
}

#define INSTANTIATE(T)                                                                        \
  template void launch_three_pass<T>(const T*, T*, int64_t, int64_t, Epilogue, cudaStream_t); \
  template void launch_online<T>(const T*, T*, int64_t, int64_t, Epilogue, cudaStream_t);     \
  template void launch_two_level_merge<T>(const T*, T*, int64_t, int64_t, Epilogue, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
#undef INSTANTIATE

}  // namespace softmax::detail

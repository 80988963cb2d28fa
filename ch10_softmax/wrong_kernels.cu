// One block-per-row kernel with a switch for each bug, so that every wrong version differs from
// a correct online softmax in exactly one place.
#include "wrong_kernels.h"

#include "common/block_reduce.cuh"
#include "common/errors.hpp"

#include <cuda_bf16.h>

#include <cstdint>

namespace wrong {
namespace {

enum class Bug {
  WritesZero,
  SkipsMaxSubtraction,
  MissesCrossWarpMerge,
  DropsLastColumn,
  StatsMissLastColumn,
  WritesPastRow,
  MergeWithoutEmptyGuard,
  SumsInBf16,
  WrapsOffsets,
};

constexpr int kThreads = 256;

__device__ float widen(float v) {
  return v;
}
__device__ float widen(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <typename T>
__device__ T narrow(float v);
template <>
__device__ float narrow<float>(float v) {
  return v;
}
template <>
__device__ __nv_bfloat16 narrow<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// The merge of MaxSumMerge without its guard for two empty sets.
struct UnguardedMerge {
  __device__ common::MaxSum operator()(common::MaxSum a, common::MaxSum b) const {
    const float m = common::Max{}(a.max, b.max);
    return {m, a.sum * __expf(a.max - m) + b.sum * __expf(b.max - m)};
  }
};

template <typename T, Bug kBug>
__global__ void buggy_kernel(const T* x, T* y, int64_t rows, int64_t cols) {
  const int64_t row = blockIdx.x;
  if (row >= rows) return;
  // 31-bit offsets: the product wraps, but stays inside the buffer instead of faulting.
  const int64_t offset = kBug == Bug::WrapsOffsets ? (row * cols) & 0x7fffffff : row * cols;
  const T* xr = x + offset;
  T* yr = y + offset;
  const int64_t end = kBug == Bug::DropsLastColumn ? cols - 1 : cols;
  const int64_t stats_end = kBug == Bug::StatsMissLastColumn ? cols - 1 : end;
  common::MaxSum pair{-INFINITY, 0.0f};
  float sum_in_io_type = 0.0f;
  for (int64_t j = threadIdx.x; j < stats_end; j += blockDim.x) {
    const float v = widen(xr[j]);
    if (kBug == Bug::MergeWithoutEmptyGuard)
      pair = UnguardedMerge{}(pair, {v, 1.0f});
    else
      pair = common::MaxSumMerge{}(pair, {v, 1.0f});
  }
  if (kBug == Bug::MissesCrossWarpMerge)
    pair = common::warp_reduce(pair, common::MaxSumMerge{});
  else if (kBug == Bug::MergeWithoutEmptyGuard)
    pair = common::block_reduce(pair, UnguardedMerge{}, common::MaxSum{-INFINITY, 0.0f});
  else
    pair = common::block_reduce(pair, common::MaxSumMerge{}, common::MaxSum{-INFINITY, 0.0f});
  if (kBug == Bug::SumsInBf16) {
    // The sum rounded to bf16 after every addition: 8 bits of mantissa stall a long sum.
    __nv_bfloat16 s = __float2bfloat16_rn(0.0f);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      s = __float2bfloat16_rn(__bfloat162float(s) + __expf(widen(xr[j]) - pair.max));
    sum_in_io_type = common::block_reduce(__bfloat162float(s), common::Sum{}, 0.0f);
    pair.sum = sum_in_io_type;
  }
  float shift = pair.max;
  float sum = pair.sum;
  if (kBug == Bug::SkipsMaxSubtraction) {
    shift = 0.0f;
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      s += __expf(widen(xr[j]));
    sum = common::block_reduce(s, common::Sum{}, 0.0f);
  }
  for (int64_t j = threadIdx.x; j < end; j += blockDim.x)
    yr[j] = narrow<T>(kBug == Bug::WritesZero ? 0.0f : __expf(widen(xr[j]) - shift) / sum);
  if (kBug == Bug::WritesPastRow && threadIdx.x == 0) yr[cols] = narrow<T>(0.0f);
}

enum class BackwardBug { None, MissesCrossWarpDot, DotNotScaled, DropsLastColumn };

// In place (dx == dy, or dx == y) each thread reads its elements before it writes them, and
// the dot is complete before any write.
template <BackwardBug kBug>
__global__ void backward_kernel(const float* y, const float* dy, float* dx, int64_t rows,
                                int64_t cols) {
  const int64_t row = blockIdx.x;
  if (row >= rows) return;
  const float* yr = y + row * cols;
  const float* dyr = dy + row * cols;
  float* dxr = dx + row * cols;
  float partial = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    partial += yr[j] * dyr[j];
  const float dot = kBug == BackwardBug::MissesCrossWarpDot
                        ? common::warp_reduce(partial, common::Sum{})
                        : common::block_reduce(partial, common::Sum{}, 0.0f);
  const int64_t end = kBug == BackwardBug::DropsLastColumn ? cols - 1 : cols;
  for (int64_t j = threadIdx.x; j < end; j += blockDim.x)
    dxr[j] = kBug == BackwardBug::DotNotScaled ? yr[j] * dyr[j] - dot : yr[j] * (dyr[j] - dot);
}

template <BackwardBug kBug>
check::BackwardRun<float> make_backward() {
  return [](const float* y, const float* dy, float* dx, int64_t rows, int64_t cols) {
    if (rows == 0) return;
    backward_kernel<kBug><<<static_cast<unsigned>(rows), kThreads>>>(y, dy, dx, rows, cols);
    CUDA_CHECK_LAUNCH();
  };
}

template <typename T, Bug kBug>
check::ForwardRun<T> make() {
  return [](const T* x, T* y, int64_t rows, int64_t cols) {
    if (rows == 0) return;
    buggy_kernel<T, kBug><<<static_cast<unsigned>(rows), kThreads>>>(x, y, rows, cols);
    CUDA_CHECK_LAUNCH();
  };
}

}  // namespace

check::ForwardRun<float> writes_zero() {
  return make<float, Bug::WritesZero>();
}
check::ForwardRun<float> skips_max_subtraction() {
  return make<float, Bug::SkipsMaxSubtraction>();
}
check::ForwardRun<float> misses_cross_warp_merge() {
  return make<float, Bug::MissesCrossWarpMerge>();
}
check::ForwardRun<float> drops_last_column() {
  return make<float, Bug::DropsLastColumn>();
}
check::ForwardRun<float> stats_miss_last_column() {
  return make<float, Bug::StatsMissLastColumn>();
}
check::ForwardRun<float> writes_past_row() {
  return make<float, Bug::WritesPastRow>();
}
check::ForwardRun<float> merge_without_empty_guard() {
  return make<float, Bug::MergeWithoutEmptyGuard>();
}
check::ForwardRun<__nv_bfloat16> sums_in_bf16() {
  return make<__nv_bfloat16, Bug::SumsInBf16>();
}
check::ForwardRun<float> wraps_offsets_at_32_bits() {
  return make<float, Bug::WrapsOffsets>();
}

check::BackwardRun<float> backward_control() {
  return make_backward<BackwardBug::None>();
}
check::BackwardRun<float> backward_misses_cross_warp_dot() {
  return make_backward<BackwardBug::MissesCrossWarpDot>();
}
check::BackwardRun<float> backward_dot_not_scaled() {
  return make_backward<BackwardBug::DotNotScaled>();
}
check::BackwardRun<float> backward_drops_last_column() {
  return make_backward<BackwardBug::DropsLastColumn>();
}

}  // namespace wrong

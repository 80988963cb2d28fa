// Device helpers every kernel of the chapter shares: the optional affine parameters, the statistics
// outputs, the grid of the row loops (T <-> float conversions come from common/dtype.hpp).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/dtype.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>

namespace normalization::detail {

using common::from_float;
using common::to_float;

// One element of γ or β through the read-only path, as __ldg does, but in an asm volatile
// statement. The compiler treats __ldg as free of side effects and hoisted such a scalar load
// out of the row loop, above the tests that guard it (an absent γ, a row with no tail element),
// reading out of bounds (seen with nvcc 13.0). A volatile asm stays where it is written.
template <typename T>
__device__ __forceinline__ T load_param(const T* p) {
  T value;
  if constexpr (sizeof(T) == 4) {
    uint32_t word;
    asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(word) : "l"(p));
    memcpy(&value, &word, sizeof(value));
  } else {
    unsigned short half_word;
    asm volatile("ld.global.nc.u16 %0, [%1];" : "=h"(half_word) : "l"(p));
    memcpy(&value, &half_word, sizeof(value));
  }
  return value;
}

// γ_j or β_j, or the neutral value when the parameter is absent (nullptr).
template <typename T>
__device__ __forceinline__ float param_at(const T* p, int64_t j, float absent) {
  return p == nullptr ? absent : to_float(load_param(p + j));
}

__device__ __forceinline__ void write_stats(float* mean_out, float* rstd_out, int64_t row,
                                            float mean, float rstd) {
  if (mean_out != nullptr) mean_out[row] = mean;
  if (rstd_out != nullptr) rstd_out[row] = rstd;
}

// Grid size for kernels that loop over rows: one block (or `rows_per_block` rows) per row, capped
// at the grid's limit; the kernels' row loops cover the rest.
inline unsigned grid_for_rows(int64_t rows, int64_t rows_per_block = 1) {
  const int64_t blocks = (rows + rows_per_block - 1) / rows_per_block;
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(blocks, 1), INT_MAX));
}

// Block size of the block-per-row sweep kernels: about 8 elements per thread, a whole number of
// warps (block_reduce needs it), at least one warp and at most 512 threads.
inline int sweep_block_threads(int64_t n) {
  const int64_t warps = (n + 8 * 32 - 1) / (8 * 32);
  return static_cast<int>(std::clamp<int64_t>(warps, 1, 16) * 32);
}

}  // namespace normalization::detail

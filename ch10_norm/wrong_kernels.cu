#include "wrong_kernels.h"

#include "norm_common.cuh"

#include "common/block_reduce.cuh"
#include "common/errors.hpp"

#include <type_traits>

namespace wrong {
namespace {

using common::from_float;
using common::to_float;
using normalization::detail::param_at;
using normalization::detail::write_stats;

constexpr int kBlock = 256;

template <Bug kBug>
__device__ float row_sum(float v) {
  if constexpr (kBug == Bug::MissesCrossWarpMerge) {
    return common::warp_reduce(v, common::Sum{});
  } else {
    return common::block_reduce(v, common::Sum{}, 0.0f);
  }
}

// Block per row, two passes; kBug switches one mistake on. Acc is the accumulator's type;
// kTruncates converts y to bf16 toward zero.
template <typename T, typename Acc, Bug kBug, bool kTruncates = false>
__global__ void layernorm_kernel(const T* x, const T* gamma, const T* beta, T* y, float* mean_out,
                                 float* rstd_out, int64_t rows, int64_t n, float eps) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x_row = x + row * n;
    T* y_row = y + row * n;
    const int64_t end = kBug == Bug::DropsLastElement ? n - 1 : n;
    Acc sum = Acc(0.0f), sum_sq = Acc(0.0f);
    for (int64_t i = threadIdx.x; i < end; i += blockDim.x) {
      const float v = to_float(x_row[i]);
      sum = Acc(float(sum) + v);
      sum_sq = Acc(float(sum_sq) + v * v);
    }
    const float mean = row_sum<kBug>(float(sum)) / static_cast<float>(n);
    float var;
    if constexpr (kBug == Bug::OnePassVariance) {
      var = row_sum<kBug>(float(sum_sq)) / static_cast<float>(n) - mean * mean;
    } else {
      float centred = 0.0f;
      for (int64_t i = threadIdx.x; i < end; i += blockDim.x) {
        const float d = to_float(x_row[i]) - mean;
        centred += d * d;
      }
      var = row_sum<kBug>(centred) / static_cast<float>(n);
    }
    const float rstd = kBug == Bug::NoEps          ? rsqrtf(var)
                       : kBug == Bug::HardCodesEps ? rsqrtf(var + 1e-5f)
                                                   : rsqrtf(var + eps);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const float out =
          (to_float(x_row[i]) - mean) * rstd * param_at(gamma, i, 1.0f) + param_at(beta, i, 0.0f);
      if constexpr (kTruncates)
        y_row[i] = __float2bfloat16_rz(out);
      else
        y_row[i] = from_float<T>(kBug == Bug::WritesZeros ? 0.0f : out);
    }
    // Past the last row: past the output, where the guards see it (past any other row, the
    // store would land on the next row, which its own block overwrites).
    if (kBug == Bug::WritesPastRow && threadIdx.x == 0 && row == rows - 1) y_row[n] = y_row[0];
    if (threadIdx.x == 0) {
      if (kBug == Bug::WritesZeros)
        write_stats(mean_out, rstd_out, row, 0.0f, 0.0f);
      else
        write_stats(mean_out, rstd_out, row, mean, rstd);
    }
  }
}

template <typename T, typename Acc, Bug kBug, bool kTruncates = false>
check::LayerNormRun<T> layernorm_run() {
  static_assert(!kTruncates || std::is_same_v<T, __nv_bfloat16>);
  return [](const T* x, const T* g, const T* b, T* y, float* mean, float* rstd, int64_t rows,
            int64_t n, float eps) {
    if (rows == 0) return;
    layernorm_kernel<T, Acc, kBug, kTruncates>
        <<<normalization::detail::grid_for_rows(rows), kBlock>>>(x, g, b, y, mean, rstd, rows, n,
                                                                 eps);
    CUDA_CHECK_LAUNCH();
  };
}

// RMSNorm, with kFused of x + residual. kCorrect = false is the bug: RMSNorm forgets γ, the
// fused add never writes x + residual back; kCorrect = true is the control.
template <bool kFused, bool kCorrect>
__global__ void rmsnorm_kernel(const float* x, float* residual, const float* gamma, float* y,
                               float* rstd_out, int64_t rows, int64_t n, float eps) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* x_row = x + row * n;
    float* r_row = kFused ? residual + row * n : nullptr;
    float sum_sq = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const float v = kFused ? x_row[i] + r_row[i] : x_row[i];
      sum_sq += v * v;
    }
    const float rstd =
        rsqrtf(common::block_reduce(sum_sq, common::Sum{}, 0.0f) / static_cast<float>(n) + eps);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const float v = kFused ? x_row[i] + r_row[i] : x_row[i];
      if (kFused && kCorrect) r_row[i] = v;
      const float g = kFused || kCorrect ? param_at(gamma, i, 1.0f) : 1.0f;
      y[row * n + i] = v * rstd * g;
    }
    if (threadIdx.x == 0) rstd_out[row] = rstd;
  }
}

template <bool kCorrect>
check::RmsNormRun<float> rmsnorm_run() {
  return [](const float* x, const float* g, float* y, float* rstd, int64_t rows, int64_t n,
            float eps) {
    if (rows == 0) return;
    rmsnorm_kernel<false, kCorrect><<<normalization::detail::grid_for_rows(rows), kBlock>>>(
        x, nullptr, g, y, rstd, rows, n, eps);
    CUDA_CHECK_LAUNCH();
  };
}

template <bool kCorrect>
check::AddRmsNormRun<float> add_rmsnorm_run() {
  return [](const float* x, float* residual, const float* g, float* y, float* rstd, int64_t rows,
            int64_t n, float eps) {
    if (rows == 0) return;
    rmsnorm_kernel<true, kCorrect><<<normalization::detail::grid_for_rows(rows), kBlock>>>(
        x, residual, g, y, rstd, rows, n, eps);
    CUDA_CHECK_LAUNCH();
  };
}

}  // namespace

const char* bug_name(Bug bug) {
  switch (bug) {
    case Bug::None:
      return "correct";
    case Bug::WritesZeros:
      return "writes zeros";
    case Bug::MissesCrossWarpMerge:
      return "misses the cross-warp merge";
    case Bug::DropsLastElement:
      return "drops the last element";
    case Bug::OnePassVariance:
      return "one-pass variance";
    case Bug::NoEps:
      return "no eps";
    case Bug::HardCodesEps:
      return "hard-codes eps = 1e-5";
    case Bug::WritesPastRow:
      return "writes past the row";
  }
  return "?";
}

check::LayerNormRun<float> layernorm(Bug bug) {
  switch (bug) {
    case Bug::None:
      return layernorm_run<float, float, Bug::None>();
    case Bug::WritesZeros:
      return layernorm_run<float, float, Bug::WritesZeros>();
    case Bug::MissesCrossWarpMerge:
      return layernorm_run<float, float, Bug::MissesCrossWarpMerge>();
    case Bug::DropsLastElement:
      return layernorm_run<float, float, Bug::DropsLastElement>();
    case Bug::OnePassVariance:
      return layernorm_run<float, float, Bug::OnePassVariance>();
    case Bug::NoEps:
      return layernorm_run<float, float, Bug::NoEps>();
    case Bug::HardCodesEps:
      return layernorm_run<float, float, Bug::HardCodesEps>();
    case Bug::WritesPastRow:
      return layernorm_run<float, float, Bug::WritesPastRow>();
  }
  return {};
}

check::LayerNormRun<__nv_bfloat16> layernorm_bf16_statistics() {
  return layernorm_run<__nv_bfloat16, __nv_bfloat16, Bug::None>();
}
check::LayerNormRun<__nv_bfloat16> layernorm_bf16_control() {
  return layernorm_run<__nv_bfloat16, float, Bug::None>();
}
check::LayerNormRun<__nv_bfloat16> layernorm_bf16_truncates() {
  return layernorm_run<__nv_bfloat16, float, Bug::None, true>();
}

check::RmsNormRun<float> rmsnorm_ignores_gamma() {
  return rmsnorm_run<false>();
}
check::RmsNormRun<float> rmsnorm_control() {
  return rmsnorm_run<true>();
}

check::AddRmsNormRun<float> add_rmsnorm_forgets_residual() {
  return add_rmsnorm_run<false>();
}
check::AddRmsNormRun<float> add_rmsnorm_control() {
  return add_rmsnorm_run<true>();
}

}  // namespace wrong

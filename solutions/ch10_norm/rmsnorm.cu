// Chapter 10: RMSNorm, and the residual add fused into it.
//
//   1 block_loop  block per row: a sweep for Σx², a sweep to scale (given: it is TODO 1 with one
//                 statistic instead of two, and the fallback for rows too long for registers)
//   2 registers   the row in registers, as layernorm_3_registers: one statistic, one reduction
//   3 pipelined   rows streamed through a shared-memory ring, as layernorm_4_pipelined
//   4 reread      block per row, the row read twice, as layernorm_5_reread (given: one statistic
//                 is what TODO 11 computes first; the fused add writes r = x + residual in its
//                 first pass and reads r alone in its second)
//   5 dispatch    reread or pipelined where they pay, registers, block_loop beyond (dispatch.cu)
// The fused add_rmsnorm versions compute r = x + residual, write r back to `residual` (the next
// layer's residual stream) and normalize r, all in the same kernel: 4 tensors move instead of the
// 5 of an add kernel followed by an RMSNorm kernel.

#include "norm.h"

#include "arguments.h"
#include "norm_common.cuh"
#include "registers_config.h"
#include "ring_config.h"
#include "row_in_registers.cuh"
#include "row_reread.cuh"
#include "row_ring.cuh"

#include "common/block_reduce.cuh"
#include "common/errors.hpp"
#include "common/register_caps.cuh"

#include <algorithm>
#include <cmath>

namespace normalization {
namespace detail {

// The operation a kernel instance runs, for the rules that differ between them (registers,
// batch shapes).
constexpr NormOp rmsnorm_op(bool fused) {
  return fused ? NormOp::AddRmsNorm : NormOp::RmsNorm;
}

// Version 1 (given). With kFused, the first sweep also forms r = x + residual, rounds it to T
// and writes it back; the second sweep reads r again: the same thread wrote it, so no barrier is
// needed beyond the reduction's.
template <typename T, bool kFused>
__global__ void rmsnorm_block_loop_kernel(const T* x, T* residual, const T* gamma, T* y,
                                          float* rstd_out, int64_t rows, int64_t n, float eps) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x_row = x + row * n;
    T* r_row = kFused ? residual + row * n : nullptr;
    T* y_row = y + row * n;
    float sum_sq = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      float v = to_float(x_row[i]);
      if constexpr (kFused) {
        const T r = from_float<T>(v + to_float(r_row[i]));
        r_row[i] = r;
        v = to_float(r);
      }
      sum_sq += v * v;
    }
    const float mean_sq = common::block_reduce(sum_sq, common::Sum{}, 0.0f) / static_cast<float>(n);
    const float rstd = rsqrtf(mean_sq + eps);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const float v = to_float(kFused ? r_row[i] : x_row[i]);
      y_row[i] = from_float<T>(v * rstd * param_at(gamma, i, 1.0f));
    }
    if (threadIdx.x == 0) write_stats(nullptr, rstd_out, row, 0.0f, rstd);
  }
}

// Version 2: the row in registers; with kFused, the residual add happens in registers too. The
// two steps are functions of the slices, shared with the Pipelined version.

// r = x + residual for the elements this thread holds, rounded to T, left in `slice` and
// written back to r_row.
template <typename T, int kPacks, bool kWarpPerRow>
__device__ __forceinline__ void add_residual(RowSlice<T, kPacks>& slice,
                                             const RowSlice<T, kPacks>& res, T* r_row,
                                             const RowLayout<T>& layout,
                                             const RowTeam<kWarpPerRow>& team) {
  // TODO 7 (about 8 lines; checked by [ch10_norm][fused_add]):
  //   `res` holds the residual row in the same layout as `slice` (x). For the slots this thread
  //   holds (pack k while k · team.threads + team.rank < layout.packs; the extra element while
  //   team.rank < layout.extras()), replace x by x + r rounded to T: add_rounded(slice.v[k],
  //   res.v[k]) for packs, from_float<T>(to_float(x) + to_float(r)) for the extra element. That
  //   rounded sum is exactly what is stored and then normalized. Write it back with
  //   store_row(r_row, no_params, no_params, slice, layout, team.rank, team.threads, f), where
  //   no_params = static_cast<const T*>(nullptr) (a bare nullptr has no element type) and
  //   f(v, g, b) = v.
  // BEGIN TODO 7
#pragma unroll
  for (int k = 0; k < kPacks; ++k)
    if (int64_t{k} * team.threads + team.rank < layout.packs)
      slice.v[k] = add_rounded(slice.v[k], res.v[k]);
  if (team.rank < layout.extras())
    slice.extra = from_float<T>(to_float(slice.extra) + to_float(res.extra));
  store_row(r_row, static_cast<const T*>(nullptr), static_cast<const T*>(nullptr), slice, layout,
            team.rank, team.threads, [](float v, float, float) { return v; });
  // END TODO 7
}

// y = x · rstd · γ for the row whose slice the team holds, and rstd.
template <typename T, int kPacks, bool kWarpPerRow, typename G>
__device__ __forceinline__ void rmsnorm_from_slice(const RowSlice<T, kPacks>& slice,
                                                   const RowLayout<T>& layout,
                                                   const RowTeam<kWarpPerRow>& team, const G& gamma,
                                                   T* y_row, float* rstd_out, int64_t row,
                                                   int64_t n, float eps) {
  // TODO 6 (about 8 lines; checked by [ch10_norm][rmsnorm]):
  //   mean_sq = team.sum(thread_sum(slice, layout, team.rank, team.threads, v ↦ v²)) / n,
  //   rstd = rsqrtf(mean_sq + eps); store_row(y_row, gamma, static_cast<const T*>(nullptr),
  //   slice, layout, team.rank, team.threads, f) with f(v, g, b) = v · rstd · g; team rank 0
  //   stores rstd with write_stats(nullptr, rstd_out, row, 0.0f, rstd).
  // BEGIN TODO 6
  const float mean_sq =
      team.sum(thread_sum(slice, layout, team.rank, team.threads, [](float v) { return v * v; })) /
      static_cast<float>(n);
  const float rstd = rsqrtf(mean_sq + eps);
  store_row(y_row, gamma, static_cast<const T*>(nullptr), slice, layout, team.rank, team.threads,
            [rstd](float v, float g, float) { return v * rstd * g; });
  if (team.rank == 0) write_stats(nullptr, rstd_out, row, 0.0f, rstd);
  // END TODO 6
}

template <typename T, int kPacks, bool kWarpPerRow, bool kFused, bool kAligned>
__global__ void __launch_bounds__(max_threads_for(kWarpPerRow, kPacks),
                                  COMMON_TUNED_MIN_BLOCKS(registers_min_blocks(rmsnorm_op(kFused),
                                                                               kWarpPerRow, kPacks,
                                                                               kAligned)))
    rmsnorm_registers_kernel(const T* x, T* residual, const T* gamma, T* y, float* rstd_out,
                             int64_t rows, int64_t n, float eps) {
  const auto team = RowTeam<kWarpPerRow>::make();
  for (int64_t row = team.first_row; row < rows; row += team.row_stride) {
    const T* x_row = x + row * n;
    T* r_row = kFused ? residual + row * n : nullptr;
    T* y_row = y + row * n;
    const RowLayout<T> layout = row_layout<T, kAligned>(n, x_row, y_row, r_row, gamma, nullptr);
    RowSlice<T, kPacks> slice;
    load_row(slice, x_row, layout, team.rank, team.threads);
    [[maybe_unused]] RowSlice<T, kPacks> res;
    if constexpr (kFused) load_row(res, r_row, layout, team.rank, team.threads);
    auto normalize = [&](const auto& g) {
      if constexpr (kFused) add_residual(slice, res, r_row, layout, team);
      rmsnorm_from_slice(slice, layout, team, g, y_row, rstd_out, row, n, eps);
    };
    // γ loads together with x where params_with_x, as in LayerNorm's registers kernel.
    if constexpr (params_with_x<T>(kWarpPerRow, kPacks, kAligned))
      normalize(params_in_registers<T, kPacks>(gamma, layout, team.rank, team.threads));
    else
      normalize(gamma);
  }
}

// Version 3: rows streamed through the ring (row_ring.cuh); the fused add streams x and the
// residual side by side, two rows per stage.
template <typename T, int kPacks, bool kFused, bool kAligned>
__global__ void __launch_bounds__(max_threads_for(false, kPacks))
    rmsnorm_pipelined_kernel(const T* x, T* residual, const T* gamma, T* y, float* rstd_out,
                             int64_t rows, int64_t n, float eps, int stages) {
  constexpr int kInputs = kFused ? 2 : 1;
  const auto team = RowTeam<false>::make();
  const T* inputs[kInputs];
  inputs[0] = x;
  if constexpr (kFused) inputs[1] = residual;
  auto layout_of = [&](int64_t row) {
    return row_layout<T, kAligned>(n, x + row * n, y + row * n,
                                   kFused ? residual + row * n : nullptr, gamma, nullptr);
  };
  auto stream_rows = [&](const auto& g) {
    for_each_row_pipelined<T, kPacks, kInputs>(
        inputs, rows, n, stages, layout_of,
        [&](RowSlice<T, kPacks>(&slices)[kInputs], const RowLayout<T>& layout, int64_t row) {
          if constexpr (kFused)
            add_residual(slices[0], slices[1], residual + row * n, layout, team);
          rmsnorm_from_slice(slices[0], layout, team, g, y + row * n, rstd_out, row, n, eps);
        });
  };
  if constexpr (pipelined_params_in_registers<T>(kPacks, kAligned)) {
    stream_rows(params_in_registers<T, kPacks>(gamma, layout_of(0), team.rank, team.threads));
  } else {
    stream_rows(gamma);
  }
}

// Version 4 (given): the row read twice (row_reread.cuh). With kFused, the first pass reads x
// and the residual for the last time (reload_row), rounds their sum r and writes it to the
// residual at once; the second pass reads r alone, one stream instead of two. It reads what this
// kernel has written, each thread only its own stores, which program order makes visible to its
// loads as long as they do not take the read-only path (reload_row's are coherent); the block
// reduction's barrier between the passes also keeps the compiler from moving them across.
template <typename T, int kThreads, int kPacks, bool kFused, bool kAligned>
__global__ void __launch_bounds__(kThreads,
                                  COMMON_TUNED_MIN_BLOCKS(reread_min_blocks(
                                      kThreads, reread_registers<T>(rmsnorm_op(kFused), kPacks),
                                      kAligned)))
    rmsnorm_reread_kernel(const T* x, T* residual, const T* gamma, T* y, float* rstd_out, int64_t n,
                          float eps) {
  constexpr int kBatchPacks = kThreads * kPacks;
  const int64_t row = blockIdx.x;
  const T* x_row = x + row * n;
  T* r_row = kFused ? residual + row * n : nullptr;
  T* y_row = y + row * n;
  const RowLayout<T> layout = row_layout<T, kAligned>(n, x_row, y_row, r_row, gamma, nullptr);
  const RowTeam<false> team = RowTeam<false>::make();
  static_assert(!kFused || streaming_reread<T>(kPacks),
                "the second pass reads r, which the first wrote: no read-only loads");
  const T* no_param = nullptr;
  // The first pass's share of batch `part`; fused, r = x + residual (rounded), written back.
  auto first_pass = [&](RowSlice<T, kPacks>& slice, const RowLayout<T>& part) {
    if constexpr (kFused) {
      reload_row(slice, x_row, part, team.rank, kThreads);
      RowSlice<T, kPacks> res;
      reload_row(res, r_row, part, team.rank, kThreads);
#pragma unroll
      for (int k = 0; k < kPacks; ++k)
        if (k * kThreads + team.rank < part.packs) slice.v[k] = add_rounded(slice.v[k], res.v[k]);
      const auto same = [](float v, float, float) { return v; };
      store_row(r_row, no_param, no_param, slice, part, team.rank, kThreads, same);
    } else {
      load_row(slice, x_row, part, team.rank, kThreads);
    }
  };
  const int batches = batch_count<kBatchPacks>(layout);
  float sum_sq = 0.0f;
#pragma unroll 1
  for (int b = 0; b < batches; ++b) {
    const RowLayout<T> part = batch_layout<T, kBatchPacks>(layout, b);
    RowSlice<T, kPacks> slice;
    first_pass(slice, part);
    sum_sq += thread_sum(slice, part, team.rank, kThreads, [](float v) { return v * v; });
  }
  // The extra element (head or tail) this thread handles, with the residual added where fused.
  if (team.rank < layout.extras()) {
    const int64_t col = layout.extra_column(team.rank);
    T v = x_row[col];
    if constexpr (kFused) {
      v = from_float<T>(to_float(v) + to_float(r_row[col]));
      r_row[col] = v;
    }
    const float f = to_float(v);
    sum_sq += f * f;
  }
  const float rstd =
      rsqrtf(common::block_reduce(sum_sq, common::Sum{}, 0.0f) / static_cast<float>(n) + eps);
  const auto scale = [rstd](float v, float g, float) { return v * rstd * g; };
  const T* normalized = kFused ? r_row : x_row;  // what the second pass reads
#pragma unroll 1
  for (int b = batches - 1; b >= 0; --b) {
    const RowLayout<T> part = batch_layout<T, kBatchPacks>(layout, b);
    RowSlice<T, kPacks> slice;
    reload_row(slice, normalized, part, team.rank, kThreads);
    store_row<true>(y_row, gamma, no_param, slice, part, team.rank, kThreads, scale);
  }
  if (team.rank < layout.extras()) {
    const int64_t col = layout.extra_column(team.rank);
    y_row[col] = from_float<T>(scale(to_float(normalized[col]), param_at(gamma, col, 1.0f), 0.0f));
  }
  if (team.rank == 0) write_stats(nullptr, rstd_out, row, 0.0f, rstd);
}

// `who`: the public function called, named by every refusal.
template <typename T, bool kFused>
void launch(const char* who, RmsNormVersion v, const T* x, T* residual, const T* gamma, T* y,
            float* rstd, int64_t rows, int64_t n, float eps, cudaStream_t stream) {
  switch (v) {
    case RmsNormVersion::BlockLoop:
      rmsnorm_block_loop_kernel<T, kFused>
          <<<grid_for_rows(rows), sweep_block_threads(n), 0, stream>>>(x, residual, gamma, y, rstd,
                                                                       rows, n, eps);
      CUDA_CHECK_LAUNCH();
      return;
    case RmsNormVersion::Registers: {
      const auto config =
          registers_config<T>(kFused ? NormOp::AddRmsNorm : NormOp::RmsNorm, rows, n);
      CHECK_ARG_FOR(who, config.has_value(),
                    "n = " << n << " does not fit in registers (at most " << max_registers_n<T>()
                           << " for this type)");
      const int64_t rows_per_block = config->warp_per_row ? config->threads / 32 : 1;
      with_registers_instance<T>(
          *config, rows_aligned<T>(n, {x, residual, gamma, y}),
          [&](auto packs, auto warp_per_row, auto aligned) {
            rmsnorm_registers_kernel<T, decltype(packs)::value, decltype(warp_per_row)::value,
                                     kFused, decltype(aligned)::value>
                <<<grid_for_rows(rows, rows_per_block), config->threads, 0, stream>>>(
                    x, residual, gamma, y, rstd, rows, n, eps);
          });
      CUDA_CHECK_LAUNCH();
      return;
    }
    case RmsNormVersion::Pipelined: {
      const auto config = pipelined_config<T>(n, kFused ? 2 : 1);
      CHECK_ARG_FOR(who, config.has_value(), pipelined_refusal(n));
      with_pipelined_instance<T, kFused ? 2 : 1>(
          *config, rows_aligned<T>(n, {x, residual, gamma, y}), [&](auto packs, auto aligned) {
            const auto kernel = rmsnorm_pipelined_kernel<T, decltype(packs)::value, kFused,
                                                         decltype(aligned)::value>;
            kernel<<<pipelined_grid(kernel, *config, rows), config->threads, config->shared_bytes,
                     stream>>>(x, residual, gamma, y, rstd, rows, n, eps, config->stages);
          });
      CUDA_CHECK_LAUNCH();
      return;
    }
    case RmsNormVersion::Reread:
      for_each_reread_launch<T, rmsnorm_op(kFused)>(
          who, rows, n, rows_aligned<T>(n, {x, residual, gamma, y}),
          [&](auto threads, auto packs, auto aligned, int64_t first, unsigned blocks) {
            rmsnorm_reread_kernel<T, decltype(threads)::value, decltype(packs)::value, kFused,
                                  decltype(aligned)::value>
                <<<blocks, decltype(threads)::value, 0, stream>>>(
                    x + first * n, kFused ? residual + first * n : nullptr, gamma, y + first * n,
                    rstd ? rstd + first : nullptr, n, eps);
          });
      return;
    case RmsNormVersion::Dispatch:
      break;  // the callers resolve it first
  }
  CHECK_ARG_FOR(who, false,
                "no kernel for version " << static_cast<int>(v)
                                         << " (did choose_rmsnorm_version return Dispatch?)");
}

}  // namespace detail

const char* version_name(RmsNormVersion v) {
  switch (v) {
    case RmsNormVersion::BlockLoop:
      return "1_block_loop";
    case RmsNormVersion::Registers:
      return "2_registers";
    case RmsNormVersion::Pipelined:
      return "3_pipelined";
    case RmsNormVersion::Reread:
      return "4_reread";
    case RmsNormVersion::Dispatch:
      return "dispatch";
  }
  return "?";
}

template <typename T>
void rmsnorm(RmsNormVersion v, const T* x, const T* gamma, T* y, float* rstd, int64_t rows,
             int64_t n, float eps, cudaStream_t stream) {
  if (!detail::check_arguments<T>(__func__, false, x, nullptr, gamma, nullptr, y, nullptr, rstd,
                                  rows, n, eps))
    return;
  if (v == RmsNormVersion::Dispatch) v = choose_rmsnorm_version<T>(rows, n, false);
  detail::launch<T, false>(__func__, v, x, nullptr, gamma, y, rstd, rows, n, eps, stream);
}

template <typename T>
void add_rmsnorm(RmsNormVersion v, const T* x, T* residual, const T* gamma, T* y, float* rstd,
                 int64_t rows, int64_t n, float eps, cudaStream_t stream) {
  if (!detail::check_arguments<T>(__func__, true, x, residual, gamma, nullptr, y, nullptr, rstd,
                                  rows, n, eps))
    return;
  if (v == RmsNormVersion::Dispatch) v = choose_rmsnorm_version<T>(rows, n, true);
  detail::launch<T, true>(__func__, v, x, residual, gamma, y, rstd, rows, n, eps, stream);
}

#define CH10_INSTANTIATE(T)                                                                       \
  template void rmsnorm(RmsNormVersion, const T*, const T*, T*, float*, int64_t, int64_t, float,  \
                        cudaStream_t);                                                            \
  template void add_rmsnorm(RmsNormVersion, const T*, T*, const T*, T*, float*, int64_t, int64_t, \
                            float, cudaStream_t);
CH10_INSTANTIATE(float)
CH10_INSTANTIATE(__half)
CH10_INSTANTIATE(__nv_bfloat16)
#undef CH10_INSTANTIATE

}  // namespace normalization

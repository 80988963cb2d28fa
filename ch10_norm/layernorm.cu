// Chapter 10: LayerNorm, from three sweeps over each row to one read of x and one write of y.
//
// Each version is one or two TODOs below; `bench_norm --versions=layernorm_2_welford` (say)
// times one.
//   1 two_pass   block per row; a sweep for the mean, a sweep for the variance of (x − mean), a
//                sweep to normalize: x is read three times (from L2 after the first, if it fits)
//   2 welford    block per row; mean and variance in one sweep: each thread keeps a Welford
//                triple (n, mean, M2), warps and then the block merge the triples; x is read twice
//   3 registers  the row is loaded once into registers with 16-byte loads (warp per row up to
//                1024 elements, block per row up to 4096 packs: 16K fp32 / 32K bf16) and both
//                statistics come from registers
//   4 pipelined  the same arithmetic, but the copy engine streams each block's next rows into a
//                shared-memory ring while it works on the current one (row_ring.cuh)
//   5 reread     block per row, the row read twice: the statistics from a first pass in batches,
//                the output from a second pass that finds the row in L1/L2 (row_reread.cuh)
//   6 dispatch   reread or pipelined where they pay, registers, welford beyond (dispatch.cu)
// The one-pass formula var = E[x²] − E[x]² is deliberately absent: see one_pass_trap.cpp.

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

// ---------------------------------------------------------------------------------------------
// Version 1: two passes over the row for the statistics (mean first, then the mean square of
// x − mean: no cancellation, whatever the mean), a third to normalize.
template <typename T>
__global__ void layernorm_two_pass_kernel(const T* x, const T* gamma, const T* beta, T* y,
                                          float* mean_out, float* rstd_out, int64_t rows, int64_t n,
                                          float eps) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x_row = x + row * n;
    T* y_row = y + row * n;
    // TODO 1 (about 18 lines; checked by [ch10_norm][two_pass]):
    //   Each thread sums x_row[i] for i = threadIdx.x, threadIdx.x + blockDim.x, ... < n (widen
    //   with to_float); common::block_reduce(s, common::Sum{}, 0.0f) gives every thread the row's
    //   sum; mean = sum / n. Second sweep: the sum of (x − mean)²; var = that / n and
    //   rstd = rsqrtf(var + eps). Third sweep: y_row[i] = from_float<T>((x − mean) · rstd · γ_i +
    //   β_i) with param_at(gamma, i, 1.0f) and param_at(beta, i, 0.0f). Thread 0 stores the
    //   statistics with write_stats(mean_out, rstd_out, row, mean, rstd).
    // BEGIN TODO 1
    (void)x_row;  // remove these two lines once the sweeps use the row
    (void)y_row;
    // END TODO 1
  }
}

// ---------------------------------------------------------------------------------------------
// Version 2: Welford. One sweep gives both statistics; the triples merge with Chan's formula
// (common::WelfordMerge) inside each warp by shuffles and then across the warps.
template <typename T>
__global__ void layernorm_welford_kernel(const T* x, const T* gamma, const T* beta, T* y,
                                         float* mean_out, float* rstd_out, int64_t rows, int64_t n,
                                         float eps) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x_row = x + row * n;
    T* y_row = y + row * n;
    // TODO 3 (about 14 lines; checked by [ch10_norm][welford]):
    //   Keep a common::Welford w = {0, 0, 0} per thread. For each element v of the thread's
    //   sweep: count += 1, delta = v − mean, mean += delta / count, m2 += delta · (v − new mean).
    //   Then w = common::block_reduce(w, common::WelfordMerge{}, common::Welford{0, 0, 0}) merges
    //   the triples (warp shuffles first, then one triple per warp through shared memory).
    //   mean = w.mean, rstd = rsqrtf(w.m2 / n + eps); normalize and store as in TODO 1.
    // BEGIN TODO 3
    (void)x_row;  // remove these two lines once the sweeps use the row
    (void)y_row;
    // END TODO 3
  }
}

// ---------------------------------------------------------------------------------------------
// Version 3: the row in registers (row_in_registers.cuh). With the row at hand the exact
// two-pass statistics cost no memory traffic, only a second team reduction. The Pipelined
// version below runs the same function on rows that reached it through shared memory.
template <typename T, int kPacks, bool kWarpPerRow, typename G, typename B>
__device__ __forceinline__ void layernorm_from_slice(const RowSlice<T, kPacks>& slice,
                                                     const RowLayout<T>& layout,
                                                     const RowTeam<kWarpPerRow>& team,
                                                     const G& gamma, const B& beta, T* y_row,
                                                     float* mean_out, float* rstd_out, int64_t row,
                                                     int64_t n, float eps) {
  // TODO 5 (about 12 lines; checked by [ch10_norm][registers]):
  //   mean = team.sum(thread_sum(slice, layout, team.rank, team.threads, v ↦ v)) / n; var
  //   the same way with v ↦ (v − mean)² (thread_sum visits only the elements this thread holds,
  //   so empty slots never count as (0 − mean)²); rstd = rsqrtf(var + eps). Every thread of the team
  //   must call team.sum (it may hold a barrier). Then store_row(y_row, gamma, beta, slice,
  //   layout, team.rank, team.threads, f) with f(v, g, b) = (v − mean) · rstd · g + b, and
  //   write_stats where team.rank == 0.
  // BEGIN TODO 5
  // your code: statistics from the slice, then store_row and write_stats
  (void)slice;  // remove these placeholders
  (void)layout;
  (void)team;
  (void)gamma;
  (void)beta;
  (void)y_row;
  (void)mean_out;
  (void)rstd_out;
  (void)row;
  (void)n;
  (void)eps;
  // END TODO 5
}

template <typename T, int kPacks, bool kWarpPerRow, bool kAligned>
__global__ void __launch_bounds__(
    max_threads_for(kWarpPerRow, kPacks),
    COMMON_TUNED_MIN_BLOCKS(registers_min_blocks(NormOp::LayerNorm, kWarpPerRow, kPacks, kAligned)))
    layernorm_registers_kernel(const T* x, const T* gamma, const T* beta, T* y, float* mean_out,
                               float* rstd_out, int64_t rows, int64_t n, float eps) {
  const auto team = RowTeam<kWarpPerRow>::make();
  for (int64_t row = team.first_row; row < rows; row += team.row_stride) {
    const T* x_row = x + row * n;
    T* y_row = y + row * n;
    const RowLayout<T> layout = row_layout<T, kAligned>(n, x_row, y_row, gamma, beta, nullptr);
    RowSlice<T, kPacks> slice;
    load_row(slice, x_row, layout, team.rank, team.threads);
    if constexpr (params_with_x<T>(kWarpPerRow, kPacks, kAligned)) {
      // γ and β load together with x, so that one memory round trip precedes the stores, not
      // two: what the layouts for few rows, bound by latency, need most (params_with_x).
      layernorm_from_slice(slice, layout, team,
                           params_in_registers<T, kPacks>(gamma, layout, team.rank, team.threads),
                           params_in_registers<T, kPacks>(beta, layout, team.rank, team.threads),
                           y_row, mean_out, rstd_out, row, n, eps);
    } else {
      layernorm_from_slice(slice, layout, team, gamma, beta, y_row, mean_out, rstd_out, row, n,
                           eps);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Version 4: the rows stream through a shared-memory ring (row_ring.cuh, TODO 10); the
// arithmetic is version 3's.
template <typename T, int kPacks, bool kAligned>
__global__ void __launch_bounds__(max_threads_for(false, kPacks))
    layernorm_pipelined_kernel(const T* x, const T* gamma, const T* beta, T* y, float* mean_out,
                               float* rstd_out, int64_t rows, int64_t n, float eps, int stages) {
  const auto team = RowTeam<false>::make();
  const T* const inputs[1] = {x};
  auto layout_of = [&](int64_t row) {
    return row_layout<T, kAligned>(n, x + row * n, y + row * n, gamma, beta, nullptr);
  };
  auto stream_rows = [&](const auto& g, const auto& b) {
    for_each_row_pipelined<T, kPacks>(
        inputs, rows, n, stages, layout_of,
        [&](const RowSlice<T, kPacks>(&slices)[1], const RowLayout<T>& layout, int64_t row) {
          layernorm_from_slice(slices[0], layout, team, g, b, y + row * n, mean_out, rstd_out, row,
                               n, eps);
        });
  };
  // Aligned rows all have the same layout: γ and β go to registers once.
  if constexpr (pipelined_params_in_registers<T>(kPacks, kAligned)) {
    const RowLayout<T> layout = layout_of(0);
    stream_rows(params_in_registers<T, kPacks>(gamma, layout, team.rank, team.threads),
                params_in_registers<T, kPacks>(beta, layout, team.rank, team.threads));
  } else {
    stream_rows(gamma, beta);
  }
}

// ---------------------------------------------------------------------------------------------
// Version 5: the row read twice (row_reread.cuh). A thread sees its elements one batch at a time,
// so it cannot take the mean first and the squares about it afterwards, as version 3 does from
// registers: each batch's exact (count, mean, M2) is merged into the thread's running triple
// (Chan's formula, common::WelfordMerge), and the block then needs two plain sums: the row's
// mean, and each thread's M2 moved to that mean (M2 + count · (thread mean − row mean)²).
template <typename T, int kThreads, int kPacks, bool kAligned>
__global__ void __launch_bounds__(kThreads,
                                  COMMON_TUNED_MIN_BLOCKS(reread_min_blocks(
                                      kThreads, reread_registers<T>(NormOp::LayerNorm, kPacks),
                                      kAligned)))
    layernorm_reread_kernel(const T* x, const T* gamma, const T* beta, T* y, float* mean_out,
                            float* rstd_out, int64_t n, float eps) {
  constexpr int kBatchPacks = kThreads * kPacks;
  const int64_t row = blockIdx.x;
  const T* x_row = x + row * n;
  T* y_row = y + row * n;
  const RowLayout<T> layout = row_layout<T, kAligned>(n, x_row, y_row, gamma, beta, nullptr);
  const int rank = static_cast<int>(threadIdx.x);
  const int batches = batch_count<kBatchPacks>(layout);
  // TODO 11 (about 35 lines; checked by [ch10_norm][reread]):
  //   First pass, b = 0 .. batches − 1: part = batch_layout<T, kBatchPacks>(layout, b);
  //   load_row(slice, x_row, part, rank, kThreads) into a RowSlice<T, kPacks>; the thread holds
  //   count = held_elements<kPacks>(part, rank, kThreads) of them (skip the batch if 0); their
  //   mean = thread_sum(v ↦ v) / count and m2 = thread_sum(v ↦ (v − mean)²); merge {count, mean,
  //   m2} into the thread's common::Welford with common::WelfordMerge{}. A thread with
  //   rank < layout.extras() also merges {1, x_row[layout.extra_column(rank)], 0}.
  //   Then row mean = block_reduce(count · mean, Sum) / n and var = block_reduce(m2 + count · (mean
  //   − row mean)², Sum) / n (count 0 contributes 0: never multiply 0 by an infinite square);
  //   rstd = rsqrtf(var + eps); rank 0 calls write_stats. Second pass, b = batches − 1 down
  //   to 0: load the batch again with reload_row(slice, x_row, part, rank, kThreads) (x's last
  //   read: streaming loads, see row_reread.cuh) and store_row<true>(y_row, gamma, beta, slice,
  //   part, rank, kThreads, f) with version 3's f (true: streaming stores, which L2 evicts
  //   first, see store_row); the extra element goes straight to y_row (param_at for γ and β).
  // BEGIN TODO 11
  // your code: the two passes and the statistics between them
  (void)x_row;  // remove these placeholders
  (void)y_row;
  (void)rank;
  (void)batches;
  (void)gamma;
  (void)beta;
  (void)mean_out;
  (void)rstd_out;
  (void)eps;
  // END TODO 11
}

}  // namespace detail

const char* version_name(LayerNormVersion v) {
  switch (v) {
    case LayerNormVersion::TwoPass:
      return "layernorm_1_two_pass";
    case LayerNormVersion::Welford:
      return "layernorm_2_welford";
    case LayerNormVersion::Registers:
      return "layernorm_3_registers";
    case LayerNormVersion::Pipelined:
      return "layernorm_4_pipelined";
    case LayerNormVersion::Reread:
      return "layernorm_5_reread";
    case LayerNormVersion::Dispatch:
      return "layernorm_dispatch";
  }
  return "?";
}

template <typename T>
int64_t max_registers_n() {
  return detail::registers_capacity<T>();
}

template <typename T>
void layernorm(LayerNormVersion v, const T* x, const T* gamma, const T* beta, T* y, float* mean,
               float* rstd, int64_t rows, int64_t n, float eps, cudaStream_t stream) {
  if (!detail::check_arguments<T>(__func__, false, x, nullptr, gamma, beta, y, mean, rstd, rows, n,
                                  eps))
    return;
  if (v == LayerNormVersion::Dispatch) v = choose_layernorm_version<T>(rows, n);
  using namespace detail;
  switch (v) {
    case LayerNormVersion::TwoPass:
      layernorm_two_pass_kernel<<<grid_for_rows(rows), sweep_block_threads(n), 0, stream>>>(
          x, gamma, beta, y, mean, rstd, rows, n, eps);
      CUDA_CHECK_LAUNCH();
      return;
    case LayerNormVersion::Welford:
      layernorm_welford_kernel<<<grid_for_rows(rows), sweep_block_threads(n), 0, stream>>>(
          x, gamma, beta, y, mean, rstd, rows, n, eps);
      CUDA_CHECK_LAUNCH();
      return;
    case LayerNormVersion::Registers: {
      const auto config = registers_config<T>(NormOp::LayerNorm, rows, n);
      CHECK_ARG(config.has_value(), "n = " << n << " does not fit in registers (at most "
                                           << max_registers_n<T>() << " for this type)");
      const int64_t rows_per_block = config->warp_per_row ? config->threads / 32 : 1;
      with_registers_instance<T>(
          *config, rows_aligned<T>(n, {x, y, gamma, beta}),
          [&](auto packs, auto warp_per_row, auto aligned) {
            layernorm_registers_kernel<T, decltype(packs)::value, decltype(warp_per_row)::value,
                                       decltype(aligned)::value>
                <<<grid_for_rows(rows, rows_per_block), config->threads, 0, stream>>>(
                    x, gamma, beta, y, mean, rstd, rows, n, eps);
          });
      CUDA_CHECK_LAUNCH();
      return;
    }
    case LayerNormVersion::Pipelined: {
      const auto config = pipelined_config<T>(n, 1);
      CHECK_ARG(config.has_value(), pipelined_refusal(n));
      with_pipelined_instance<T, 1>(
          *config, rows_aligned<T>(n, {x, y, gamma, beta}), [&](auto packs, auto aligned) {
            const auto kernel =
                layernorm_pipelined_kernel<T, decltype(packs)::value, decltype(aligned)::value>;
            kernel<<<pipelined_grid(kernel, *config, rows), config->threads, config->shared_bytes,
                     stream>>>(x, gamma, beta, y, mean, rstd, rows, n, eps, config->stages);
          });
      CUDA_CHECK_LAUNCH();
      return;
    }
    case LayerNormVersion::Reread:
      for_each_reread_launch<T, NormOp::LayerNorm>(
          __func__, rows, n, rows_aligned<T>(n, {x, y, gamma, beta}),
          [&](auto threads, auto packs, auto aligned, int64_t first, unsigned blocks) {
            layernorm_reread_kernel<T, decltype(threads)::value, decltype(packs)::value,
                                    decltype(aligned)::value>
                <<<blocks, decltype(threads)::value, 0, stream>>>(
                    x + first * n, gamma, beta, y + first * n, mean ? mean + first : nullptr,
                    rstd ? rstd + first : nullptr, n, eps);
          });
      return;
    case LayerNormVersion::Dispatch:
      break;
  }
  CHECK_ARG(false, "no kernel for version " << static_cast<int>(v)
                                            << " (did choose_layernorm_version return Dispatch?)");
}

#define CH10_INSTANTIATE(T)                                                                   \
  template int64_t max_registers_n<T>();                                                      \
  template void layernorm(LayerNormVersion, const T*, const T*, const T*, T*, float*, float*, \
                          int64_t, int64_t, float, cudaStream_t);
CH10_INSTANTIATE(float)
CH10_INSTANTIATE(__half)
CH10_INSTANTIATE(__nv_bfloat16)
#undef CH10_INSTANTIATE

}  // namespace normalization

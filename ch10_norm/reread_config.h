// How the Reread versions map a row onto a block (host code shared by LayerNorm, RMSNorm and the
// dispatchers; the kernels' side is row_reread.cuh).
#pragma once

#include "norm.h"
#include "registers_config.h"

#include "common/errors.hpp"
#include "common/gpu_info.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace normalization::detail {

// The registers a thread of the aligned instances gets: the fewest that compile without spilling
// (the point of the design is many rows per SM): 40 for RMSNorm (blocks of 512 threads share an
// SM 3 at a time), 48 for LayerNorm (its running triple, and β next to γ in the second pass; at
// 512 threads the cap rounds up to 64, two blocks per SM), for the fused add 48 (fp32) and 64
// (16-bit) in batches of 4 packs, 32 and 40 in batches of 2. The fused add's second pass holds r
// alone: one that held x and the residual would need 64 and 80, and at 80 one 16-bit block of
// 512 threads fits an SM where at 64 two do (H200, 2026-11-26, three alternating runs: bf16
// 256×65536 34.8 µs against 40.7, 512×32768 36.4 against 40.1; fp32 the same). Half takes 8 more
// for RMSNorm and LayerNorm: its conversions to float need more registers than bf16's shifts.
// Batches of 8 packs per thread (reread_config) take 64: two blocks of 512 threads per SM. The
// columns of a row are 32-bit (RowLayout): with 64-bit ones bf16 LayerNorm needed 56 too, and an
// H200 ran bf16 4096×8192 RMSNorm in 35.1 µs with 64-bit columns and 48 registers, 35.0 with 40
// registers alone, 34.6 with both. The general instances, whose scalar path holds a half or bf16
// pack in 8 registers, get the compiler's choice.
template <typename T>
constexpr int reread_registers(NormOp op, int packs) {
  if (packs == 8) return 64;
  if (op == NormOp::AddRmsNorm)
    return sizeof(T) == 4 ? (packs <= 2 ? 32 : 48) : (packs <= 2 ? 40 : 64);
  const int half_extra = std::is_same_v<T, __half> ? 8 : 0;
  return (op == NormOp::LayerNorm ? 48 : 40) + half_extra;
}
// __launch_bounds__'s second argument: blocks per SM, which caps the registers.
constexpr int reread_min_blocks(int threads, int registers, bool aligned) {
  return aligned ? common::blocks_per_sm(threads, registers) : 1;
}

// One launch takes at most this many rows (a block each); more rows take more launches.
constexpr int64_t kMaxRereadGrid = int64_t{1} << 30;

struct RereadConfig {
  int packs = 4;    // packs per thread and batch (a compile-time parameter of the kernel)
  int threads = 0;  // block size, a power of two (a compile-time parameter as well)
};

// The largest batch a thread of op's Reread kernel takes, in packs: 8 where that instance runs
// in 64 registers without spilling and was measured (RMSNorm in fp32 and bf16, LayerNorm in
// fp32; 16-bit LayerNorm and the fused add spill there, and half, not measured, spills in the
// skeleton's build), 4 elsewhere.
template <typename T>
constexpr int reread_max_packs(NormOp op) {
  if (std::is_same_v<T, __half>) return 4;
  return op == NormOp::RmsNorm || (op == NormOp::LayerNorm && sizeof(T) == 4) ? 8 : 4;
}

// The shape that was fastest on an H200 (every shape timed at rows of 4 to 64 KiB, fp32 and
// bf16, see TUNING.md): 4 packs per thread (2 for rows of at most 256 packs), and
// the smallest block of 128 to 512 threads whose batch covers the row. Rows longer than one
// batch of 512 × 4 packs take batches of 512 × 8 where op has them (reread_max_packs; aligned
// rows only, with_reread_instance): one batch instead of two for rows of up to 4096 packs,
// twice the bytes in flight per thread. On the H200 that took fp32 RMSNorm at 1024×16384 from
// 39.0 to 35.8 µs, LayerNorm from 40.6 to 38.6, bf16 RMSNorm at 1024×32768 from 39.2 to 37.2;
// longer rows keep their batches of 512 × 4 in 16-bit types (bf16 RMSNorm at 256×65536: 21.5 µs
// against 21.9 with 8 packs), while fp32 RMSNorm gained there too (512×32768: 47.6 → 42.9 µs).
template <typename T>
RereadConfig reread_config(NormOp op, int64_t n) {
  const int64_t packs = n / vec_of<T>();
  constexpr int64_t kBatchOf4 = 512 * 4;
  if (reread_max_packs<T>(op) == 8 && packs > kBatchOf4 &&
      (sizeof(T) == 4 || packs <= 2 * kBatchOf4))
    return {8, 512};
  RereadConfig config;
  config.packs = packs <= 256 ? 2 : 4;
  config.threads = 128;
  while (config.threads < 512 && int64_t{config.threads} * config.packs < packs)
    config.threads *= 2;
  return config;
}

// How many rows op's Reread kernel works on at once: a block per row, as many blocks as the
// register file holds on every SM. Rows beyond it wait for a second wave.
template <typename T>
int64_t reread_resident_rows(NormOp op, int64_t n) {
  const RereadConfig config = reread_config<T>(op, n);
  return common::resident_blocks(config.threads, reread_registers<T>(op, config.packs));
}

// Whether the rows the GPU works on at once fit in L2, so that the second pass reads from cache.
// The fused add counts two per row of the matrix: r (written over the residual by the first
// pass, reread by the second) and x, which streams through L2 beside it.
template <typename T>
bool reread_rows_fit_l2(NormOp op, int64_t rows, int64_t n) {
  const int64_t streams = op == NormOp::AddRmsNorm ? 2 : 1;
  const RereadConfig config = reread_config<T>(op, n);
  return common::rows_in_flight_fit_l2(rows, n * streams * int64_t{sizeof(T)}, config.threads,
                                       reread_registers<T>(op, config.packs));
}

// Where the Reread versions beat the Registers and Pipelined versions on an H200 (bench_norm,
// at least 512 rows of 2 to 128 KiB; TUNING.md has the tables). Elsewhere they lose, by up to
// 38 points of copy bandwidth (fp32 LayerNorm at 32768x512: 54.4 % against 92.1 %): their second
// pass repeats the loads and the arithmetic that a register-held row does once.
// - Rows beyond 32 KiB (reread_long_row): the Registers layout needs 8 packs a thread there
//   (blocks stop at 512 threads), so only one or two blocks share an SM, and the fused add's
//   ring holds no such row.
//   At rows of 36 to 56 KiB Reread won everywhere, by 1 % (fp32 RMSNorm) to 72 % (bf16
//   LayerNorm at 56 KiB; at 48 KiB, 682×24576: 26.3 µs against 43.0, the fused add 37.0 against
//   62.9). fp32 LayerNorm starts beyond 40 KiB: at 36 and 40 KiB its Registers kernel tied or
//   won by 2 %.
// - Shorter bands, each measured: fp32 rows of 4 KiB for RMSNorm and the fused add; fp32 rows
//   over 20 and under 32 KiB for the fused add (22 KiB: 68.6 µs against 73.5; at 20 and 32 KiB
//   its Registers kernel won by 2-3 %); 16-bit LayerNorm at 6 to 10 KiB and 14 to 16 KiB (14:
//   22.1 against 23.5 µs for Pipelined; it loses at 12 and 18); 16-bit RMSNorm at 8 to 16 KiB
//   (it loses at 18 and 20: 21.6 against 19.5 µs for Pipelined).
constexpr bool reread_long_row(NormOp op, int64_t element_bytes, int64_t row_bytes) {
  const bool fp32_layernorm = element_bytes == 4 && op == NormOp::LayerNorm;
  return row_bytes > (fp32_layernorm ? 40 : 32) * int64_t{1024};
}
constexpr bool reread_measured_faster(NormOp op, int64_t element_bytes, int64_t row_bytes) {
  constexpr int64_t KiB = 1024;
  if (reread_long_row(op, element_bytes, row_bytes)) return true;
  const auto within = [&](int64_t low_kib, int64_t high_kib) {
    return row_bytes >= low_kib * KiB && row_bytes <= high_kib * KiB;
  };
  if (element_bytes == 4) {
    switch (op) {
      case NormOp::LayerNorm:
        return false;
      case NormOp::RmsNorm:
        return row_bytes >= 4 * KiB && row_bytes < 6 * KiB;
      case NormOp::AddRmsNorm:
        return (row_bytes >= 4 * KiB && row_bytes < 6 * KiB) ||
               (row_bytes > 20 * KiB && row_bytes < 32 * KiB);
    }
  }
  switch (op) {
    case NormOp::LayerNorm:
      return within(6, 10) || within(14, 16);
    case NormOp::RmsNorm:
      return within(8, 16);
    case NormOp::AddRmsNorm:
      return false;
  }
  return false;
}

// Calls launch(threads, packs, aligned) with the three as compile-time constants. Batches of 8
// packs come only in blocks of 512 threads (rows of more than 512 × 4 packs), only where
// kMaxPacks allows them, and only for aligned rows: no other instance is compiled. A misaligned
// row of that length takes batches of 512 × 4, as before batches of 8 existed: the general
// instances get no register cap, and at 8 packs they took 72 to 114 registers, one block per SM
// (not measured).
template <int kMaxPacks, typename Launch>
void with_reread_instance(const RereadConfig& config, bool aligned, Launch launch) {
  static_assert(kMaxPacks == 4 || kMaxPacks == 8, "batches of 2, 4 or 8 packs per thread");
  with_flag(aligned, [&](auto is_aligned) {
    auto with_threads = [&](auto packs) {
      switch (config.threads) {
        case 128:
          return launch(std::integral_constant<int, 128>{}, packs, is_aligned);
        case 256:
          return launch(std::integral_constant<int, 256>{}, packs, is_aligned);
        default:
          return launch(std::integral_constant<int, 512>{}, packs, is_aligned);
      }
    };
    if constexpr (kMaxPacks == 8 && decltype(is_aligned)::value) {
      if (config.packs == 8)
        return launch(std::integral_constant<int, 512>{}, std::integral_constant<int, 8>{},
                      is_aligned);
    }
    if (config.packs == 2)
      with_threads(std::integral_constant<int, 2>{});
    else
      with_threads(std::integral_constant<int, 4>{});
  });
}

// Checks n (a refusal names `who`, the public function called), then calls launch(threads,
// packs, aligned, first, blocks), the first three as compile-time constants, for op's kernel on
// the rows [first, first + blocks): one launch per kMaxRereadGrid rows, each checked.
template <typename T, NormOp kOp, typename Launch>
void for_each_reread_launch(const char* who, int64_t rows, int64_t n, bool aligned, Launch launch) {
  CHECK_ARG_FOR(
      who, n <= kMaxRereadN,
      "the reread version takes rows of at most " << kMaxRereadN << " elements, got " << n);
  with_reread_instance<reread_max_packs<T>(kOp)>(
      reread_config<T>(kOp, n), aligned, [&](auto threads, auto packs, auto is_aligned) {
        for (int64_t first = 0; first < rows; first += kMaxRereadGrid) {
          launch(threads, packs, is_aligned, first,
                 static_cast<unsigned>(std::min(rows - first, kMaxRereadGrid)));
          CUDA_CHECK_LAUNCH();
        }
      });
}

}  // namespace normalization::detail

// How the Registers versions map a row onto threads, chosen from N and the element type (host
// code shared by LayerNorm and RMSNorm).
//
// A thread holds its share of the row as raw 16-byte packs (4 registers each, whatever T is), so
// the register budget is counted in packs, and a bf16 row of N elements costs what an fp32 row
// of N/2 costs. The budget decides the speed: a memory-bound kernel needs many bytes in flight per
// SM (Little's law: about 32 KiB at 4 TB/s and ~1 µs latency), and all of a thread's loads are
// issued before its first reduction, so bytes in flight = packs held × 16 bytes × threads resident.
#pragma once

#include "norm.h"

#include "common/gpu_info.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <type_traits>

namespace normalization::detail {

// Warp per row: four rows per 128-thread block, up to 32 elements per lane (8 fp32 packs, 4 of
// bf16), so rows of up to 1024 elements need no block-wide barrier at all.
constexpr int kWarpsPerBlock = 4;
constexpr int kMaxWarpElementsPerLane = 32;
// Block per row: 1, 2, 4 or 8 packs per thread. Blocks of up to 1024 threads may use 64
// registers per thread, enough for 1 or 2 packs; 4 or 8 packs need more, so those blocks stop at
// 512 threads (128 registers). Rows of up to 512 · 8 = 4096 packs fit (64 KiB: 16K fp32, 32K
// bf16 elements).
constexpr int kMaxBlockPacksPerThread = 8;
constexpr int max_block_threads(int packs) {
  return packs <= 2 ? 1024 : 512;
}
// Fewer rows than kManyRows (norm.h; a few per SM) is the latency regime of decoding: spread
// each row over as many threads as possible so that every thread has little to load and compute,
// while there are no more rows than SMs (few_rows_block_shape beyond).
// With many rows, about 16 elements per thread (4 fp32 packs, 2 bf16 packs): measured on an H200,
// more elements per thread lengthen each row's compute phase (and raise the registers per
// thread, so fewer rows are resident to overlap it) more than the extra loads in flight help.
constexpr int kElementsPerThread = 16;

// Whether a block-per-row kernel with 1 or 2 packs per thread (the layouts of at most one row per
// SM, most of those of a few hundred rows, and the many-rows layout of half and bf16) loads γ and
// β into registers together with x: not for half
// and bf16 rows that are not all aligned at 2 packs, whose packs then take a register per
// element (a 1024-thread block, 64 registers a thread, would spill).
template <typename T>
__host__ __device__ constexpr bool params_with_x(bool warp_per_row, int packs, bool aligned) {
  return !warp_per_row && (packs == 1 || (packs == 2 && (aligned || sizeof(T) == 4)));
}

// The block per row with more rows than SMs but fewer than kManyRows: at least min_elements per
// thread, at most max_threads per block (the fewest packs per thread within both). Blocks of up
// to 1024 threads, one pack a thread, fit two per SM: a third row per SM waits for a second wave,
// and each block reduction spans 32 warps. Measured on an H200 (133 to 511 rows of 2048 to 8192
// elements, 1, 2 and 4 packs a thread, the better of two rounds): LayerNorm gained most from 8
// elements a thread in blocks of at most 512 (fp32 400×3072: 10.1 → 7.6 µs with 2 packs, 200×4096
// 7.4 → 6.1 with 2; bf16 133×6144 7.1 → 5.8), RMSNorm from blocks of at most 768 (bf16 133×8192
// 6.6 → 5.5; fp32 RMSNorm at 6144 lost 8 % in blocks of 384 and keeps 768), the fused add from
// 8 elements a thread (fp32 133×4096 7.1 → 6.2) and, in 16-bit types, blocks of at most 768
// (bf16 264×8192 9.1 → 7.8; fp32 rows of 8192 lost 10 to 22 % in blocks of 512 and keep 1024).
struct FewRowsBlockShape {
  int min_elements;
  int max_threads;
};
constexpr FewRowsBlockShape few_rows_block_shape(NormOp op, int element_bytes) {
  switch (op) {
    case NormOp::LayerNorm:
      return {8, 512};
    case NormOp::RmsNorm:
      return {1, 768};
    case NormOp::AddRmsNorm:
      break;
  }
  return {8, element_bytes == 4 ? 1024 : 768};
}

struct RegistersConfig {
  bool warp_per_row = true;
  int packs = 1;    // 16-byte packs per thread (a compile-time parameter of the kernel)
  int threads = 0;  // block size
};

template <typename T>
constexpr int vec_of() {
  return 16 / static_cast<int>(sizeof(T));
}

// Rows up to this size fit: ⌊n / kVec⌋ full packs, whatever the head, plus fewer than 2 · kVec
// scalar elements held one per thread.
template <typename T>
constexpr int64_t registers_capacity() {
  const int64_t packs =
      int64_t{max_block_threads(kMaxBlockPacksPerThread)} * kMaxBlockPacksPerThread;
  return (packs + 1) * vec_of<T>() - 1;
}

// The layout of op's Registers version for `rows` rows of n elements, or nothing when the row
// does not fit:
// - warp per row with the fewest packs per lane (a power of two, so few kernels exist);
// - block per row, at most one row per SM: the fewest packs per thread (most threads: lowest
//   latency);
// - block per row, more rows than SMs but fewer than kManyRows: few_rows_block_shape(op);
// - block per row, many rows: about kElementsPerThread per thread, more for the longest rows.
// The caps never shorten the longest row that fits: 8 packs a thread in 512 threads remain.
template <typename T>
std::optional<RegistersConfig> registers_config(NormOp op, int64_t rows, int64_t n) {
  constexpr int kVec = vec_of<T>();
  const int64_t packs = n / kVec;
  for (int p = 1; p * kVec <= kMaxWarpElementsPerLane; p *= 2)
    if (packs <= int64_t{32} * p) return RegistersConfig{true, p, 32 * kWarpsPerBlock};
  int first = kElementsPerThread / kVec > 1 ? kElementsPerThread / kVec : 1;
  int max_threads = 1024;
  if (rows < kManyRows) {
    first = 1;
    if (rows > common::device_properties().multiProcessorCount) {
      const FewRowsBlockShape shape = few_rows_block_shape(op, static_cast<int>(sizeof(T)));
      first = std::max(1, shape.min_elements / kVec);
      max_threads = shape.max_threads;
    }
  }
  for (int p = first; p <= kMaxBlockPacksPerThread; p *= 2) {
    const int64_t threads = (packs + p - 1) / p;
    if (threads <= std::min(max_block_threads(p), max_threads))
      return RegistersConfig{false, p, static_cast<int>((threads + 31) / 32 * 32)};
  }
  return std::nullopt;
}

// Calls launch(packs) with packs (1, 2, 4 or 8, at most kMaxPacks) as a compile-time constant
// (std::integral_constant), so that a launcher can name the kernel instance for it.
template <int kMaxPacks = kMaxBlockPacksPerThread, typename Launch>
void with_packs(int packs, Launch launch) {
  static_assert(kMaxPacks == 4 || kMaxPacks == 8, "packs per thread are 1, 2, 4 or 8");
  if (packs == 1) return launch(std::integral_constant<int, 1>{});
  if (packs == 2) return launch(std::integral_constant<int, 2>{});
  if (kMaxPacks == 4 || packs == 4) return launch(std::integral_constant<int, 4>{});
  launch(std::integral_constant<int, kMaxPacks>{});
}

// Calls launch(std::true_type{}) or launch(std::false_type{}): a runtime flag made a
// compile-time one.
template <typename Launch>
void with_flag(bool flag, Launch launch) {
  if (flag)
    launch(std::true_type{});
  else
    launch(std::false_type{});
}

// The aligned instances have no scalar path, and the compiler fills the registers it frees with
// more loads in flight: for half and bf16 at 8 packs per thread that exceeds the 128 registers
// of a 512-thread block (it spills), so such rows run the general instances.
template <typename T>
constexpr int max_aligned_packs() {
  return sizeof(T) == 4 ? kMaxBlockPacksPerThread : 4;
}

// Calls launch(packs, warp_per_row, aligned), all compile-time constants, for the runtime
// configuration and alignment (rows_aligned).
template <typename T, typename Launch>
void with_registers_instance(const RegistersConfig& config, bool aligned, Launch launch) {
  with_flag(config.warp_per_row, [&](auto warp_per_row) {
    with_flag(aligned && config.packs <= max_aligned_packs<T>(), [&](auto is_aligned) {
      constexpr int kMax = is_aligned ? max_aligned_packs<T>() : kMaxBlockPacksPerThread;
      with_packs<kMax>(config.packs, [&](auto packs) { launch(packs, warp_per_row, is_aligned); });
    });
  });
}

// Whether every row of a matrix of rows of n elements starts 16-byte aligned in each of these
// buffers (nullptr: absent): n a multiple of the pack and every base pointer aligned.
template <typename T>
bool rows_aligned(int64_t n, std::initializer_list<const void*> buffers) {
  if (n % vec_of<T>() != 0) return false;
  for (const void* p : buffers)
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  return true;
}

// __launch_bounds__ of the register kernels: the block sizes above.
constexpr int max_threads_for(bool warp_per_row, int packs) {
  return warp_per_row ? 32 * kWarpsPerBlock : max_block_threads(packs);
}

// __launch_bounds__'s blocks per SM for the register kernels, which caps their registers. The
// aligned warp-per-row instances get 8 blocks of 128 threads (64 registers a thread): left to
// itself the compiler moved the loads of γ and β ahead in the store loop and took 78 (fp32
// LayerNorm) to 94 (fp32 RMSNorm) registers at 8 packs a lane, 6 blocks per SM or fewer. On an
// H200, fp32 LayerNorm at 16384×1024 went from 35.9 to 34.8 µs; the other capped instances that
// run at the benchmark's shapes moved by less than 1 % (RMSNorm fp32 at 16384×1024, 94 → 62
// registers; the bf16 fused add there, 78 → 64; the fp32 fused add at 32768×512, 76 → 64). The
// fused add at 8 fp32 packs a lane spills at 64 and keeps the compiler's choice (124), as do
// the general instances, whose scalar path holds a half or bf16 pack in 8 registers.
constexpr int registers_min_blocks(NormOp op, bool warp_per_row, int packs, bool aligned) {
  if (!warp_per_row || !aligned) return 1;
  constexpr int kFp32PacksPerLane = kMaxWarpElementsPerLane / 4;
  return op == NormOp::AddRmsNorm && packs == kFp32PacksPerLane ? 1 : 8;
}

}  // namespace normalization::detail

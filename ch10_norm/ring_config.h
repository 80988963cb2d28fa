// How the Pipelined versions map rows onto blocks (host code shared by LayerNorm and RMSNorm).
//
// A block takes one row at a time, as the Registers versions do with many rows (about 16
// elements per thread), and keeps a ring of `stages` rows in shared memory. The ring, not the
// registers, holds the bytes in flight, so its size is what to choose: about 32 KiB a block
// (kRingTargetBytes; never fewer than two rows, so more for rows over 16 KiB), several blocks
// per SM, which keeps ~100 KiB or more per SM on its way from memory (Little's law at 4.8 TB/s
// and ~1.5 µs under load: ~55 KiB per SM at the least). The grid is what fits on the GPU at
// once; each block loops over the rows b, b + G, b + 2G, ...
#pragma once

#include "registers_config.h"

#include "common/gpu_info.hpp"
#include "common/kernel_attributes.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>

namespace normalization::detail {

constexpr size_t kRingTargetBytes = 32 * 1024;
// Blocks of the Pipelined versions hold γ and β in registers for the whole kernel when every row
// is aligned (all rows share one layout) and a thread holds at most this many packs (more would
// cost blocks per SM). Half at 2 packs is the exception: its conversions to float take more
// registers than bf16's shifts, and LayerNorm's 1024-thread blocks (64 registers) would spill.
constexpr int kMaxPacksWithParamsInRegisters = 2;
template <typename T>
__host__ __device__ constexpr bool pipelined_params_in_registers(int packs, bool aligned) {
  const int max_packs = std::is_same_v<T, __half> ? 1 : kMaxPacksWithParamsInRegisters;
  return aligned && packs <= max_packs;
}
constexpr int kMaxRingStages = 8;
constexpr int kRingHeaderBytes = 128;  // the stages' barriers; the buffers start 128-byte aligned
// The kernels' static shared memory, which counts against the same per-block limit as the ring:
// block_reduce's slot per warp, 32 x at most 12 bytes (a Welford triple) for each reduction.
constexpr size_t kStaticSharedBytes = 1024;

// Shared memory of a ring: `stages` buffers of `inputs` rows of n elements, full packs only.
template <typename T>
constexpr size_t ring_bytes(int stages, int inputs, int64_t n) {
  return kRingHeaderBytes + size_t(stages) * size_t(inputs) * size_t(n / vec_of<T>()) * 16;
}

// The largest ring a block may ask for: the opt-in shared memory of a block, less the static.
inline size_t max_ring_bytes() {
  return static_cast<size_t>(common::device_properties().sharedMemPerBlockOptin) -
         kStaticSharedBytes;
}

struct PipelinedConfig {
  int packs = 1;    // 16-byte packs per thread (a compile-time parameter of the kernel)
  int threads = 0;  // block size
  int stages = 2;   // ring buffers per block
  size_t shared_bytes = 0;
};

// A thread of the fused add holds two slices (x and the residual): at 8 packs each they exceed
// the 128 registers of a 512-thread block, so its rows stop at 4 packs per thread.
constexpr int kMaxFusedPipelinedPacks = 4;
constexpr int max_pipelined_packs(int inputs) {
  return inputs > 1 ? kMaxFusedPipelinedPacks : kMaxBlockPacksPerThread;
}

// The layout for rows of n elements with `inputs` rows per stage (2 for the fused add), or
// nothing when the version cannot run them here: no bulk copies before sm_90, the packs per
// thread must fit in registers (rows of up to 64 KiB alone, 32 KiB fused), and a ring of two
// stages must fit in a block's shared memory.
template <typename T>
std::optional<PipelinedConfig> pipelined_config(int64_t n, int inputs) {
  if (n < 1 || !common::has_sm90_features()) return std::nullopt;
  const int64_t packs = n / vec_of<T>();
  int p = std::max(1, kElementsPerThread / vec_of<T>());
  while (p <= max_pipelined_packs(inputs) && (packs + p - 1) / p > max_block_threads(p))
    p *= 2;
  if (p > max_pipelined_packs(inputs)) return std::nullopt;
  PipelinedConfig config;
  config.packs = p;
  config.threads = static_cast<int>(std::max<int64_t>((packs + p - 1) / p, 32) + 31) / 32 * 32;
  const size_t stage_bytes = ring_bytes<T>(1, inputs, n) - kRingHeaderBytes;
  config.stages = static_cast<int>(
      std::clamp<size_t>(kRingTargetBytes / std::max<size_t>(stage_bytes, 1), 2, kMaxRingStages));
  const size_t limit = max_ring_bytes();
  while (config.stages > 2 && ring_bytes<T>(config.stages, inputs, n) > limit)
    --config.stages;
  config.shared_bytes = ring_bytes<T>(config.stages, inputs, n);
  if (config.shared_bytes > limit) return std::nullopt;
  return config;
}

// Why pipelined_config has no layout for rows of n, for the error of a launch that asked anyway.
inline std::string pipelined_refusal(int64_t n) {
  std::ostringstream s;
  s << "the pipelined version cannot run rows of n = " << n << " here: ";
  if (common::has_sm90_features())
    s << "a thread's share of the row must fit in registers and a ring of two rows in shared "
         "memory";
  else
    s << "it needs the bulk copies of sm_90 or newer; " << common::sm90_features_missing();
  return s.str();
}

// Calls launch(packs, aligned), both compile-time constants, for the configuration and the
// alignment of the rows (rows_aligned), instantiating only what kInputs rows a stage allow.
template <typename T, int kInputs, typename Launch>
void with_pipelined_instance(const PipelinedConfig& config, bool aligned, Launch launch) {
  constexpr int kMaxPacks = max_pipelined_packs(kInputs);
  constexpr int kMaxAligned = std::min(max_aligned_packs<T>(), kMaxPacks);
  with_flag(aligned && config.packs <= kMaxAligned, [&](auto is_aligned) {
    constexpr int kMax = is_aligned ? kMaxAligned : kMaxPacks;
    with_packs<kMax>(config.packs, [&](auto packs) { launch(packs, is_aligned); });
  });
}

// Blocks of `kernel` that fit on the GPU at once with this configuration (at least 1), capped
// by the rows: a block per SM slot, each looping over its rows.
// The kernel may take any ring up to max_ring_bytes(). Its limit is one value per kernel, shared
// by every host thread: set to each call's own ring, a call with a smaller ring could lower it
// between another thread's setting and launch, and that launch would fail. Set once, before the
// occupancy is first asked, it also leaves the occupancy of a (threads, ring) the same for good,
// so the driver is asked it once (common/kernel_attributes.hpp).
template <typename Kernel>
unsigned pipelined_grid(Kernel kernel, const PipelinedConfig& config, int64_t rows) {
  common::set_kernel_attribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(max_ring_bytes()));
  const int per_sm = common::max_blocks_per_sm(kernel, config.threads, config.shared_bytes);
  const int64_t resident =
      int64_t{std::max(per_sm, 1)} * common::device_properties().multiProcessorCount;
  return static_cast<unsigned>(std::clamp<int64_t>(rows, 1, resident));
}

}  // namespace normalization::detail

// Chapter 10, LayerNorm and RMSNorm: the host API. The skeleton (ch10_norm/*.cu) and the solution
// (solutions/ch10_norm/*.cu) implement exactly this header.
//
// Every operation normalizes each row of a row-major [M, N] matrix on its own. All pointers are
// device pointers, element type T = float, __half or __nv_bfloat16, and every pointer may sit at
// any element alignment. Statistics are computed in float whatever T is; eps is added to the
// variance (or to the mean square) before the reciprocal square root.
//
//   LayerNorm  y = (x − mean) · rstd · γ + β,  rstd = 1 / sqrt(var + eps),
//              var = mean((x − mean)²)
//   RMSNorm    y = x · rstd · γ,  rstd = 1 / sqrt(mean(x²) + eps)
//   fused      r = x + residual (rounded to T and written back to `residual`),  y = RMSNorm(r)
//
// γ (gamma) and β (beta) have N elements; either may be nullptr (γ = 1, β = 0). The per-row
// statistics `mean` and `rstd` (M floats each, what a backward pass needs) may be nullptr too.
// eps must be finite and > 0: a constant row has variance 0, so y = β (up to the rounding of the
// row's mean) and never NaN. Pointers must be aligned to their element size. A NaN or infinity
// makes its own row's output NaN (LayerNorm; RMSNorm follows the formula: rstd = 0 for an infinite
// row) and no other row's. Sizes are 64-bit: any N >= 1, any M >= 0, M·N beyond 2^31. In place,
// y == x, is supported by every version (the fused add included: y may overwrite x); any other
// overlap of y with x, any overlap of the fused add's residual with x or y, of mean or rstd with
// any buffer, and of γ or β with y or the residual, is rejected. Every call validates its arguments
// (std::invalid_argument) and checks its launches (common::CudaError).
// Calls are asynchronous: they enqueue their kernels on `stream` and return without waiting.
// Host threads may call at once, on the one device the chapters serve (README). A launch is
// checked with cudaGetLastError, which also returns an error an earlier CUDA call of the same
// thread left pending: a common::CudaError may report that error rather than this call's.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace normalization {

// LayerNorm's progression; each version is one or two TODOs (see layernorm.cu).
enum class LayerNormVersion {
  TwoPass = 1,  // block per row: sweep for the mean, sweep for the variance, sweep to normalize
  Welford,      // block per row: one sweep for both statistics (Welford merges), one to normalize
  Registers,    // the row held in registers, 16-byte loads: one read of x, one write of y
  Pipelined,    // Registers' arithmetic, rows streamed into a shared-memory ring by the copy engine
  Reread,       // block per row, the row read twice: statistics in batches, then the output from
                // a second read that finds the row in cache (rows of up to kMaxRereadN)
  Dispatch,     // the dispatcher: Reread or Pipelined where they pay, Registers, Welford beyond
};
constexpr LayerNormVersion kLayerNormVersions[] = {
    LayerNormVersion::TwoPass,   LayerNormVersion::Welford, LayerNormVersion::Registers,
    LayerNormVersion::Pipelined, LayerNormVersion::Reread,  LayerNormVersion::Dispatch};
const char* version_name(LayerNormVersion v);

// RMSNorm and the fused residual add + RMSNorm.
enum class RmsNormVersion {
  BlockLoop = 1,  // block per row: sweep for the mean square, sweep to scale (any N; given code)
  Registers,      // the row held in registers, as LayerNorm's Registers
  Pipelined,      // rows streamed through a shared-memory ring, as LayerNorm's Pipelined
  Reread,         // the row read twice, as LayerNorm's Reread (given code)
  Dispatch,       // Reread or Pipelined where they pay, Registers, BlockLoop beyond
};
constexpr RmsNormVersion kRmsNormVersions[] = {RmsNormVersion::BlockLoop, RmsNormVersion::Registers,
                                               RmsNormVersion::Pipelined, RmsNormVersion::Reread,
                                               RmsNormVersion::Dispatch};
const char* version_name(RmsNormVersion v);

// The largest N the Registers versions accept for element type T (the row must fit in the
// registers of one block); larger rows throw there, and Dispatch gives them to the Reread
// versions (up to kMaxRereadN; Welford and BlockLoop beyond).
template <typename T>
int64_t max_registers_n();

// Whether the Pipelined versions run rows of n elements of T on this device: sm_90 or newer, in a
// build that includes it (the copy engine's bulk copies; common::has_sm90_features), a thread's
// share of the row fits in registers (rows of up to 64 KiB, 32 KiB for the fused add, which holds
// x and the residual), and a ring of two rows (two of x and two of the residual for the fused add)
// fits in a block's shared memory. Elsewhere, and for n < 1, false (the Pipelined versions throw
// std::invalid_argument there).
template <typename T>
bool pipelined_available(int64_t n, bool fused);

// With at least this many rows the GPU is filled with blocks that each normalize several rows,
// the case the Pipelined versions are for; fewer rows are the latency regime of decoding.
constexpr int64_t kManyRows = 512;

// The three operations, where a rule depends on which one runs.
enum class NormOp { LayerNorm, RmsNorm, AddRmsNorm };

// Where the Pipelined versions beat the Registers versions (measured on an H200, see
// TUNING.md): many rows, 2-byte elements (fp16, bf16; fp32 rows keep twice the bytes in
// flight per element, and there Registers is as fast or faster), rows of at least
// min_pipelined_row_bytes(op), and pipelined_available; with fewer rows, from the third row per
// SM on, 16-bit LayerNorm from 8 KiB, and fp32 LayerNorm over 20 KiB and RMSNorm of 28 KiB or
// more, up to 32 KiB. The fp32 ones the dispatchers run on the ring only where the Reread
// versions run out of resident blocks (on an H200 from the third row per SM on for LayerNorm,
// the fourth for RMSNorm): reread_pays comes first.
template <typename T>
bool pipelined_pays(NormOp op, int64_t rows, int64_t n);

// 8 KiB for LayerNorm, 16 KiB for RMSNorm, 18 KiB for the fused add (measured on an H200): the
// less arithmetic per element and the more bytes a thread of Registers keeps in flight (two
// inputs for the fused add), the longer the rows before a block of Registers, one row at a time,
// falls behind.
constexpr int64_t min_pipelined_row_bytes(NormOp op) {
  return op == NormOp::LayerNorm ? 8192 : op == NormOp::RmsNorm ? 16384 : 18432;
}

// The longest row the Reread versions take (their pack and batch indices are 32-bit).
constexpr int64_t kMaxRereadN = int64_t{1} << 30;

// Where the Reread versions beat the others (measured on an H200, see TUNING.md): rows
// too long for the Registers versions, at any count; otherwise where the rows in flight fit in
// L2 (so that the second read finds them there; the fused add counts two per block): with many
// rows, the row lengths where they measured faster (reread_measured_faster in reread_config.h);
// with fewer, rows beyond 32 KiB (40 for fp32 LayerNorm); up to two rows per SM (and more than
// one), rows over 16 KiB, RMSNorm's only over 20 KiB in 16-bit types and beyond 32 KiB in fp32;
// from the third row per SM on, fp32 rows of 16 KiB or more and 16-bit rows of 10 KiB or more;
// but no fp32 LayerNorm or RMSNorm row of up to 32 KiB where the rows outnumber the Reread
// kernel's resident blocks: the ring takes them (pipelined_pays) where it can, and the shorter
// ones there (LayerNorm's up to 20 KiB, RMSNorm's under 28) stay in registers. False for n < 1.
template <typename T>
bool reread_pays(NormOp op, int64_t rows, int64_t n);

// The dispatchers' choice (TODOs 8, 9): the version that Dispatch runs for `rows` rows of n
// elements of T (`fused`: the residual add + RMSNorm).
template <typename T>
LayerNormVersion choose_layernorm_version(int64_t rows, int64_t n);
template <typename T>
RmsNormVersion choose_rmsnorm_version(int64_t rows, int64_t n, bool fused);

template <typename T>
void layernorm(LayerNormVersion v, const T* x, const T* gamma, const T* beta, T* y, float* mean,
               float* rstd, int64_t rows, int64_t n, float eps, cudaStream_t stream = nullptr);

template <typename T>
void rmsnorm(RmsNormVersion v, const T* x, const T* gamma, T* y, float* rstd, int64_t rows,
             int64_t n, float eps, cudaStream_t stream = nullptr);

// residual ← x + residual, y = RMSNorm(residual) in one kernel. `residual` is read and written.
template <typename T>
void add_rmsnorm(RmsNormVersion v, const T* x, T* residual, const T* gamma, T* y, float* rstd,
                 int64_t rows, int64_t n, float eps, cudaStream_t stream = nullptr);

// The tempting one-pass variance, var = E[x²] − E[x]², accumulated in float on the CPU: the
// illustration of catastrophic cancellation (TODO 2). Not used by any kernel. n >= 1.
float one_pass_variance_float(const float* x, int64_t n);

}  // namespace normalization

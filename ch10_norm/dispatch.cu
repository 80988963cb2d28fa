// Chapter 10: the dispatchers. Each operation has one entry point that picks its version from the
// number of rows, the row length and the element type.

#include "norm.h"

#include "ring_config.h"
#include "reread_config.h"

#include "common/gpu_info.hpp"

namespace normalization {

template <typename T>
bool pipelined_available(int64_t n, bool fused) {
  return detail::pipelined_config<T>(n, fused ? 2 : 1).has_value();
}

// The fp32 rows, fewer than kManyRows of them, that the ring takes from the third row per SM on
// (pipelined_pays) and that stay in registers otherwise where Reread runs out of resident blocks
// (reread_pays): LayerNorm's over 20 KiB, RMSNorm's of 28 KiB or more, up to 32 KiB.
constexpr bool fp32_few_rows_ring_row(NormOp op, int64_t row_bytes) {
  constexpr int64_t KiB = 1024;
  if (op == NormOp::AddRmsNorm || row_bytes > 32 * KiB) return false;
  return op == NormOp::LayerNorm ? row_bytes > 20 * KiB : row_bytes >= 28 * KiB;
}

template <typename T>
bool pipelined_pays(NormOp op, int64_t rows, int64_t n) {
  if (!pipelined_available<T>(n, op == NormOp::AddRmsNorm)) return false;
  const int64_t row_bytes = n * int64_t{sizeof(T)};
  const int64_t sms = common::device_properties().multiProcessorCount;
  if (sizeof(T) == 4) {
    // fp32 rows keep 64 bytes per thread in flight without the ring, except with more than two
    // rows per SM but fewer than kManyRows, where a block per row (Registers) needs a second
    // wave, and so does Reread once the rows outnumber its resident blocks (reread_pays refuses
    // those rows where this rule takes them): the ring's blocks stay resident and loop over the
    // rows. H200, 265 to 511 rows: LayerNorm over 20 KiB (320x8192: 10.7 us against 11.6 for
    // Reread), RMSNorm at 28 and 32 KiB (400x7168: 10.1 against 10.7 for Reread and 11.8 for
    // Registers). Shorter rows stay with the Registers versions' blocks of 4 packs a thread
    // (few_rows_block_shape): LayerNorm at 17 to 20 KiB (511x5120: 8.9 against 10.2 for the
    // ring), RMSNorm at 20 and 24 KiB (tied with the ring). The fused add's Reread kernel won.
    return rows < kManyRows && rows > 2 * sms && fp32_few_rows_ring_row(op, row_bytes);
  }
  if (rows >= kManyRows) return row_bytes >= min_pipelined_row_bytes(op);
  // Fewer rows, more than two per SM: the ring, whose blocks stay resident and loop over rows,
  // beat the Registers versions, whose blocks need a second wave there, for 16-bit LayerNorm from
  // 8 KiB (H200, 265 rows of 4096 bf16: 6.3 us against 6.9). Up to two rows per SM it once won
  // over 8 KiB as well, against blocks of one pack a thread; since the Registers versions take
  // 2 packs a thread there (few_rows_block_shape), they win (133 to 264 rows of 5120 to 8192
  // bf16: 5.4-6.9 us against 6.0-7.4 for the ring; at 4096, not a ring row there, Registers was
  // the fastest version too). RMSNorm and the fused add did not gain.
  // Where Reread pays as well it runs first.
  return op == NormOp::LayerNorm && rows > 2 * sms && row_bytes >= min_pipelined_row_bytes(op);
}

template <typename T>
bool reread_pays(NormOp op, int64_t rows, int64_t n) {
  if (n < 1 || n > kMaxRereadN) return false;
  // Too long for registers, a row is read twice anyway (Welford, the block loop), but one element
  // at a time: the reread versions were 1.2 to 4.9 times faster (H200, 512 rows of 128 KiB and
  // 256 rows of 256 KiB), also where the rows in flight overflow L2. Both are a block per row
  // with the same two reads, whatever the number of rows.
  if (n > max_registers_n<T>()) return true;
  const int64_t row_bytes = n * int64_t{sizeof(T)};
  if (!detail::reread_rows_fit_l2<T>(op, rows, n)) return false;
  if (rows >= kManyRows) return detail::reread_measured_faster(op, sizeof(T), row_bytes);
  // Fewer rows: the Registers versions spread each row over a block for latency, which pays
  // while an SM has one row at most (H200, 132 rows of 8192 fp32: LayerNorm 6.7 us against 7.6
  // for Reread). Long rows need 8 packs a thread there too, and lose at any count (32 rows of
  // 24576 bf16: LayerNorm 15.7 us against 9.5). Up to two rows per SM, in blocks of 2 or 4 packs
  // a thread (few_rows_block_shape), they keep rows of up to 16 KiB (fp32 200x4096 LayerNorm:
  // 6.0 us against 6.9 for Reread; bf16 200x8192 RMSNorm 5.7 against 6.5), 16-bit RMSNorm's up
  // to 20 KiB (133x10240: 5.8 against 6.4) and fp32 RMSNorm's up to 32 KiB (200x7168: 7.1
  // against 7.4); longer rows lose (264 rows of 12288 bf16, LayerNorm: 10.6 against 8.5). From
  // the third row per SM on their blocks need a second wave, and rows of 16 KiB lose (fp32
  // 400x4096 LayerNorm: 8.4 against 7.9; fp32 RMSNorm at 265 to 320 rows is the exception, left
  // as it is: 320x4096, 6.3 against 6.9), 16-bit rows of 10 KiB too (400x5120 bf16 LayerNorm:
  // 8.2 against 7.6). Reread has its own second wave where the rows outnumber its resident
  // blocks (reread_resident_rows: on an H200 264 rows for fp32 LayerNorm over 16 KiB, 396 for
  // RMSNorm over 16 KiB): fp32 rows of up to 32 KiB beyond them go to the ring where
  // pipelined_pays takes them, and LayerNorm's of up to 20 KiB and RMSNorm's under 28 stay
  // in registers (400x5120: LayerNorm 8.2 us against 10.2 for Reread, RMSNorm 8.3 against 9.0).
  // Without the ring (no bulk copies) they stay with Reread, which beat Registers there (400x7168
  // RMSNorm: 10.7 against 11.8). The fused add's Reread kernel won at every count measured beyond
  // 16 KiB. The figures are in TUNING.md's tables of fewer rows.
  constexpr int64_t KiB = 1024;
  const int64_t sms = common::device_properties().multiProcessorCount;
  if (detail::reread_long_row(op, sizeof(T), row_bytes)) return true;
  if (sizeof(T) == 4 && op != NormOp::AddRmsNorm) {
    const bool second_wave = row_bytes <= 32 * KiB && rows > detail::reread_resident_rows<T>(op, n);
    if (second_wave && (pipelined_pays<T>(op, rows, n) || !fp32_few_rows_ring_row(op, row_bytes)))
      return false;
  }
  if (rows <= sms) return false;
  if (rows <= 2 * sms) {
    if (op == NormOp::RmsNorm) return sizeof(T) == 2 && row_bytes > 20 * KiB;
    return row_bytes > 16 * KiB;
  }
  return row_bytes >= (sizeof(T) == 4 ? 16 : 10) * KiB;
}

template <typename T>
LayerNormVersion choose_layernorm_version(int64_t rows, int64_t n) {
  // TODO 8 (about 4 lines; checked by [ch10_norm][dispatch]):
  //   Where reading the row twice pays (reread_pays<T>(NormOp::LayerNorm, rows, n)),
  //   LayerNormVersion::Reread. Else where the copy engine's ring pays
  //   (pipelined_pays<T>(NormOp::LayerNorm, rows, n)),
  //   LayerNormVersion::Pipelined. Otherwise rows that fit in registers (n <= max_registers_n<T>(),
  //   which depends on T through the 16-byte pack: 4 floats or 8 halfs) read x once:
  //   LayerNormVersion::Registers. Longer rows cannot stay on chip: LayerNormVersion::Welford
  //   reads them twice but computes both statistics in one sweep (the second read mostly hits L2).
  // BEGIN TODO 8
  (void)rows;
  (void)n;
  return LayerNormVersion::Dispatch;  // the launcher rejects this: replace it
  // END TODO 8
}

template <typename T>
RmsNormVersion choose_rmsnorm_version(int64_t rows, int64_t n, bool fused) {
  // TODO 9 (about 5 lines; checked by [ch10_norm][dispatch]):
  //   The same rule for RMSNorm (and, with fused, the residual add, whose ring holds two rows a
  //   stage), with op NormOp::AddRmsNorm when fused, NormOp::RmsNorm otherwise:
  //   RmsNormVersion::Reread where reread_pays<T>(op, rows, n), else
  //   RmsNormVersion::Pipelined where pipelined_pays<T>(op, rows, n), else
  //   RmsNormVersion::Registers while the row fits, RmsNormVersion::BlockLoop beyond.
  // BEGIN TODO 9
  (void)rows;
  (void)n;
  (void)fused;
  return RmsNormVersion::Dispatch;  // the launcher rejects this: replace it
  // END TODO 9
}

#define CH10_INSTANTIATE(T)                                                \
  template bool pipelined_available<T>(int64_t, bool);                     \
  template bool pipelined_pays<T>(NormOp, int64_t, int64_t);               \
  template bool reread_pays<T>(NormOp, int64_t, int64_t);                  \
  template LayerNormVersion choose_layernorm_version<T>(int64_t, int64_t); \
  template RmsNormVersion choose_rmsnorm_version<T>(int64_t, int64_t, bool);
CH10_INSTANTIATE(float)
CH10_INSTANTIATE(__half)
CH10_INSTANTIATE(__nv_bfloat16)
#undef CH10_INSTANTIATE

}  // namespace normalization

// A block per row that reads its row twice, the second time from cache: the Reread versions.
//
// The Registers versions keep a thread's share of the row in registers from its load, through
// the block's reductions, to its store. Registers then decide how many rows an SM works on at
// once, and while a block waits at its reductions it has no bytes in flight. Here the first pass
// streams the row in batches of kThreads · kPacks packs and keeps only the thread's statistics;
// after the reductions the second pass loads every batch again, the last one first (the likeliest
// still in L1), and writes. HBM sees one read as long as the rows in flight stay in L2, which the
// dispatcher checks (reread_pays). A pack lives in a register only while its batch is
// summed, so a thread needs few registers and more rows share an SM, each at its own phase:
// loading, reducing or storing. Chapter 10 softmax's version 5b is the same design.
//
//   row:    | head | batch 0: kThreads·kPacks packs | batch 1 | ... | last batch (partial) | tail |
//   pass 1: batch 0, 1, ..., last: statistics           pass 2: last, ..., 1, 0: normalize, store
//
// The head and tail elements (fewer than 2 · kVec, row_in_registers.cuh) are handled on their
// own by the first threads, in both passes.
#pragma once

// RowLayout, RowSlice, load_row, thread_sum and store_row come from row_in_registers.cuh, which
// the kernel files include first (it has a TODO: the skeleton's and the solution's copies differ).
#include "reread_config.h"

#include "common/vector_io.cuh"

#include <cstdint>

namespace normalization::detail {

// Batch b of a row: the packs [b·kBatchPacks, (b + 1)·kBatchPacks) of `row`, as a layout that
// load_row, thread_sum and store_row take. It has no elements outside its packs (n is set so
// that extras() is 0): the row's head and tail are not part of any batch.
template <typename T, int kBatchPacks>
__device__ __forceinline__ RowLayout<T> batch_layout(const RowLayout<T>& row, int b) {
  constexpr int kVec = RowLayout<T>::kVec;
  const int first = b * kBatchPacks;
  RowLayout<T> batch = row;
  batch.head = row.head + first * kVec;
  const int left = row.packs - first;
  batch.packs = left < kBatchPacks ? left : kBatchPacks;
  batch.n = batch.packs * kVec;
  return batch;
}

template <int kBatchPacks, typename T>
__device__ __forceinline__ int batch_count(const RowLayout<T>& row) {
  return (row.packs + kBatchPacks - 1) / kBatchPacks;
}

// How many elements of `batch` thread `rank` of `threads` holds (kPacks packs at most).
template <int kPacks, typename T>
__device__ __forceinline__ int held_elements(const RowLayout<T>& batch, int rank, int threads) {
  const int packs = batch.packs > rank ? (batch.packs - rank + threads - 1) / threads : 0;
  return (packs < kPacks ? packs : kPacks) * RowLayout<T>::kVec;
}

// Whether reload_row reads a vectorized batch with streaming loads (ld.global.cs, evict-first).
// Its reads are the last of their bytes (x's second read; in the fused add, x's and the
// residual's only read and r's), so they should not displace what is still to be read: the rows
// waiting for their second read, and γ and β, which every row reads. Measured on an H200 against
// load_row's read-only loads (__ldg), before the fused add wrote r in its first pass: LayerNorm
// bf16 16384×4096 73.1 → 69.0 µs, the fused add fp32 1024×16384 76.2 → 73.1; in fp32 batches of
// 8 packs (2026-11-26, three alternating runs) RMSNorm 1024×16384 35.9 → 35.1 µs, 512×32768 42.9
// → 40.3, LayerNorm 1024×16384 38.7 → 37.9, 512×32768 45.3 → 43.7. 16-bit RMSNorm in batches of 8
// packs keeps load_row: with streaming loads ptxas spills it at its 64 registers, and they changed
// little (bf16 1024×32768 37.4 → 37.0 µs, 512×32768 20.9 → 21.0).
template <typename T>
__host__ __device__ constexpr bool streaming_reread(int packs) {
  return packs < 8 || sizeof(T) == 4;
}

// A read of `batch` (a layout from batch_layout: no head or tail elements) that is the last of
// its bytes: the Reread kernels' second pass, and the fused add's first. Its loads are coherent
// except where streaming_reread refuses (the vectorized 16-bit batches of 8 packs, which the
// fused add never takes): the fused add's second pass reads r, which its first pass wrote. Its
// element-by-element loads are plain ones of memory the kernel writes (no const __restrict__),
// which the compiler does not turn into read-only loads; it does not call load_row (TODO 4) for
// them, so that the given kernels stay correct whatever loads a student's load_row uses.
template <typename T, int kPacks>
__device__ __forceinline__ void reload_row(RowSlice<T, kPacks>& slice, const T* row,
                                           const RowLayout<T>& batch, int rank, int threads) {
  constexpr int kVec = RowLayout<T>::kVec;
  if (batch.vectorized && !streaming_reread<T>(kPacks)) {
    load_row(slice, row, batch, rank, threads);
    return;
  }
#pragma unroll
  for (int k = 0; k < kPacks; ++k) {
    const int p = k * threads + rank;
    if (p < batch.packs) {
      const T* src = row + batch.head + p * kVec;
      if (batch.vectorized) {
        slice.v[k] = common::load_pack_streaming(src);
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          slice.v[k].v[e] = src[e];
      }
    }
  }
  if (rank < batch.extras()) slice.extra = row[batch.extra_column(rank)];  // none in a batch
}

}  // namespace normalization::detail

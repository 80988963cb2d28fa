// Rows streamed through a ring of shared-memory buffers that the copy engine fills: the
// Pipelined versions.
//
// The Registers versions keep x in flight only while a thread waits for its own loads: once the
// slice has arrived, the block reduces and stores, and no byte of the next row is on its way. A
// bf16 row of 16 elements per thread keeps 32 bytes per thread in flight, about half of what a
// HBM3e GPU needs per SM to run at full speed (Little's law: bandwidth × latency). Here a block
// owns `stages` buffers in shared memory, one row each (two for the fused add: x and residual),
// and one thread asks the copy engine (cp.async.bulk) for the rows `stages` steps ahead while the
// block works on the current one: the bytes in flight no longer cost registers or wait for the
// arithmetic.
//
//   stage:     0        1        2        3        0 ...
//   row:       b        b+G      b+2G     b+3G     b+4G      (b = blockIdx.x, G = gridDim.x)
//   barrier:   full[0]  full[1]  full[2]  full[3]  full[0], next phase
//
// Each buffer has a barrier; its phase completes when the bytes announced for it have landed.
// The copy covers a row's full packs (from column head on, see row_in_registers.cuh); the few
// elements outside them are read from global memory by the threads that hold them. A row whose
// pointers do not share 16-byte alignment (layout.vectorized false) is not copied at all: the
// block loads it with load_row, and its barrier phase completes with zero bytes.
#pragma once

#include "ring_config.h"
#include "row_in_registers.cuh"

#include "common/bulk_copy.cuh"

#include <cstdint>

namespace normalization::detail {

// Calls op(slices, layout, row) for every row r = blockIdx.x, blockIdx.x + gridDim.x, ... < rows
// with slices[i] holding the thread's share of row r of inputs[i]. layout_of(r) gives the
// row's layout (make_row_layout over every pointer the row uses). The block's threads form one
// team (RowTeam<false>); dynamic shared memory must hold ring_bytes<T>(stages, kInputs, n).
template <typename T, int kPacks, int kInputs, typename LayoutOf, typename RowOp>
__device__ __forceinline__ void for_each_row_pipelined(const T* const (&inputs)[kInputs],
                                                       int64_t rows, int64_t n, int stages,
                                                       LayoutOf layout_of, RowOp op) {
  extern __shared__ __align__(128) unsigned char ring[];
  uint64_t* full = reinterpret_cast<uint64_t*>(ring);
  auto* packs = reinterpret_cast<common::Pack<T>*>(ring + kRingHeaderBytes);
  const int64_t buffer_packs = n / RowLayout<T>::kVec;  // no row has more full packs
  auto buffer = [&](int stage, int input) {
    return packs + (int64_t{stage} * kInputs + input) * buffer_packs;
  };
  // Thread 0 announces the row's bytes and asks for them; a scalar row announces none. It counts
  // the fills of each stage (their parity, and which stages have any) for the drain below.
  uint32_t filled = 0, odd_fills = 0;
  auto fill = [&](int stage, int64_t row) {
    filled |= 1u << stage;
    odd_fills ^= 1u << stage;
    const RowLayout<T> layout = layout_of(row);
    const auto bytes = static_cast<uint32_t>(layout.vectorized ? layout.packs * 16 : 0);
    common::mbarrier_expect_bytes(&full[stage], kInputs * bytes);
    if (bytes > 0) {
#pragma unroll
      for (int i = 0; i < kInputs; ++i)
        common::bulk_copy_to_shared(buffer(stage, i), inputs[i] + row * n + layout.head, bytes,
                                    &full[stage]);
    }
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s)
      common::mbarrier_init(&full[s], 1);
    common::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      const int64_t row = blockIdx.x + int64_t{s} * gridDim.x;
      if (row < rows) fill(s, row);
    }
  }

  int stage = 0;
  uint32_t phase = 0;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const RowLayout<T> layout = layout_of(row);
    RowSlice<T, kPacks> slices[kInputs];
    // TODO 10 (about 20 lines; checked by [ch10_norm][pipelined]):
    //   Wait for this stage's copy: common::mbarrier_wait(&full[stage], phase). Fill
    //   slices[i] for every input: load_row_shared(slices[i], buffer(stage, i), row_i, layout,
    //   threadIdx.x, blockDim.x) with row_i = inputs[i] + row · n when layout.vectorized, else
    //   load_row(slices[i], row_i, layout, threadIdx.x, blockDim.x). Then __syncthreads(): from
    //   here on no thread reads the buffer, so thread 0 may refill it with the row
    //   next = row + stages · gridDim.x, if next < rows: common::fence_proxy_async_shared()
    //   first (the block's reads of the buffer must come before the copy engine's writes), then
    //   fill(stage, next). Advance: stage + 1, wrapping to 0 at `stages`, where phase flips
    //   (phase ^= 1: each reuse of a barrier is its next phase).
    // BEGIN TODO 10
    // your code: wait for the stage, copy the slices out, barrier, refill, advance
    (void)stage;  // remove these placeholders
    (void)phase;
    // END TODO 10
    op(slices, layout, row);
  }
  // No copy may still be landing in the block's shared memory when it exits. After the loop
  // above every fill has been waited for, and this costs nothing; it matters only to a loop that
  // skipped some (a TODO not yet filled in).
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s)
      if (filled & (1u << s)) common::mbarrier_wait(&full[s], ((odd_fills >> s) & 1u) ^ 1u);
  }
}

}  // namespace normalization::detail

// The vendor baseline: the CCCL of the toolkits this chapter was tested with (3.0.x) has no top-k
// algorithm under cub/device/ (newer CCCL adds cub::DeviceTopK), so the baseline is what one
// writes with CUB: a segmented radix sort of every row, descending, carrying the column indices,
// then the first k of each row. Radix sorting is stable, so equal values keep the lower index
// first, as in our order; NaN and -0.0 follow CUB's own bit-twiddling rules instead (a
// negative-signed NaN sorts last), so the tests compare with it only on data without NaN or
// signed zeros.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace cub_topk {

// Scratch for an [M, N] problem: the sorted keys, two index arrays, row offsets and CUB's own
// temporary storage. M * N must be below 2^31 (CUB's item count). topk's workspace must be at
// least that large and 4-byte aligned; like the chapter's launchers, it refuses null pointers,
// misaligned elements and buffers that share memory (std::invalid_argument).
template <typename T>
size_t workspace_bytes(int64_t M, int64_t N);

template <typename T>
void topk(const T* x, int64_t M, int64_t N, int k, T* values, int64_t* indices, void* workspace,
          size_t workspace_bytes, cudaStream_t stream = nullptr);

}  // namespace cub_topk

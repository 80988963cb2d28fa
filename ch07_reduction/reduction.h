// Chapter 7, parallel reduction: the host API. The skeleton (ch07_reduction/reduction.cu) and the
// solution (solutions/ch07_reduction/reduction.cu) implement exactly this header.
//
// All pointers are device pointers, aligned to the size of their elements (any element offset
// is fine); `out` receives one float and shares no byte with x. Sizes are 64-bit: any n from 0
// up.
// The empty input sums to 0 and has maximum -inf; the maximum propagates NaN.
// Every call validates its arguments (std::invalid_argument) and checks its launches
// (common::CudaError).
// Calls are asynchronous: they enqueue their kernels on `stream` and return without waiting.
// Host threads may call at once, each with a workspace of its own, on the one device
// the chapters serve (README). A launch is checked with cudaGetLastError, which also returns an
// error an earlier CUDA call of the same thread left pending: a common::CudaError may report that
// error rather than this call's.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace reduction {

// The chapter's progression; each version is one numbered TODO in reduction.cu (6 and 7 in
// parts).
enum class Version {
  Atomic = 1,          // 1. one atomicAdd per element
  Interleaved,         // 2. shared-memory tree, interleaved addressing, divergent branch
  InterleavedStrided,  // 3. interleaved addressing with a strided index: bank conflicts
  Sequential,          // 4. sequential addressing
  FirstAdd,            // 5. first add during load, grid-stride loop
  WarpShuffle,         // 6. warp shuffles inside warps, shared memory across warps
  Final,               // 7. 16-byte loads, loads in flight, one launch, deterministic
};
constexpr Version kAllVersions[] = {Version::Atomic,     Version::Interleaved,
                                    Version::InterleavedStrided, Version::Sequential,
                                    Version::FirstAdd,   Version::WarpShuffle,
                                    Version::Final};
const char* version_name(Version v);

// How the final version launches for a float sum of n elements: the 16-byte loads each thread
// keeps in flight (4 or 8) and the blocks of 256 threads. The benchmark's read floor runs its
// loads in the same shape.
struct FinalLaunch {
  int loads_in_flight;
  int blocks;
};
FinalLaunch final_float_sum_launch(int64_t n);

// Scratch memory a version needs for n elements. Allocate it once, 4-byte aligned (as
// cudaMalloc's memory is) and zero-filled (the final version keeps a counter there that each
// launch returns to zero, and no other version writes); reuse it for every call, of any version,
// whose workspace_bytes it covers. Calls that share it must run one after another on the GPU (one
// stream, or streams ordered by events): two grids at once would both count in that counter.
// Pass its size as workspace_size: a call refuses a workspace smaller than it needs, or one that
// overlaps x or out. Version 1 needs none (workspace may be null, workspace_size 0).
size_t workspace_bytes(Version v, int64_t n);

// out[0] = x[0] + ... + x[n-1] with the given version. Versions 1 to 6 take float input only.
void sum(Version v, const float* x, int64_t n, float* out, void* workspace, size_t workspace_size,
         cudaStream_t stream = nullptr);

// The final version for the other operations: sums of half and bf16 inputs accumulate in float;
// the maximum of float input propagates NaN.
void sum(const __half* x, int64_t n, float* out, void* workspace, size_t workspace_size,
         cudaStream_t stream = nullptr);
void sum(const __nv_bfloat16* x, int64_t n, float* out, void* workspace, size_t workspace_size,
         cudaStream_t stream = nullptr);
void max(const float* x, int64_t n, float* out, void* workspace, size_t workspace_size,
         cudaStream_t stream = nullptr);

}  // namespace reduction

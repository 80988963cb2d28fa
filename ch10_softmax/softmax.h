// Chapter 10, softmax: the host API. The skeleton (ch10_softmax/*.cu) and the solution
// (solutions/ch10_softmax/*.cu) implement exactly this header.
//
// Row-wise over a row-major [rows, cols] matrix: y[r, j] = exp(x[r, j] - m_r) / sum_k exp(x[r, k] -
// m_r) with m_r = max_k x[r, k]; log_softmax gives x[r, j] - m_r - log(sum_k exp(x[r, k] - m_r)).
// Element types float, __half and __nv_bfloat16; reduced-precision inputs are widened to float,
// every exp and every sum is computed in float, and only the result is rounded back.
//
// Semantics (every version, every dtype; tested):
//   - a row whose entries are all -inf has no distribution: the whole row is NaN (0 / 0, as in
//     PyTorch); -inf entries of any other row give exact zeros (log_softmax: -inf);
//   - NaN anywhere in a row makes the whole row NaN; so does +inf (inf - inf), as in PyTorch;
//   - huge finite magnitudes (1e30 in float, 6e4 in half) never overflow an exponential: only
//     x - max is exponentiated, and it is <= 0. Half log_softmax results can leave half's range,
//     though: x - m - log l reaches about -1.2e5 at +-6e4, and a result of -65520 or less rounds
//     to -inf;
//   - any cols >= 1 and rows >= 0, 64-bit offsets (rows * cols may exceed 2^31), and input and
//     output pointers at any element alignment (the 16-byte paths peel a head and a tail per row);
//   - in place (y == x, dx == y or dx == dy) is supported: every element is read before it is
//     written, by the thread that writes it. Partially overlapping buffers are rejected.
// Every call validates its arguments (std::invalid_argument with the reason) and checks its
// launches (common::CudaError).
// Calls are asynchronous: they enqueue their kernels on `stream` and return without waiting.
// Host threads may call at once, on the one device the chapters serve (README). A launch is
// checked with cudaGetLastError, which also returns an error an earlier CUDA call of the same
// thread left pending: a common::CudaError may report that error rather than this call's.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace softmax {

// The chapter's progression; each version is one TODO (see the file named).
enum class Version {
  ThreePass = 1,  // 1. block per row: max, sum, write; three reads of x    (softmax_multipass.cu)
  Online,  // 2. running (max, sum) pair, shared-memory tree; two reads (softmax_multipass.cu)
  TwoLevelMerge,  // 3. the pair merged by warp shuffles, then across warps  (softmax_multipass.cu)
  WarpPerRow,     // 4. a warp (or part of one) per row, row in registers    (softmax_warp.cu)
  BlockCached,    // 5. block per row, row in registers, 16-byte loads       (softmax_cached.cu)
  BlockReread,    // 5b. block per row, row read again from L1/L2            (softmax_reread.cu)
  SplitRow,       // 6. a row split across a cluster of blocks    (softmax_cluster.cuh, TODO 6)
  Final,          // 7. the dispatcher: 4, 5, 5b or 6, 3 beyond 2^30      (softmax_dispatch.cu)
};
constexpr Version kAllVersions[] = {
    Version::ThreePass,   Version::Online,      Version::TwoLevelMerge, Version::WarpPerRow,
    Version::BlockCached, Version::BlockReread, Version::SplitRow,      Version::Final};
const char* version_name(Version v);  // "1_three_pass", ..., "7_final"

// Limits of the specialised versions (the others take any shape). A call outside them throws
// std::invalid_argument; `supports` says beforehand (false also for sizes no version takes:
// rows < 0, cols < 1, a matrix beyond 64 bits of bytes). Version 6 needs thread-block clusters
// (an sm_90 or newer GPU and a build for it: common::has_sm90_features).
// `supports` sees the shape alone and is conservative: it counts every row at its worst
// alignment, so for versions 5 and 6 it is false at the one row length that fits only when x
// starts on a 16-byte boundary (16384 floats or 32768 half/bf16 for version 5, 16 times that for
// version 6), and it is false for rows == 0 with cols outside a version's limits, which a call
// accepts (it has nothing to do). It is never true for a shape a call refuses, but it cannot
// see the pointers: a call still throws for a null, misaligned or partially overlapping x or y.
template <typename T>
bool supports(Version v, int64_t rows, int64_t cols);

// y = softmax(x) row by row with the given version. T: float, __half, __nv_bfloat16.
template <typename T>
void softmax(Version v, const T* x, T* y, int64_t rows, int64_t cols,
             cudaStream_t stream = nullptr);
template <typename T>
void log_softmax(Version v, const T* x, T* y, int64_t rows, int64_t cols,
                 cudaStream_t stream = nullptr);

// The final version (the dispatcher): what a caller uses. It runs version 4, 5, 5b or 6, and
// version 3 only for rows of more than 2^30 elements, which no other version takes.
template <typename T>
void softmax(const T* x, T* y, int64_t rows, int64_t cols, cudaStream_t stream = nullptr) {
  softmax(Version::Final, x, y, rows, cols, stream);
}
template <typename T>
void log_softmax(const T* x, T* y, int64_t rows, int64_t cols, cudaStream_t stream = nullptr) {
  log_softmax(Version::Final, x, y, rows, cols, stream);
}

// Backward of softmax (TODO 9, softmax_backward.cu): given the forward's output y and the
// gradient dy, dx = y * (dy - sum_j dy_j * y_j) per row, accumulated in float. Same shapes,
// alignment and in-place rules as the forward.
template <typename T>
void softmax_backward(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols,
                      cudaStream_t stream = nullptr);

}  // namespace softmax

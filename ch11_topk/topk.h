// Chapter 11, top-k and fused softmax + top-k: the host API. The skeleton (ch11_topk/*.cu) and the
// solution (solutions/ch11_topk/*.cu) implement exactly this header.
//
// Per row of a row-major [M, N] matrix x, the k largest values and their column indices, sorted
// descending. The order is total and deterministic:
//   - ties are broken by the lower index;
//   - NaN (any sign, any payload) counts as larger than +inf, as in torch.topk; NaNs tie with
//     each other, so the lowest-index NaN comes first;
//   - -0.0 and +0.0 are equal (a tie, lower index first); `values` holds the input's own bits.
// All pointers are device pointers: values and indices are [M, k] row-major. 1 <= k <= N (and
// k <= max_k(version)); N < 2^31; 0 <= M < 2^31 (M = 0 does nothing); M * N may exceed 2^31.
// Pointers may start at any element (no 16-byte alignment needed), not between two elements; no
// two of x and the outputs may share memory. Calls validate their arguments
// (std::invalid_argument) and check their launches (common::CudaError).
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

namespace topk {

// The chapter's versions, each with the TODO that completes it (4b is given code) and the name
// bench_topk prints in its rows and selects with --versions (every row whose name contains one
// of the entries): `bench_topk --versions=split_row` times version 4 alone, next to CUB's
// baseline, which it times for "vs vendor" whatever --versions says.
//   1   thread_queue   TODO 1   Version::ThreadQueue
//   2   warp_merge     TODO 2   Version::WarpMerge
//   3   radix_select   TODO 3   Version::RadixSelect
//   4   split_row      TODO 4   Version::SplitRow
//   4b  cluster_row    given    Version::ClusterRow
//   5   softmax_topk   TODO 5   softmax_topk below (fused softmax + top-k)
//   6   dispatch       TODO 6   topk(x, ...) below, which runs the plan choose_plan picks
// A Version names one of versions 1 to 4b, which topk(Version, ...) runs.
enum class Version {
  ThreadQueue = 1,  // 1. each thread keeps a sorted queue in registers; block merge (k <= 32)
  WarpMerge,        // 2. warp-wide bitonic queues behind a running threshold (k <= 256)
  RadixSelect,      // 3. threshold filter into shared memory + radix select on chip, block per row
  SplitRow,         // 4. version 3 with each row split across blocks, then a merge (small M)
  ClusterRow,       // 4b. each row in the registers of a thread-block cluster (small M, sm_90)
};
constexpr Version kAllVersions[] = {Version::ThreadQueue, Version::WarpMerge, Version::RadixSelect,
                                    Version::SplitRow, Version::ClusterRow};
const char* version_name(Version v);
int max_k(Version v);  // the largest k a version supports (1024 for the final paths)
constexpr int kMaxK = 1024;

// How the dispatcher runs a problem: a version and, for SplitRow, the blocks per row (1 to
// split_chunks(M, N); the other versions ignore them).
struct Plan {
  Version version;
  int chunks;
};
// TODO 6 (dispatch.cu): the dispatcher's choice for an [M, N] problem of `elem_bytes`-byte
// elements (2 or 4); sizes and k as above, k <= kMaxK.
Plan choose_plan(int64_t M, int64_t N, int k, int elem_bytes);
// Blocks per row that fill the GPU for M rows without making chunks too short to filter.
int split_chunks(int64_t M, int64_t N);
// The most blocks per row a split may use: the block that merges a row keeps one composite per
// chunk on chip.
constexpr int kMaxChunks = 1024;

// Scratch memory for `chunks` blocks per row (0: the count split_chunks chooses), 8-byte
// aligned (as cudaMalloc's pointers are). Allocate it once, zero-filled: it holds per-row counters
// that every launch returns to zero. Reuse it for calls of the same M, k and chunks that run one
// after another on the GPU (one stream, or streams ordered by events: two grids at once would
// both count in the counters); zero it again before a call with another shape (that call's counters
// may lie where the previous layout kept candidates). The sizes and k are checked as a launch
// checks them (k <= kMaxK). Each launcher below takes the workspace with its size in bytes,
// workspace_size. A launch that splits rows refuses (std::invalid_argument) a null workspace, one
// smaller than workspace_bytes(M, N, k, chunks) for the chunks it runs, one not 8-byte aligned, and
// one whose first workspace_bytes(M, N, k, chunks) bytes share memory with x or an output. A launch
// that needs none (one block per row: versions 1, 2, 3 and 4b) takes any, nullptr and 0 included.
size_t workspace_bytes(int64_t M, int64_t N, int k, int chunks = 0);

// One version. SplitRow uses split_chunks(M, N) blocks per row. workspace_size: the bytes at
// workspace, at least workspace_bytes(M, N, k).
template <typename T>
void topk(Version v, const T* x, int64_t M, int64_t N, int k, T* values, int64_t* indices,
          void* workspace, size_t workspace_size, cudaStream_t stream = nullptr);

// Versions 3 and 4 with an explicit number of blocks per row (1: RadixSelect; 0: split_chunks;
// at most kMaxChunks). workspace_size: the bytes at workspace, at least workspace_bytes(M, N, k,
// chunks).
template <typename T>
void topk_filtered(const T* x, int64_t M, int64_t N, int k, int chunks, T* values, int64_t* indices,
                   void* workspace, size_t workspace_size, cudaStream_t stream = nullptr);

// The dispatcher: the plan choose_plan picks. workspace_size: the bytes at workspace, at least
// workspace_bytes(M, N, k) (which holds the chunks of any plan).
template <typename T>
void topk(const T* x, int64_t M, int64_t N, int k, T* values, int64_t* indices, void* workspace,
          size_t workspace_size, cudaStream_t stream = nullptr);

// Fused softmax + top-k (version 5): one read of the logits. For each row, with y = x /
// temperature, m = max y and l = sum exp(y - m): indices of the k largest x (same order as topk)
// and probs = exp(y_i - m) / l, normalized over the whole row; lse (optional, nullptr to skip, [M])
// = m + log(l). The softmax itself is never written. temperature > 0, finite, with a finite
// reciprocal (above about 2.9e-39); y is computed in float as x * (1 / temperature), the
// reciprocal rounded to float, so a y beyond the float range (3.4e38) counts as an infinity. A row
// holding NaN or +inf gets NaN probabilities and lse (as torch.softmax); a row of only -inf gets
// NaN probabilities and lse = -inf. chunks: blocks per row, 0 = split_chunks(M, N).
// workspace_size: the bytes at workspace, at least workspace_bytes(M, N, k, chunks).
template <typename T>
void softmax_topk(const T* x, int64_t M, int64_t N, int k, float temperature, int chunks,
                  int64_t* indices, float* probs, float* lse, void* workspace,
                  size_t workspace_size, cudaStream_t stream = nullptr);

// Version 4b: each row in the registers of one thread-block cluster of up to 16 blocks (sm_90;
// M < 65536; N <= cluster_row_max_n(sizeof(T))). No workspace.
template <typename T>
void topk_cluster_row(const T* x, int64_t M, int64_t N, int k, T* values, int64_t* indices,
                      cudaStream_t stream = nullptr);
// The longest row version 4b holds: 16 blocks of 512 threads, 4 packs of 16 bytes each (0 for
// an element size the chapter does not instantiate).
constexpr int64_t cluster_row_max_n(int elem_bytes) {
  return elem_bytes == 2 || elem_bytes == 4 ? int64_t{16} * 512 * 4 * (16 / elem_bytes) : 0;
}
// Whether a version runs an [M, N] problem of `elem_bytes`-byte elements (2 or 4, else
// std::invalid_argument) with this k here: false for sizes outside the limits above, for k over
// the version's max_k, and for version 4b without sm_90 (the GPU's and the build's:
// common::has_sm90_features) or with rows that do not fit one cluster.
bool supports(Version v, int64_t M, int64_t N, int k, int elem_bytes);

// The launchers of versions 1 and 2. They, topk(Version, ...) and the dispatcher all run the
// internal launchers of topk_launch.h, each passing its own name for the refusals to give.
template <typename T>
void topk_thread_queue(const T* x, int64_t M, int64_t N, int k, T* values, int64_t* indices,
                       cudaStream_t stream);
template <typename T>
void topk_warp_merge(const T* x, int64_t M, int64_t N, int k, T* values, int64_t* indices,
                     cudaStream_t stream);

}  // namespace topk

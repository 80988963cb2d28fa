// Selection by ranks, for small candidate sets. The rank of a composite is the number of
// candidates larger than it; the composites of a row are distinct, so the ranks of n candidates
// are exactly 0 .. n-1, and "the candidate of rank r goes to slot r" selects the k best and sorts
// them in one step behind a single barrier. The radix select (radix_select.cuh) needs two to four
// passes of three barriers each and the bitonic sort log2(n)(log2(n)+1)/2 more; with a block of
// 128 threads, those barriers, not the work, are what a few hundred candidates cost. The ranks
// come from counting (every candidate against every other, n^2 / blockDim.x comparisons per
// thread) or, for more than a few dozen, from sorted runs: each warp sorts 32 candidates with
// shuffles, and a candidate's rank is its place in its own run plus, in every other run, the
// number above it, found by a binary search. Either way it is the method only up to kRankLimit
// candidates.
#pragma once

#include "topk_keys.cuh"

namespace topk::detail {

// Up to this many candidates, ranks are used instead of the radix select and the bitonic sort.
constexpr int kRankLimit = 256;

// How many of list[0, n) are larger than a: its rank, when the composites are distinct.
__device__ __forceinline__ int rank_in(const uint64_t* list, int n, uint64_t a) {
  int rank = 0;
#pragma unroll 8
  for (int m = 0; m < n; ++m)
    rank += list[m] > a;
  return rank;
}

// The r-th largest (1-based) of the values lanes 0 .. kLanes - 1 hold, kEmptySlot when fewer than r
// of them are not empty. Every lane of the warp calls it and gets the answer. The loop has a fixed
// count, so that its shuffles issue back to back: an empty slot is larger than nothing and changes
// no rank.
template <int kLanes>
__device__ __forceinline__ uint64_t warp_rank_select(uint64_t mine, int r) {
  const int lane = threadIdx.x % common::kWarpSize;
  if (lane >= kLanes) mine = kEmptySlot;
  int rank = 0;
#pragma unroll
  for (int u = 0; u < kLanes; ++u)
    rank += __shfl_sync(common::kFullWarpMask, mine, u) > mine;
  const unsigned hit = __ballot_sync(common::kFullWarpMask, mine != kEmptySlot && rank == r - 1);
  return hit ? __shfl_sync(common::kFullWarpMask, mine, __ffs(hit) - 1) : kEmptySlot;
}

// Sorts the warp's 32 values descending (bitonic, in registers): lane l ends with the (l+1)-th
// largest.
__device__ __forceinline__ uint64_t warp_sort_descending(uint64_t v) {
  const int lane = threadIdx.x % common::kWarpSize;
#pragma unroll
  for (int size = 2; size <= common::kWarpSize; size *= 2) {
#pragma unroll
    for (int stride = size / 2; stride > 0; stride /= 2) {
      const uint64_t other = __shfl_xor_sync(common::kFullWarpMask, v, stride);
      const bool larger = ((lane & size) == 0) == ((lane & stride) == 0);
      v = (v > other) == larger ? v : other;
    }
  }
  return v;
}

// How many of a warp's 32 composites, sorted descending, are larger than a: a binary search of
// six shared-memory reads.
__device__ __forceinline__ int count_above_sorted(const uint64_t* sorted, uint64_t a) {
  int above = 0;
#pragma unroll
  for (int step = common::kWarpSize / 2; step > 0; step /= 2)
    above += sorted[above + step - 1] > a ? step : 0;
  return above + (sorted[above] > a);  // above <= 31 here
}

// The rank of `a`, lane `lane` of run `own_run`, among runs[0, used_runs): runs of 32 distinct
// composites each (or empty slots, which rank below all), sorted descending. Its own run holds
// `lane` larger ones; each other run, the count a binary search finds.
template <int kMaxRuns>
__device__ __forceinline__ int rank_in_sorted_runs(const uint64_t* runs, int used_runs, int own_run,
                                                   int lane, uint64_t a) {
  int rank = lane;
#pragma unroll
  for (int r = 0; r < kMaxRuns; ++r)
    if (r < used_runs && r != own_run) rank += count_above_sorted(runs + r * common::kWarpSize, a);
  return rank;
}

// The r-th largest (1-based) of the block's composites, one per thread (kThreads of them,
// distinct where not empty), or kEmptySlot when fewer than r are not empty. Every thread calls it
// and gets the answer; `sorted` is shared scratch of kThreads composites, `slot` a shared one.
// By sorted runs, one per warp: about 200 instructions per thread where counting against all 128
// (rank_in) takes about 500, which the eight blocks of an SM pay at the same moment when they
// seed (64x128256 fp32, k = 50: 26.25 -> 25.3 us on an H200).
template <int kThreads>
__device__ __forceinline__ uint64_t block_rank_select(uint64_t mine, int r, uint64_t* sorted,
                                                      uint64_t& slot) {
  constexpr int kWarps = kThreads / common::kWarpSize;
  static_assert(kThreads % common::kWarpSize == 0, "whole warps");
  const int lane = static_cast<int>(threadIdx.x) % common::kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / common::kWarpSize;
  const uint64_t v = warp_sort_descending(mine);
  sorted[threadIdx.x] = v;
  if (threadIdx.x == 0) slot = kEmptySlot;
  __syncthreads();
  const int rank = rank_in_sorted_runs<kWarps>(sorted, kWarps, warp, lane, v);
  if (v != kEmptySlot && rank == r - 1) slot = v;
  __syncthreads();
  return slot;
}

// Every thread of the block calls this together, after a barrier that made list[0, n) visible,
// with n <= 2 * kThreads. list holds distinct composites and possibly empty slots, which take no
// rank. The candidates of rank < k go to out[rank]: out[0, min(k, real candidates)) ends up
// sorted descending. out must not overlap list; the caller's next barrier makes it visible.
// `runs` is shared scratch of 2 * kThreads composites, apart from list and out.
// The ranks come from sorted runs (two per warp: list[t] and list[t + kThreads] of its threads).
// For the hundred or so candidates of a split row's merge, counting (scatter_by_count) takes n
// comparisons per candidate in a chain of dependent additions; the merging block's selection and
// sort took 1.4 us of its 4 at 64x128256 fp32, k = 50 (H200, a timing experiment that left the
// step out), and sorted runs saved about 0.3 us of it.
template <int kThreads>
__device__ __forceinline__ void scatter_by_rank(const uint64_t* list, int n, int k, uint64_t* out,
                                                uint64_t* runs) {
  static_assert(kThreads % common::kWarpSize == 0, "whole warps");
  constexpr int kRuns = 2 * kThreads / common::kWarpSize;
  const int lane = static_cast<int>(threadIdx.x) % common::kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / common::kWarpSize;
  const int halves = n > kThreads ? 2 : 1;  // the same in every thread
  // Run r holds list[32 r, 32 r + 32), sorted: warp w sorts runs w and w + kRuns / 2.
#pragma unroll 1
  for (int h = 0; h < halves; ++h) {
    const int i = static_cast<int>(threadIdx.x) + h * kThreads;
    runs[i] = warp_sort_descending(i < n ? list[i] : kEmptySlot);
  }
  __syncthreads();
  const int used_runs = (n + common::kWarpSize - 1) / common::kWarpSize;  // the rest hold no one
#pragma unroll 1
  for (int h = 0; h < halves; ++h) {
    const int own_run = warp + h * (kRuns / 2);
    const uint64_t a = runs[own_run * common::kWarpSize + lane];
    const int rank = rank_in_sorted_runs<kRuns>(runs, used_runs, own_run, lane, a);
    if (a != kEmptySlot && rank < k) out[rank] = a;
  }
}

// Every thread of the block calls this together, after a barrier that made list[0, n) visible.
// list holds distinct composites and possibly empty slots, which take no rank. The candidates
// of rank < k go to out[rank]: out[0, min(k, real candidates)) ends up sorted descending. out
// must not overlap list; the caller's next barrier makes it visible.
__device__ __forceinline__ void scatter_by_count(const uint64_t* list, int n, int k,
                                                 uint64_t* out) {
  // Two candidates per thread per sweep, so that each read of the list serves two comparisons.
  for (int first = 0; first < n; first += 2 * blockDim.x) {
    const int i = first + threadIdx.x;
    const int j = i + blockDim.x;
    const uint64_t a = i < n ? list[i] : kEmptySlot;
    const uint64_t b = j < n ? list[j] : kEmptySlot;
    if (a == kEmptySlot && b == kEmptySlot) continue;
    int rank_a = 0, rank_b = 0;
#pragma unroll 8
    for (int m = 0; m < n; ++m) {
      const uint64_t c = list[m];
      rank_a += c > a;
      rank_b += c > b;
    }
    if (a != kEmptySlot && rank_a < k) out[rank_a] = a;
    if (b != kEmptySlot && rank_b < k) out[rank_b] = b;
  }
}

// The same, for a block with threads to spare (blockDim.x >= 2n): the lanes of a warp share the
// counting, `lanes` of them (a power of two) per candidate, each comparing it with every
// lanes-th composite of the list, and a shuffle adds their counts. A list of 100 candidates
// takes 25 comparisons per thread in a block of 512 instead of 100.
__device__ __forceinline__ void scatter_by_rank_split(const uint64_t* list, int n, int k,
                                                      uint64_t* out) {
  int shift = 0;  // lanes = 2^shift: shifts and masks, not divisions, on the way in
  while ((1 << shift) < common::kWarpSize && (2 << shift) * n <= static_cast<int>(blockDim.x))
    ++shift;
  const int lanes = 1 << shift;
  for (int first = 0; first < n * lanes; first += blockDim.x) {  // the same count in every thread
    const int t = first + static_cast<int>(threadIdx.x);
    const int i = t >> shift, part = t & (lanes - 1);
    const uint64_t a = i < n ? list[i] : kEmptySlot;
    int rank = 0;
#pragma unroll 4  // four loads in flight: the loop waits for shared memory, not for its compares
    for (int m = part; m < n; m += lanes)
      rank += list[m] > a;
    for (int other = lanes / 2; other > 0; other /= 2)
      rank += __shfl_xor_sync(common::kFullWarpMask, rank, other);
    if (part == 0 && a != kEmptySlot && rank < k) out[rank] = a;
  }
}

// The k-th largest composite of list[0, n) (same rules as scatter_by_rank), or kEmptySlot when
// fewer than k are not empty. Every thread calls it and gets the same answer; `slot` is shared.
__device__ __forceinline__ uint64_t kth_largest(const uint64_t* list, int n, int k,
                                                uint64_t& slot) {
  if (threadIdx.x == 0) slot = kEmptySlot;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const uint64_t a = list[i];
    if (a == kEmptySlot) continue;
    if (rank_in(list, n, a) == k - 1) slot = a;
  }
  __syncthreads();
  const uint64_t kth = slot;
  __syncthreads();  // everyone has read the slot before it is written again
  return kth;
}

}  // namespace topk::detail

// Where the filter of versions 3 to 5 takes its first threshold from (CandidateFilter::seed in
// filter_topk.cu), shared with the tests.
//
// Each of the block's threads takes the best of 16 elements of its chunk; the seed is the r-th
// largest of these 128 bests. With r = k it is safe: k distinct elements are at least as large,
// so the chunk's k-th best is too (the "safe" seed; it needs k <= 128). With r < k it is a
// guess, as in Floyd and Rivest's selection by sampling: if the chunk's order is random, a
// thread's best beats the k-th best of n elements with probability p = 1 - (1 - k/n)^16, the
// number X of bests that do is binomial(128, p), and the r-th best is at or below the k-th best
// unless X >= r. seed_rank puts r five standard deviations (plus 4) above X's mean, so that a
// guess is too high less than once in a million chunks (test_cpu_ref.cpp computes the exact
// tail for common LLM vocabulary sizes). A guess that was too high is noticed (fewer than k
// elements passed it) and the chunk is offered again from the start, without a seed.
//
// Only chunks of at least kSpreadSampleMin elements guess, and they sample 128 runs of 16
// elements spread over the whole chunk: logits are not in random order (token ids group by
// kind), and a sample from the chunk's start would describe only its start. Shorter chunks take
// the safe seed from their first tile, which is loaded anyway (for k <= 128; with larger k they
// have no seed). The elements of a chunk before its first and after its last 16-byte boundary
// are offered after the seed, so that every candidate counted by the check has passed it.
//
// The chunks of a split row (version 4) share one seed when the row, of at least
// kSpreadSampleMin elements, is long enough to guess: every block samples the same runs of the
// row (n = N) and computes the same seed, which lets through about as many elements of the whole
// row as a chunk's own seed would of that chunk. A chunk may then hold fewer than k elements
// above it, so the check moves to the merge: the row's chunks together must publish at least k
// candidates, or the last block offers the whole row again.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define TOPK_HOST_DEVICE __host__ __device__
#else
#define TOPK_HOST_DEVICE
#endif

namespace topk::detail {

// The filter's block: 128 threads, 16 elements per thread per tile (and per sample).
constexpr int kFilterThreads = 128;
constexpr int kElementsPerThread = 16;
constexpr int kTile = kFilterThreads * kElementsPerThread;
// Blocks of the filter's small-k shape an SM holds (its SmallK configuration, filter_topk.cu),
// which split_chunks (dispatch.cu) aims to fill.
constexpr int kSmallKBlocksPerSM = 8;

// Chunks at least this long guess their seed from a spread sample.
constexpr int64_t kSpreadSampleMin = 8 * int64_t{kTile};

// The rank (1-based, among the 128 thread bests) of the first threshold of a chunk of n elements,
// computed once per launch on the host. Below k it is a guess; above kFilterThreads there is no
// seed.
TOPK_HOST_DEVICE inline int seed_rank(int k, int64_t n, bool may_guess) {
  if (!may_guess) return k;
  const float p = 1.0f - expf(kElementsPerThread * log1pf(-static_cast<float>(k) / n));
  const float mean = kFilterThreads * p;
  const int guess = static_cast<int>(ceilf(mean + 5.0f * sqrtf(mean * (1.0f - p)))) + 4;
  return guess < k ? guess : k;
}

// Pack j (of 16 / kVec) of thread t's spread sample, in a chunk body of num_packs 16-byte packs
// (num_packs >= kFilterThreads * packs per thread): 128 runs of 16 elements, evenly spaced.
TOPK_HOST_DEVICE inline int64_t sample_pack(int t, int j, int64_t num_packs) {
  return t * (num_packs / kFilterThreads) + j;
}

}  // namespace topk::detail

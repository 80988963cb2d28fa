// Version 3's core, radix select on chip: find the k largest of up to a few thousand composites
// held in shared memory without sorting them.
//
// Most-significant digit first, 8 bits per pass: a 256-bin histogram of the current digit,
// counted only over the composites whose higher digits equal the prefix chosen so far; a scan
// from the top bin down finds the bin that holds the need-th largest; everything in higher bins
// is certainly kept, so need drops by their count and the prefix gains this digit. The search
// ends as soon as the chosen bin holds exactly `need` composites: then "composite >= prefix"
// (the remaining digits zero) selects exactly k. Each pass reads the buffer once and does one
// shared atomic per surviving element, and the candidates shrink by about 256x per pass, so
// random data needs 2 to 4 passes. The answer is never sorted beyond the final k.
#pragma once

#include "topk_keys.cuh"

namespace topk::detail {

constexpr int kRadixBits = 8;
constexpr int kRadixBins = 1 << kRadixBits;
constexpr int kSelectUnroll = 4;  // composites each thread loads before it counts them

struct SelectScratch {
  int histogram[kRadixBins];
  int bucket;    // the bin holding the need-th largest
  int above;     // composites in higher bins
  int kept;      // winners gathered so far
  // The shared slot where a rank selection leaves its answer (filter_topk.cu): the seed, from
  // block_rank_select (CandidateFilter::seed), and merge_start's bound, from kth_largest
  // (rank_select.cuh) or, for up to 32 chunks, from one warp's warp_rank_select.
  uint64_t kth;
};

// Warp 0 only: the bin b, scanning from the top, where the count of composites in bins above b
// is below `need` and adding bin b reaches it. Lane l owns bins 255 - 8l down to 248 - 8l; a
// warp-wide inclusive scan of the lanes' totals finds the lane, a walk over its 8 bins the bin.
__device__ __forceinline__ void find_bucket(SelectScratch& s, int need) {
  constexpr int kBinsPerLane = kRadixBins / common::kWarpSize;
  const int lane = threadIdx.x % common::kWarpSize;
  const int top = kRadixBins - 1 - lane * kBinsPerLane;
  int total = 0;
#pragma unroll
  for (int j = 0; j < kBinsPerLane; ++j)
    total += s.histogram[top - j];
  const int inclusive = common::warp_inclusive_sum(total);
  const int exclusive = inclusive - total;
  if (exclusive < need && need <= inclusive) {
    int acc = exclusive;
    for (int j = 0; j < kBinsPerLane; ++j) {
      const int count = s.histogram[top - j];
      if (acc + count >= need) {
        s.bucket = top - j;
        s.above = acc;
        break;
      }
      acc += count;
    }
  }
}

// Adds one to histogram[bin] (bin < 0: nothing), with a plain shared atomic. The first digits of
// real data fall into a few bins, so lanes of a warp often hit one address; an earlier version
// therefore counted such lanes with a single atomic after __match_any_sync. On the H200 the plain
// atomics were faster (1024x128256 fp32, k = 1024: 330 -> 315 us): the hardware settles lanes
// on one address for less than the match instruction costs.
__device__ __forceinline__ void add_to_histogram(SelectScratch& s, int bin) {
  if (bin >= 0) atomicAdd(&s.histogram[bin], 1);
}

template <int kKeyBits>
__device__ uint64_t select_top_k(uint64_t* buffer, int count, int k, uint64_t* winners,
                                 SelectScratch& s) {
  // TODO 3 (about 44 lines; checked by [ch11_topk][radix_select]):
  //   Every thread of the block calls this with the same arguments; count > k. Leave the k
  //   largest composites of buffer[0, count) in buffer[0, k) (any order) and return a threshold t
  //   such that exactly those k are >= t. `winners` has room for k composites.
  //   Keep `prefix` (uint64_t, 0) and `need` (k). For shift from 32 + kKeyBits - 8 down to 0 in
  //   steps of kRadixBits (the key occupies bits 32 .. 32 + kKeyBits - 1, the index below):
  //     - zero s.histogram; barrier;
  //     - the block walks buffer[0, count) in steps of kSelectUnroll * blockDim.x, each thread
  //       loading its kSelectUnroll composites before counting them; a composite takes part when
  //       its bits above shift + 8 equal prefix's (careful: shifting a 64-bit value by 64 is
  //       undefined; on the first pass of a 32-bit key every composite takes part); it calls
  //       add_to_histogram(s, (c >> shift) & 255), and nothing for the others; barrier;
  //     - warp 0 calls find_bucket(s, need); barrier;
  //     - prefix |= bucket << shift, need -= above; stop when histogram[bucket] == need (the
  //       test is the same in every thread); barrier before the histogram is zeroed again.
  //   Then gather: s.kept = 0; barrier; every composite >= prefix goes to winners with
  //   warp_append(winners, &s.kept, keep, c) (every lane calls it); barrier; copy winners[0, k)
  //   to buffer[0, k); barrier; return prefix.
  // BEGIN TODO 3
  uint64_t prefix = 0;
  int need = k;
  for (int shift = 32 + kKeyBits - kRadixBits; shift >= 0; shift -= kRadixBits) {
    for (int b = threadIdx.x; b < kRadixBins; b += blockDim.x)
      s.histogram[b] = 0;
    __syncthreads();
    const int high = shift + kRadixBits;
    for (int base = 0; base < count; base += kSelectUnroll * blockDim.x) {
      int bins[kSelectUnroll];
#pragma unroll
      for (int u = 0; u < kSelectUnroll; ++u) {
        const int i = base + u * blockDim.x + threadIdx.x;
        bins[u] = -1;
        if (i < count) {
          const uint64_t c = buffer[i];
          if (high == 64 || (c >> high) == (prefix >> high))
            bins[u] = static_cast<int>((c >> shift) & (kRadixBins - 1));
        }
      }
#pragma unroll
      for (int u = 0; u < kSelectUnroll; ++u)
        add_to_histogram(s, bins[u]);
    }
    __syncthreads();
    if (threadIdx.x < common::kWarpSize) find_bucket(s, need);
    __syncthreads();
    prefix |= static_cast<uint64_t>(s.bucket) << shift;
    need -= s.above;
    const bool done = s.histogram[s.bucket] == need;
    __syncthreads();
    if (done) break;
  }
  if (threadIdx.x == 0) s.kept = 0;
  __syncthreads();
  for (int base = 0; base < count; base += blockDim.x) {
    const int i = base + threadIdx.x;
    const uint64_t c = i < count ? buffer[i] : kEmptySlot;
    warp_append(winners, &s.kept, i < count && c >= prefix, c);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < k; i += blockDim.x)
    buffer[i] = winners[i];
  __syncthreads();
  return prefix;
  // END TODO 3
}

}  // namespace topk::detail

// Versions 3, 4, 4b and 5: the final design. One read of the input; almost every element is
// discarded by a single comparison with a running threshold.
//
//   3. RadixSelect: one block per row. The block streams its row in tiles of 2048 elements
//      (16-byte loads). One comparison per 16-byte pack (its largest element against the
//      threshold's value) rejects almost every element; a lane whose pack might pass appends
//      the pack's elements that do, as composites, to a candidate buffer in shared memory.
//      The first threshold comes from a sample of the chunk (CandidateFilter::seed,
//      seed_sample.h: safe for short chunks, a checked guess for long ones); when the
//      buffer passes max(2k, 256) candidates, the block radix selects the k best on chip
//      (radix_select.cuh), drops the rest and sets the threshold to the select's prefix (the
//      k-th best's leading digits, the rest zero: at most the k-th best): afterwards an element
//      survives only when it reaches that prefix, about k / s of them after s elements, so the
//      buffer is compacted only a handful of times per row. At the end the final
//      candidates are selected and sorted by their ranks when at most 256 remain (counted, or
//      in the merging block of a split row from warp-sorted runs: rank_select.cuh); more are
//      radix-selected down to k first, and sorted bitonically if still more than 256 (k > 256).
//      Then they are written.
//   4. SplitRow: the same, with each row split into `chunks` blocks (grid.y), for small M where
//      one block per row would leave most of the GPU idle. The chunks of a long row share one
//      seed, guessed from a sample of the whole row (seed_sample.h), so that each keeps only the
//      few elements above it. Each block publishes its k best composites, sorted, to the
//      workspace; the last block of a row to finish (an atomic counter) derives a start
//      threshold from the sorted lists (merge_start), offers each list's prefix above it to the
//      same filter (merge_lists), checks the shared seed and writes the answer.
//   4b. ClusterRow (given code, no TODO): each row in the registers of one thread-block cluster
//      (sm_90), with no workspace; see its comment further down, before kClusterThreads.
//   5. Fused softmax + top-k: while the elements pass through registers, each thread also keeps
//      the online softmax pair (m, l) of what it has read; blocks merge the pairs with
//      common::MaxSumMerge (across chunks too), and only the k winners are exponentiated again
//      to give their probabilities. The row is read once; the softmax is never stored.
#include "radix_select.cuh"
#include "rank_select.cuh"
#include "seed_sample.h"
#include "topk.h"
#include "topk_keys.cuh"
#include "topk_launch.h"

#include "common/block_reduce.cuh"
#include "common/cluster_mailbox.cuh"
#include "common/fast_math.cuh"
#include "common/gpu_info.hpp"
#include "common/kernel_attributes.hpp"
#include "common/register_caps.cuh"
#include "common/vector_io.cuh"

#include <cooperative_groups.h>
#include <cuda/atomic>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace topk {
namespace detail {
namespace {

namespace cg = cooperative_groups;
using common::MaxSum;
using common::MaxSumMerge;

// Candidates at which a block with a small k compacts its buffer (CandidateFilter::end_tile).
constexpr int kEarlyCompaction = 256;

// The filter's two shapes. Blocks of 128 threads (kFilterThreads, seed_sample.h), 16 elements per
// thread per tile; the next tile's loads are issued before the current one is filtered (64 bytes
// per thread for fp32). For k <= 128 the small buffer lets 8 blocks share an SM, so 1024 rows run
// in one wave on a 132-SM GPU (64 registers per thread at most); larger k fits 5.
// Buffer sizes: the buffer must hold the k kept after a compaction plus one whole tile.
// kBlocksPerSM: how many blocks the shared memory of an H100/H200 SM (228 KB) holds, which sets
// the registers a thread may have (__launch_bounds__): 64 for 8 blocks, 96 for 5.
template <int kMaxKOfConfig, int kCapacityOfConfig, int kBlocksPerSMOfConfig>
struct FilterConfig {
  static constexpr int kMaxK = kMaxKOfConfig;
  static constexpr int kCapacity = kCapacityOfConfig;
  static constexpr int kBlocksPerSM = kBlocksPerSMOfConfig;
  static_assert(kCapacity - kTile >= kMaxK, "a compaction must leave room for a tile");
  static constexpr size_t kSharedBytes = (kCapacity + kMaxK) * sizeof(uint64_t);
};
using SmallK = FilterConfig<128, 3072, kSmallKBlocksPerSM>;
using LargeK = FilterConfig<kMaxK, 4096, 5>;

// The candidate buffer and its running threshold, shared by a block.
template <typename T, class Config>
struct CandidateFilter {
  static constexpr int kKeyBits = KeyTraits<T>::kBits;
  using Configuration = Config;
  uint64_t* buffer;   // [Config::kCapacity], shared
  uint64_t* winners;  // [Config::kMaxK], shared
  int* count;         // shared
  SelectScratch* scratch;
  int k;
  uint64_t threshold = kEmptySlot;          // every thread holds the same value
  float threshold_value = key_value<T>(0);  // the threshold as a value: NaN accepts everything
  int seen_end = 0;                         // the buffer end this thread last saw after an append

  // Every lane of a warp calls offer together: one vote, and one atomic per warp when some lane
  // keeps its element (warp_append).
  __device__ __forceinline__ void offer(bool valid, uint64_t c) {
    const int end = warp_append(buffer, count, valid && c >= threshold, c);
    if (end >= 0) seen_end = end;
  }

  // The streaming filter's rule is one float comparison per element, !(v < pass_value(i)): the
  // threshold's value, or the next float above it where an element tied with it would be below
  // the threshold by index (ties pass only at indices up to the threshold's own). The body of
  // stream_elements asks once per tile, with the tile's first index: its ties are rejected when
  // the whole tile lies after the threshold's index and let through otherwise, a superset that
  // the next compaction trims and that only the one tile straddling that index adds to. The
  // elements around the 16-byte boundaries ask with their own index (offer_by_value). Every
  // element a chunk keeps then ranks above every element it drops, which is what seed_held
  // relies on: it counts what passed a guessed seed, and the count proves the guess right only
  // if no element was dropped while a worse one was kept. (Ties with +inf, which no float
  // exceeds, and a NaN threshold, which every comparison passes, let every tie through, in the
  // body and at the edges alike.) Comparing values only, with ties let through everywhere, broke
  // that for an edge element tested by composite, and let rows of many equal values (a mask of
  // -inf, say) append whole tiles.
  __device__ __forceinline__ float pass_value(int64_t first_index) const {
    const int64_t threshold_index = composite_index(threshold);  // kEmptySlot: 2^32 - 1
    return first_index > threshold_index ? nextafterf(threshold_value, INFINITY) : threshold_value;
  }
  __device__ __forceinline__ void offer_by_value(bool valid, float v, uint64_t c) {
    const int end = warp_append(buffer, count, valid && !(v < pass_value(composite_index(c))), c);
    if (end >= 0) seen_end = end;
  }

  // A thread's own n > 0 slots, with an atomic of its own: when a few lanes of a warp append
  // together, the hardware serializes their atomics on the count, which costs less than a
  // warp-wide scan of the lanes' counts. Returns the first slot.
  __device__ __forceinline__ int append_slots(int n) {
    const int first = atomicAdd(count, n);
    seen_end = first + n;
    return first;
  }

  // For a round of the merge: every lane of a warp calls reserve together with the number of
  // candidates it keeps and writes them to buffer[first, first + n). One atomic per warp and round,
  // where an offer per element would take one per element slot that some lane keeps; each atomic
  // waits for the previous one on the same counter.
  __device__ __forceinline__ int reserve(int n) {
    const Reservation r = warp_reserve(count, n);
    if (r.end >= 0) seen_end = r.end;
    return r.first;
  }

  // After each tile. The thread that made the last append of the block saw the true count, so
  // a barrier that ORs "my view is too full" decides for the whole block with one barrier.
  // "Too full" comes early for small k: the threshold rises only when the buffer is compacted,
  // and a compaction of a few hundred candidates is cheap, while a stale threshold lets through
  // every element above it for the rest of the row. The buffer must still take one more tile.
  __device__ __forceinline__ void end_tile() {
    const int limit = min(max(2 * k, kEarlyCompaction), Config::kCapacity - kTile);
    if (__syncthreads_or(seen_end > limit)) compact();
  }

  __device__ void raise(uint64_t t) {
    threshold = t;
    threshold_value = key_value<T>(static_cast<uint32_t>(t >> 32));
  }

  __device__ void compact() {
    raise(select_top_k<kKeyBits>(buffer, *count, k, winners, *scratch));
    seen_end = k;
    if (threadIdx.x == 0) *count = k;
    __syncthreads();
  }

  // Leaves the best min(k, count) candidates in buffer[0, n), sorted descending, and returns n.
  // A few hundred candidates are selected and sorted by their ranks (rank_select.cuh) in one
  // step; more are first cut to k by the radix select. The ranks come from counting
  // (scatter_by_count), or with kSortedRuns, from kSortedRunsMin candidates on, from sorted runs
  // (scatter_by_rank): finish_merge, the merging block's, which ranks about a hundred. Sorted
  // runs for every call site cost the streaming kernels registers they spilled, and a few dozen
  // candidates count as fast (the merge of k = 1 slowed by sorting its 16).
  static constexpr int kSortedRunsMin = 65;
  template <bool kSortedRuns = false>
  __device__ int finish() {
    __syncthreads();
    int n = *count;
    if (n > max(k, kRankLimit)) {
      compact();
      n = k;
    }
    if constexpr (Config::kMaxK > kRankLimit) {  // small k never gets here: n <= k
      if (n > kRankLimit) {
        block_sort_descending<kFilterThreads>(buffer, n);
        return n;
      }
    }
    static_assert(
        kRankLimit <= 2 * kFilterThreads && kRankLimit + 2 * kFilterThreads <= Config::kCapacity,
        "scatter_by_rank takes two candidates per thread, and its runs at the buffer's "
        "end must not overlap the candidates");
    if (kSortedRuns && n >= kSortedRunsMin)
      scatter_by_rank<kFilterThreads>(buffer, n, k, winners,
                                      buffer + Config::kCapacity - 2 * kFilterThreads);
    else
      scatter_by_count(buffer, n, k, winners);
    n = min(n, k);
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x)
      buffer[i] = winners[i];
    __syncthreads();
    return n;
  }

  __device__ int finish_merge() { return finish<true>(); }

  // The first threshold, before the first tile is offered: the r-th largest of the threads'
  // best elements of a sample (seed_sample.h). With r = k it is safe: those k elements are
  // distinct and all at least that large, so the chunk's k-th best is too, and no element of the
  // answer is filtered out. With r < k it is a guess, which seed_held checks at the end. Without
  // a seed the first tile would pass whole and be compacted: a radix select over 2048
  // candidates instead of a rank selection among the 128 thread bests (block_rank_select:
  // warp-sorted runs and binary searches). Needs r <= kFilterThreads; the region at the
  // buffer's end is unused until then.
  __device__ void seed(uint64_t thread_best, int r) {
    if (r > kFilterThreads) return;
    const uint64_t t = block_rank_select<kFilterThreads>(
        thread_best, r, buffer + Config::kCapacity - kFilterThreads, scratch->kth);
    if (t > threshold) raise(t);
  }

  // After a chunk of `length` elements: whether the buffer holds min(k, length) candidates. It
  // always does unless the seed was a guess above the chunk's k-th best.
  __device__ bool seed_held(int64_t length) {
    __syncthreads();
    return *count >= min(static_cast<int64_t>(k), length);
  }

  // Empties the buffer; `start` is a threshold known to be <= the k-th best of what follows.
  __device__ void reset(uint64_t start) {
    raise(start);
    seen_end = 0;
    if (threadIdx.x == 0) *count = 0;
    __syncthreads();
  }
};

// The larger of a and b, NaN when either is NaN (NaN ranks above everything): one instruction
// (common::MaxOneInstruction), where fmaxf would drop the NaN and a comparison-based max takes
// three.
__device__ __forceinline__ float max_nan(float a, float b) {
  return common::MaxOneInstruction{}(a, b);
}

// 16 bytes of the row, kept as the four 32-bit words they were loaded as; an element is taken
// out of its word where it is used. Indexed as T[8], a half or bf16 pack would be split into 8
// registers right after its load, and the split waits for the load: the next tile would arrive
// before the current one is filtered instead of while it is.
template <typename T>
struct RawPack {
  static constexpr int kSize = 16 / sizeof(T);
  uint4 words;
  __device__ __forceinline__ uint32_t word(int i) const {
    return i == 0 ? words.x : i == 1 ? words.y : i == 2 ? words.z : words.w;
  }
  // Element e's bits (in the low 16 for half and bf16). A runtime e costs a few selects; a
  // compile-time one, none.
  __device__ __forceinline__ uint32_t bits(int e) const {
    if constexpr (kSize == 4)
      return word(e);
    else
      return e % 2 ? word(e / 2) >> 16 : word(e / 2) & 0xFFFFu;
  }
  // Element e's order-preserving key (topk_keys.cuh).
  __device__ __forceinline__ uint32_t key(int e) const { return order_key_of_bits<T>(bits(e)); }
  __device__ __forceinline__ float value(int e) const {
    if constexpr (std::is_same_v<T, __nv_bfloat16>)  // a bf16 is the high half of a float
      return __uint_as_float(e % 2 ? word(e / 2) & 0xFFFF0000u : word(e / 2) << 16);
    else
      return common::to_float(common::from_bits<T>(bits(e)));
  }
  // The largest element as a float, NaN when any element is NaN (NaN ranks above everything):
  // half and bf16 pairs are compared two at a time (one packed max per two words).
  __device__ __forceinline__ float max_value() const {
    if constexpr (kSize == 4) {
      return max_nan(max_nan(value(0), value(1)), max_nan(value(2), value(3)));
    } else {
      using Pair = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
      const Pair m = __hmax2_nan(__hmax2_nan(pair<Pair>(words.x), pair<Pair>(words.y)),
                                 __hmax2_nan(pair<Pair>(words.z), pair<Pair>(words.w)));
      uint32_t w;
      memcpy(&w, &m, sizeof(w));
      const RawPack<T> top{make_uint4(w, 0, 0, 0)};
      return max_nan(top.value(0), top.value(1));
    }
  }

 private:
  template <typename Pair>
  __device__ __forceinline__ static Pair pair(uint32_t w) {
    Pair p;
    memcpy(&p, &w, sizeof(p));
    return p;
  }
};

// The element thread t takes around the 16-byte boundaries of a range of `length` elements
// whose whole packs span [head, tail_start): threads 0 .. head - 1 the head, threads kVec and up
// the tail (each fewer than kVec elements); -1 for every other thread.
__device__ __forceinline__ int64_t edge_element(int t, int64_t head, int64_t tail_start,
                                                int64_t length, int kVec) {
  if (t < head) return t;
  if (t >= kVec && t - kVec < length - tail_start) return tail_start + t - kVec;
  return -1;
}

// y = x * (1 / temperature), rounded to float before it meets the maximum. Left to the compiler,
// y - m becomes one FMA of the unrounded product, which differs from the rounded maximum by up
// to half an ulp of y: beyond about 2^31 that is more than exp's whole range, and the row's
// largest term came out as 0 or inf instead of exp(0) = 1.
__device__ __forceinline__ float scaled_logit(float x, float scale) {
  return __fmul_rn(x, scale);
}

template <int n>
__device__ __forceinline__ MaxSum accumulate_softmax(MaxSum s, const float (&y)[n]) {
  // TODO 5 (about 8 lines; checked by [ch11_topk][softmax_topk]):
  //   Fold n more values y[0..n) (already scaled: x * (1 / temperature); -inf for slots that
  //   hold no element) into the online softmax state s = (max, sum of exp(y - max)). Take the new
  //   maximum m over s.max and the y's with max_nan (it propagates NaN); if m is still -inf nothing
  //   but masked values were seen: return s unchanged (exp(-inf - -inf) would be NaN). Otherwise
  //   rescale the old sum by common::exp_flush_denormals(s.max - m) and add
  //   common::exp_flush_denormals(y_i - m) for every i (one rescale per n values instead of one
  //   per value; this loop runs for every element of the row, so each instruction in it counts).
  // BEGIN TODO 5
  float m = s.max;
#pragma unroll
  for (int i = 0; i < n; ++i)
    m = max_nan(m, y[i]);
  if (m == -INFINITY) return s;
  float sum = s.sum * common::exp_flush_denormals(s.max - m);
#pragma unroll
  for (int i = 0; i < n; ++i)
    sum += common::exp_flush_denormals(y[i] - m);
  return {m, sum};
  // END TODO 5
}

// The row's softmax rules: NaN or +inf anywhere makes every probability NaN (as torch.softmax);
// a row of only -inf has max -inf and sum 0, so exp(-inf - -inf) / 0 is NaN too.
__device__ __forceinline__ float softmax_probability(float y, MaxSum s) {
  if (s.max != s.max || s.max == INFINITY) return NAN;
  return expf(y - s.max) / s.sum;
}
__device__ __forceinline__ float log_sum_exp(MaxSum s) {
  if (s.max != s.max || s.max == INFINITY) return NAN;
  return s.max + logf(s.sum);
}

// Streams row[begin, end) through the filter. Pointers may be unaligned: the elements before the
// first 16-byte boundary (the head) and after the last (the tail), fewer than 2 * kVec, are
// offered first, one element per thread; the body uses 16-byte streaming loads. The seed is the
// seed_rank-th best of the threads' samples (seed_sample.h); below k it is a guess, from a sample
// spread over row[sample_begin, sample_end): the chunk itself, or the whole row when the chunks of
// a split row share one seed.
template <typename T, bool kSoftmax, class Filter>
__device__ __forceinline__ void stream_elements(const T* row, int64_t begin, int64_t end,
                                                int64_t sample_begin, int64_t sample_end,
                                                float scale, int seed_rank, Filter& filter,
                                                MaxSum& state) {
  using Vec = RawPack<T>;
  constexpr int kVec = Vec::kSize;
  constexpr int kPacks = kElementsPerThread / kVec;
  const T* base = row + begin;
  const int64_t length = end - begin;
  const int64_t head = common::elements_to_alignment(base, length);
  const int64_t num_packs = (length - head) / kVec;
  const int64_t tail_start = head + num_packs * kVec;
  const T* aligned = base + head;
  const int64_t first_index = begin + head;
  constexpr int64_t kStep = int64_t{kPacks} * kFilterThreads;
  Vec next[kPacks] = {};
  auto load_tile = [&](int64_t p0) {
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int64_t p = p0 + j * kFilterThreads + threadIdx.x;
      if (p < num_packs) next[j].words = __ldcs(reinterpret_cast<const uint4*>(aligned + p * kVec));
    }
  };
  // A guess takes its sample from 128 runs of 16 elements spread over the sampled range, loaded
  // into the registers of the first tile, which follows once the seed is set. The safe seed comes
  // from the first tile, which costs no extra loads (seed_sample.h).
  const bool spread = seed_rank < filter.k;
  const T* sample_base = row + sample_begin;
  const int64_t sample_head = common::elements_to_alignment(sample_base, sample_end - sample_begin);
  const T* sample_aligned = sample_base + sample_head;
  const int64_t sample_first_index = sample_begin + sample_head;
  const int64_t sample_packs = (sample_end - sample_begin - sample_head) / kVec;
  // The head and tail: their loads travel with the first tile's (or the sample's), but they are
  // offered after the seed, so that every candidate counted by seed_held passed it.
  uint64_t edge = kEmptySlot;
  float edge_value = 0.0f;
  bool edge_valid = false;
  {
    const int t = threadIdx.x;
    const int64_t i = edge_element(t, head, tail_start, length, kVec);
    const bool valid = i >= 0;
    const T v = valid ? base[i] : T{};
    if (spread) {
      // Plain loads, not streaming ones like the tiles': the sample's lines are read again, by
      // every block of a split row (those that share an SM find them in L1) and by the tiles that
      // hold them (H200, 64x128256 fp32, k = 50: 24.9 -> 24.5 us; 4096x32000, a block per row,
      // 180.3 -> 175.9; __ldcg, which skips L1, 26.4 and 198.9).
#pragma unroll
      for (int j = 0; j < kPacks; ++j)
        next[j].words = *reinterpret_cast<const uint4*>(sample_aligned +
                                                        sample_pack(t, j, sample_packs) * kVec);
    } else {
      load_tile(0);
    }
    edge = composite(order_key(v), static_cast<uint32_t>(begin + i));
    edge_value = common::to_float(v);
    edge_valid = valid;
    if constexpr (kSoftmax) {
      const float y[1] = {valid ? scaled_logit(edge_value, scale) : -INFINITY};
      state = accumulate_softmax(state, y);
    }
  }
  {  // the first threshold (CandidateFilter::seed): each thread's best of its sample
    uint64_t best = kEmptySlot;
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int64_t p = spread ? sample_pack(threadIdx.x, j, sample_packs)
                               : int64_t{j} * kFilterThreads + threadIdx.x;
      const Vec pack = next[j];
      const uint32_t pack_index =
          static_cast<uint32_t>((spread ? sample_first_index : first_index) + p * kVec);
#pragma unroll
      for (int e = 0; e < kVec; ++e)
        if (p < (spread ? sample_packs : num_packs))
          best = MaxComposite{}(best, composite(pack.key(e), pack_index + e));
    }
    filter.seed(best, seed_rank);
  }
  // No end_tile: the buffer holds these few composites and a whole tile.
  filter.offer_by_value(edge_valid, edge_value, edge);
  if (spread) load_tile(0);
  for (int64_t p0 = 0; p0 < num_packs; p0 += kStep) {
    Vec packs[kPacks];
#pragma unroll
    for (int j = 0; j < kPacks; ++j)
      packs[j] = next[j];
    if (p0 + kStep < num_packs) load_tile(p0 + kStep);  // in flight while this tile is filtered
    // The fast test: the largest element of each pack against the threshold's value (a few
    // packed max instructions per pack, one comparison). Only when some lane of the warp holds a
    // pack that might pass does the warp look at that pack's elements, and composites are built
    // only for the elements that pass: typically one lane holds one such element.
    const float pass_value = filter.pass_value(first_index + p0 * kVec);
    bool pack_passes[kPacks];
    bool maybe = false;
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const bool valid = p0 + j * kFilterThreads + threadIdx.x < num_packs;
      pack_passes[j] = valid && !(packs[j].max_value() < pass_value);
      maybe |= pack_passes[j];
    }
    if constexpr (kSoftmax) {
#pragma unroll
      for (int j = 0; j < kPacks; ++j) {
        const bool valid = p0 + j * kFilterThreads + threadIdx.x < num_packs;
        float y[kVec];
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          y[e] = valid ? scaled_logit(packs[j].value(e), scale) : -INFINITY;
        state = accumulate_softmax(state, y);
      }
    }
    if (__any_sync(common::kFullWarpMask, maybe)) {
#pragma unroll
      for (int j = 0; j < kPacks; ++j) {
        if (!__any_sync(common::kFullWarpMask, pack_passes[j])) continue;
        const uint32_t pack_index =
            static_cast<uint32_t>(first_index + (p0 + j * kFilterThreads + threadIdx.x) * kVec);
        // Each lane that keeps some of its pack's elements reserves their slots with one atomic
        // of its own (append_slots). With a threshold near the k-th best, about k / n of the
        // elements pass: at large k many packs hold one, at small k typically one lane of the
        // warp holds one, and its atomic is the warp's only one. A warp vote and an offer per
        // element instead, one atomic per warp and element slot, took bf16 1024x128256, k = 50,
        // from 106.7 to 119.9 us on an H200, and k = 1 from 77.8 to 82.8.
        uint32_t keep = 0;
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          if (pack_passes[j] && !(packs[j].value(e) < pass_value)) keep |= 1u << e;
        // The lane visits only the elements it keeps, one per set bit of `keep` (a runtime
        // index into the pack's words, a few selects), where a loop unrolled over all kVec
        // elements under predicates issues every element's key and store for the whole warp
        // while typically one lane keeps one: 1024x128256 fp32, k = 1024, 298.3 -> 260.8 us and
        // bf16 k = 50 104.7 -> 97.2 us on an H200. This loop is close to instruction-bound.
        if (keep != 0) {
          int slot = filter.append_slots(__popc(keep));
          do {
            const int e = __ffs(keep) - 1;
            keep &= keep - 1;
            filter.buffer[slot++] = composite(packs[j].key(e), pack_index + e);
          } while (keep != 0);
        }
      }
    }
    filter.end_tile();
  }
}

// Where the merge of a row's chunks may start its filter. Every chunk published its best k
// composites sorted descending (empty slots last), so the composite at depth d of a list is
// beaten or matched by d composites of that list. Take d = ceil(k / chunks) and r = ceil(k / d)
// <= chunks: the r-th largest of the lists' composites at depth d is matched or beaten by r
// lists' d composites, at least k in all, so it is <= the row's k-th best and is a valid start.
// For 62 chunks (split_chunks for 17 rows of 128256 on 132 SMs; one such row alone gets 93) and
// k = 50 it is the 50th best of the 62 chunk maxima, which about 100 of the 3100 published
// composites pass when every chunk seeds itself. The caller has loaded list threadIdx.x's
// composite at depth d (`own`, kEmptySlot where there is no such list); up to 32 lists, one warp
// ranks them with shuffles, more wait in the filter's buffer and are counted.
static_assert(SmallK::kCapacity >= kMaxChunks && LargeK::kCapacity >= kMaxChunks,
              "merge_start keeps one composite per chunk in the candidate buffer");
template <class Filter>
__device__ uint64_t merge_start(const uint64_t* lists, int chunks, int k, int depth, uint64_t own,
                                Filter& filter) {
  const int lists_needed = (k + depth - 1) / depth;
  if (chunks <= common::kWarpSize) {
    // One warp ranks them with shuffles: one barrier, where counting in shared memory takes three.
    // The caller's reset has the barrier that keeps the slot until everyone has read it.
    if (threadIdx.x < common::kWarpSize) {
      const uint64_t start = warp_rank_select<common::kWarpSize>(own, lists_needed);
      if (threadIdx.x == 0) filter.scratch->kth = start;
    }
    __syncthreads();
    return filter.scratch->kth;
  }
  if (threadIdx.x < chunks) filter.buffer[threadIdx.x] = own;
  for (int c = threadIdx.x + blockDim.x; c < chunks; c += blockDim.x)
    filter.buffer[c] =
        __ldcg(reinterpret_cast<const unsigned long long*>(lists + int64_t{c} * k + depth - 1));
  return kth_largest(filter.buffer, chunks, lists_needed, filter.scratch->kth);
}

// Composites [depth, depth + n) of published list `list`, kEmptySlot past its k or for a
// closed list.
template <int n>
__device__ __forceinline__ void load_list_round(uint64_t (&c)[n], const uint64_t* lists, int k,
                                                int list, bool open, int depth) {
#pragma unroll
  for (int j = 0; j < n; ++j)
    c[j] = open && depth + j < k ? __ldcg(reinterpret_cast<const unsigned long long*>(
                                       lists + int64_t{list} * k + depth + j))
                                 : kEmptySlot;
}

// The last block's merge. Each published list is sorted, so its composites >= the start form a
// prefix: threads load a list 8 composites each at a time, and the list is read further only
// while its last composite of the round still passed. With few chunks the block's 128 threads
// share the lists, up to 8 threads per list, so that a round covers up to 64 composites of each:
// for 16 chunks and k = 50 the whole of every published list, one round trip to L2 (where a
// thread per list needed two or three on random rows: about a hundred composites pass the start,
// and many lists hold more than 8 of them). For 62 chunks (17 rows of 128256) and k = 50, a
// thread per list: about a hundred composites pass, almost all among the first 8 of their lists,
// one round of loads where streaming all 3100 composites took four. A round appends at most
// 128 * 8 composites, less than the tile end_tile keeps room for.
// Where merge_start's composite at depth d lies in the first round (d <= 8 * threads per list),
// the first round is loaded before the start is known, together with that composite (loaded
// apart for merge_start): one round trip to L2 for both instead of two (H200, with the
// acquire-release publication: 1x128256 fp32, k = 50, 14.27 -> 13.60 us; 64x128256 27.20 -> 26.59).
// It waits in the buffer's last 1024 slots, which neither merge_start (at most kMaxChunks slots
// from the start) nor the round's appends (at most 1024) reach. Deeper starts (k = 1024 over 93
// chunks: d = 12) load as before: loaded early, the fused fp32 kernel at one row took 43.4 to
// 46.0 us.
// kLanes: threads per list (1, or 8 where the chunks are at most 16); a round covers kLanes * 8
// depths of each list. A compile-time count: computed at run time, it cost the kernel registers
// it spilled.
template <int kLanes, class Filter>
__device__ void merge_lists_by(const uint64_t* lists, int chunks, int k, Filter& filter) {
  constexpr int kPerRound = kElementsPerThread / 2;  // what the registers have room for
  static_assert(Filter::Configuration::kCapacity >= kMaxChunks + kPerRound * kFilterThreads &&
                    Filter::Configuration::kCapacity >= 2 * kPerRound * kFilterThreads,
                "the first round waits in the buffer's end");
  static_assert(kLanes >= 1 && kLanes <= 8 && (kLanes & (kLanes - 1)) == 0, "lanes of one warp");
  uint64_t* first_round =
      filter.buffer + Filter::Configuration::kCapacity - kPerRound * kFilterThreads;
  constexpr int span = kLanes * kPerRound;
  const int start_depth = (k + chunks - 1) / chunks;  // merge_start's d
  const bool first_round_early = start_depth <= span;
  {
    // merge_start takes list threadIdx.x's composite at depth d, loaded together with the first
    // round (which holds it too, in some thread's registers).
    const int own_list = threadIdx.x;
    const uint64_t own = own_list < chunks ? __ldcg(reinterpret_cast<const unsigned long long*>(
                                                 lists + int64_t{own_list} * k + start_depth - 1))
                                           : kEmptySlot;
    if (first_round_early) {
      uint64_t c[kPerRound];
      const int list = static_cast<int>(threadIdx.x) / kLanes;
      const int part = static_cast<int>(threadIdx.x) & (kLanes - 1);
      load_list_round(c, lists, k, list, list < chunks, part * kPerRound);
#pragma unroll
      for (int j = 0; j < kPerRound; ++j)
        first_round[j * kFilterThreads + threadIdx.x] = c[j];
    }
    filter.reset(merge_start(lists, chunks, k, start_depth, own, filter));
  }
  const int lists_per_pass = kFilterThreads / kLanes;
  for (int first_list = 0; first_list < chunks; first_list += lists_per_pass) {
    const int list = first_list + static_cast<int>(threadIdx.x) / kLanes;
    bool open = list < chunks;
    for (int depth = 0; __syncthreads_or(open); depth += span) {
      uint64_t c[kPerRound];
      if (first_round_early && first_list == 0 && depth == 0) {
#pragma unroll
        for (int j = 0; j < kPerRound; ++j)
          c[j] = first_round[j * kFilterThreads + threadIdx.x];
      } else {
        // The lane's part of the round, from the thread index read afresh (asm volatile): kept
        // in a register through the loop, it cost the fused kernels a spill.
        unsigned t;
        asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t));
        load_list_round(c, lists, k, list, open,
                        depth + static_cast<int>(t & (kLanes - 1)) * kPerRound);
      }
      uint32_t keep = 0;
#pragma unroll
      for (int j = 0; j < kPerRound; ++j)
        if (c[j] != kEmptySlot && c[j] >= filter.threshold) keep |= 1u << j;
      int slot = filter.reserve(__popc(keep));
#pragma unroll
      for (int j = 0; j < kPerRound; ++j)
        if (keep & (1u << j)) filter.buffer[slot++] = c[j];
      // The list goes on only while the last composite of its round, its last lane's, passed.
      bool last_passed = keep >> (kPerRound - 1);
      if constexpr (kLanes > 1)
        last_passed =
            __shfl_sync(common::kFullWarpMask, last_passed,
                        (static_cast<int>(threadIdx.x) % common::kWarpSize) | (kLanes - 1));
      open = open && last_passed && depth + span < k;
      filter.end_tile();
    }
  }
}

template <class Filter>
__device__ void merge_lists(const uint64_t* lists, int chunks, int k, Filter& filter) {
  if (chunks * 8 <= kFilterThreads)
    merge_lists_by<8>(lists, chunks, k, filter);
  else
    merge_lists_by<1>(lists, chunks, k, filter);
}

// The rare second reading of a chunk whose guessed seed was above its k-th best: every element
// is offered again, against `start` (a threshold known to be <= the k-th best; none for a
// guess that failed) until the buffer is compacted. Plain loads, four per thread in flight, and
// few registers, so that this path costs the streaming loop none. Strides by the block's size:
// version 4b's block 0 reads with 512 threads. The softmax state needs no second reading: it
// never depended on the threshold.
constexpr int kOfferInFlight = 4;  // offer_again's loads per thread and round
template <typename T, class Filter>
__device__ void offer_again(const T* row, int64_t begin, int64_t end, Filter& filter,
                            uint64_t start = kEmptySlot) {
  constexpr int kInFlight = kOfferInFlight;
  __syncthreads();  // every thread has read the count (seed_held) before reset clears it
  filter.reset(start);
  const int64_t threads = blockDim.x;
  for (int64_t first = begin; first < end; first += kInFlight * threads) {
    T v[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int64_t i = first + u * threads + threadIdx.x;
      v[u] = i < end ? row[i] : T{};
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int64_t i = first + u * threads + threadIdx.x;
      filter.offer(i < end, composite(order_key(v[u]), static_cast<uint32_t>(i)));
    }
    filter.end_tile();
  }
}

// Elements per chunk when a row is split into `chunks` (all of it for one chunk); multiples of 64
// keep every chunk's body 16-byte aligned when the row is. The last chunk may be shorter, or empty.
__host__ __device__ inline int64_t chunk_length(int64_t N, int chunks) {
  const int64_t length = ((N + chunks - 1) / chunks + 63) / 64 * 64;
  return length < N ? length : N;
}

// This block's row. Read with asm volatile, which the compiler may not merge with an earlier read:
// a second call after the streaming loop recomputes the address instead of keeping it in
// registers through the loop, which has none to spare (chunk_range does the same).
template <typename T>
__device__ __forceinline__ const T* row_of(const T* x, int64_t N) {
  unsigned row;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(row));
  return x + int64_t{row} * N;
}

// This block's chunk of its row, [begin, end), from the launch geometry.
struct ChunkRange {
  int64_t begin, end;
};
__device__ __forceinline__ ChunkRange chunk_range(int64_t N) {
  unsigned chunk, chunks;  // read as in row_of
  asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(chunk));
  asm volatile("mov.u32 %0, %%nctaid.y;" : "=r"(chunks));
  const int64_t length = chunk_length(N, static_cast<int>(chunks));
  const int64_t begin = chunk * length < N ? chunk * length : N;
  return {begin, begin + length < N ? begin + length : N};
}

template <typename T, class Config, bool kSoftmax>
__global__ void __launch_bounds__(kFilterThreads, COMMON_TUNED_MIN_BLOCKS(Config::kBlocksPerSM))
    filter_topk_kernel(const T* x, int64_t N, int k, int guess_rank, bool row_seed, float scale,
                       T* values, int64_t* indices, float* probs, float* lse, SplitWorkspace ws) {
  extern __shared__ uint64_t shared_slots[];
  __shared__ SelectScratch scratch;
  __shared__ int count;
  __shared__ bool last_block;
  const int64_t row_id = blockIdx.x;
  const int chunk = blockIdx.y;
  const int chunks = gridDim.y;
  const T* row = row_of(x, N);

  CandidateFilter<T, Config> filter{shared_slots, shared_slots + Config::kCapacity, &count,
                                    &scratch, k};
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  MaxSum state{-INFINITY, 0.0f};
  {
    // guess_rank was chosen for a whole chunk, and a shorter last chunk takes the safe seed; or,
    // with row_seed, for the whole row, which every chunk then samples to the same seed.
    const ChunkRange range = chunk_range(N);
    const bool whole = range.end - range.begin == chunk_length(N, chunks);
    stream_elements<T, kSoftmax>(row, range.begin, range.end, row_seed ? 0 : range.begin,
                                 row_seed ? N : range.end, scale,
                                 row_seed || whole ? guess_rank : k, filter, state);
  }
  if (guess_rank < k && !row_seed) {
    // A guess above the chunk's k-th best (seed_sample.h: less than once in a million chunks of
    // random data, more often on rows made to mislead the sample) is noticed here. Launches
    // that never guess skip the check and its barrier.
    const ChunkRange range = chunk_range(N);
    if (!filter.seed_held(range.end - range.begin))
      offer_again(row, range.begin, range.end, filter);
  }
  int n = filter.finish();
  if constexpr (kSoftmax)
    state = common::block_reduce(state, MaxSumMerge{}, MaxSum{-INFINITY, 0.0f});

  if (chunks > 1) {
    // TODO 4 (about 22 lines; checked by [ch11_topk][split_row]):
    //   Publish this chunk's result and let the last block of the row merge.
    //   1. Write filter.buffer[0, n) (finish() left it sorted descending) to
    //      ws.candidates + (row_id * chunks + chunk) * k and fill the rest of the k slots with
    //      kEmptySlot; with kSoftmax, thread 0 writes `state` to ws.states[row_id * chunks +
    //      chunk].
    //   2. Barrier; thread 0 counts the chunk as done with
    //        cuda::atomic_ref<int, cuda::thread_scope_device> done(ws.counters[row_id]);
    //        last_block = done.fetch_add(1, cuda::memory_order_acq_rel) == chunks - 1;
    //      (the release half publishes the block's writes, which the barrier ordered before it;
    //      the acquire half lets the last block see every other chunk's); barrier. Every block
    //      but the last returns.
    //   3. The last block: merge_lists(lists, chunks, k, filter) with
    //      lists = ws.candidates + row_id * chunks * k (it starts the filter at merge_start's
    //      bound and offers each list's prefix that passes); n = filter.finish_merge() (the
    //      merge's variant of finish(): it ranks its hundred or so candidates by sorted runs).
    //      With kSoftmax, state = the merge of the chunks' states (read them with __ldcg, e.g.
    //      as a float2; block_reduce with MaxSumMerge, identity {-inf, 0}; chunks may exceed
    //      blockDim.x).
    //   4. Thread 0 sets ws.counters[row_id] back to 0 for the next launch.
    // BEGIN TODO 4
    uint64_t* mine = ws.candidates + (row_id * chunks + chunk) * k;
    for (int j = threadIdx.x; j < k; j += kFilterThreads)
      mine[j] = j < n ? filter.buffer[j] : kEmptySlot;
    if (kSoftmax && threadIdx.x == 0) ws.states[row_id * chunks + chunk] = state;
    __syncthreads();
    if (threadIdx.x == 0) {
      cuda::atomic_ref<int, cuda::thread_scope_device> done(ws.counters[row_id]);
      last_block = done.fetch_add(1, cuda::memory_order_acq_rel) == chunks - 1;
    }
    __syncthreads();
    if (!last_block) return;
    const uint64_t* lists = ws.candidates + row_id * chunks * k;
    merge_lists(lists, chunks, k, filter);
    n = filter.finish_merge();
    if constexpr (kSoftmax) {
      MaxSum merged{-INFINITY, 0.0f};
      for (int c = threadIdx.x; c < chunks; c += kFilterThreads) {
        const float2 s = __ldcg(reinterpret_cast<const float2*>(ws.states + row_id * chunks + c));
        merged = MaxSumMerge{}(merged, MaxSum{s.x, s.y});
      }
      state = common::block_reduce(merged, MaxSumMerge{}, MaxSum{-INFINITY, 0.0f});
    }
    if (threadIdx.x == 0) ws.counters[row_id] = 0;
    // END TODO 4
    // A row seed is checked once, over the whole row: a chunk may hold fewer than k elements
    // above it, but the row holds at least k unless the guess was too high, and then the merge
    // ends with fewer than k candidates. The last block offers the whole row again itself.
    if (row_seed && n < min(int64_t{k}, N)) {
      offer_again(row_of(x, N), 0, N, filter);
      n = filter.finish();
    }
  }

  row = row_of(x, N);  // again, for the values of the winners
  for (int j = threadIdx.x; j < n; j += kFilterThreads) {
    const uint64_t c = filter.buffer[j];
    const int64_t slot = row_id * k + j;
    if constexpr (kSoftmax) {
      if (c == kEmptySlot) continue;
      write_slot(row, c, static_cast<T*>(nullptr), indices, slot);
      const float y =
          scaled_logit(key_value<T>(static_cast<uint32_t>(c >> 32)), scale);  // NaN stays NaN
      probs[slot] = softmax_probability(y, state);
    } else {
      write_slot(row, c, values, indices, slot);
    }
  }
  if constexpr (kSoftmax) {
    if (lse != nullptr && threadIdx.x == 0) lse[row_id] = log_sum_exp(state);
  }
}

template <typename T, class Config, bool kSoftmax>
void launch_filter(const T* x, int64_t M, int64_t N, int k, int chunks, float scale, T* values,
                   int64_t* indices, float* probs, float* lse, void* workspace,
                   cudaStream_t stream) {
  auto kernel = filter_topk_kernel<T, Config, kSoftmax>;
  common::set_kernel_attribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(Config::kSharedBytes));
  const SplitWorkspace ws = chunks > 1 ? split_workspace(workspace, M, k, chunks)
                                       : SplitWorkspace{nullptr, nullptr, nullptr};
  // The chunks of a split row share one seed when the row is long enough to guess it: sampled
  // from the whole row, it lets through about k / N of the row's elements in all, where a seed of
  // each chunk's own lets through at least k per chunk (seed_sample.h).
  const int64_t length = chunk_length(N, chunks);
  const int row_rank = seed_rank(k, N, N >= kSpreadSampleMin);
  const bool row_seed = chunks > 1 && row_rank < k;
  const int guess_rank = row_seed ? row_rank : seed_rank(k, length, length >= kSpreadSampleMin);
  const dim3 grid(static_cast<unsigned>(M), static_cast<unsigned>(chunks));
  kernel<<<grid, kFilterThreads, Config::kSharedBytes, stream>>>(
      x, N, k, guess_rank, row_seed, scale, values, indices, probs, lse, ws);
  CUDA_CHECK_LAUNCH();
}

// Version 4b: a row held in the registers of one thread-block cluster (sm_90), for few rows of at
// most 16 blocks' worth of registers (kClusterBlockElements each). Version 4's chain of round
// trips (the row's sample, a tile at a time, the publication, the merge through L2) becomes: one
// load of the whole row, spread over up to 16 SMs, and two exchanges through distributed shared
// memory. A bound used throughout: if u groups of elements each hold d distinct elements >= t,
// then u * d elements are >= t, and t is at most the (u * d)-th best.
//   1. Each block loads its part, kClusterPacks 16-byte packs per thread of 512, all in flight at
//      once. Each thread takes the best composite it holds, each warp sorts its 32 thread bests
//      (warp_sort_descending), and the block bounds its d-th best at a few depths d from the
//      warps' sorted bests (block_depth_bound).
//   2. Every block posts these bounds into every block's mailbox (common/cluster_mailbox.cuh:
//      no cluster barrier after the stores), and each derives the same threshold
//      (cluster_depth_bound): at depth d, the ceil(k / d)-th largest of the blocks'
//      depth-d bounds is <= the row's k-th best; the threshold is the largest of these over the
//      depths. The smallest depth, ceil(k / blocks), is tight when the best elements are spread
//      over the row, the largest (k, or 128) when they crowd into one block.
//   3. Each block appends the elements that reach the threshold to block 0's candidate buffer
//      (one distributed atomic per warp reserves their slots). After a cluster barrier block 0
//      selects and sorts the k best and writes them. If the candidates overflowed the buffer
//      (only rows built for it do that), block 0 reads the whole row again (offer_again).
// Nothing goes through global memory but the row and the answer, and no workspace is needed.
constexpr int kClusterThreads = 512;
constexpr int kClusterWarps = kClusterThreads / common::kWarpSize;
constexpr int kClusterPacks = 4;       // 16-byte packs per thread, all loaded at once
constexpr int kMaxClusterBlocks = 16;  // the largest cluster sm_90 launches (non-portable size)
// [[maybe_unused]] here and on the two bounds below: only the cluster kernel uses them, and its
// body is compiled for sm_90 and newer only.
[[maybe_unused]] constexpr int kClusterDepths = 6;  // depths pushed per block: log2(16) + 2 at most
constexpr int kMaxClusterDepth = 128;  // the deepest bound a block gives

template <typename T>
constexpr int64_t kClusterBlockElements = int64_t{kClusterThreads} *
                                          kClusterPacks* static_cast<int64_t>(16 / sizeof(T));
static_assert(kMaxClusterBlocks * kClusterBlockElements<float> == cluster_row_max_n(4),
              "topk.h's cluster_row_max_n must describe this kernel's shape");
static_assert(kOfferInFlight * kClusterThreads <= kTile,
              "a round of offer_again must fit the room CandidateFilter::end_tile keeps");

// Blocks per row of version 4b for rows of N elements, 0 when one cluster cannot hold them.
template <typename T>
int cluster_row_blocks(int64_t N) {
  const int64_t blocks = (N + kClusterBlockElements<T> - 1) / kClusterBlockElements<T>;
  return blocks <= kMaxClusterBlocks ? static_cast<int>(blocks) : 0;
}

// Depth j (0 past the last) of the depths every block pushes: ceil(k / blocks), doubling, then
// min(k, kMaxClusterDepth). At every depth d, ceil(k / d) <= blocks.
__device__ __forceinline__ int cluster_depth(int j, int k, int blocks) {
  const int last = min(k, kMaxClusterDepth);
  const int d = ((k + blocks - 1) / blocks) << j;
  if (d < last) return d;
  return j == 0 || (d >> 1) < last ? last : 0;  // the first depth to reach `last` is `last`
}

// A bound on the block's d-th best: `sorted[w][i]` is warp w's (i+1)-th best thread best. With
// depth e per warp, the ceil(d / e)-th largest of the warps' depth-e bests is matched or beaten by
// that many warps' e elements. Two choices of e, the largest of their bounds: ceil(d / warps)
// (tight when the block's best elements are spread over its warps) and min(d, 32) (when they
// crowd into one). Called by one whole warp.
[[maybe_unused]] __device__ __forceinline__ uint64_t
block_depth_bound(const uint64_t (*sorted)[common::kWarpSize], int d) {
  const int lane = threadIdx.x % common::kWarpSize;
  uint64_t bound = kEmptySlot;
  const int spread = (d + kClusterWarps - 1) / kClusterWarps;
  const int crowded = min(d, common::kWarpSize);
  for (int choice = 0; choice < (spread == crowded ? 1 : 2); ++choice) {
    const int e = choice == 0 ? spread : crowded;
    const uint64_t mine = lane < kClusterWarps ? sorted[lane][e - 1] : kEmptySlot;
    bound = MaxComposite{}(bound, warp_rank_select<kClusterWarps>(mine, (d + e - 1) / e));
  }
  return bound;
}

// The best composite of a thread's packs: the largest value first (NaN above all), then the
// composite max over the first pack that holds it, which is also the lowest index holding it.
template <typename T, int kPacks>
__device__ __forceinline__ uint64_t packs_best(const RawPack<T> (&packs)[kPacks],
                                               const float (&pack_max)[kPacks],
                                               const bool (&valid)[kPacks], uint32_t first_index,
                                               uint32_t pack_stride) {
  constexpr int kVec = RawPack<T>::kSize;
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kPacks; ++j)
    if (valid[j]) m = max_nan(m, pack_max[j]);
  RawPack<T> chosen{make_uint4(0, 0, 0, 0)};
  uint32_t index = 0;
  bool found = false;
#pragma unroll
  for (int j = kPacks - 1; j >= 0; --j) {  // backwards: the first match wins
    const bool match = valid[j] && (m != m ? pack_max[j] != pack_max[j] : pack_max[j] == m);
    if (match) {
      chosen = packs[j];
      index = first_index + j * pack_stride;
      found = true;
    }
  }
  if (!found) return kEmptySlot;
  uint64_t best = kEmptySlot;
#pragma unroll
  for (int e = 0; e < kVec; ++e)
    best = MaxComposite{}(best, composite(chosen.key(e), index + e));
  return best;
}

// The cluster's bound at depth j of cluster_depth (kEmptySlot past the last depth), from
// slots[j][b], block b's bound at that depth. Called by one whole warp; the threshold is the
// largest over j.
[[maybe_unused]] __device__ __forceinline__ uint64_t
cluster_depth_bound(const uint64_t (*slots)[kMaxClusterBlocks], int j, int k, int blocks) {
  const int depth = cluster_depth(j, k, blocks);
  if (depth == 0) return kEmptySlot;
  const int lane = threadIdx.x % common::kWarpSize;
  const uint64_t mine = lane < blocks ? slots[j][lane] : kEmptySlot;
  return warp_rank_select<kMaxClusterBlocks>(mine, (k + depth - 1) / depth);
}

template <typename T, class Config>
__global__ void __launch_bounds__(kClusterThreads)
    cluster_topk_kernel(const T* x, int64_t N, int k, T* values, int64_t* indices) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Vec = RawPack<T>;
  constexpr int kVec = Vec::kSize;
  extern __shared__ uint64_t shared_slots[];  // block 0: the candidate buffer, then winners
  uint64_t* buffer = shared_slots;
  uint64_t* winners = shared_slots + Config::kCapacity;
  __shared__ SelectScratch scratch;
  __shared__ int count;
  __shared__ uint64_t warp_bests[kClusterWarps][common::kWarpSize];
  __shared__ uint64_t depth_slots[kClusterDepths][kMaxClusterBlocks];
  __shared__ uint64_t depth_thresholds[kClusterDepths];
  __shared__ uint64_t bounds_arrived;  // the mailbox of depth_slots
  cg::cluster_group cluster = cg::this_cluster();
  const int blocks = static_cast<int>(cluster.num_blocks());
  const int me = static_cast<int>(cluster.block_rank());
  const int warp = threadIdx.x / common::kWarpSize, lane = threadIdx.x % common::kWarpSize;
  // Stores into another block's shared memory may start only once that block runs and has
  // opened its mailbox: arrive once it has, wait before the exchange. Block 0 arrives with a
  // release, which orders count = 0 before any remote append, and before its loads (a release
  // behind them would wait for them); the others arrive once their loads are in flight, relaxed.
  if (threadIdx.x == 0) {
    int depths = 0;
    while (depths < kClusterDepths && cluster_depth(depths, k, blocks) > 0)
      ++depths;
    // A cluster of one block keeps its bounds with plain stores: st.async wants two or more.
    common::mailbox_open(&bounds_arrived, blocks > 1 ? blocks * depths * sizeof(uint64_t) : 0);
    if (me == 0) count = 0;
  }
  if (me == 0) asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");

  const int64_t row_id = blockIdx.y;
  const T* row = x + row_id * N;
  const int64_t head = common::elements_to_alignment(row, N);
  const int64_t num_packs = (N - head) / kVec;
  const int64_t tail_start = head + num_packs * kVec;
  const int64_t first_pack = int64_t{me} * kClusterThreads * kClusterPacks + threadIdx.x;
  const uint32_t first_index = static_cast<uint32_t>(head + first_pack * kVec);
  constexpr uint32_t kPackStride = kClusterThreads * kVec;  // index distance of a thread's packs
  const T* aligned = row + head;
  Vec packs[kClusterPacks];
  bool valid[kClusterPacks];
#pragma unroll
  for (int j = 0; j < kClusterPacks; ++j) {
    const int64_t p = first_pack + j * kClusterThreads;
    valid[j] = p < num_packs;
    packs[j].words = valid[j] ? __ldcs(reinterpret_cast<const uint4*>(aligned + p * kVec))
                              : make_uint4(0, 0, 0, 0);
  }
  // The elements before the first and after the last 16-byte boundary (fewer than 2 * kVec):
  // block 0's threads take one each.
  uint64_t edge = kEmptySlot;
  if (me == 0) {
    const int64_t i = edge_element(threadIdx.x, head, tail_start, N, kVec);
    if (i >= 0) edge = composite(order_key(row[i]), static_cast<uint32_t>(i));
  }
  if (me != 0) asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");

  // 1. Thread bests, sorted per warp; the block's bounds.
  float pack_max[kClusterPacks];
#pragma unroll
  for (int j = 0; j < kClusterPacks; ++j)
    pack_max[j] = packs[j].max_value();
  const uint64_t best =
      MaxComposite{}(edge, packs_best<T>(packs, pack_max, valid, first_index, kPackStride));
  warp_bests[warp][lane] = warp_sort_descending(best);
  __syncthreads();
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");  // every block has started
  if (warp < kClusterDepths) {
    const int depth = cluster_depth(warp, k, blocks);
    if (depth > 0) {
      const uint64_t bound = block_depth_bound(warp_bests, depth);
      if (blocks == 1 && lane == 0) depth_slots[warp][0] = bound;
      if (blocks > 1 && lane < blocks)
        common::mailbox_post(&depth_slots[warp][me], bound, &bounds_arrived, lane);
    }
  }
  // 2. Every block's bounds in every block; the threshold.
  if (warp < kClusterDepths) {  // a warp per depth, then the largest
    common::mailbox_wait(&bounds_arrived);
    __syncwarp();  // a single block's own stores, from lane 0
    const uint64_t bound = cluster_depth_bound(depth_slots, warp, k, blocks);
    if (lane == 0) depth_thresholds[warp] = bound;
  }
  __syncthreads();
  uint64_t threshold = kEmptySlot;
#pragma unroll
  for (int j = 0; j < kClusterDepths; ++j)
    threshold = MaxComposite{}(threshold, depth_thresholds[j]);
  const float threshold_value = key_value<T>(static_cast<uint32_t>(threshold >> 32));

  // 3. Append what reaches the threshold to block 0's buffer: count, reserve, store.
  int n = edge != kEmptySlot && edge >= threshold;
  uint32_t keep[kClusterPacks];
#pragma unroll
  for (int j = 0; j < kClusterPacks; ++j) {
    keep[j] = 0;
    if (valid[j] && !(pack_max[j] < threshold_value)) {
      const uint32_t index = first_index + j * kPackStride;
#pragma unroll
      for (int e = 0; e < kVec; ++e)
        if (composite(packs[j].key(e), index + e) >= threshold) keep[j] |= 1u << e;
    }
    n += __popc(keep[j]);
  }
  uint64_t* buffer0 = cluster.map_shared_rank(buffer, 0);
  int slot = warp_reserve(cluster.map_shared_rank(&count, 0), n).first;
  if (edge != kEmptySlot && edge >= threshold) {
    if (slot < Config::kCapacity) buffer0[slot] = edge;
    ++slot;
  }
#pragma unroll
  for (int j = 0; j < kClusterPacks; ++j) {
    for (uint32_t bits = keep[j]; bits != 0; bits &= bits - 1) {
      const int e = __ffs(bits) - 1;
      if (slot < Config::kCapacity)
        buffer0[slot] = composite(packs[j].key(e), first_index + j * kPackStride + e);
      ++slot;
    }
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  if (me != 0) return;

  // Block 0: the k best of the candidates, sorted.
  if (count > Config::kCapacity) {  // only rows built for it: read the row again alone
    CandidateFilter<T, Config> filter{buffer, winners, &count, &scratch, k};
    offer_again(row, 0, N, filter, threshold);
    __syncthreads();
  }
  int found = count;
  if (found > max(k, kRankLimit)) {
    select_top_k<KeyTraits<T>::kBits>(buffer, found, k, winners, scratch);
    found = k;
  }
  const uint64_t* answer = buffer;
  if (found > kRankLimit) {
    block_sort_descending<kClusterThreads>(buffer, found);
  } else {
    scatter_by_rank_split(buffer, found, k, winners);
    found = min(found, k);
    answer = winners;
    __syncthreads();
  }
  for (int j = threadIdx.x; j < found; j += kClusterThreads)
    write_slot(row, answer[j], values, indices, row_id * k + j);
#else
  (void)x, (void)N, (void)k, (void)values, (void)indices;  // the launcher refuses before sm_90
#endif
}

template <typename T, class Config>
void launch_cluster_row(const T* x, int64_t M, int64_t N, int k, T* values, int64_t* indices,
                        int blocks, cudaStream_t stream) {
  auto kernel = cluster_topk_kernel<T, Config>;
  common::set_kernel_attribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(Config::kSharedBytes));
  common::set_kernel_attribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(M));
  config.blockDim = dim3(kClusterThreads);
  config.dynamicSmemBytes = Config::kSharedBytes;
  config.stream = stream;
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(blocks);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, x, N, k, values, indices));
  CUDA_CHECK_LAUNCH();
}

template <typename T, bool kSoftmax>
void run_filter(const char* who, const T* x, int64_t M, int64_t N, int k, int chunks, float scale,
                T* values, int64_t* indices, float* probs, float* lse, void* workspace,
                size_t workspace_size, cudaStream_t stream) {
  check_problem(who, x, M, N, k, indices, kMaxK, values, probs);
  check_lse(who, lse, x, M, N, k, indices, probs);
  check_chunks(who, chunks);
  if (chunks == 0) chunks = split_chunks(M, N);
  check_split_workspace(who, workspace, workspace_size, M, N, k, chunks, x, values, indices, probs,
                        lse);
  if (M == 0) return;
  if (k <= SmallK::kMaxK)
    launch_filter<T, SmallK, kSoftmax>(x, M, N, k, chunks, scale, values, indices, probs, lse,
                                       workspace, stream);
  else
    launch_filter<T, LargeK, kSoftmax>(x, M, N, k, chunks, scale, values, indices, probs, lse,
                                       workspace, stream);
}

}  // namespace
}  // namespace detail

template <typename T>
void detail::topk_filtered(const char* who, const T* x, int64_t M, int64_t N, int k, int chunks,
                           T* values, int64_t* indices, void* workspace, size_t workspace_size,
                           cudaStream_t stream) {
  check_values(who, M, values);
  run_filter<T, false>(who, x, M, N, k, chunks, 1.0f, values, indices, nullptr, nullptr, workspace,
                       workspace_size, stream);
}

template <typename T>
void topk_filtered(const T* x, int64_t M, int64_t N, int k, int chunks, T* values, int64_t* indices,
                   void* workspace, size_t workspace_size, cudaStream_t stream) {
  detail::topk_filtered(__func__, x, M, N, k, chunks, values, indices, workspace, workspace_size,
                        stream);
}

template <typename T>
void softmax_topk(const T* x, int64_t M, int64_t N, int k, float temperature, int chunks,
                  int64_t* indices, float* probs, float* lse, void* workspace,
                  size_t workspace_size, cudaStream_t stream) {
  // 1 / temperature must be finite too: below 2^-128 it overflows, and x / temperature with it.
  CHECK_ARG(
      temperature > 0.0f && std::isfinite(temperature) && std::isfinite(1.0f / temperature),
      "temperature must be positive and finite, with a finite reciprocal, got " << temperature);
  CHECK_ARG(M == 0 || probs != nullptr, "probs must not be null");
  detail::run_filter<T, true>(__func__, x, M, N, k, chunks, 1.0f / temperature, nullptr, indices,
                              probs, lse, workspace, workspace_size, stream);
}

template <typename T>
void detail::topk_cluster_row(const char* who, const T* x, int64_t M, int64_t N, int k, T* values,
                              int64_t* indices, cudaStream_t stream) {
  check_problem(who, x, M, N, k, indices, kMaxK, values);
  check_values(who, M, values);
  CHECK_ARG_FOR(who, N <= cluster_row_max_n(static_cast<int>(sizeof(T))),
                "rows of N = " << N << " do not fit one cluster's registers (at most "
                               << cluster_row_max_n(static_cast<int>(sizeof(T))) << ")");
  CHECK_ARG_FOR(who, M <= 65535, "M = " << M << " exceeds the grid's 65535 rows of clusters");
  CHECK_ARG_FOR(who, common::has_sm90_features(),
                "thread-block clusters need sm_90 or newer; " << common::sm90_features_missing());
  if (M == 0) return;
  // At least ceil(k / 128) blocks, so that no block is asked for a bound deeper than 128.
  const int blocks =
      std::max(cluster_row_blocks<T>(N), (k + kMaxClusterDepth - 1) / kMaxClusterDepth);
  if (k <= SmallK::kMaxK)
    launch_cluster_row<T, SmallK>(x, M, N, k, values, indices, blocks, stream);
  else
    launch_cluster_row<T, LargeK>(x, M, N, k, values, indices, blocks, stream);
}

template <typename T>
void topk_cluster_row(const T* x, int64_t M, int64_t N, int k, T* values, int64_t* indices,
                      cudaStream_t stream) {
  detail::topk_cluster_row(__func__, x, M, N, k, values, indices, stream);
}

#define TOPK_INSTANTIATE_FILTER(T)                                                               \
  template void detail::topk_filtered(const char*, const T*, int64_t, int64_t, int, int, T*,     \
                                      int64_t*, void*, size_t, cudaStream_t);                    \
  template void detail::topk_cluster_row(const char*, const T*, int64_t, int64_t, int, T*,       \
                                         int64_t*, cudaStream_t);                                \
  template void topk_filtered(const T*, int64_t, int64_t, int, int, T*, int64_t*, void*, size_t, \
                              cudaStream_t);                                                     \
  template void softmax_topk(const T*, int64_t, int64_t, int, float, int, int64_t*, float*,      \
                             float*, void*, size_t, cudaStream_t);                               \
  template void topk_cluster_row(const T*, int64_t, int64_t, int, T*, int64_t*, cudaStream_t);
TOPK_INSTANTIATE_FILTER(float)
TOPK_INSTANTIATE_FILTER(__half)
TOPK_INSTANTIATE_FILTER(__nv_bfloat16)
#undef TOPK_INSTANTIATE_FILTER

}  // namespace topk

// What every top-k kernel of the chapter shares: order-preserving keys, the 64-bit composite
// (key, index) that makes the order total, the bitonic sort of up to 1024 composites (held in
// registers), the output gather, and the host-side argument checks.
//
// Order-preserving key: an unsigned integer whose unsigned order is the float order. For a
// non-negative float, setting the sign bit puts it above every negative one; for a negative
// float, flipping all bits reverses the order of the magnitudes. Two fixes make the order total
// and match the chapter's rules: every NaN becomes the largest key (0xFFFF...), and -0.0 becomes
// +0.0. fp16 and bf16 keep their sign bit on top too, so the same two lines work on 16 bits.
//
// Composite: (key << 32) | (0xFFFFFFFF - index). Larger composite = earlier in the output:
// larger key first, and for equal keys the lower index (its complement is larger). All
// composites of a row are distinct, so "the k largest composites" is exactly the answer, ties
// included. The value 0 is never a composite (it would need index 2^32 - 1) and marks empty slots.
#pragma once

#include "topk.h"

#include "common/bits.cuh"
#include "common/block_reduce.cuh"
#include "common/dtype.hpp"
#include "common/errors.hpp"
#include "common/overlap.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>

namespace topk::detail {

constexpr uint64_t kEmptySlot = 0;

// A key's width, and the bits of +inf: a magnitude (the bits but the sign) above them is a NaN.
template <typename T>
struct KeyTraits;
template <>
struct KeyTraits<float> {
  static constexpr int kBits = 32;
  static constexpr uint32_t kInfBits = 0x7F800000u;
};
template <>
struct KeyTraits<__half> {
  static constexpr int kBits = 16;
  static constexpr uint32_t kInfBits = 0x7C00u;
};
template <>
struct KeyTraits<__nv_bfloat16> {
  static constexpr int kBits = 16;
  static constexpr uint32_t kInfBits = 0x7F80u;
};

// A key's top bit (set for values >= +0.0) and all its bits (16 for half and bf16).
template <typename T>
constexpr uint32_t kKeySign = 1u << (KeyTraits<T>::kBits - 1);
template <typename T>
constexpr uint32_t kKeyAll = KeyTraits<T>::kBits == 32 ? 0xFFFFFFFFu
                                                       : (1u << KeyTraits<T>::kBits) - 1;

// The key of an element given by its raw bits (the low 16 of b for half and bf16).
template <typename T>
__device__ __forceinline__ uint32_t order_key_of_bits(uint32_t b) {
  constexpr uint32_t kSign = kKeySign<T>, kAll = kKeyAll<T>;
  const uint32_t magnitude = b & (kSign - 1);
  if (magnitude > KeyTraits<T>::kInfBits) return kAll;  // NaN: above +inf
  if (magnitude == 0) return kSign;                     // -0.0 ties with +0.0
  return (b & kSign) ? (~b & kAll) : (b | kSign);
}
template <typename T>
__device__ __forceinline__ uint32_t order_key(T value) {
  return order_key_of_bits<T>(common::to_bits(value));
}

// The inverse of order_key, as raw bits: the bits order_key maps to `key`. It undoes order_key
// exactly except for the two keys that merge values (key_merges_values): those give +0.0 and
// the NaN whose bits are all ones but the sign. A key above +inf's or below -inf's gives a NaN.
template <typename T>
__device__ __forceinline__ uint32_t bits_of_key(uint32_t key) {
  return (key & kKeySign<T>) ? (key ^ kKeySign<T>) : (~key & kKeyAll<T>);
}
// Whether `key` stands for more than one bit pattern: every NaN (of either sign, with any
// payload) has the largest key, and -0.0 has +0.0's.
template <typename T>
__device__ __forceinline__ bool key_merges_values(uint32_t key) {
  return key == kKeySign<T> || key == kKeyAll<T>;  // the keys of +-0.0 and of every NaN
}
// The same as a float, which no comparison rejects when it is a NaN. Used for the filter's fast
// test: composite >= threshold implies !(value < key_value(threshold's key)).
template <typename T>
__device__ __forceinline__ float key_value(uint32_t key) {
  return common::to_float(common::from_bits<T>(bits_of_key<T>(key)));
}

__device__ __forceinline__ uint64_t composite(uint32_t key, uint32_t index) {
  return (static_cast<uint64_t>(key) << 32) | (0xFFFFFFFFu - index);
}
__device__ __forceinline__ uint32_t composite_index(uint64_t c) {
  return 0xFFFFFFFFu - static_cast<uint32_t>(c);
}

// The larger composite: the operator for common::block_reduce over thresholds.
struct MaxComposite {
  __device__ __forceinline__ uint64_t operator()(uint64_t a, uint64_t b) const {
    return a > b ? a : b;
  }
};

// Every lane of a warp calls this together; the lanes with `keep` append their c to
// list[*count, ...) in lane order. One shared atomicAdd per warp reserves the slots of all its
// lanes: when many lanes append at once, an atomic per lane on one counter would serialize up to
// 32 ways (the streaming filter, where a few lanes append at a time, uses one per lane). Returns
// the list's end after this warp's append, or -1 when no lane appended.
__device__ __forceinline__ int warp_append(uint64_t* list, int* count, bool keep, uint64_t c) {
  const unsigned mask = __ballot_sync(common::kFullWarpMask, keep);
  if (mask == 0) return -1;
  const int lane = threadIdx.x % common::kWarpSize;
  const int leader = __ffs(mask) - 1;
  int base = 0;
  if (lane == leader) base = atomicAdd(count, __popc(mask));
  base = __shfl_sync(common::kFullWarpMask, base, leader);
  if (keep) list[base + __popc(mask & ((1u << lane) - 1))] = c;
  return base + __popc(mask);
}

// Every lane of a warp calls this together with the number of slots n it needs (any n >= 0): one
// shared atomicAdd per warp reserves them all, consecutive per lane and in lane order, at the end
// of a list whose length is *count. `first` is the lane's first slot; `end` is the list's end
// after this warp's reservation, or -1 when the warp reserved nothing.
struct Reservation {
  int first;
  int end;
};
__device__ __forceinline__ Reservation warp_reserve(int* count, int n) {
  const int lane = threadIdx.x % common::kWarpSize;
  const int inclusive = common::warp_inclusive_sum(n);
  constexpr int kLast = common::kWarpSize - 1;
  const int total = __shfl_sync(common::kFullWarpMask, inclusive, kLast);
  if (total == 0) return {0, -1};
  int base = 0;
  if (lane == kLast) base = atomicAdd(count, total);
  base = __shfl_sync(common::kFullWarpMask, base, kLast);
  return {base + inclusive - n, base + total};
}

// Sorts a[0, n) descending in place, n <= kSortMax, with a block of kThreads threads (every
// thread calls it, after a barrier that made a[0, n) visible). Bitonic, on 1024 slots padded
// with empty ones, but held in registers: thread t of warp w keeps slots w * kSpan + 8t ... + 7,
// so a compare-exchange at distance d < 8 stays inside a thread, d < kSpan is a warp shuffle, and
// only the distances of kSpan and more (3 of the 55 stages for 128 threads) go through shared
// memory. The same sort with every stage in shared memory moved 16 to 32 KiB per stage and
// block, and the shared-memory bandwidth of an SM, not the barriers, was what it waited for.
constexpr int kSortMax = 1024;
template <int kThreads>
__device__ void block_sort_descending(uint64_t* a, int n) {
  constexpr int kPerThread = kSortMax / kThreads;
  constexpr int kSpan = kPerThread * common::kWarpSize;  // the slots of one warp
  static_assert(kPerThread * kThreads == kSortMax && kPerThread >= 1, "1024 slots in all");
  const int first =
      threadIdx.x / common::kWarpSize * kSpan + threadIdx.x % common::kWarpSize * kPerThread;
  uint64_t v[kPerThread];
#pragma unroll
  for (int r = 0; r < kPerThread; ++r)
    v[r] = first + r < n ? a[first + r] : kEmptySlot;
  // Slot i keeps the larger of itself and its partner i ^ stride when it is the lower of the two
  // in a descending run ((i & size) == 0), or the upper in an ascending one.
  auto keep = [](uint64_t mine, uint64_t other, bool larger) {
    return (mine > other) == larger ? mine : other;
  };
#pragma unroll
  for (int size = 2; size <= kSortMax; size *= 2) {
#pragma unroll
    for (int stride = size / 2; stride > 0; stride /= 2) {
      if (stride >= kSpan) {  // across warps
        __syncthreads();      // every thread has read the previous stage's slots
#pragma unroll
        for (int r = 0; r < kPerThread; ++r)
          a[first + r] = v[r];
        __syncthreads();
#pragma unroll
        for (int r = 0; r < kPerThread; ++r) {
          const int i = first + r;
          v[r] = keep(v[r], a[i ^ stride], ((i & size) == 0) == ((i & stride) == 0));
        }
      } else if (stride >= kPerThread) {  // across the lanes of a warp
#pragma unroll
        for (int r = 0; r < kPerThread; ++r) {
          const int i = first + r;
          const uint64_t other = __shfl_xor_sync(common::kFullWarpMask, v[r], stride / kPerThread);
          v[r] = keep(v[r], other, ((i & size) == 0) == ((i & stride) == 0));
        }
      } else {  // inside the thread: slots r and r + stride
#pragma unroll
        for (int r = 0; r < kPerThread; ++r) {
          if (r & stride) continue;
          const bool descending = ((first + r) & size) == 0;
          const uint64_t x = v[r], y = v[r + stride];
          v[r] = keep(x, y, descending);
          v[r + stride] = keep(x, y, !descending);
        }
      }
    }
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kPerThread; ++r)
    if (first + r < n) a[first + r] = v[r];
  __syncthreads();
}

// Writes one output slot from its composite. The value is decoded from the key, which holds all
// of its bits but in two cases, read back from the input so that they come out as they went in:
// a NaN (its sign and payload) and a zero (its sign). Reading every value back costs a global round
// trip per slot at the end of each block, one after the other, since the compiler may not move a
// load of the row above the previous slot's store to the values (the two may alias): eight per
// thread at k = 1024, where decoding took 1024x128256 fp32 from 311.6 to 298.0 us on an H200. An
// empty slot (only reachable when a TODO is still unwritten) is skipped, leaving the output visibly
// unwritten instead of reading out of bounds.
template <typename T>
__device__ __forceinline__ void write_slot(const T* row, uint64_t c, T* values, int64_t* indices,
                                           int64_t slot) {
  if (c == kEmptySlot) return;
  const uint32_t index = composite_index(c);
  if (values) {
    const uint32_t key = static_cast<uint32_t>(c >> 32);
    values[slot] =
        key_merges_values<T>(key) ? row[index] : common::from_bits<T>(bits_of_key<T>(key));
  }
  indices[slot] = index;
}

}  // namespace topk::detail

namespace topk {

// The bytes of x, [M, N], for sizes shape_error accepts (below 2^62 elements).
template <typename T>
size_t input_bytes(int64_t M, int64_t N) {
  return static_cast<size_t>(M) * static_cast<size_t>(N) * sizeof(T);
}

// What is wrong with the sizes of an [M, N] problem and its k (topk.h's limits, and k_limit
// for the version), or an empty string when nothing is.
inline std::string shape_error(int64_t M, int64_t N, int k, int k_limit) {
  if (M < 0) return "M must be >= 0, got " + std::to_string(M);
  if (M > 0x7FFFFFFF) return "M must be < 2^31, got " + std::to_string(M);
  if (N < 1) return "N must be >= 1, got " + std::to_string(N);
  if (N > 0x7FFFFFFF)
    return "N must be < 2^31 (indices are 32-bit inside the kernels), got " + std::to_string(N);
  if (k < 1) return "k must be >= 1, got " + std::to_string(k);
  if (k > N)
    return "k = " + std::to_string(k) + " is larger than the row length N = " + std::to_string(N);
  if (k > k_limit)
    return "k = " + std::to_string(k) + " exceeds this version's limit of " +
           std::to_string(k_limit);
  return {};
}
inline void check_shape(const char* who, int64_t M, int64_t N, int k, int k_limit) {
  const std::string error = shape_error(M, N, k, k_limit);
  if (!error.empty()) common::throw_bad_argument(who, error);
}

// The element sizes the chapter instantiates: 2 (half, bf16) and 4 (float).
inline void check_elem_bytes(const char* who, int elem_bytes) {
  if (elem_bytes != 2 && elem_bytes != 4)
    common::throw_bad_argument(
        who, "elem_bytes must be 2 (half, bf16) or 4 (float), got " + std::to_string(elem_bytes));
}

// The checks every launcher makes; `who` names the caller in the message. `outputs` are the
// launcher's other pointers (values, probabilities), checked for alignment with x and indices:
// the kernels' 16-byte loads start at a whole element, and a pointer between two elements
// would fault inside a kernel instead of here.
template <typename T, typename... Outputs>
void check_problem(const char* who, const T* x, int64_t M, int64_t N, int k, const int64_t* indices,
                   int k_limit, const Outputs*... outputs) {
  auto fail = [&](const std::string& what) { common::throw_bad_argument(who, what); };
  check_shape(who, M, N, k, k_limit);
  if (M > 0 && (x == nullptr || indices == nullptr)) fail("x and indices must not be null");
  if (M > 0 && !common::elements_aligned(x, indices, outputs...))
    fail(
        "every pointer must be aligned to the size of its element (2 bytes for half and bf16, "
        "4 for float, 8 for the indices)");
  // The outputs are written while x is read: no two of the buffers may share memory.
  const size_t slots = static_cast<size_t>(M) * static_cast<size_t>(k);
  if (M > 0 && common::any_two_overlap({common::Span{x, input_bytes<T>(M, N)},
                                        common::Span{indices, slots * sizeof(int64_t)},
                                        common::Span{outputs, slots * sizeof(Outputs)}...}))
    fail("x, indices and the other outputs must not share memory");
}

// The top-k values, which every launcher but the fused softmax's writes.
inline void check_values(const char* who, int64_t M, const void* values) {
  if (M > 0 && values == nullptr) common::throw_bad_argument(who, "values must not be null");
}

// The fused kernel's lse, one float per row: aligned, and sharing memory with no other buffer of
// the call (nullptr: not asked for).
template <typename T>
void check_lse(const char* who, const float* lse, const T* x, int64_t M, int64_t N, int k,
               const int64_t* indices, const float* probs) {
  if (M == 0 || lse == nullptr) return;
  if (!common::elements_aligned(lse))
    common::throw_bad_argument(who, "lse must be aligned to the size of a float");
  const size_t slots = static_cast<size_t>(M) * static_cast<size_t>(k);
  if (common::overlaps_any(
          common::Span{lse, static_cast<size_t>(M) * sizeof(float)},
          {common::Span{x, input_bytes<T>(M, N)}, common::Span{indices, slots * sizeof(int64_t)},
           common::Span{probs, slots * sizeof(float)}}))
    common::throw_bad_argument(who, "lse must not share memory with x, indices or probs");
}

// Blocks per row for a split: 0 (split_chunks decides) to kMaxChunks.
inline void check_chunks(const char* who, int chunks) {
  if (chunks < 0 || chunks > kMaxChunks)
    common::throw_bad_argument(who, "chunks must be in [0, " + std::to_string(kMaxChunks) +
                                        "], got " + std::to_string(chunks));
}

}  // namespace topk

namespace topk::detail {

// The split-row workspace: per-row arrival counters (returned to zero by the last block of each
// row), each chunk's k best composites (sorted descending) and softmax (max, sum) pair.
struct SplitWorkspace {
  int* counters;           // [M]
  uint64_t* candidates;    // [M, chunks, k]
  common::MaxSum* states;  // [M, chunks]
};

inline size_t align_up_256(size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

inline size_t split_workspace_bytes(int64_t M, int k, int chunks) {
  if (chunks <= 1 || M <= 0) return 0;
  const size_t slots = static_cast<size_t>(M) * static_cast<size_t>(chunks);
  return align_up_256(static_cast<size_t>(M) * sizeof(int)) +
         align_up_256(slots * static_cast<size_t>(k) * sizeof(uint64_t)) +
         align_up_256(slots * sizeof(common::MaxSum));
}

// The workspace a split row of `chunks` blocks is given, `workspace_size` bytes at `workspace`
// (chunks already resolved from 0). It needs split_workspace_bytes(M, k, chunks), which is what
// workspace_bytes(M, N, k, chunks) gives: none for one block per row, nor for M = 0, where any
// workspace will do, null included. `who` names the caller in the message; values or probs may
// be null where the launcher has none.
template <typename T>
void check_split_workspace(const char* who, const void* workspace, size_t workspace_size, int64_t M,
                           int64_t N, int k, int chunks, const T* x, const T* values,
                           const int64_t* indices, const float* probs, const float* lse) {
  const size_t needed = split_workspace_bytes(M, k, chunks);
  CHECK_ARG_FOR(who, needed == 0 || workspace != nullptr,
                "a split row (chunks = " << chunks << ") needs workspace_bytes(M, N, k, chunks) "
                                         << "of zero-filled workspace");
  CHECK_ARG_FOR(who, workspace_size >= needed,
                "workspace_size = " << workspace_size
                                    << " is below workspace_bytes(M, N, k, chunks) = " << needed
                                    << " for a split row (chunks = " << chunks << ")");
  // Its counters, 64-bit candidates and (max, sum) pairs are read as such.
  CHECK_ARG_FOR(who, needed == 0 || reinterpret_cast<uintptr_t>(workspace) % 8 == 0,
                "the workspace must be 8-byte aligned (cudaMalloc's pointers are)");
  // The blocks write it while x is read and the outputs written.
  const size_t slots = static_cast<size_t>(M) * static_cast<size_t>(k);
  CHECK_ARG_FOR(who,
                !common::overlaps_any(
                    common::Span{workspace, needed},
                    {common::Span{x, input_bytes<T>(M, N)}, common::Span{values, slots * sizeof(T)},
                     common::Span{indices, slots * sizeof(int64_t)},
                     common::Span{probs, slots * sizeof(float)},
                     common::Span{lse, static_cast<size_t>(M) * sizeof(float)}}),
                "the workspace (its first workspace_bytes(M, N, k, chunks) = "
                    << needed << " bytes) must not share memory with x or the outputs");
}

inline SplitWorkspace split_workspace(void* base, int64_t M, int k, int chunks) {
  auto* bytes = static_cast<unsigned char*>(base);
  const size_t slots = static_cast<size_t>(M) * static_cast<size_t>(chunks);
  SplitWorkspace ws;
  ws.counters = reinterpret_cast<int*>(bytes);
  bytes += align_up_256(static_cast<size_t>(M) * sizeof(int));
  ws.candidates = reinterpret_cast<uint64_t*>(bytes);
  bytes += align_up_256(slots * static_cast<size_t>(k) * sizeof(uint64_t));
  ws.states = reinterpret_cast<common::MaxSum*>(bytes);
  return ws;
}

}  // namespace topk::detail

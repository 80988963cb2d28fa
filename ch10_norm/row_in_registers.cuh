// The row held in registers: each thread of a row's team (a warp, or a block) loads its share of
// the row once with 16-byte loads, the statistics are reduced from registers, and the same
// registers produce the output. x is read once and y written once: the minimum traffic.
//
// Layout of one row of n elements (columns), for a team of `threads` threads:
//
//   | head: up to x's first 16-byte boundary | packs of kVec elements ...      | tail < kVec |
//     < kVec elements                          pack p → thread p % threads, slot p / threads
//
// Thread `rank` holds the packs p = k · threads + rank (k = 0 .. kPacks − 1): consecutive threads
// read consecutive 16 bytes, so each warp-wide load moves 512 contiguous bytes. The head and the
// tail (fewer than 2 · kVec elements together) are held one element each by the first threads.
// The head is counted from x; the other pointers of the row (y, residual, γ, β) use the vector
// path only when they are 16-byte aligned at the same column, otherwise every access of the row
// is scalar (same layout, same registers, just narrower loads).
#pragma once

#include "norm_common.cuh"

#include "common/block_reduce.cuh"
#include "common/vector_io.cuh"

#include <cstdint>
#include <type_traits>

namespace normalization::detail {

// Columns are 32-bit: every version that uses a RowLayout takes rows of at most 2^30 elements
// (kMaxRereadN; the register and ring versions far fewer), and 64-bit indices cost each thread
// registers that the Reread versions spend on more rows per SM instead (reread_config.h).
template <typename T>
struct RowLayout {
  static constexpr int kVec = common::Pack<T>::kSize;
  int n = 0;
  int head = 0;   // scalar elements before x's first 16-byte boundary
  int packs = 0;  // full packs after the head
  bool vectorized = false;

  __device__ int tail_begin() const { return head + packs * kVec; }
  // Elements outside the packs: head + tail, fewer than 2 · kVec.
  __device__ int extras() const { return n - packs * kVec; }
  __device__ int extra_column(int i) const { return i < head ? i : tail_begin() + (i - head); }
};

template <typename T>
__device__ __forceinline__ bool aligned_at(const T* p, int column) {
  return p == nullptr || reinterpret_cast<uintptr_t>(p + column) % 16 == 0;
}

// The layout of one row; every pointer given (nullptr: absent) must be 16-byte aligned at the
// head column for the row to use 16-byte accesses.
template <typename T>
__device__ __forceinline__ RowLayout<T> make_row_layout(int64_t n, const T* x, const T* a,
                                                        const T* b, const T* c, const T* d) {
  RowLayout<T> layout;
  layout.n = static_cast<int>(n);
  layout.head = static_cast<int>(common::elements_to_alignment(x, n));
  layout.packs = (layout.n - layout.head) / RowLayout<T>::kVec;
  layout.vectorized = aligned_at(a, layout.head) && aligned_at(b, layout.head) &&
                      aligned_at(c, layout.head) && aligned_at(d, layout.head);
  return layout;
}

// The layout as a kernel uses it. With kAligned (the host checked rows_aligned: n a multiple of
// kVec and every base pointer 16-byte aligned, so every row starts aligned in every buffer) it is
// known without looking at the pointers: no head, no tail, and the compiler drops the scalar
// path, which also lets a half or bf16 pack stay in 4 registers instead of one per element.
template <typename T, bool kAligned>
__device__ __forceinline__ RowLayout<T> row_layout(int64_t n, const T* x, const T* a, const T* b,
                                                   const T* c, const T* d) {
  if constexpr (kAligned) {
    // n is packs · kVec; saying so makes extras() 0 at compile time (no tail code at all).
    const int packs = static_cast<int>(n / RowLayout<T>::kVec);
    return {packs * RowLayout<T>::kVec, 0, packs, true};
  } else {
    return make_row_layout<T>(n, x, a, b, c, d);
  }
}

// One thread's share of a row, kept as the raw 16-byte packs it was loaded as and widened to
// float where it is used: 4 registers per pack for every T in the aligned instances (a bf16 row
// costs half the registers of an fp32 row), one per half or bf16 element where a scalar path
// also fills the pack (row_layout). Slots past the row's end are never read.
template <typename T, int kPacks>
struct RowSlice {
  static constexpr int kVec = common::Pack<T>::kSize;
  common::Pack<T> v[kPacks];
  T extra;
};

// Which threads share a row: a warp (warp per row, several rows per block) or the whole block.
template <bool kWarpPerRow>
struct RowTeam {
  int rank;
  int threads;
  int64_t first_row;
  int64_t row_stride;

  __device__ static RowTeam make() {
    if constexpr (kWarpPerRow) {
      const int warps = blockDim.x / common::kWarpSize;
      return {static_cast<int>(threadIdx.x % common::kWarpSize), common::kWarpSize,
              int64_t{blockIdx.x} * warps + threadIdx.x / common::kWarpSize,
              int64_t{gridDim.x} * warps};
    } else {
      return {static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x), int64_t{blockIdx.x},
              int64_t{gridDim.x}};
    }
  }
  // The reduction over the team, returned to every thread of it: shuffles only for a warp,
  // shuffles and one exchange through shared memory for a block.
  template <typename V, typename Op>
  __device__ V reduce(V value, Op op, V identity) const {
    if constexpr (kWarpPerRow) {
      return common::warp_reduce(value, op);
    } else {
      return common::block_reduce(value, op, identity);
    }
  }
  __device__ float sum(float value) const { return reduce(value, common::Sum{}, 0.0f); }
};

// Fills the thread's slice of `row` (layout from make_row_layout).
template <typename T, int kPacks>
__device__ __forceinline__ void load_row(RowSlice<T, kPacks>& slice, const T* row,
                                         const RowLayout<T>& layout, int rank, int threads) {
  // TODO 4 (about 16 lines; checked by [ch10_norm][registers]):
  //   For k = 0 .. kPacks − 1: pack p = k · threads + rank starts at column head + p · kVec
  //   (kVec = RowLayout<T>::kVec). If p < layout.packs, read it into slice.v[k]: one
  //   common::load_pack (16 bytes) when layout.vectorized, else kVec scalar loads into
  //   slice.v[k].v[e]. Slots with p >= layout.packs are never read: leave them. Then
  //   slice.extra = row[layout.extra_column(rank)] when rank < layout.extras(). Put `#pragma unroll`
  //   on the loops over k and e: with constant indices the slice stays in registers (a runtime
  //   index would move it to local memory).
  // BEGIN TODO 4
  (void)slice;  // remove these placeholders
  (void)row;
  (void)layout;
  (void)rank;
  (void)threads;
  // END TODO 4
}

// Fills the thread's slice from a copy of the row's packs in shared memory (`packs` points at the
// pack that starts at column head), the few elements outside the packs from global memory: what
// load_row does, when the copy engine has already brought the packs on chip (row_ring.cuh).
template <typename T, int kPacks>
__device__ __forceinline__ void load_row_shared(RowSlice<T, kPacks>& slice,
                                                const common::Pack<T>* packs, const T* row,
                                                const RowLayout<T>& layout, int rank, int threads) {
#pragma unroll
  for (int k = 0; k < kPacks; ++k) {
    const int p = k * threads + rank;
    if (p < layout.packs) slice.v[k] = packs[p];
  }
  if (rank < layout.extras()) slice.extra = row[layout.extra_column(rank)];
}

// a + b elementwise, rounded once to T. Half and bf16 use the packed instructions (add.rn.f16x2,
// add.rn.bf16x2: the exact sum rounded once, as a float add followed by one rounding would give)
// and never widen the pack: widening both operands would double the registers a slice costs.
template <typename T>
__device__ __forceinline__ common::Pack<T> add_rounded(const common::Pack<T>& a,
                                                       const common::Pack<T>& b) {
  common::Pack<T> sum;
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int e = 0; e < common::Pack<T>::kSize; ++e)
      sum.v[e] = a.v[e] + b.v[e];
  } else {
    using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    const T2* a2 = reinterpret_cast<const T2*>(a.v);
    const T2* b2 = reinterpret_cast<const T2*>(b.v);
    T2* s2 = reinterpret_cast<T2*>(sum.v);
#pragma unroll
    for (int e = 0; e < common::Pack<T>::kSize / 2; ++e)
      s2[e] = __hadd2(a2[e], b2[e]);
  }
  return sum;
}

// Σ f(v) over the elements of the row this thread holds, widened to float.
template <typename T, int kPacks, typename F>
__device__ __forceinline__ float thread_sum(const RowSlice<T, kPacks>& slice,
                                            const RowLayout<T>& layout, int rank, int threads,
                                            F f) {
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kPacks; ++k) {
    if (k * threads + rank < layout.packs) {
      float v[RowLayout<T>::kVec];
      common::widen(slice.v[k], v);
#pragma unroll
      for (int e = 0; e < RowLayout<T>::kVec; ++e)
        s += f(v[e]);
    }
  }
  if (rank < layout.extras()) s += f(to_float(slice.extra));
  return s;
}

// kVec consecutive parameters from column `col` (16-byte aligned when vectorized), or `absent`.
template <typename T>
__device__ __forceinline__ void load_params(const T* p, int col, bool vectorized, float absent,
                                            float (&out)[common::Pack<T>::kSize]) {
  constexpr int kVec = common::Pack<T>::kSize;
  if (p == nullptr) {
#pragma unroll
    for (int e = 0; e < kVec; ++e)
      out[e] = absent;
  } else if (vectorized) {
    common::widen(common::load_pack(p + col), out);
  } else {
#pragma unroll
    for (int e = 0; e < kVec; ++e)
      out[e] = param_at(p, col + e, absent);
  }
}

// γ or β held in registers, the packs of the columns this thread handles. A block that
// normalizes many rows with the same layout (the Pipelined versions on aligned rows) loads them
// once instead of once per row, which takes a wait on L1 out of every row's store; a block of
// the few-rows layouts loads them together with x, so that their latency overlaps x's.
template <typename T, int kPacks>
struct ParamsInRegisters {
  RowSlice<T, kPacks> values;
  bool present = false;
};

template <typename T, int kPacks>
__device__ __forceinline__ ParamsInRegisters<T, kPacks> params_in_registers(
    const T* p, const RowLayout<T>& layout, int rank, int threads) {
  ParamsInRegisters<T, kPacks> params;
  params.present = p != nullptr;
  if (params.present) load_row(params.values, p, layout, rank, threads);
  return params;
}

// What store_row reads for pack k (column col) and for the extra element: from memory (a
// pointer, nullptr when absent) or from registers.
template <typename T>
__device__ __forceinline__ void param_pack(const T* p, int /*k*/, int col, bool vectorized,
                                           float absent, float (&out)[common::Pack<T>::kSize]) {
  load_params(p, col, vectorized, absent, out);
}
template <typename T, int kPacks>
__device__ __forceinline__ void param_pack(const ParamsInRegisters<T, kPacks>& p, int k,
                                           int /*col*/, bool /*vectorized*/, float absent,
                                           float (&out)[common::Pack<T>::kSize]) {
  if (p.present) {
    common::widen(p.values.v[k], out);
  } else {
#pragma unroll
    for (int e = 0; e < common::Pack<T>::kSize; ++e)
      out[e] = absent;
  }
}
template <typename T>
__device__ __forceinline__ float param_extra(const T* p, int col, float absent) {
  return param_at(p, col, absent);
}
template <typename T, int kPacks>
__device__ __forceinline__ float param_extra(const ParamsInRegisters<T, kPacks>& p, int /*col*/,
                                             float absent) {
  return p.present ? to_float(p.values.extra) : absent;
}

// Writes row[j] = f(v_j, γ_j, β_j) for every element the thread holds. γ and β (G, B) are
// pointers, read with 16-byte loads on the vector path (nullptr: 1 and 0), or
// ParamsInRegisters. kStreaming marks the 16-byte stores evict-first (st.global.cs): output
// that nothing reads soon then does not push out of L2 the rows the Reread versions are about to
// read a second time.
template <bool kStreaming = false, typename T, int kPacks, typename G, typename B, typename F>
__device__ __forceinline__ void store_row(T* row, const G& gamma, const B& beta,
                                          const RowSlice<T, kPacks>& slice,
                                          const RowLayout<T>& layout, int rank, int threads, F f) {
  constexpr int kVec = RowLayout<T>::kVec;
#pragma unroll
  for (int k = 0; k < kPacks; ++k) {
    const int p = k * threads + rank;
    if (p < layout.packs) {
      const int col = layout.head + p * kVec;
      float g[kVec], b[kVec], v[kVec];
      param_pack(gamma, k, col, layout.vectorized, 1.0f, g);
      param_pack(beta, k, col, layout.vectorized, 0.0f, b);
      common::widen(slice.v[k], v);
#pragma unroll
      for (int e = 0; e < kVec; ++e)
        v[e] = f(v[e], g[e], b[e]);
      const common::Pack<T> out = common::narrow<T>(v);
      if (layout.vectorized) {
        if constexpr (kStreaming)
          common::store_pack_streaming(row + col, out);
        else
          common::store_pack(row + col, out);
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          row[col + e] = out.v[e];
      }
    }
  }
  if (rank < layout.extras()) {
    const int col = layout.extra_column(rank);
    row[col] = from_float<T>(
        f(to_float(slice.extra), param_extra(gamma, col, 1.0f), param_extra(beta, col, 0.0f)));
  }
}

}  // namespace normalization::detail

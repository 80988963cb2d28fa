// Warp and block reductions built on warp shuffles, generic over the value type and the operator,
// and a warp's prefix sum.
//
//   float s = common::block_reduce(x, common::Sum{}, 0.0f);        // every thread gets the sum
//   MaxSum p = common::warp_reduce(p, common::MaxSumMerge{});      // online softmax pair
//   Welford w = common::block_reduce(w, common::WelfordMerge{}, common::Welford{0, 0, 0});
//   MaxSum p = common::block_reduce_max_sum(p);   // the same pair, reduced level by level
//   int below = common::warp_inclusive_sum(n) - n;  // the sum of n over the lanes below
//
// Rules: blockDim.x is a multiple of 32 (at most 1024) and every thread of the block calls
// block_reduce (it contains barriers). Value types are trivially copyable, 4-byte multiples.
#pragma once

#include <cuda_runtime.h>

#include <cstring>

namespace common {

constexpr unsigned kFullWarpMask = 0xffffffffu;
constexpr int kWarpSize = 32;

// __shfl_xor_sync for any trivially copyable value: each 32-bit word is shuffled, so structs
// such as (max, sum) pairs and Welford triples travel like scalars.
template <typename T>
__device__ __forceinline__ T shfl_xor(T value, int lane_mask) {
  static_assert(sizeof(T) % 4 == 0, "shuffle works on 4-byte words");
  constexpr int kWords = sizeof(T) / 4;
  int words[kWords];
  memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int i = 0; i < kWords; ++i) words[i] = __shfl_xor_sync(kFullWarpMask, words[i], lane_mask);
  memcpy(&value, words, sizeof(T));
  return value;
}

// Butterfly reduction: after log2(32) steps every lane holds the result of the whole warp.
template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T value, Op op) {
#pragma unroll
  for (int lane_mask = kWarpSize / 2; lane_mask > 0; lane_mask /= 2)
    value = op(value, shfl_xor(value, lane_mask));
  return value;
}

// Inclusive prefix sum over the lanes of a warp, in log2(32) shuffle steps (Hillis and Steele):
// lane l gets the sum of the values of lanes 0 to l. Every lane of the warp calls it.
__device__ __forceinline__ int warp_inclusive_sum(int value) {
  const int lane = threadIdx.x % kWarpSize;
#pragma unroll
  for (int offset = 1; offset < kWarpSize; offset *= 2) {
    const int from_below = __shfl_up_sync(kFullWarpMask, value, offset);
    if (lane >= offset) value += from_below;
  }
  return value;
}

// Warps reduce in registers with `warp_step` (which returns the warp's result to every lane),
// one value per warp crosses shared memory, then every warp reduces those partials with
// `warp_step` again, so that all threads return the block's result without a broadcast step.
template <typename T, typename WarpStep>
__device__ __forceinline__ T block_reduce_with(T value, T identity, WarpStep warp_step) {
  // Raw storage: a __shared__ variable of a class type may not have a constructor.
  __shared__ alignas(16) unsigned char storage[kWarpSize * sizeof(T)];
  T* partials = reinterpret_cast<T*>(storage);
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int num_warps = blockDim.x / kWarpSize;

  value = warp_step(value);
  if (lane == 0) partials[warp] = value;
  __syncthreads();
  value = warp_step(lane < num_warps ? partials[lane] : identity);
  __syncthreads();  // partials may be reused by the next call
  return value;
}

template <typename T, typename Op>
__device__ __forceinline__ T block_reduce(T value, Op op, T identity) {
  return block_reduce_with(value, identity, [op](T v) { return warp_reduce(v, op); });
}

struct Sum {
  template <typename T>
  __host__ __device__ __forceinline__ T operator()(T a, T b) const {
    return a + b;
  }
};

// Maximum that propagates NaN (fmaxf would drop it): max(x, NaN) = NaN.
struct Max {
  template <typename T>
  __host__ __device__ __forceinline__ T operator()(T a, T b) const {
    return (a != a || a > b) ? a : b;
  }
};

// Max for floats in one instruction on sm_80 and newer: PTX max.NaN follows the same rule (only
// the bits may differ: a NaN result is the canonical NaN, and max(+0, -0) is +0), where Max's
// comparison takes two tests and a select. For kernels that fold every element they read into a
// maximum (chapter 7's final version: 4 % faster at 2^20 floats, 5 % at 2^24 on an H200; chapter
// 10 softmax's window_max, as fast as fmaxf there). Max keeps its portable form: swapped in
// everywhere, the inline PTX moved the register allocation of kernels compiled at a register
// cap, and ptxas spilled 4 bytes in chapter 10 softmax's aligned half and bf16 register caches of
// 4 windows (48 registers).
struct MaxOneInstruction {
  __device__ __forceinline__ float operator()(float a, float b) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    float result;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(result) : "f"(a), "f"(b));
    return result;
#else
    return Max{}(a, b);
#endif
  }
};

// Online softmax state of a set of values x_i: max = max x_i, sum = sum exp(x_i - max).
// The empty set is {-inf, 0}.
struct MaxSum {
  float max;
  float sum;
};

// Merging two sets rescales each sum to the common maximum:
//   m = max(m_a, m_b),  l = l_a * exp(m_a - m) + l_b * exp(m_b - m).
// When both maxima are -inf (empty sets, or masked values only) exp(-inf - -inf) would be NaN:
// the merged set is still empty. A NaN maximum propagates.
struct MaxSumMerge {
  __device__ __forceinline__ MaxSum operator()(MaxSum a, MaxSum b) const {
    const float m = Max{}(a.max, b.max);
    if (m == -INFINITY) return {m, 0.0f};
    return {m, a.sum * __expf(a.max - m) + b.sum * __expf(b.max - m)};
  }
};

// Welford state of a set of values: count, mean and M2 = sum (x_i - mean)^2.
struct Welford {
  float count;
  float mean;
  float m2;
};

// Chan et al.'s merge: with delta = mean_b - mean_a and n = n_a + n_b,
//   mean = mean_a + delta * n_b / n,  M2 = M2_a + M2_b + delta^2 * n_a * n_b / n.
// Either side may be empty (count 0); no large sums of squares ever form, so no cancellation.
// delta is multiplied in last: merged with an empty set, delta is the other side's whole mean,
// and delta^2 alone would overflow to inf (and inf * 0 to NaN) for a finite mean above 1.8e19.
struct WelfordMerge {
  __device__ __forceinline__ Welford operator()(Welford a, Welford b) const {
    const float n = a.count + b.count;
    if (n == 0.0f) return a;
    const float delta = b.mean - a.mean;
    const float weight_b = b.count / n;
    return {n, a.mean + delta * weight_b, a.m2 + b.m2 + delta * (delta * (a.count * weight_b))};
  }
};

// The online softmax pair reduced level by level instead of merged pair by pair: over a warp (and
// then over the warps of a block) the maximum first, then every member's sum moved to it once
// and added. The result is MaxSumMerge's, and the butterfly steps are plain max and sum
// shuffles: one exponential per lane and level instead of two per merge step.
//
// sum_at_max: a sum taken at maximum `max`, moved to the level's maximum m >= max. A member that
// has seen only -inf (or nothing) has sum 0 and contributes 0, also when m is -inf too (where
// exp(-inf - -inf) would be NaN); a NaN maximum makes the level's sum NaN.
__device__ __forceinline__ float sum_at_max(MaxSum p, float m) {
  return p.max == -INFINITY ? 0.0f : p.sum * __expf(p.max - m);
}

__device__ __forceinline__ MaxSum warp_reduce_max_sum(MaxSum p) {
  const float m = warp_reduce(p.max, Max{});
  return {m, warp_reduce(sum_at_max(p, m), Sum{})};
}

__device__ __forceinline__ MaxSum block_reduce_max_sum(MaxSum p) {
  return block_reduce_with(p, MaxSum{-INFINITY, 0.0f},
                           [](MaxSum v) { return warp_reduce_max_sum(v); });
}

}  // namespace common

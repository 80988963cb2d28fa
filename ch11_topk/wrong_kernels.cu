#include "wrong_kernels.h"

#include "topk_keys.cuh"

#include "common/bits.cuh"
#include "common/dtype.hpp"
#include "common/errors.hpp"

namespace wrong_kernels {
namespace {

using topk::detail::composite_index;

template <typename T>
__device__ uint64_t ranked(T v, int64_t i, Flaw flaw) {
  uint32_t key = topk::detail::order_key(v);
  const float f = common::to_float(v);
  if (flaw == Flaw::NaNAsSmallest && f != f) key = 0;
  const uint32_t index = static_cast<uint32_t>(i);
  if (flaw == Flaw::TiesToHigherIndex)
    return (static_cast<uint64_t>(key) << 32) | index;  // higher index ranks first
  return topk::detail::composite(key, index);
}

// Slot j of the row's answer: the largest composite below the one of slot j - 1.
template <typename T>
__device__ uint64_t next_best(const T* row, int64_t n, uint64_t below, Flaw flaw) {
  uint64_t best = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t c = ranked(row[i], i, flaw);
    if (c < below && c > best) best = c;
  }
  return best;
}

__device__ int64_t index_of(uint64_t c, Flaw flaw) {
  return flaw == Flaw::TiesToHigherIndex ? static_cast<uint32_t>(c) : composite_index(c);
}

template <typename T>
__global__ void topk_kernel(Flaw flaw, const T* x, int64_t M, int64_t N, int k, T* values,
                            int64_t* indices) {
  const int64_t r = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (r >= M) return;
  const T* row = x + r * N;
  const int64_t n = flaw == Flaw::SkipsLastElement ? N - 1 : N;
  uint64_t previous = ~uint64_t{0};
  for (int j = 0; j < k; ++j) {
    previous = next_best(row, n, previous, flaw);
    const int64_t slot = r * k + (flaw == Flaw::Ascending ? k - 1 - j : j);
    const int64_t i = index_of(previous, flaw);
    const uint32_t key = static_cast<uint32_t>(previous >> 32);
    values[slot] = flaw == Flaw::Zeros ? common::from_bits<T>(0)  // +0.0
                   : flaw == Flaw::DropsNaNPayload
                       ? common::from_bits<T>(topk::detail::bits_of_key<T>(key))
                       : row[i];
    indices[slot] = flaw == Flaw::Zeros ? 0 : i;
  }
  if (flaw == Flaw::WritesPastEnd && r == M - 1) {
    values[r * k + k] = values[r * k];
    indices[r * k + k] = indices[r * k];
  }
  if (flaw == Flaw::ZeroesWinners)
    for (int j = 0; j < k; ++j)
      const_cast<T*>(row)[indices[r * k + j]] = common::from_bits<T>(0);
}

__global__ void softmax_topk_kernel(SoftmaxFlaw flaw, const float* x, int64_t M, int64_t N, int k,
                                    float temperature, int64_t* indices, float* probs, float* lse) {
  const int64_t r = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (r >= M) return;
  const float* row = x + r * N;
  const float scale = flaw == SoftmaxFlaw::IgnoresTemperature ? 1.0f : 1.0f / temperature;
  // y = x * scale rounded to float (__fmul_rn, never fused into y - m), as topk.h defines it.
  const auto y = [scale, row](int64_t i) { return __fmul_rn(row[i], scale); };
  float m = flaw == SoftmaxFlaw::ForgetsMax ? 0.0f : -INFINITY;
  if (flaw != SoftmaxFlaw::ForgetsMax)
    for (int64_t i = 0; i < N; ++i)
      m = fmaxf(m, y(i));
  double l = 0.0;
  if (flaw != SoftmaxFlaw::NormalizesOverTopK)
    for (int64_t i = 0; i < N; ++i)
      if (flaw != SoftmaxFlaw::SkipsNaN || !isnan(y(i))) l += expf(y(i) - m);
  uint64_t previous = ~uint64_t{0};
  for (int j = 0; j < k; ++j) {
    previous = next_best(row, N, previous, Flaw::None);
    if (flaw == SoftmaxFlaw::NormalizesOverTopK) l += expf(y(composite_index(previous)) - m);
  }
  previous = ~uint64_t{0};
  for (int j = 0; j < k; ++j) {
    previous = next_best(row, N, previous, Flaw::None);
    const int64_t i = composite_index(previous);
    indices[r * k + j] = i;
    probs[r * k + j] = static_cast<float>(expf(y(i) - m) / l);
  }
  if (lse) lse[r] = m + logf(static_cast<float>(l));
}

}  // namespace

const char* flaw_name(Flaw f) {
  switch (f) {
    case Flaw::None:
      return "none";
    case Flaw::Zeros:
      return "zeros";
    case Flaw::TiesToHigherIndex:
      return "ties to the higher index";
    case Flaw::SkipsLastElement:
      return "skips the last element";
    case Flaw::NaNAsSmallest:
      return "NaN as the smallest value";
    case Flaw::Ascending:
      return "ascending order";
    case Flaw::WritesPastEnd:
      return "writes past the end";
    case Flaw::DropsNaNPayload:
      return "drops the NaN payload";
    case Flaw::ZeroesWinners:
      return "zeroes the winners in the input";
  }
  return "?";
}

const char* flaw_name(SoftmaxFlaw f) {
  switch (f) {
    case SoftmaxFlaw::None:
      return "none";
    case SoftmaxFlaw::NormalizesOverTopK:
      return "normalizes over the top k only";
    case SoftmaxFlaw::IgnoresTemperature:
      return "ignores the temperature";
    case SoftmaxFlaw::ForgetsMax:
      return "forgets to subtract the maximum";
    case SoftmaxFlaw::SkipsNaN:
      return "leaves NaN out of the sum";
  }
  return "?";
}

template <typename T>
void topk(Flaw flaw, const T* x, int64_t M, int64_t N, int k, T* values, int64_t* indices,
          cudaStream_t stream) {
  CHECK_ARG(M >= 1 && N >= 1 && k >= 1 && k <= N, "bad shape M=" << M << " N=" << N << " k=" << k);
  topk_kernel<<<static_cast<unsigned>((M + 127) / 128), 128, 0, stream>>>(flaw, x, M, N, k, values,
                                                                          indices);
  CUDA_CHECK_LAUNCH();
}
template void topk(Flaw, const float*, int64_t, int64_t, int, float*, int64_t*, cudaStream_t);
template void topk(Flaw, const __half*, int64_t, int64_t, int, __half*, int64_t*, cudaStream_t);
template void topk(Flaw, const __nv_bfloat16*, int64_t, int64_t, int, __nv_bfloat16*, int64_t*,
                   cudaStream_t);

void softmax_topk(SoftmaxFlaw flaw, const float* x, int64_t M, int64_t N, int k, float temperature,
                  int64_t* indices, float* probs, float* lse, cudaStream_t stream) {
  CHECK_ARG(M >= 1 && N >= 1 && k >= 1 && k <= N, "bad shape M=" << M << " N=" << N << " k=" << k);
  softmax_topk_kernel<<<static_cast<unsigned>((M + 127) / 128), 128, 0, stream>>>(
      flaw, x, M, N, k, temperature, indices, probs, lse);
  CUDA_CHECK_LAUNCH();
}

}  // namespace wrong_kernels

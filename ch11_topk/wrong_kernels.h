// Deliberately wrong top-k kernels: the checker tests require check_topk / check_softmax_topk to
// reject each of them (and to accept the flawless variant, so that a checker rejecting
// everything fails too). One thread per row selects by k passes of "best element below the
// previous one": slow and simple, so each flaw is one visible line.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace wrong_kernels {

enum class Flaw {
  None,               // correct: the checker must accept it
  Zeros,              // writes 0 everywhere, as an empty kernel with a memset would
  TiesToHigherIndex,  // breaks ties by the higher index
  SkipsLastElement,   // loops to i < N - 1: the off-by-one tail
  NaNAsSmallest,      // compares floats with '>', so NaN never wins
  Ascending,          // the right k elements in ascending order
  WritesPastEnd,      // writes one slot more than k in the last row
  DropsNaNPayload,    // writes the value decoded from the key: every NaN becomes one NaN
  ZeroesWinners,      // right answer, then zeroes the winners in x, as an in-place selection does
};
constexpr Flaw kAllFlaws[] = {
    Flaw::Zeros,     Flaw::TiesToHigherIndex, Flaw::SkipsLastElement, Flaw::NaNAsSmallest,
    Flaw::Ascending, Flaw::WritesPastEnd,     Flaw::DropsNaNPayload,  Flaw::ZeroesWinners};
const char* flaw_name(Flaw f);

// T: float, __half, __nv_bfloat16.
template <typename T>
void topk(Flaw flaw, const T* x, int64_t M, int64_t N, int k, T* values, int64_t* indices,
          cudaStream_t stream = nullptr);

enum class SoftmaxFlaw {
  None,                // correct
  NormalizesOverTopK,  // divides by the sum over the k winners instead of the whole row
  IgnoresTemperature,  // softmax of x instead of x / temperature
  ForgetsMax,          // exp(x) / sum exp(x) without subtracting the maximum: overflows
  SkipsNaN,            // leaves NaN out of the sum, as a maximum by fmaxf does in a pack of -inf
};
constexpr SoftmaxFlaw kAllSoftmaxFlaws[] = {SoftmaxFlaw::NormalizesOverTopK,
                                            SoftmaxFlaw::IgnoresTemperature,
                                            SoftmaxFlaw::ForgetsMax, SoftmaxFlaw::SkipsNaN};
const char* flaw_name(SoftmaxFlaw f);

void softmax_topk(SoftmaxFlaw flaw, const float* x, int64_t M, int64_t N, int k, float temperature,
                  int64_t* indices, float* probs, float* lse, cudaStream_t stream = nullptr);

}  // namespace wrong_kernels

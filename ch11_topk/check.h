// The checker: runs a top-k launcher on a guarded, possibly misaligned input with poisoned,
// guarded outputs and compares with cpu_ref. Shared by the student's and the solution's tests
// and by the checker tests, which feed it deliberately wrong kernels.
//
// What "correct" means here: indices equal the reference exactly (the order is total, so there
// is one right answer), values are bit-for-bit the input elements at those indices (so that a
// -0.0 or a NaN's sign and payload cannot change unseen), every output slot was written, nothing
// was written past either end. Probabilities of the fused kernel: |p - p_ref| <= 1e-12 + 1e-4
// |p_ref|. Why 1e-4: each thread sums its exp terms in float (relative error at most about (N /
// 128) 2^-24, 6e-5 at N = 128k, typically far less since rounding errors do not all add up) and the
// approximate exponential (ex2.approx) adds about 2^-21; 1e-12 only forgives probabilities float
// cannot even represent accurately, while the top-1 probability of any row is >= 1 / N, far above
// it.
#pragma once

#include "cpu_ref.h"

#include "common/compare.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace topk_check {

template <typename T>
using TopKLauncher = std::function<void(const T* x, int64_t M, int64_t N, int k, T* values,
                                        int64_t* indices, cudaStream_t stream)>;
template <typename T>
using SoftmaxTopKLauncher =
    std::function<void(const T* x, int64_t M, int64_t N, int k, float temperature, int64_t* indices,
                       float* probs, float* lse, cudaStream_t stream)>;

constexpr double kProbRtol = 1e-4;
constexpr double kProbAtol = 1e-12;

// A device workspace of exactly `bytes`, zero-filled, between guard zones that the checks below
// look at after the launch: a kernel that writes past the scratch memory workspace_bytes asked
// for fails there. Kept until a call asks for another size. It comes with its size, which the
// launchers pass on as workspace_size.
struct Workspace {
  void* data;
  size_t size;
};
Workspace workspace(size_t bytes);

// x is [M, N], placed `misalign` elements past a 256-byte boundary, and so are the outputs.
// `expected` may be given to reuse a reference across versions; otherwise it is computed.
template <typename T>
common::CheckResult check_topk(const TopKLauncher<T>& launch, const std::vector<T>& x, int64_t M,
                               int64_t N, int k, size_t misalign = 0,
                               const cpu_ref::TopK* expected = nullptr);

// Fused softmax + top-k; with_lse also asks for (and checks) the log-sum-exp.
template <typename T>
common::CheckResult check_softmax_topk(const SoftmaxTopKLauncher<T>& launch,
                                       const std::vector<T>& x, int64_t M, int64_t N, int k,
                                       float temperature, bool with_lse, size_t misalign = 0);

// The comparisons alone, for outputs computed elsewhere (the hashed check's sampled rows, the
// benchmark's first and last rows): indices exactly, probabilities and lse as check_softmax_topk
// compares them (lse only where given: pass nullptr to skip it), and values exactly as numbers,
// not bit for bit as check_topk compares them: a -0.0 equals +0.0 here, and any NaN equals any
// other (those inputs hold neither). `where` starts every message.
template <typename T>
common::CheckResult compare_topk(const std::vector<int64_t>& indices, const std::vector<T>& values,
                                 const cpu_ref::TopK& expected, const std::string& where);
common::CheckResult compare_softmax_topk(const std::vector<int64_t>& indices,
                                         const std::vector<float>& probs,
                                         const std::vector<float>* lse,
                                         const cpu_ref::SoftmaxTopK& expected,
                                         const std::string& where);

// Runs `reference_launch` (CUB), then `launch`, on the same input and requires identical indices
// and values: the second, independent reference. The input must be unchanged afterwards.
template <typename T>
common::CheckResult check_same_as(const TopKLauncher<T>& launch,
                                  const TopKLauncher<T>& reference_launch, const std::vector<T>& x,
                                  int64_t M, int64_t N, int k);

// For inputs too large to generate on the host: x[i] is a hash of (i, seed) mapped to a
// uniform value in [-8, 8) and rounded to T, filled on the device; only `rows` are compared
// with the CPU reference (their values are recomputed on the host), while every output slot
// is checked for being written and every input element, on the device, for being unchanged.
template <typename T>
common::CheckResult check_topk_hashed(const TopKLauncher<T>& launch, int64_t M, int64_t N, int k,
                                      uint64_t seed, const std::vector<int64_t>& rows);

}  // namespace topk_check

// Chapter 11's CPU reference: the same order as the kernels (topk.h), computed in double.
#pragma once

#include <cstdint>
#include <vector>

namespace cpu_ref {

// The chapter's total order: true when (a, index_a) comes before (b, index_b) in a top-k list.
// NaN is above everything and ties with NaN; -0.0 ties with +0.0; ties go to the lower index.
bool ranks_before(double a, int64_t index_a, double b, int64_t index_b);

struct TopK {
  std::vector<double> values;    // [M, k]
  std::vector<int64_t> indices;  // [M, k]
};

// Row-wise top-k of x [M, N] (partial sort by ranks_before).
template <typename T>
TopK topk(const std::vector<T>& x, int64_t M, int64_t N, int k);

struct SoftmaxTopK {
  std::vector<int64_t> indices;  // [M, k], as topk
  std::vector<double> probs;     // [M, k], softmax of y over the whole row (y as topk.h defines it)
  std::vector<double> lse;       // [M], log-sum-exp of y
};

// The textbook formulas in double: m = max y (NaN if any y is NaN), l = sum exp(y - m),
// p_i = exp(y_i - m) / l, lse = m + log(l). A +inf in the row gives exp(inf - inf) = NaN in l,
// so every probability is NaN, as in torch.softmax. A row of only -inf has l = 0: lse = -inf and
// the probabilities are 0 / 0 = NaN.
template <typename T>
SoftmaxTopK softmax_topk(const std::vector<T>& x, int64_t M, int64_t N, int k, double temperature);

}  // namespace cpu_ref

// The vendor baseline of the benchmark: cuDNN's softmax (CUDNN_SOFTMAX_ACCURATE, per row).
// Built only when cuDNN is found at configure time (CH10_HAVE_CUDNN).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace vendor {

// y = softmax(x) over rows of a [rows, cols] matrix; T: float or __nv_bfloat16. cuDNN's
// dimensions are int: rows and cols up to INT_MAX, else std::invalid_argument (rows = 0: nothing).
template <typename T>
void cudnn_softmax(const T* x, T* y, int64_t rows, int64_t cols, cudaStream_t stream);

}  // namespace vendor

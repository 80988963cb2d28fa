#include "cudnn_softmax.h"

#include "common/errors.hpp"

#include <cuda_bf16.h>
#include <cudnn.h>

#include <climits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace vendor {
namespace {

void cudnn_check(cudnnStatus_t status, const char* call) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed: " + cudnnGetErrorString(status));
}
#define CUDNN_CHECK(call) cudnn_check((call), #call)

template <typename T>
cudnnDataType_t data_type();
template <>
cudnnDataType_t data_type<float>() {
  return CUDNN_DATA_FLOAT;
}
template <>
cudnnDataType_t data_type<__nv_bfloat16>() {
  return CUDNN_DATA_BFLOAT16;
}

cudnnHandle_t handle() {
  static cudnnHandle_t h = [] {
    cudnnHandle_t created;
    CUDNN_CHECK(cudnnCreate(&created));
    return created;
  }();
  return h;
}

}  // namespace

template <typename T>
void cudnn_softmax(const T* x, T* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  // cuDNN describes tensors with int dimensions: a larger shape would be timed as another one.
  CHECK_ARG(rows >= 0 && rows <= INT_MAX && cols >= 1 && cols <= INT_MAX,
            "cuDNN takes 0 <= rows and 1 <= cols up to INT_MAX, got " << rows << " x " << cols);
  if (rows == 0) return;
  CHECK_ARG(x != nullptr && y != nullptr, "x and y must not be null");
  CUDNN_CHECK(cudnnSetStream(handle(), stream));
  cudnnTensorDescriptor_t created;
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&created));
  // Destroyed on every path, a failed call included.
  const std::unique_ptr<std::remove_pointer_t<cudnnTensorDescriptor_t>,
                        decltype(&cudnnDestroyTensorDescriptor)>
      desc(created, &cudnnDestroyTensorDescriptor);
  // [rows, cols, 1, 1] in NCHW: CUDNN_SOFTMAX_MODE_INSTANCE normalises over C*H*W, one row.
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc.get(), CUDNN_TENSOR_NCHW, data_type<T>(),
                                         static_cast<int>(rows), static_cast<int>(cols), 1, 1));
  const float one = 1.0f, zero = 0.0f;
  CUDNN_CHECK(cudnnSoftmaxForward(handle(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE,
                                  &one, desc.get(), x, &zero, desc.get(), y));
}

template void cudnn_softmax<float>(const float*, float*, int64_t, int64_t, cudaStream_t);
template void cudnn_softmax<__nv_bfloat16>(const __nv_bfloat16*, __nv_bfloat16*, int64_t, int64_t,
                                           cudaStream_t);

}  // namespace vendor

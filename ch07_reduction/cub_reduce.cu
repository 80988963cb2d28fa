#include "cub_reduce.h"

#include "common/errors.hpp"

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

namespace cub_baseline {
namespace {

struct ToFloat {
  template <typename T>
  __device__ float operator()(T v) const {
    return static_cast<float>(v);
  }
};

// TransformReduce widens half/bf16 to float before adding, as our kernels do.
template <typename T, typename Op>
size_t transform_reduce(const T* x, int64_t n, float* out, void* temp, size_t temp_bytes, Op op,
                        float init, cudaStream_t stream) {
  CHECK_ARG(n >= 0, "n must be >= 0, got " << n);
  size_t needed = 0;
  CUDA_CHECK(cub::DeviceReduce::TransformReduce(nullptr, needed, x, out, n, op, ToFloat{}, init,
                                                stream));
  if (temp == nullptr) return needed;
  CHECK_ARG(temp_bytes >= needed, "CUB needs " << needed << " bytes of temp storage, got " << temp_bytes);
  CUDA_CHECK(cub::DeviceReduce::TransformReduce(temp, temp_bytes, x, out, n, op, ToFloat{}, init,
                                                stream));
  return needed;
}

}  // namespace

size_t sum(const float* x, int64_t n, float* out, void* temp, size_t temp_bytes,
           cudaStream_t stream) {
  CHECK_ARG(n >= 0, "n must be >= 0, got " << n);
  size_t needed = 0;
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, needed, x, out, n, stream));
  if (temp == nullptr) return needed;
  CHECK_ARG(temp_bytes >= needed, "CUB needs " << needed << " bytes of temp storage, got " << temp_bytes);
  CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, x, out, n, stream));
  return needed;
}

size_t sum(const __half* x, int64_t n, float* out, void* temp, size_t temp_bytes,
           cudaStream_t stream) {
  return transform_reduce(x, n, out, temp, temp_bytes, cuda::std::plus<float>{}, 0.0f, stream);
}

size_t sum(const __nv_bfloat16* x, int64_t n, float* out, void* temp, size_t temp_bytes,
           cudaStream_t stream) {
  return transform_reduce(x, n, out, temp, temp_bytes, cuda::std::plus<float>{}, 0.0f, stream);
}

size_t max(const float* x, int64_t n, float* out, void* temp, size_t temp_bytes,
           cudaStream_t stream) {
  CHECK_ARG(n >= 0, "n must be >= 0, got " << n);
  size_t needed = 0;
  CUDA_CHECK(cub::DeviceReduce::Max(nullptr, needed, x, out, n, stream));
  if (temp == nullptr) return needed;
  CHECK_ARG(temp_bytes >= needed, "CUB needs " << needed << " bytes of temp storage, got " << temp_bytes);
  CUDA_CHECK(cub::DeviceReduce::Max(temp, temp_bytes, x, out, n, stream));
  return needed;
}

}  // namespace cub_baseline

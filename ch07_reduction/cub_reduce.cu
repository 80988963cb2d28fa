#include "cub_reduce.h"

#include "arguments.h"

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

// CUB's two-phase protocol, shared by every wrapper: `cub_call(temp, bytes)` first reports the
// temporary storage it needs (temp == nullptr: the query, which may pass null x and out), then
// runs with the caller's storage. `who`: the public function called, which the messages name.
template <typename T, typename CubCall>
size_t query_then_run(const char* who, const T* x, const float* out, int64_t n, void* temp,
                      size_t temp_bytes, CubCall cub_call) {
  reduction::detail::check_count(who, n);
  size_t needed = 0;
  CUDA_CHECK(cub_call(nullptr, needed));
  if (temp == nullptr) return needed;
  reduction::detail::check_pointers(who, x, n, out);
  CHECK_ARG_FOR(who, temp_bytes >= needed,
                "CUB needs " << needed << " bytes of temp storage, got " << temp_bytes);
  CUDA_CHECK(cub_call(temp, temp_bytes));
  return needed;
}

// TransformReduce widens half/bf16 to float before adding, as our kernels do.
template <typename T>
size_t widening_sum(const T* x, int64_t n, float* out, void* temp, size_t temp_bytes,
                    cudaStream_t stream) {
  return query_then_run("sum", x, out, n, temp, temp_bytes, [&](void* t, size_t& bytes) {
    return cub::DeviceReduce::TransformReduce(t, bytes, x, out, n, cuda::std::plus<float>{},
                                              ToFloat{}, 0.0f, stream);
  });
}

}  // namespace

size_t sum(const float* x, int64_t n, float* out, void* temp, size_t temp_bytes,
           cudaStream_t stream) {
  return query_then_run("sum", x, out, n, temp, temp_bytes, [&](void* t, size_t& bytes) {
    return cub::DeviceReduce::Sum(t, bytes, x, out, n, stream);
  });
}

size_t sum(const __half* x, int64_t n, float* out, void* temp, size_t temp_bytes,
           cudaStream_t stream) {
  return widening_sum(x, n, out, temp, temp_bytes, stream);
}

size_t sum(const __nv_bfloat16* x, int64_t n, float* out, void* temp, size_t temp_bytes,
           cudaStream_t stream) {
  return widening_sum(x, n, out, temp, temp_bytes, stream);
}

size_t max(const float* x, int64_t n, float* out, void* temp, size_t temp_bytes,
           cudaStream_t stream) {
  return query_then_run("max", x, out, n, temp, temp_bytes, [&](void* t, size_t& bytes) {
    return cub::DeviceReduce::Max(t, bytes, x, out, n, stream);
  });
}

}  // namespace cub_baseline

// The vendor baseline: cub::DeviceReduce, a second reference in the tests and the yardstick in
// the benchmark. CUB needs temporary storage; query its size with the same arguments first.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace cub_baseline {

// Returns the temporary storage CUB needs; with temp == nullptr nothing runs (x and out may then
// be null). Bad arguments (reduction.h's rules) throw std::invalid_argument, as the chapter's own
// functions do.
size_t sum(const float* x, int64_t n, float* out, void* temp, size_t temp_bytes,
           cudaStream_t stream = nullptr);
size_t sum(const __half* x, int64_t n, float* out, void* temp, size_t temp_bytes,
           cudaStream_t stream = nullptr);
size_t sum(const __nv_bfloat16* x, int64_t n, float* out, void* temp, size_t temp_bytes,
           cudaStream_t stream = nullptr);
size_t max(const float* x, int64_t n, float* out, void* temp, size_t temp_bytes,
           cudaStream_t stream = nullptr);

}  // namespace cub_baseline

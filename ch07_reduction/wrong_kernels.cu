#include "wrong_kernels.h"

#include "common/block_reduce.cuh"
#include "common/errors.hpp"

#include <cuda/atomic>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>

namespace wrong {
namespace {

constexpr int kBlock = 256;

__global__ void zero_kernel(float* out) { out[0] = 0.0f; }

// One block, grid-stride loads, a warp reduction, and then... only warp 0's total is written.
__global__ void warp0_only_kernel(const float* x, int64_t n, float* out) {
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += x[i];
  sum = common::warp_reduce(sum, common::Sum{});
  if (threadIdx.x == 0) out[0] = sum;
}

// One block, correct tree, summing elements [first, count) except `skip`: count = n - 1 drops
// the last one, n + 1 reads one past the end. With `extra_store` thread 0 also writes one
// element past the output.
struct Span {
  int64_t first = 0;
  int64_t count = 0;
  int64_t skip = -1;
};
__global__ void block_sum_kernel(const float* x, int64_t n, Span span, float* out,
                                 bool extra_store) {
  float sum = 0.0f;
  for (int64_t i = span.first + threadIdx.x; i < span.count; i += blockDim.x)
    if (i != span.skip) sum += x[i];
  sum = common::block_reduce(sum, common::Sum{}, 0.0f);
  if (threadIdx.x == 0) {
    out[0] = sum;
    if (extra_store) out[1] = static_cast<float>(n);
  }
}

// One block whose threads keep their running sums in bf16, rounded after every addition.
__global__ void bf16_accumulator_kernel(const __nv_bfloat16* x, int64_t n, float* out) {
  __nv_bfloat16 sum = __float2bfloat16_rn(0.0f);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    sum = __float2bfloat16_rn(__bfloat162float(sum) + __bfloat162float(x[i]));
  const float total = common::block_reduce(__bfloat162float(sum), common::Sum{}, 0.0f);
  if (threadIdx.x == 0) out[0] = total;
}

__global__ void fmaxf_kernel(const float* x, int64_t n, float* out) {
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, x[i]);
  m = common::block_reduce(m, [](float a, float b) { return fmaxf(a, b); }, -INFINITY);
  if (threadIdx.x == 0) out[0] = m;
}

// Many blocks; each atomically adds its block sum: the order of the adds, and so the rounding,
// depends on which block finishes first.
__global__ void atomic_block_sums_kernel(const float* x, int64_t n, float* out) {
  float sum = 0.0f;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += stride) sum += x[i];
  sum = common::block_reduce(sum, common::Sum{}, 0.0f);
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

// Last block done over a fixed grid: block sums in the workspace, a counter that elects the last
// block, which adds the sums in block order. Without kResetsCounter the counter keeps the count of
// the launch before, so on a reused workspace no block is ever the last and out is never written.
constexpr int kLastBlockGrid = 64;
template <bool kResetsCounter>
__global__ void last_block_done_kernel(const float* x, int64_t n, float* out, unsigned* done,
                                       float* block_sums) {
  float sum = 0.0f;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += stride)
    sum += x[i];
  sum = common::block_reduce(sum, common::Sum{}, 0.0f);
  if (threadIdx.x != 0) return;
  block_sums[blockIdx.x] = sum;
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(*done);
  if (count.fetch_add(1u, cuda::memory_order_acq_rel) != gridDim.x - 1) return;
  float total = 0.0f;
  for (unsigned b = 0; b < gridDim.x; ++b)
    total += block_sums[b];
  out[0] = total;
  if (kResetsCounter) count.store(0u, cuda::memory_order_relaxed);
}

// `missing`: how many bytes short of what it uses the workspace it asks for is.
template <bool kResetsCounter>
check::Reduction<float> last_block_done(const char* name, size_t missing = 0) {
  check::Reduction<float> r;
  r.name = name;
  r.op = check::Op::Sum;
  r.workspace_bytes = [missing](int64_t) { return sizeof(float) * (kLastBlockGrid + 1) - missing; };
  r.run = [](const float* x, int64_t n, float* out, void* workspace, size_t) {
    auto* done = static_cast<unsigned*>(workspace);
    auto* block_sums = static_cast<float*>(workspace) + 1;
    last_block_done_kernel<kResetsCounter><<<kLastBlockGrid, kBlock>>>(x, n, out, done, block_sums);
    CUDA_CHECK_LAUNCH();
  };
  return r;
}

check::Reduction<float> make(const char* name, check::Op op,
                             std::function<void(const float*, int64_t, float*)> launch) {
  check::Reduction<float> r;
  r.name = name;
  r.op = op;
  r.workspace_bytes = [](int64_t) { return size_t{0}; };
  r.run = [launch](const float* x, int64_t n, float* out, void*, size_t) { launch(x, n, out); };
  return r;
}

}  // namespace

check::Reduction<float> writes_zero() {
  return make("writes_zero", check::Op::Sum, [](const float*, int64_t, float* out) {
    zero_kernel<<<1, 1>>>(out);
    CUDA_CHECK_LAUNCH();
  });
}

check::Reduction<float> misses_cross_warp_step() {
  return make("misses_cross_warp_step", check::Op::Sum, [](const float* x, int64_t n, float* out) {
    warp0_only_kernel<<<1, kBlock>>>(x, n, out);
    CUDA_CHECK_LAUNCH();
  });
}

check::Reduction<float> drops_last_element() {
  return make("drops_last_element", check::Op::Sum, [](const float* x, int64_t n, float* out) {
    block_sum_kernel<<<1, kBlock>>>(x, n, {0, n - 1}, out, false);
    CUDA_CHECK_LAUNCH();
  });
}

check::Reduction<float> drops_middle_element() {
  return make("drops_middle_element", check::Op::Sum, [](const float* x, int64_t n, float* out) {
    block_sum_kernel<<<1, kBlock>>>(x, n, {0, n, n / 2}, out, false);
    CUDA_CHECK_LAUNCH();
  });
}

check::Reduction<float> drops_unaligned_head() {
  return make("drops_unaligned_head", check::Op::Sum, [](const float* x, int64_t n, float* out) {
    const auto past = static_cast<int64_t>(reinterpret_cast<uintptr_t>(x) % 16 / sizeof(float));
    const int64_t head = past == 0 ? 0 : std::min<int64_t>(n, 4 - past);
    block_sum_kernel<<<1, kBlock>>>(x, n, {head, n}, out, false);
    CUDA_CHECK_LAUNCH();
  });
}

check::Reduction<float> reads_past_input() {
  return make("reads_past_input", check::Op::Sum, [](const float* x, int64_t n, float* out) {
    block_sum_kernel<<<1, kBlock>>>(x, n, {0, n + 1}, out, false);
    CUDA_CHECK_LAUNCH();
  });
}

check::Reduction<float> writes_past_output() {
  return make("writes_past_output", check::Op::Sum, [](const float* x, int64_t n, float* out) {
    block_sum_kernel<<<1, kBlock>>>(x, n, {0, n}, out, true);
    CUDA_CHECK_LAUNCH();
  });
}

check::Reduction<__nv_bfloat16> accumulates_in_bf16() {
  check::Reduction<__nv_bfloat16> r;
  r.name = "accumulates_in_bf16";
  r.workspace_bytes = [](int64_t) { return size_t{0}; };
  r.run = [](const __nv_bfloat16* x, int64_t n, float* out, void*, size_t) {
    bf16_accumulator_kernel<<<1, kBlock>>>(x, n, out);
    CUDA_CHECK_LAUNCH();
  };
  return r;
}

check::Reduction<float> max_ignores_nan() {
  return make("max_ignores_nan", check::Op::Max, [](const float* x, int64_t n, float* out) {
    fmaxf_kernel<<<1, kBlock>>>(x, n, out);
    CUDA_CHECK_LAUNCH();
  });
}

check::Reduction<float> order_dependent_finish() {
  return make("order_dependent_finish", check::Op::Sum, [](const float* x, int64_t n, float* out) {
    CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float)));
    atomic_block_sums_kernel<<<1024, kBlock>>>(x, n, out);
    CUDA_CHECK_LAUNCH();
  });
}

check::Reduction<float> keeps_its_counter() {
  return last_block_done<false>("keeps_its_counter");
}

check::Reduction<float> resets_its_counter() {
  return last_block_done<true>("resets_its_counter");
}

check::Reduction<float> asks_too_little_workspace() {
  return last_block_done<true>("asks_too_little_workspace", sizeof(float));
}

}  // namespace wrong

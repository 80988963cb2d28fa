#include "check.h"

#include "common/device_buffer.hpp"
#include "common/dtype.hpp"
#include "common/errors.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

namespace topk_check {
namespace {

std::string shape(int64_t M, int64_t N, int k) {
  std::ostringstream s;
  s << "[M=" << M << ", N=" << N << ", k=" << k << "] ";
  return s.str();
}

// splitmix64 finalizer: the same integer arithmetic on host and device.
__host__ __device__ inline float hashed_uniform(uint64_t i, uint64_t seed) {
  uint64_t z = i + seed * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const float unit = static_cast<float>(z >> 40) * 0x1p-24f;  // exact: 24 bits
  return 16.0f * unit - 8.0f;                                 // 16 * unit is exact too
}

template <typename T>
__device__ T hashed_value(uint64_t i, uint64_t seed) {
  if constexpr (std::is_same_v<T, float>)
    return hashed_uniform(i, seed);
  else if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(hashed_uniform(i, seed));
  else
    return __float2bfloat16_rn(hashed_uniform(i, seed));
}

template <typename T>
__global__ void fill_hashed_kernel(T* x, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x)
    x[i] = hashed_value<T>(static_cast<uint64_t>(i), seed);
}

// Counts the elements of x whose bits differ from the hashed fill: the input is too large to
// compare on the host, and a kernel that writes into it must not pass.
template <typename T>
__global__ void count_changed_kernel(const T* x, int64_t count, uint64_t seed,
                                     unsigned long long* changed) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>;
  unsigned long long mine = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const T want = hashed_value<T>(static_cast<uint64_t>(i), seed);
    mine += *reinterpret_cast<const Bits*>(&x[i]) != *reinterpret_cast<const Bits*>(&want);
  }
  if (mine > 0) atomicAdd(changed, mine);
}

// The workspace the launchers take from workspace(): exactly as large as they asked, between
// guard zones that the checks look at after the run. `handed_out`: asked for since the last look.
struct SharedWorkspace {
  std::unique_ptr<common::GuardedBuffer<unsigned char>> buffer;
  bool handed_out = false;
};
SharedWorkspace& shared_workspace() {
  static SharedWorkspace workspace;
  return workspace;
}

common::CheckResult check_workspace_guards(const std::string& where) {
  SharedWorkspace& w = shared_workspace();
  if (!w.handed_out) return common::CheckResult::pass();
  w.handed_out = false;
  common::CheckResult result =
      common::check_guards(*w.buffer, where + "workspace (as large as workspace_bytes said)");
  if (!result.ok) w.buffer.reset();  // its changed guards belong to this check, not the next
  return result;
}

}  // namespace

Workspace workspace(size_t bytes) {
  SharedWorkspace& w = shared_workspace();
  // A launcher that threw before its check looked leaves `handed_out` set: look now, so that a
  // later check that asks for no workspace does not inherit that one's guards.
  if (w.handed_out && w.buffer && !w.buffer->guards_intact()) w.buffer.reset();
  if (!w.buffer || w.buffer->size() != bytes) {
    w.buffer.reset();  // freed before the next is allocated: [large] workspaces are big
    w.buffer = std::make_unique<common::GuardedBuffer<unsigned char>>(bytes);
  }
  w.buffer->fill_bytes(0);
  w.handed_out = true;
  return {w.buffer->data(), bytes};
}

template <typename T>
common::CheckResult check_topk(const TopKLauncher<T>& launch, const std::vector<T>& x, int64_t M,
                               int64_t N, int k, size_t misalign, const cpu_ref::TopK* expected) {
  common::GuardedBuffer<T> input(x.size(), misalign);
  input.upload(x);
  const size_t outputs = static_cast<size_t>(M) * static_cast<size_t>(k);
  // The outputs as far past alignment as the input (topk.h allows any element offset).
  common::GuardedBuffer<T> values(outputs, misalign);
  common::GuardedBuffer<int64_t> indices(outputs, misalign);
  values.poison();
  indices.poison();
  launch(input.data(), M, N, k, values.data(), indices.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  cpu_ref::TopK computed;
  if (expected == nullptr) {
    computed = cpu_ref::topk(x, M, N, k);
    expected = &computed;
  }
  const std::string where = shape(M, N, k);
  const std::vector<T> got_values = values.download();
  const std::vector<int64_t> got_indices = indices.download();
  // Once the indices are right, every value must be the input element at its index, bit for
  // bit: the kernels decode values from their keys, and comparing numbers could not see a -0.0
  // that came out as +0.0 or a NaN that lost its sign or payload.
  std::vector<T> want_values(outputs);
  for (size_t slot = 0; slot < outputs; ++slot) {
    const int64_t row = static_cast<int64_t>(slot / static_cast<size_t>(k));
    want_values[slot] = x[static_cast<size_t>(row * N + expected->indices[slot])];
  }
  common::CheckResult result =
      common::check_indices(got_indices, expected->indices, where + "indices");
  result.and_then(common::check_same_bits(got_values, want_values,
                                          where + "values (the input elements at the indices)"));
  result.and_then(common::check_guards(values, where + "values"));
  result.and_then(common::check_guards(indices, where + "indices"));
  result.and_then(check_workspace_guards(where));
  result.and_then(common::check_unchanged(input, x, where + "input"));
  return result;
}

template <typename T>
common::CheckResult compare_topk(const std::vector<int64_t>& indices, const std::vector<T>& values,
                                 const cpu_ref::TopK& expected, const std::string& where) {
  common::CheckResult result = common::check_indices(indices, expected.indices, where + "indices");
  result.and_then(common::check_close(values, expected.values, 0.0, 0.0,
                                      where + "values (copies of input elements: exact)"));
  return result;
}

common::CheckResult compare_softmax_topk(const std::vector<int64_t>& indices,
                                         const std::vector<float>& probs,
                                         const std::vector<float>* lse,
                                         const cpu_ref::SoftmaxTopK& expected,
                                         const std::string& where) {
  common::CheckResult result = common::check_indices(indices, expected.indices, where + "indices");
  result.and_then(
      common::check_close(probs, expected.probs, kProbAtol, kProbRtol, where + "probs"));
  // lse = m + log(l): the relative error of l becomes an absolute error of about the same size.
  if (lse != nullptr)
    result.and_then(common::check_close(*lse, expected.lse, 2 * kProbRtol, 1e-6, where + "lse"));
  return result;
}

template <typename T>
common::CheckResult check_softmax_topk(const SoftmaxTopKLauncher<T>& launch,
                                       const std::vector<T>& x, int64_t M, int64_t N, int k,
                                       float temperature, bool with_lse, size_t misalign) {
  common::GuardedBuffer<T> input(x.size(), misalign);
  input.upload(x);
  const size_t outputs = static_cast<size_t>(M) * static_cast<size_t>(k);
  common::GuardedBuffer<int64_t> indices(outputs, misalign);  // as check_topk places them
  common::GuardedBuffer<float> probs(outputs, misalign);
  common::GuardedBuffer<float> lse(static_cast<size_t>(M), misalign);
  indices.poison();
  probs.poison();
  lse.poison();
  launch(input.data(), M, N, k, temperature, indices.data(), probs.data(),
         with_lse ? lse.data() : nullptr, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  const cpu_ref::SoftmaxTopK expected = cpu_ref::softmax_topk(x, M, N, k, temperature);
  const std::string where = shape(M, N, k);
  const std::vector<float> got_lse = lse.download();
  common::CheckResult result = compare_softmax_topk(indices.download(), probs.download(),
                                                    with_lse ? &got_lse : nullptr, expected, where);
  if (!with_lse) {
    for (const float& v : lse.download())
      if (!common::is_poison(v)) {
        result.and_then(
            common::CheckResult::fail(where + "lse was written although it was not asked for"));
        break;
      }
  }
  result.and_then(common::check_guards(indices, where + "indices"));
  result.and_then(common::check_guards(probs, where + "probs"));
  result.and_then(common::check_guards(lse, where + "lse"));
  result.and_then(check_workspace_guards(where));
  result.and_then(common::check_unchanged(input, x, where + "input"));
  return result;
}

template <typename T>
common::CheckResult check_same_as(const TopKLauncher<T>& launch,
                                  const TopKLauncher<T>& reference_launch, const std::vector<T>& x,
                                  int64_t M, int64_t N, int k) {
  common::GuardedBuffer<T> input(x.size());
  input.upload(x);
  const size_t outputs = static_cast<size_t>(M) * static_cast<size_t>(k);
  common::GuardedBuffer<T> values(outputs), ref_values(outputs);
  common::GuardedBuffer<int64_t> indices(outputs), ref_indices(outputs);
  values.poison();
  indices.poison();
  ref_values.poison();
  ref_indices.poison();
  // The reference first, on the input as uploaded.
  reference_launch(input.data(), M, N, k, ref_values.data(), ref_indices.data(), nullptr);
  launch(input.data(), M, N, k, values.data(), indices.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string where = shape(M, N, k);
  const std::vector<int64_t> want_indices = ref_indices.download();
  common::CheckResult result = common::check_indices(indices.download(), want_indices,
                                                     where + "indices vs the CUB baseline");
  result.and_then(common::check_same_bits(values.download(), ref_values.download(),
                                          where + "values vs the CUB baseline"));
  result.and_then(common::check_guards(values, where + "values"));
  result.and_then(common::check_guards(indices, where + "indices"));
  result.and_then(check_workspace_guards(where));
  result.and_then(common::check_unchanged(input, x, where + "input"));
  return result;
}

template <typename T>
common::CheckResult check_topk_hashed(const TopKLauncher<T>& launch, int64_t M, int64_t N, int k,
                                      uint64_t seed, const std::vector<int64_t>& rows) {
  common::GuardedBuffer<T> input(static_cast<size_t>(M) * static_cast<size_t>(N));
  fill_hashed_kernel<<<4096, 256>>>(input.data(), M * N, seed);
  CUDA_CHECK_LAUNCH();
  const size_t outputs = static_cast<size_t>(M) * static_cast<size_t>(k);
  common::GuardedBuffer<T> values(outputs);
  common::GuardedBuffer<int64_t> indices(outputs);
  values.poison();
  indices.poison();
  launch(input.data(), M, N, k, values.data(), indices.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  const std::string where = shape(M, N, k);
  const std::vector<T> got_values = values.download();
  const std::vector<int64_t> got_indices = indices.download();
  common::CheckResult result;
  if (common::first_unwritten(got_indices) >= 0)
    result.and_then(common::CheckResult::fail(where + "index slot " +
                                              std::to_string(common::first_unwritten(got_indices)) +
                                              " was never written"));
  if (common::first_unwritten(got_values) >= 0)  // the inputs, in [-8, 8), are never the poison
    result.and_then(common::CheckResult::fail(where + "value slot " +
                                              std::to_string(common::first_unwritten(got_values)) +
                                              " was never written"));
  for (int64_t r : rows) {
    std::vector<T> row(static_cast<size_t>(N));
    for (int64_t i = 0; i < N; ++i)
      row[static_cast<size_t>(i)] =
          common::from_float<T>(hashed_uniform(static_cast<uint64_t>(r * N + i), seed));
    const cpu_ref::TopK expected = cpu_ref::topk(row, 1, N, k);
    const auto first = static_cast<size_t>(r * k);
    const std::vector<int64_t> row_indices(got_indices.begin() + first,
                                           got_indices.begin() + first + k);
    const std::vector<T> row_values(got_values.begin() + first, got_values.begin() + first + k);
    result.and_then(
        compare_topk(row_indices, row_values, expected, where + "row " + std::to_string(r) + " "));
  }
  result.and_then(common::check_guards(values, where + "values"));
  result.and_then(common::check_guards(indices, where + "indices"));
  result.and_then(check_workspace_guards(where));
  common::DeviceBuffer<unsigned long long> changed(std::vector<unsigned long long>{0});
  count_changed_kernel<<<4096, 256>>>(input.data(), M * N, seed, changed.data());
  CUDA_CHECK_LAUNCH();
  const unsigned long long changed_count = changed.download()[0];
  if (changed_count > 0)
    result.and_then(common::CheckResult::fail(where + "input: " + std::to_string(changed_count) +
                                              " elements were modified"));
  result.and_then(common::check_guards(input, where + "input"));
  return result;
}

#define TOPK_CHECK_INSTANTIATE(T)                                                                 \
  template common::CheckResult check_topk(const TopKLauncher<T>&, const std::vector<T>&, int64_t, \
                                          int64_t, int, size_t, const cpu_ref::TopK*);            \
  template common::CheckResult check_softmax_topk(const SoftmaxTopKLauncher<T>&,                  \
                                                  const std::vector<T>&, int64_t, int64_t, int,   \
                                                  float, bool, size_t);                           \
  template common::CheckResult check_same_as(const TopKLauncher<T>&, const TopKLauncher<T>&,      \
                                             const std::vector<T>&, int64_t, int64_t, int);       \
  template common::CheckResult check_topk_hashed(const TopKLauncher<T>&, int64_t, int64_t, int,   \
                                                 uint64_t, const std::vector<int64_t>&);          \
  template common::CheckResult compare_topk(const std::vector<int64_t>&, const std::vector<T>&,   \
                                            const cpu_ref::TopK&, const std::string&);
TOPK_CHECK_INSTANTIATE(float)
TOPK_CHECK_INSTANTIATE(__half)
TOPK_CHECK_INSTANTIATE(__nv_bfloat16)
#undef TOPK_CHECK_INSTANTIATE

}  // namespace topk_check

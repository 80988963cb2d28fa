#include "cub_topk.h"

#include "topk_keys.cuh"

#include "common/errors.hpp"
#include "common/overlap.hpp"

#include <cub/device/device_segmented_radix_sort.cuh>

namespace cub_topk {
namespace {

size_t align_up(size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

struct Layout {
  size_t keys, index_in, index_out, offsets, cub_temp, total;
};

template <typename T>
size_t cub_temp_bytes(int64_t M, int64_t N) {
  size_t bytes = 0;
  CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending(
      nullptr, bytes, static_cast<const T*>(nullptr), static_cast<T*>(nullptr),
      static_cast<const int*>(nullptr), static_cast<int*>(nullptr), static_cast<int>(M * N),
      static_cast<int>(M), static_cast<const int*>(nullptr), static_cast<const int*>(nullptr)));
  return bytes;
}

template <typename T>
Layout layout(int64_t M, int64_t N) {
  const size_t items = static_cast<size_t>(M * N);
  Layout l;
  l.keys = align_up(items * sizeof(T));
  l.index_in = align_up(items * sizeof(int));
  l.index_out = l.index_in;
  l.offsets = align_up(static_cast<size_t>(M + 1) * sizeof(int));
  l.cub_temp = align_up(cub_temp_bytes<T>(M, N));
  l.total = l.keys + l.index_in + l.index_out + l.offsets + l.cub_temp;
  return l;
}

__global__ void row_iota(int* index, int* offsets, int64_t M, int64_t N) {
  const int64_t total = M * N;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x)
    index[i] = static_cast<int>(i % N);
  for (int64_t r = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; r <= M;
       r += int64_t{gridDim.x} * blockDim.x)
    offsets[r] = static_cast<int>(r * N);
}

template <typename T>
__global__ void take_first_k(const T* keys, const int* index, int64_t M, int64_t N, int k,
                             T* values, int64_t* indices) {
  const int64_t total = M * k;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / k, j = i % k;
    values[i] = keys[r * N + j];
    indices[i] = index[r * N + j];
  }
}

// `who`: the public function called, named by a refusal.
void check_size(const char* who, int64_t M, int64_t N) {
  CHECK_ARG_FOR(who, M >= 0 && N >= 1, "need M >= 0 and N >= 1, got M = " << M << ", N = " << N);
  // M and N first, so that their product cannot overflow.
  constexpr int64_t kIntItems = int64_t{1} << 31;
  CHECK_ARG_FOR(who, M < kIntItems && N < kIntItems && M * N < kIntItems,
                "CUB's segmented sort counts items in int: M * N (" << M << " x " << N
                                                                    << ") must be below 2^31");
}

}  // namespace

template <typename T>
size_t workspace_bytes(int64_t M, int64_t N) {
  check_size(__func__, M, N);
  return layout<T>(M, N).total;
}

template <typename T>
void topk(const T* x, int64_t M, int64_t N, int k, T* values, int64_t* indices, void* workspace,
          size_t workspace_size, cudaStream_t stream) {
  topk::check_problem(__func__, x, M, N, k, indices, static_cast<int>(N), values);
  topk::check_values(__func__, M, values);
  check_size(__func__, M, N);
  if (M == 0) return;
  const Layout l = layout<T>(M, N);
  CHECK_ARG(workspace != nullptr && workspace_size >= l.total,
            "CUB's top-k needs " << l.total << " bytes of workspace, got " << workspace_size);
  // The index arrays start at multiples of 256 bytes from it; CUB aligns its own part.
  CHECK_ARG(reinterpret_cast<uintptr_t>(workspace) % alignof(int) == 0,
            "the workspace must be 4-byte aligned (cudaMalloc's pointers are)");
  // The sort writes the whole of it while x is read and the outputs written.
  const size_t slots = static_cast<size_t>(M) * static_cast<size_t>(k);
  CHECK_ARG(!common::overlaps_any(common::Span{workspace, l.total},
                                  {common::Span{x, topk::input_bytes<T>(M, N)},
                                   common::Span{values, slots * sizeof(T)},
                                   common::Span{indices, slots * sizeof(int64_t)}}),
            "the workspace (its first workspace_bytes(M, N) = "
                << l.total << " bytes) must not share memory with x or the outputs");
  auto* base = static_cast<unsigned char*>(workspace);
  T* keys = reinterpret_cast<T*>(base);
  int* index_in = reinterpret_cast<int*>(base + l.keys);
  int* index_out = reinterpret_cast<int*>(base + l.keys + l.index_in);
  int* offsets = reinterpret_cast<int*>(base + l.keys + l.index_in + l.index_out);
  void* temp = base + l.keys + l.index_in + l.index_out + l.offsets;
  size_t temp_bytes = l.cub_temp;

  row_iota<<<1024, 256, 0, stream>>>(index_in, offsets, M, N);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairsDescending(
      temp, temp_bytes, x, keys, index_in, index_out, static_cast<int>(M * N), static_cast<int>(M),
      offsets, offsets + 1, 0, static_cast<int>(sizeof(T) * 8), stream));
  take_first_k<<<256, 256, 0, stream>>>(keys, index_out, M, N, k, values, indices);
  CUDA_CHECK_LAUNCH();
}

#define CUB_TOPK_INSTANTIATE(T)                         \
  template size_t workspace_bytes<T>(int64_t, int64_t); \
  template void topk(const T*, int64_t, int64_t, int, T*, int64_t*, void*, size_t, cudaStream_t);
CUB_TOPK_INSTANTIATE(float)
CUB_TOPK_INSTANTIATE(__half)
CUB_TOPK_INSTANTIATE(__nv_bfloat16)
#undef CUB_TOPK_INSTANTIATE

}  // namespace cub_topk

// Chapter 7: parallel reduction, from one atomic per element to the copy-bandwidth roofline.
//
// Each version is one numbered TODO below (6 in parts a and b, 7 in a, b and c);
// `bench_reduction --versions=<name>` times one of them.
//   1 atomic        one atomicAdd per element: correct, but every add queues on one address
//   2 interleaved   shared-memory tree, interleaved addressing: `tid % (2*s)` leaves most of each
//                   warp idle and the modulo is slow
//   3 strided       the same tree with a strided index: warps stay busy, but the stride 2*s
//                   sends a warp's accesses to the same shared-memory banks (bank conflicts)
//   4 sequential    sequential addressing: active threads and their words are contiguous
//   5 first_add     each thread first sums many elements in a grid-stride loop, so the tree is
//                   a small part of the work and the grid is about one wave of blocks
//   6 warp_shuffle  warps reduce in registers with __shfl_down_sync; shared memory only carries
//                   one value per warp
//   7 final         16-byte loads, several in flight per thread, at most one wave of blocks
//                   and a last-block-done finish: a single launch with a deterministic result
// Versions 2 to 6 write one partial sum per block; the launcher runs them again over the
// partials until one block is left.

#include "arguments.h"
#include "reduction.h"

#include "common/block_reduce.cuh"
#include "common/errors.hpp"
#include "common/gpu_info.hpp"
#include "common/kernel_attributes.hpp"
#include "common/vector_io.cuh"

#include <cuda/atomic>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

namespace reduction {
namespace {

// Threads per block of versions 1 to 6: a power of two, because the trees halve it.
constexpr int kBlock = 256;
constexpr int kWarps = kBlock / common::kWarpSize;
static_assert(kWarps <= common::kWarpSize, "version 6 reduces the warp sums with one warp");

// For a >= 0, b > 0; no a + b - 1 that could overflow near INT64_MAX.
int64_t ceil_div(int64_t a, int64_t b) {
  return a / b + (a % b != 0);
}

// ---------------------------------------------------------------------------------------------
// Version 1: one atomicAdd per element.
__global__ void sum_atomic_kernel(const float* x, int64_t n, float* out) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  // TODO 1 (about 1 line; checked by [ch07_reduction][atomic]):
  //   Add x[i] into *out with atomicAdd, in every thread whose i lies inside the array.
  //   The launcher has set *out to zero.
  // BEGIN TODO 1
  if (i < n) atomicAdd(out, x[i]);
  // END TODO 1
}

// ---------------------------------------------------------------------------------------------
// Version 2: tree in shared memory with interleaved addressing.
__global__ void sum_interleaved_kernel(const float* in, int64_t n, float* partials) {
  __shared__ float partial[kBlock];
  const unsigned tid = threadIdx.x;
  const int64_t i = blockIdx.x * int64_t{kBlock} + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  // TODO 2 (about 5 lines; checked by [ch07_reduction][interleaved]):
  //   For s = 1, 2, 4, ... while s < blockDim.x: the threads with tid % (2 * s) == 0 add
  //   partial[tid + s] into partial[tid]. Call __syncthreads() after every step, outside the if:
  //   every thread of the block must reach each barrier. partial[0] then holds the block's sum.
  // BEGIN TODO 2
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) partial[tid] += partial[tid + s];  // divergent, and modulo is slow
    __syncthreads();
  }
  // END TODO 2
  if (tid == 0) partials[blockIdx.x] = partial[0];
}

// ---------------------------------------------------------------------------------------------
// Version 3: interleaved addressing with a strided index.
__global__ void sum_strided_kernel(const float* in, int64_t n, float* partials) {
  __shared__ float partial[kBlock];
  const unsigned tid = threadIdx.x;
  const int64_t i = blockIdx.x * int64_t{kBlock} + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  // TODO 3 (about 6 lines; checked by [ch07_reduction][strided]):
  //   Same tree as TODO 2, but thread tid works on index = 2 * s * tid (when index < blockDim.x):
  //   partial[index] += partial[index + s]. The busy threads are now contiguous, so whole warps
  //   retire, but words 2*s apart fall into the same shared-memory banks.
  // BEGIN TODO 3
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) partial[index] += partial[index + s];  // bank conflicts for s >= 1
    __syncthreads();
  }
  // END TODO 3
  if (tid == 0) partials[blockIdx.x] = partial[0];
}

// ---------------------------------------------------------------------------------------------
// Version 4: sequential addressing. Sums partial[0 .. blockDim.x) into partial[0];
// blockDim.x must be a power of two. Version 5 reuses it.
__device__ void tree_sum_sequential(float* partial) {
  // TODO 4 (about 5 lines; checked by [ch07_reduction][sequential]):
  //   Halve the active range each step: for s = blockDim.x / 2 down to 1, the threads with
  //   threadIdx.x < s add partial[threadIdx.x + s] into partial[threadIdx.x]; __syncthreads()
  //   after each step. Neighbouring threads touch neighbouring words: no conflicts, no divergence
  //   inside warps while s >= 32.
  // BEGIN TODO 4
  const unsigned tid = threadIdx.x;
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  // END TODO 4
}

__global__ void sum_sequential_kernel(const float* in, int64_t n, float* partials) {
  __shared__ float partial[kBlock];
  const int64_t i = blockIdx.x * int64_t{kBlock} + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  tree_sum_sequential(partial);
  if (threadIdx.x == 0) partials[blockIdx.x] = partial[0];
}

// ---------------------------------------------------------------------------------------------
// Version 5: first add during load. Returns this thread's sum of in[i], in[i + stride], ...
// where stride is the number of threads in the grid. Version 6 reuses it.
__device__ float thread_sum_grid_stride(const float* in, int64_t n) {
  // TODO 5 (about 5 lines; checked by [ch07_reduction][first_add]):
  //   Start at this thread's global index, step by gridDim.x * blockDim.x (as int64_t: n may
  //   exceed 2^31), add every in[i] with i < n into a float, return it. Each block now reads
  //   many elements before its tree runs, and the grid only needs about one wave of blocks.
  // BEGIN TODO 5
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  float sum = 0.0f;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += stride) sum += in[i];
  return sum;
  // END TODO 5
}

__global__ void sum_first_add_kernel(const float* in, int64_t n, float* partials) {
  __shared__ float partial[kBlock];
  partial[threadIdx.x] = thread_sum_grid_stride(in, n);
  __syncthreads();
  tree_sum_sequential(partial);
  if (threadIdx.x == 0) partials[blockIdx.x] = partial[0];
}

// ---------------------------------------------------------------------------------------------
// Version 6: warp shuffles. Sum of `value` over the 32 lanes of a warp, valid in lane 0.
// (common/block_reduce.cuh generalises this to any type and operator for later chapters.)
__device__ float warp_sum(float value) {
  // TODO 6a (about 3 lines; checked by [ch07_reduction][warp_shuffle]):
  //   For offset = 16, 8, 4, 2, 1: value += __shfl_down_sync(0xffffffff, value, offset).
  //   Lane i reads lane i + offset's register: no shared memory, no __syncthreads().
  // BEGIN TODO 6a
  for (int offset = common::kWarpSize / 2; offset > 0; offset /= 2)
    value += __shfl_down_sync(common::kFullWarpMask, value, offset);
  // END TODO 6a
  return value;
}

__global__ void sum_warp_shuffle_kernel(const float* in, int64_t n, float* partials) {
  const float warp_total = warp_sum(thread_sum_grid_stride(in, n));
  // TODO 6b (about 7 lines; checked by [ch07_reduction][warp_shuffle]):
  //   Cross-warp step: declare __shared__ float warp_sums[kWarps]; lane 0 of each warp
  //   (threadIdx.x % 32 == 0) stores warp_total in warp_sums[threadIdx.x / 32];
  //   __syncthreads(); then warp 0 loads warp_sums[lane] (0.0f for lanes >= kWarps), reduces
  //   with warp_sum, and thread 0 writes partials[blockIdx.x].
  // BEGIN TODO 6b
  __shared__ float warp_sums[kWarps];
  const int lane = threadIdx.x % common::kWarpSize;
  const int warp = threadIdx.x / common::kWarpSize;
  if (lane == 0) warp_sums[warp] = warp_total;
  __syncthreads();
  if (warp == 0) {
    const float block_total = warp_sum(lane < kWarps ? warp_sums[lane] : 0.0f);
    if (lane == 0) partials[blockIdx.x] = block_total;
  }
  // END TODO 6b
}

// ---------------------------------------------------------------------------------------------
// Version 7: the final version, for float sum and max and for half/bf16 sums.
// 256 threads and 4 loads in flight were the fastest of the block sizes (256 to 1024) and depths
// (2 to 8) tried on an H200 at 2^28 elements, every combination within 2%. For float inputs of
// more than 4096 elements per SM up to 2^25 the launch takes 8 loads in flight (kLoadsInFlight,
// the kernel's last template parameter): see final_loads_in_flight.
constexpr int kFinalBlock = 256;

template <typename T, typename Op>
__device__ __forceinline__ float accumulate(float acc, const common::Pack<T>& pack, Op op) {
#pragma unroll
  for (int k = 0; k < common::Pack<T>::kSize; ++k) acc = op(acc, static_cast<float>(pack.v[k]));
  return acc;
}

// x is split into a head (elements before the first 16-byte boundary), a body of whole 16-byte
// packs and a tail (fewer than one pack). Each block reduces its share of the body; the last
// block to finish combines the per-block results and writes out[0].
// Workspace: blocks_done (zero between launches) and block_results[gridDim.x].
// kLoadsInFlight: the 16-byte loads each thread issues before it uses any, enough bytes in flight
// to cover the latency of device memory with one wave of blocks.
template <typename T, typename Op, int kLoadsInFlight>
__global__ void __launch_bounds__(kFinalBlock)
    reduce_final_kernel(const T* x, int64_t n, float identity, float* out, float* block_results,
                        unsigned* blocks_done) {
  constexpr int kPack = common::Pack<T>::kSize;
  const Op op;
  const int64_t head = common::elements_to_alignment(x, n);
  const T* body = x + head;
  const int64_t packs = (n - head) / kPack;
  const int64_t tail_start = head + packs * kPack;
  const int64_t thread = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t threads = int64_t{gridDim.x} * blockDim.x;

  float acc[kLoadsInFlight];
#pragma unroll
  for (int k = 0; k < kLoadsInFlight; ++k) acc[k] = identity;

  // TODO 7a (about 10 lines; checked by [ch07_reduction][final]):
  //   Grid-stride over the packs of `body`, kLoadsInFlight packs per step: i starts at `thread`
  //   and steps by kLoadsInFlight * threads while i < packs; a step's packs are i + k * threads
  //   for k < kLoadsInFlight. First load every one of them that is < packs
  //   (common::load_pack_streaming(body + index * kPack)), then fold each into its own acc[k]
  //   with accumulate(). All loads of a step are issued before the first is used, including in
  //   the last, partial step: finishing the leftovers one pack at a time would wait for one
  //   memory round trip per pack.
  // BEGIN TODO 7a
  for (int64_t i = thread; i < packs; i += kLoadsInFlight * threads) {
    common::Pack<T> p[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k)
      if (i + k * threads < packs) p[k] = common::load_pack_streaming(body + (i + k * threads) * kPack);
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k)
      if (i + k * threads < packs) acc[k] = accumulate(acc[k], p[k], op);
  }
  // END TODO 7a

  // TODO 7b (about 2 lines; checked by [ch07_reduction][final]):
  //   The head and the tail hold fewer than kPack elements each: thread number `thread` of the
  //   grid folds head element x[thread] (if thread < head) into acc[0] and tail element
  //   x[tail_start + thread] (if that is < n) into acc[1], with op, not +, since the same kernel
  //   takes the maximum: acc[0] = op(acc[0], static_cast<float>(x[thread])).
  // BEGIN TODO 7b
  if (thread < head) acc[0] = op(acc[0], static_cast<float>(x[thread]));
  if (tail_start + thread < n) acc[1] = op(acc[1], static_cast<float>(x[tail_start + thread]));
  // END TODO 7b

  float value = acc[0];
#pragma unroll
  for (int k = 1; k < kLoadsInFlight; ++k) value = op(value, acc[k]);
  value = common::block_reduce(value, op, identity);

  __shared__ bool is_last_block;
  // TODO 7c (about 14 lines; checked by [ch07_reduction][final][determinism]):
  //   Last block done. Thread 0 stores `value` in block_results[blockIdx.x], then counts its
  //   block as done with
  //     cuda::atomic_ref<unsigned, cuda::thread_scope_device> done(*blocks_done);
  //     is_last_block = done.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
  //   The release half publishes the store before the count goes up; the acquire half lets the
  //   last block see every other block's store. __syncthreads(). In the last block only: each
  //   thread folds, starting from `identity` (threads past the last block contribute only it),
  //   block_results[b] for b = threadIdx.x, threadIdx.x + blockDim.x, ... (read with
  //   __ldcg, through L2), common::block_reduce(), and thread 0 writes out[0] and resets
  //   *blocks_done to 0 for the next launch. Reading the results in block order, not in the
  //   order blocks finish, is what makes the result the same on every run.
  // BEGIN TODO 7c
  if (threadIdx.x == 0) {
    block_results[blockIdx.x] = value;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> done(*blocks_done);
    is_last_block = done.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();
  if (is_last_block) {
    float total = identity;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
      total = op(total, __ldcg(&block_results[b]));
    total = common::block_reduce(total, op, identity);
    if (threadIdx.x == 0) {
      out[0] = total;
      *blocks_done = 0;
    }
  }
  // END TODO 7c
}

// ---------------------------------------------------------------------------------------------
// Launchers.

int sm_count() { return common::device_properties().multiProcessorCount; }

// Upper bound on the blocks of any final-version launch: every thread slot of the GPU filled.
int final_max_blocks() {
  return sm_count() * (common::device_properties().maxThreadsPerMultiProcessor / kFinalBlock);
}

// The workspace starts with the final version's counter, alone in its first 256 bytes; the final
// version's block results and the partials of versions 2 to 6 come after it. A workspace shared
// by every version so keeps its counter at zero: no partial lands on it.
constexpr size_t kCounterBytes = 256;

// The final version's workspace: the counter, then one result per block.
struct FinalWorkspace {
  unsigned* blocks_done;
  float* block_results;
};
FinalWorkspace final_workspace(void* workspace) {
  auto* base = static_cast<unsigned char*>(workspace);
  return {reinterpret_cast<unsigned*>(base), reinterpret_cast<float*>(base + kCounterBytes)};
}

// One wave: as many blocks as can be resident at once, for this instantiation's registers.
template <typename T, typename Op, int kLoadsInFlight>
int final_wave_blocks() {
  static const int blocks = [] {
    const int per_sm =
        common::max_blocks_per_sm(reduce_final_kernel<T, Op, kLoadsInFlight>, kFinalBlock, 0);
    return std::min(sm_count() * std::max(per_sm, 1), final_max_blocks());
  }();
  return blocks;
}

int final_loads_in_flight(int64_t n, int element_bytes) {
  // 8 loads in flight per thread halve the blocks of a launch (and the kernel takes 64 registers
  // a thread: 4 blocks per SM in fp32 instead of 6). Measured on an H200, float sum and max,
  // the best of three alternating runs: where 4 loads a thread would need more blocks than there
  // are SMs (2^20 elements on 132 SMs), up to 2^25, 8 were faster (sum 2^20 6.62 -> 6.27 us,
  // 2^22 10.02 -> 9.73, 2^24 20.86 -> 20.32); at fewer elements the halved grid lost (2^16 5.31
  // -> 5.57), and from 2^26 on both depths took the same time. bf16 sums, at 102 registers a
  // thread and 2 blocks per SM with 8 loads, gained only at 2^22 and lost 0.9 % at 2^25: they
  // keep 4.
  // n * element_bytes / 16, without a product that could overflow for huge n.
  const int64_t packs = n / 16 * element_bytes + n % 16 * element_bytes / 16;
  const bool more_blocks_than_sms = packs > int64_t{sm_count()} * kFinalBlock * 4;
  return element_bytes == 4 && more_blocks_than_sms && n <= (int64_t{1} << 25) ? 8 : 4;
}

// Calls f with the depth final_loads_in_flight picks for n elements of T, as a compile-time
// constant (std::integral_constant); 2-byte inputs always take 4, so only float instantiates the
// kernel of 8.
template <typename T, typename F>
auto with_final_depth(int64_t n, F f) {
  if constexpr (sizeof(T) == 4) {
    if (final_loads_in_flight(n, sizeof(T)) == 8) return f(std::integral_constant<int, 8>{});
  }
  return f(std::integral_constant<int, 4>{});
}

// Enough blocks that each thread has kLoadsInFlight packs to load, at most one wave: small
// inputs use few blocks (fewer block results to combine), large ones loop.
template <typename T, typename Op, int kLoadsInFlight>
int final_blocks(int64_t n) {
  const int64_t packs = n / common::Pack<T>::kSize + 1;
  return static_cast<int>(
      std::clamp<int64_t>(ceil_div(packs, int64_t{kFinalBlock} * kLoadsInFlight), 1,
                          final_wave_blocks<T, Op, kLoadsInFlight>()));
}

template <typename T, typename Op, int kLoadsInFlight>
void launch_final(const T* x, int64_t n, float identity, float* out, void* workspace,
                  cudaStream_t stream) {
  const int blocks = final_blocks<T, Op, kLoadsInFlight>(n);
  const FinalWorkspace ws = final_workspace(workspace);
  reduce_final_kernel<T, Op, kLoadsInFlight><<<blocks, kFinalBlock, 0, stream>>>(
      x, n, identity, out, ws.block_results, ws.blocks_done);
  CUDA_CHECK_LAUNCH();
}

// `who`: the public function called, which the messages name.
template <typename T, typename Op>
void reduce_final(const char* who, const T* x, int64_t n, float identity, float* out,
                  void* workspace, size_t workspace_size, cudaStream_t stream) {
  detail::check_input(who, x, n, out);
  detail::check_workspace(who, workspace, workspace_size, workspace_bytes(Version::Final, n),
                          "workspace_bytes(Version::Final, n)", x, n, out);
  with_final_depth<T>(n, [&](auto depth) {
    launch_final<T, Op, depth>(x, n, identity, out, workspace, stream);
  });
}

using PartialsKernel = void (*)(const float*, int64_t, float*);

// Blocks of the first pass: one element per thread for versions 2 to 4; at most about one wave
// for versions 5 and 6, whose threads loop over the input.
int64_t teaching_blocks(Version v, int64_t n) {
  const int64_t one_per_thread = std::max<int64_t>(1, ceil_div(n, kBlock));
  if (v == Version::FirstAdd || v == Version::WarpShuffle) {
    const int per_sm = common::device_properties().maxThreadsPerMultiProcessor / kBlock;
    return std::min<int64_t>(one_per_thread, int64_t{sm_count()} * per_sm);
  }
  return one_per_thread;
}

PartialsKernel teaching_kernel(Version v) {
  switch (v) {
    case Version::Interleaved: return sum_interleaved_kernel;
    case Version::InterleavedStrided: return sum_strided_kernel;
    case Version::Sequential: return sum_sequential_kernel;
    case Version::FirstAdd: return sum_first_add_kernel;
    case Version::WarpShuffle: return sum_warp_shuffle_kernel;
    default: return nullptr;
  }
}

// Versions 2 to 6: each pass leaves one partial per block; the partials ping-pong between the
// two halves of the workspace (past the counter) until a pass runs as a single block and writes
// out[0].
void sum_in_passes(Version v, const float* x, int64_t n, float* out, void* workspace,
                   cudaStream_t stream) {
  const int64_t first_blocks = teaching_blocks(v, n);
  CHECK_ARG_FOR("sum", first_blocks <= INT_MAX,
                "n = " << n << " needs more blocks than a grid can hold");
  float* const partials_start =
      reinterpret_cast<float*>(static_cast<unsigned char*>(workspace) + kCounterBytes);
  float* buffers[2] = {partials_start, partials_start + first_blocks};
  const PartialsKernel kernel = teaching_kernel(v);
  const float* in = x;
  int64_t count = n;
  for (int pass = 0;; ++pass) {
    const int64_t blocks = teaching_blocks(v, count);
    float* partials = blocks == 1 ? out : buffers[pass % 2];
    kernel<<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(in, count, partials);
    CUDA_CHECK_LAUNCH();
    if (blocks == 1) return;
    in = partials;
    count = blocks;
  }
}

}  // namespace

const char* version_name(Version v) {
  switch (v) {
    case Version::Atomic: return "1_atomic";
    case Version::Interleaved: return "2_interleaved";
    case Version::InterleavedStrided: return "3_strided";
    case Version::Sequential: return "4_sequential";
    case Version::FirstAdd: return "5_first_add";
    case Version::WarpShuffle: return "6_warp_shuffle";
    case Version::Final: return "7_final";
  }
  return "unknown";
}

FinalLaunch final_float_sum_launch(int64_t n) {
  detail::check_count(__func__, n);
  return with_final_depth<float>(n, [n](auto depth) {
    return FinalLaunch{depth, final_blocks<float, common::Sum, depth>(n)};
  });
}

size_t workspace_bytes(Version v, int64_t n) {
  detail::check_count(__func__, n);
  switch (v) {
    case Version::Atomic: return 0;
    case Version::Final:
      return kCounterBytes + sizeof(float) * static_cast<size_t>(final_max_blocks());
    case Version::Interleaved:
    case Version::InterleavedStrided:
    case Version::Sequential:
    case Version::FirstAdd:
    case Version::WarpShuffle:
      return kCounterBytes + 2 * sizeof(float) * static_cast<size_t>(teaching_blocks(v, n));
  }
  CHECK_ARG(false, "unknown version " << static_cast<int>(v));
}

void sum(Version v, const float* x, int64_t n, float* out, void* workspace, size_t workspace_size,
         cudaStream_t stream) {
  detail::check_input(__func__, x, n, out);
  switch (v) {
    case Version::Atomic:
      CHECK_ARG(ceil_div(n, kBlock) <= INT_MAX, "n = " << n << " is too large for version 1");
      CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));
      if (n == 0) return;
      sum_atomic_kernel<<<static_cast<unsigned>(ceil_div(n, kBlock)), kBlock, 0, stream>>>(x, n, out);
      CUDA_CHECK_LAUNCH();
      return;
    case Version::Final:
      reduce_final<float, common::Sum>(__func__, x, n, 0.0f, out, workspace, workspace_size,
                                       stream);
      return;
    case Version::Interleaved:
    case Version::InterleavedStrided:
    case Version::Sequential:
    case Version::FirstAdd:
    case Version::WarpShuffle:
      detail::check_workspace(__func__, workspace, workspace_size, workspace_bytes(v, n),
                              "workspace_bytes(v, n)", x, n, out);
      sum_in_passes(v, x, n, out, workspace, stream);
      return;
  }
  CHECK_ARG(false, "unknown version " << static_cast<int>(v));
}

void sum(const __half* x, int64_t n, float* out, void* workspace, size_t workspace_size,
         cudaStream_t stream) {
  reduce_final<__half, common::Sum>(__func__, x, n, 0.0f, out, workspace, workspace_size, stream);
}

void sum(const __nv_bfloat16* x, int64_t n, float* out, void* workspace, size_t workspace_size,
         cudaStream_t stream) {
  reduce_final<__nv_bfloat16, common::Sum>(__func__, x, n, 0.0f, out, workspace, workspace_size,
                                           stream);
}

void max(const float* x, int64_t n, float* out, void* workspace, size_t workspace_size,
         cudaStream_t stream) {
  reduce_final<float, common::MaxOneInstruction>(__func__, x, n, -INFINITY, out, workspace,
                                                 workspace_size, stream);
}

}  // namespace reduction

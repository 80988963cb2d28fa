// Reductions across the blocks of a thread-block cluster (sm_90), and the launch of a clustered
// grid. A reduction: each block contributes one value, every thread of every block gets the
// result; versions 6 and 9 merge the per-chunk results of a split row with it. Two ways, chosen
// by the token the caller passes:
//   ClusterToken        pull: every block reads every other block's slot (TODO 6); a block may
//                       go on to another row and reuse its slot.
//   OneRowClusterToken  push: every block writes its value into a slot of every other block,
//                       then reduces its own slots. No remote read waits on a round trip, but
//                       each block must handle a single row (the launcher makes sure).
#pragma once

#include "softmax_launch.h"

#include "common/block_reduce.cuh"
#include "common/cluster_mailbox.cuh"
#include "common/errors.hpp"
#include "common/kernel_attributes.hpp"

#include <cooperative_groups.h>

#include <cstdint>

namespace softmax::detail {

namespace cg = cooperative_groups;

// Launches `kernel` on `grid` blocks of `threads`, in clusters of `cluster` blocks along x (no
// cluster when it is 1). Sizes above kMaxPortableCluster need the non-portable attribute, which
// sm_90 grants (set once per kernel).
template <typename... Params, typename... Args>
void launch_clustered(void (*kernel)(Params...), dim3 grid, int threads, int cluster,
                      cudaStream_t stream, Args... args) {
  if (cluster > kMaxPortableCluster)
    common::set_kernel_attribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = dim3(threads);
  config.stream = stream;
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = cluster > 1 ? 1 : 0;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
  CUDA_CHECK_LAUNCH();
}

// The last step of a cluster reduction: a cluster barrier that says "every block has read every
// slot", split into its two halves. cluster_reduce arrives as soon as this block is done reading;
// cluster_reduce_done waits, as late as possible (after the row's stores), before a slot may be
// overwritten or the block may exit. The stores overlap the barrier instead of waiting for it.
struct ClusterToken {
  bool pending = false;  // arrived, not yet waited
};

__device__ __forceinline__ void cluster_reduce_done(ClusterToken& token) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (token.pending) asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
  token.pending = false;
}

// The value every block of the cluster contributes, reduced over the cluster with `op`, returned
// to every thread of every block. All threads of all blocks of the cluster must call it, and call
// cluster_reduce_done(token) before the next call and before they exit.
template <typename V, typename Op>
__device__ __forceinline__ V cluster_reduce(V block_value, Op op, V identity, ClusterToken& token) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // Raw storage: a __shared__ variable of a class type may not have a constructor.
  __shared__ alignas(16) unsigned char storage[2 * sizeof(V)];
  V* slots = reinterpret_cast<V*>(storage);  // [0]: this block's value, [1]: the cluster's
  cg::cluster_group cluster = cg::this_cluster();
  // TODO 6 (about 10 lines; checked by [ch10_softmax][split_row]):
  //   (a) thread 0 stores block_value in slots[0]; cluster.sync() makes every block's slot
  //       visible to the whole cluster;
  //   (b) warp 0 gathers them: lane r < cluster.num_blocks() reads block r's slot through
  //       *cluster.map_shared_rank(&slots[0], r) (distributed shared memory), the other lanes
  //       take `identity`; common::warp_reduce(value, op); thread 0 stores it in slots[1];
  //   The code after the region makes slots[1] visible to the block and arrives at the barrier
  //   that keeps every block's slot alive until all have read it (cluster_reduce_done waits).
  // BEGIN TODO 6
  if (threadIdx.x == 0) slots[0] = block_value;
  cluster.sync();
  if (threadIdx.x < common::kWarpSize) {
    const unsigned rank = threadIdx.x;
    V value = rank < cluster.num_blocks() ? *cluster.map_shared_rank(&slots[0], rank) : identity;
    value = common::warp_reduce(value, op);
    if (threadIdx.x == 0) slots[1] = value;
  }
  // END TODO 6
  __syncthreads();
  const V result = slots[1];
  // No "memory" clobber: it would force the caller's register caches out to local memory. The
  // reads of the other blocks' slots are complete (their values reached slots[1] before the
  // __syncthreads), and .release orders them before the arrival anyway.
  asm volatile("barrier.cluster.arrive.release.aligned;\n");
  token.pending = true;
  return result;
#else
  (void)op;
  (void)identity;
  (void)token;
  return block_value;  // never reached: the launcher refuses clusters before sm_90
#endif
}

// The push reduction, for a grid in which every block handles one row and exits (few rows: the
// latency regime). Every block posts its value into a slot of every block's mailbox
// (common/cluster_mailbox.cuh) and reduces its own slots once they have all landed: no remote
// read, and no cluster barrier after the stores. A block may post into another only once that
// one has opened its mailbox: every thread arrives at a cluster barrier first thing in the
// kernel (cluster_arrive_started), and the reduction waits on it before posting; by then every
// block has long started, so the wait is free. Measured and not kept for many rows: at
// 64x131072 and longer fp32 rows, a push through plain remote stores and a cluster barrier was
// 6-8% slower than the pull.
struct OneRowClusterToken {};

// Block r's value lands in slots[r] of every block of the cluster.
struct OneRowMailbox {
  static constexpr unsigned kMaxBlocks = 16;  // the largest cluster sm_90 launches
  uint64_t slots[kMaxBlocks];
  uint64_t arrived;  // the mailbox's barrier
};

__device__ __forceinline__ OneRowMailbox& one_row_mailbox() {
  __shared__ OneRowMailbox mailbox;
  return mailbox;
}

__device__ __forceinline__ void cluster_arrive_started() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (threadIdx.x == 0)
    common::mailbox_open(&one_row_mailbox().arrived,
                         cg::this_cluster().num_blocks() * sizeof(uint64_t));
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void cluster_reduce_done(OneRowClusterToken&) {}

template <typename V, typename Op>
__device__ __forceinline__ V cluster_reduce(V block_value, Op op, V identity, OneRowClusterToken&) {
  static_assert(sizeof(V) == sizeof(uint64_t), "a mailbox slot holds 8 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  OneRowMailbox& mailbox = one_row_mailbox();
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned blocks = cluster.num_blocks();
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");  // every mailbox is open
  if (threadIdx.x < blocks) {
    uint64_t bits;
    memcpy(&bits, &block_value, sizeof(bits));
    common::mailbox_post(&mailbox.slots[cluster.block_rank()], bits, &mailbox.arrived, threadIdx.x);
  }
  common::mailbox_wait(&mailbox.arrived);
  // Every warp reduces the slots itself: no block barrier to hand the result on.
  const unsigned lane = threadIdx.x % common::kWarpSize;
  V value = identity;
  if (lane < blocks) memcpy(&value, &mailbox.slots[lane], sizeof(value));
  return common::warp_reduce(value, op);
#else
  (void)op;
  (void)identity;
  return block_value;  // never reached: the launcher refuses clusters before sm_90
#endif
}

}  // namespace softmax::detail

// An exchange between the blocks of a thread-block cluster that needs no cluster barrier after
// the stores (sm_90 and newer). Each block owns a mailbox: slots in its shared memory and an
// mbarrier that expects a known number of bytes. Other blocks fill the slots with st.async, a
// store into distributed shared memory that reports its own arrival to the receiver's barrier,
// and the receiver waits on that barrier alone.
//
// The usual way, plain remote stores then barrier.cluster.arrive.release and wait.acquire, costs
// each sender a memory barrier of the whole GPU (the release waits until its remote stores are
// acknowledged) and every block a round trip through the cluster barrier; both sit on the
// critical path of a kernel that exchanges a few bytes per block (chapter 10's one-row softmax,
// chapter 11's version 4b).
//
//   __shared__ uint64_t slots[kMaxBlocks];
//   __shared__ uint64_t arrived;
//   if (threadIdx.x == 0) mailbox_open(&arrived, blocks * sizeof(uint64_t));
//   barrier.cluster.arrive (relaxed) ... barrier.cluster.wait   // every mailbox is open
//   if (threadIdx.x < blocks) mailbox_post(&slots[my_rank], value, &arrived, threadIdx.x);
//   mailbox_wait(&arrived);                                      // every thread that reads
//   ... slots[0 .. blocks) ...
//
// A mailbox is opened once per launch (phase 0 of its barrier). A block may post into another
// only after that one has opened its mailbox, which a cluster barrier between the two makes sure
// of. st.async wants a cluster of two blocks or more (compute-sanitizer rejects it in a cluster
// of one): a lone block keeps its values with plain stores and opens its mailbox for 0 bytes. Built
// for an older GPU, every function here traps: the kernels that use it are launched only on sm_90.
#pragma once

#include "common/bulk_copy.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace common {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define COMMON_MAILBOX_ASM(...) __trap()
#else
#define COMMON_MAILBOX_ASM(...) asm volatile(__VA_ARGS__)
#endif

// One thread of the receiving block: the barrier's phase 0 completes once `bytes` have been
// posted to this block. Call it before the cluster barrier that lets other blocks post.
__device__ __forceinline__ void mailbox_open(uint64_t* arrived, uint32_t bytes) {
  mbarrier_init(arrived, 1);
  mbarrier_expect_bytes(arrived, bytes);  // the one arrival; the phase now waits for the bytes
  fence_barrier_init();                   // visible to the other blocks' stores
}

// Stores `value` into `slot` (the address of this block's copy) in block `rank` of the cluster,
// counted by that block's `arrived` (also given by this block's address). No ordering with any
// other memory access of this thread is implied: the receiver sees the value, and only it.
__device__ __forceinline__ void mailbox_post([[maybe_unused]] uint64_t* slot,
                                             [[maybe_unused]] uint64_t value,
                                             [[maybe_unused]] uint64_t* arrived,
                                             [[maybe_unused]] unsigned rank) {
  [[maybe_unused]] uint32_t remote_slot = 0, remote_arrived = 0;
  COMMON_MAILBOX_ASM("mapa.shared::cluster.u32 %0, %1, %2;"
                     : "=r"(remote_slot)
                     : "r"(shared_address(slot)), "r"(rank));
  COMMON_MAILBOX_ASM("mapa.shared::cluster.u32 %0, %1, %2;"
                     : "=r"(remote_arrived)
                     : "r"(shared_address(arrived)), "r"(rank));
  COMMON_MAILBOX_ASM(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];" ::"r"(
          remote_slot),
      "l"(value), "r"(remote_arrived)
      : "memory");
}

// Blocks until every expected byte has been posted to this block; the posted slots may then be
// read by the calling thread.
__device__ __forceinline__ void mailbox_wait(uint64_t* arrived) {
  mbarrier_wait<true>(arrived, 0);
}

#undef COMMON_MAILBOX_ASM

}  // namespace common
